package facts

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// One definition of "the same process" across snapshots: the pid, and
// start times that agree within the coarser one's precision.
func TestSameProcess(t *testing.T) {
	t0 := time.Date(2025, 3, 8, 12, 29, 41, 0, time.UTC)
	lstart := func(d time.Duration) *Process { return &Process{PID: 4120, Name: "python3", Start: t0.Add(d)} }
	hhmm := &Process{PID: 4120, Name: "python3", Start: time.Date(2025, 3, 8, 12, 29, 0, 0, time.UTC), StartRaw: "12:29"}
	monDD := &Process{PID: 4120, Name: "python3", Start: time.Date(2025, 3, 8, 0, 0, 0, 0, time.UTC), StartRaw: "Mar08"}
	for _, c := range []struct {
		name string
		a, b *Process
		same bool
	}{
		{"lstart, the same second", lstart(0), lstart(0), true},
		{"lstart against an elapsed time's start, a second apart", lstart(0), lstart(time.Second), true},
		{"lstart, a reused pid three seconds later", lstart(0), lstart(3 * time.Second), false},
		{"ps aux's HH:MM against lstart in that minute", hhmm, lstart(0), true},
		{"HH:MM against a start two minutes later", hhmm, lstart(2 * time.Minute), false},
		{"MonDD against lstart that day", monDD, lstart(0), true},
		{"MonDD against the next day", monDD, lstart(24*time.Hour + time.Hour), false},
		{"another pid", lstart(0), &Process{PID: 4121, Start: t0}, false},
		{"another program on the pid", lstart(0), &Process{PID: 4120, Name: "bash", Start: t0}, false},
	} {
		assert.Equal(t, c.same, SameProcess(c.a, c.b), c.name)
		assert.Equal(t, c.same, SameProcess(c.b, c.a), c.name+" (swapped)")
	}
}
