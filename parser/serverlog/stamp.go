package serverlog

import (
	"time"
)

// stamp is a timestamp as printed, before the file's year and zone are
// applied. Parsing never allocates: logs carry one per line.
type stamp struct {
	year                 int // 0 when the format prints none
	month, day           int
	hour, min, sec, nsec int
	zoned                bool
	offset               int // seconds east of UTC, when zoned
	ok                   bool
}

func digits(b []byte, i, n int) (int, bool) {
	if i < 0 || i+n > len(b) {
		return 0, false
	}
	v := 0
	for k := i; k < i+n; k++ {
		c := b[k]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// fraction reads up to 9 digits after a separator at b[i] and returns the
// nanoseconds and the index after the digits.
func fraction(b []byte, i int) (int, int) {
	ns, n := 0, 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		if n < 9 {
			ns = ns*10 + int(b[i]-'0')
			n++
		}
		i++
	}
	for ; n < 9 && n > 0; n++ {
		ns *= 10
	}
	return ns, i
}

func (s *stamp) valid() bool {
	return s.month >= 1 && s.month <= 12 && s.day >= 1 && s.day <= 31 &&
		s.hour <= 23 && s.min <= 59 && s.sec <= 60
}

// parseClock reads HH:MM:SS at b[i].
func parseClock(b []byte, i int, s *stamp) bool {
	if i+8 > len(b) || b[i+2] != ':' || b[i+5] != ':' {
		return false
	}
	var ok1, ok2, ok3 bool
	s.hour, ok1 = digits(b, i, 2)
	s.min, ok2 = digits(b, i+3, 2)
	s.sec, ok3 = digits(b, i+6, 2)
	return ok1 && ok2 && ok3
}

// parseDate reads YYYY-MM-DD at b[i].
func parseDate(b []byte, i int, s *stamp) bool {
	if i+10 > len(b) || b[i+4] != '-' || b[i+7] != '-' {
		return false
	}
	var ok1, ok2, ok3 bool
	s.year, ok1 = digits(b, i, 4)
	s.month, ok2 = digits(b, i+5, 2)
	s.day, ok3 = digits(b, i+8, 2)
	return ok1 && ok2 && ok3
}

// parseDateTime reads "YYYY-MM-DD HH:MM:SS" (sep is ' ' or 'T') at b[0]
// with an optional fraction after '.' or ','. It returns the index after it.
func parseDateTime(b []byte, sep byte) (stamp, int) {
	var s stamp
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || b[10] != sep || b[13] != ':' || b[16] != ':' {
		return s, 0
	}
	// Every line of an SGLang log starts with one: the fourteen digits
	// are checked at once, then read.
	b = b[:len(b):len(b)]
	d := [14]byte{b[0] - '0', b[1] - '0', b[2] - '0', b[3] - '0', b[5] - '0', b[6] - '0', b[8] - '0', b[9] - '0',
		b[11] - '0', b[12] - '0', b[14] - '0', b[15] - '0', b[17] - '0', b[18] - '0'}
	for _, x := range d {
		if x > 9 {
			return s, 0
		}
	}
	s.year = int(d[0])*1000 + int(d[1])*100 + int(d[2])*10 + int(d[3])
	s.month = int(d[4])*10 + int(d[5])
	s.day = int(d[6])*10 + int(d[7])
	s.hour = int(d[8])*10 + int(d[9])
	s.min = int(d[10])*10 + int(d[11])
	s.sec = int(d[12])*10 + int(d[13])
	i := 19
	if i+1 < len(b) && (b[i] == '.' || b[i] == ',') && b[i+1] >= '0' && b[i+1] <= '9' {
		s.nsec, i = fraction(b, i+1)
	}
	s.ok = s.valid()
	return s, i
}

// parseRFC3339 reads an RFC 3339 stamp with an optional fraction and a zone
// (Z, +hh:mm, +hhmm); the zone is required so that it is not confused with a
// wall-clock stamp.
func parseRFC3339(b []byte) (stamp, int) {
	s, i := parseDateTime(b, 'T')
	if !s.ok {
		return stamp{}, 0
	}
	if i < len(b) && b[i] == 'Z' {
		s.zoned = true
		return s, i + 1
	}
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		sign := 1
		if b[i] == '-' {
			sign = -1
		}
		h, ok := digits(b, i+1, 2)
		if !ok {
			return stamp{}, 0
		}
		j := i + 3
		if j < len(b) && b[j] == ':' {
			j++
		}
		m, ok := digits(b, j, 2)
		if !ok || h > 23 || m > 59 {
			return stamp{}, 0
		}
		s.zoned = true
		s.offset = sign * (h*3600 + m*60)
		return s, j + 2
	}
	return stamp{}, 0
}

