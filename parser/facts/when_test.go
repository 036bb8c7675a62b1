package facts

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFormatTimeAndStamp(t *testing.T) {
	at := time.Date(BaseYear, 2, 29, 21, 39, 29, 0, time.UTC)
	tests := []struct {
		name         string
		t            time.Time
		noYear       bool
		layout, want string
		stamp        string
	}{
		{"a known year", time.Date(2026, 5, 16, 21, 39, 29, 0, time.UTC), false, "2006-01-02 15:04:05Z", "2026-05-16 21:39:29Z", "2026-05-16T21:39:29Z"},
		{"no year", at, true, "2006-01-02 15:04:05Z", "02-29 21:39:29Z", "0000-02-29T21:39:29Z"},
		{"no year, a layout without one", at, true, "15:04:05", "21:39:29", "0000-02-29T21:39:29Z"},
		{"no year, after a New Year in the log", time.Date(BaseYear+1, 1, 1, 0, 0, 1, 0, time.UTC), true, "2006-01-02T15:04:05Z07:00", "01-01T00:00:01Z", "0001-01-01T00:00:01Z"},
		{"the zero time", time.Time{}, true, "15:04:05", "00:00:00", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, FormatTime(tc.t, tc.layout, tc.noYear))
			assert.Equal(t, tc.stamp, Stamp(tc.t, tc.noYear))
		})
	}
	// The shift keeps durations: 2000 years are five Gregorian cycles.
	a, b := time.Date(BaseYear, 2, 28, 0, 0, 0, 0, time.UTC), time.Date(BaseYear+1, 3, 1, 0, 0, 0, 0, time.UTC)
	pa, _ := time.Parse(time.RFC3339, Stamp(a, true))
	pb, _ := time.Parse(time.RFC3339, Stamp(b, true))
	assert.Equal(t, b.Sub(a), pb.Sub(pa))
}

func TestYearUnknown(t *testing.T) {
	assert.False(t, (&Facts{}).YearUnknown())
	assert.False(t, (&Facts{Clocks: map[string]Clock{"a": {NoYear: true}}}).YearUnknown(), "a year was given")
	assert.True(t, (&Facts{Clocks: map[string]Clock{"a": {}, "b": {NoYear: true, YearUnknown: true}}}).YearUnknown())
}

func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0 s"}, {-time.Second, "0 s"}, {3200 * time.Millisecond, "3.2 s"}, {9 * time.Second, "9.0 s"},
		{45 * time.Second, "45 s"}, {119 * time.Second, "119 s"}, {2 * time.Minute, "2 min"},
		{583 * time.Second, "10 min"}, {77 * time.Minute, "77 min"}, {3 * time.Hour, "3.0 h"}, {150 * time.Minute, "150 min"},
	} {
		assert.Equal(t, tc.want, Duration(tc.d), tc.d.String())
		assert.Equal(t, tc.want, Seconds(tc.d.Seconds()), tc.d.String())
	}
}