// parseMonthDay reads vLLM's "MM-DD HH:MM:SS" (optional .mmm) at b[i].
func parseMonthDay(b []byte, i int) (stamp, int) {
	var s stamp
	if i+14 > len(b) || b[i+2] != '-' || b[i+5] != ' ' {
		return s, 0
	}
	var ok1, ok2 bool
	s.month, ok1 = digits(b, i, 2)
	s.day, ok2 = digits(b, i+3, 2)
	if !ok1 || !ok2 || !parseClock(b, i+6, &s) {
		return stamp{}, 0
	}
	j := i + 14
	if j+1 < len(b) && b[j] == '.' && b[j+1] >= '0' && b[j+1] <= '9' {
		s.nsec, j = fraction(b, j+1)
	}
	s.ok = s.valid()
	return s, j
}

// parseGlogStamp reads "MMDD HH:MM:SS.ffffff" at b[i] (torch's glog and c10d
// formats put the level letter right before it). c10d does not pad the
// month: "W516 21:40:38.193445773" is May 16.
func parseGlogStamp(b []byte, i int) (stamp, int) {
	var s stamp
	w := 4
	if i+4 < len(b) && b[i+3] == ' ' {
		w = 3
	}
	if i+w+9 > len(b) || b[i+w] != ' ' {
		return s, 0
	}
	var ok1, ok2 bool
	s.month, ok1 = digits(b, i, w-2)
	s.day, ok2 = digits(b, i+w-2, 2)
	if !ok1 || !ok2 || !parseClock(b, i+w+1, &s) {
		return stamp{}, 0
	}
	j := i + w + 9
	if j+1 < len(b) && b[j] == '.' {
		s.nsec, j = fraction(b, j+1)
	}
	s.ok = s.valid()
	return s, j
}

var monthNames = [12]string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}

// parseSyslogStamp reads journald's default "Aug 19 18:34:30" (day may be
// space padded) at b[0].
func parseSyslogStamp(b []byte) (stamp, int) {
	var s stamp
	if len(b) < 15 || b[3] != ' ' {
		return s, 0
	}
	for k, m := range monthNames {
		if b[0] == m[0] && b[1] == m[1] && b[2] == m[2] {
			s.month = k + 1
			break
		}
	}
	if s.month == 0 {
		return s, 0
	}
	i := 4
	if b[i] == ' ' {
		i++
	}
	d, n := 0, 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' && n < 2 {
		d = d*10 + int(b[i]-'0')
		i++
		n++
	}
	if n == 0 || i >= len(b) || b[i] != ' ' {
		return stamp{}, 0
	}
	s.day = d
	if !parseClock(b, i+1, &s) {
		return stamp{}, 0
	}
	s.ok = s.valid()
	return s, i + 9
}

// wall is the stamp's reading in UTC with the given year.
func (s *stamp) wall(year int) time.Time {
	return time.Date(year, time.Month(s.month), s.day, s.hour, s.min, s.sec, s.nsec, time.UTC)
}

// instant is a zoned stamp as a UTC instant.
func (s *stamp) instant() time.Time {
	return s.wall(s.year).Add(-time.Duration(s.offset) * time.Second)
}
