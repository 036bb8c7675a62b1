package collect

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coroner-dev/coroner/parser/manifest"
)

// Cmd is one external command to run.
type Cmd struct {
	// Path is the program: a name looked up in PATH, or a path.
	Path    string
	Args    []string
	Timeout time.Duration
	// Env replaces the environment when not nil.
	Env []string
	// Dir is the working directory ("" for /).
	Dir string
	// As runs the command as another user (the collector must be root);
	// nil runs it as the collector.
	As *identity
	// MaxOutput caps what is kept of stdout (DefaultMaxOutput if 0).
	MaxOutput int64
	// KeepTail, when set, makes stdout keep its first MaxOutput and last
	// KeepTail bytes, cut at line ends with a line saying what was left out
	// between them, as a log read from disk is (Result.Cut says so): the
	// output of kubectl logs, or of cat of a log on another node.
	KeepTail int64
	// SkipAfterTimeout makes later calls of the same program skip once one
	// timed out: a hung nvidia-smi hangs again, and the user's minutes are
	// better spent on the rest of the evidence.
	SkipAfterTimeout bool
}

// DefaultMaxOutput is the stdout kept of a command: an nvidia-smi -q -x of
// eight GPUs is about 1 MB.
const DefaultMaxOutput = 64 << 20

// maxStderr is what is kept of stderr, for the manifest.
const maxStderr = 4 << 10

// Result is how a command went.
type Result struct {
	// Program is the program's plain name; Command the command as run.
	Program, Command string
	Start, End       time.Time
	Stdout, Stderr   []byte
	// ExitCode is -1 when the command did not exit by itself.
	ExitCode int
	TimedOut bool
	NotFound bool
	// Stuck is set when the command outlived SIGKILL (a process in
	// uninterruptible sleep in a wedged driver): it was abandoned.
	Stuck bool
	// Skipped says why the command was not run.
	Skipped string
	// Err is why the command could not run or what its exit said.
	Err error
	// Truncated is set when stdout passed MaxOutput (without KeepTail).
	Truncated bool
	// Cut says what KeepTail left out of stdout.
	Cut *manifest.Cut
	// Timeout is the limit the command ran under.
	Timeout time.Duration
	// RunAs is whom the command ran as, "" if it did not start.
	RunAs string
}

// OK reports a command that ran and exited 0.
func (r *Result) OK() bool {
	return r.Skipped == "" && !r.NotFound && !r.TimedOut && r.Err == nil && r.ExitCode == 0
}

// Runner runs commands, each with a timeout, each in its own process
// group so that a hung child and its children die together.
type Runner struct {
	// Now is the clock (time.Now if nil).
	Now func() time.Time
	// Grace is how long to wait for a killed command to go (2 s if 0).
	Grace time.Duration

	mu   sync.Mutex
	skip map[string]string
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

// Run runs c and never takes much longer than its timeout plus the grace.
func (r *Runner) Run(ctx context.Context, c Cmd) (res Result) {
	res = Result{Program: filepath.Base(c.Path), Command: display(c.Path, c.Args), ExitCode: -1}
	res.Start = r.now()
	defer func() {
		if res.End.IsZero() {
			res.End = r.now()
		}
	}()
	r.mu.Lock()
	why := r.skip[res.Program]
	r.mu.Unlock()
	if why != "" {
		res.Skipped = why
		return res
	}
	path, err := exec.LookPath(c.Path)
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			res.NotFound = true
		}
		res.Err = err
		return res
	}
	// Absolute, so that it means the same from Dir.
	if path, err = filepath.Abs(path); err != nil {
		res.Err = err
		return res
	}
	as := selfIdentity()
	if c.As != nil {
		as = *c.As
	}
	if selfIdentity().root() {
		// Found on root's PATH, or named by a flag: a program in a folder
		// another user can write is that user's code, run as root.
		if err := trustedFor(path, as.uid); err != nil {
			res.Skipped = fmt.Sprintf("not run: %v; another user could change what %s runs as %s", err, path, whose(as.uid))
			return res
		}
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Second
	}
	if c.MaxOutput <= 0 {
		c.MaxOutput = DefaultMaxOutput
	}
	res.Timeout = c.Timeout
	grace := r.Grace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	stdout := &capped{max: c.MaxOutput, tail: c.KeepTail}
	stderr := &capped{max: maxStderr}
	cmd := exec.Command(path, c.Args...)
	cmd.Env = c.Env
	// Not the collector's working folder, which may be another user's
	// (sudo keeps it): a program that looks for files there would read
	// theirs.
	cmd.Dir = c.Dir
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	// Stdin stays nil, /dev/null: no command reads the collector's
	// terminal.
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// A grandchild that keeps the pipes open must not keep Wait waiting.
	cmd.WaitDelay = grace
	ownGroup(cmd, c.As != nil)
	if c.As != nil {
		if err := runAs(cmd, *c.As); err != nil {
			res.Err = err
			return res
		}
	}
	res.Start = r.now()
	if err := cmd.Start(); err != nil {
		res.Err = err
		return res
	}
	res.RunAs = as.String()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(c.Timeout)
	defer timer.Stop()
	interrupted := false
	select {
	case err = <-done:
	case <-timer.C:
		res.TimedOut = true
	case <-ctx.Done():
		interrupted = true
		res.Err = fmt.Errorf("interrupted (%v); killed", ctx.Err())
	}
	if res.TimedOut || interrupted {
		killGroup(cmd)
		select {
		case <-done:
		case <-time.After(grace):
			// Still there after SIGKILL: the process sleeps in the kernel
			// (state D) and dies when the driver lets it. Leave it.
			res.Stuck = true
		}
		res.End = r.now()
		if c.SkipAfterTimeout && res.TimedOut {
			why := fmt.Sprintf("an earlier %s call timed out after %s", res.Program, c.Timeout)
			if res.Stuck {
				why = fmt.Sprintf("an earlier %s call timed out after %s and did not die after SIGKILL", res.Program, c.Timeout)
			}
			r.mu.Lock()
			if r.skip == nil {
				r.skip = map[string]string{}
			}
			r.skip[res.Program] = why
			r.mu.Unlock()
		}
		if res.Err == nil {
			res.Err = fmt.Errorf("timed out after %s; killed", c.Timeout)
		}
	} else {
		res.End = r.now()
		var ee *exec.ExitError
		switch {
		case err == nil:
			res.ExitCode = 0
		case errors.As(err, &ee):
			res.ExitCode = ee.ExitCode()
			if res.ExitCode < 0 {
				res.Err = fmt.Errorf("%s", ee.ProcessState)
			} else {
				res.Err = fmt.Errorf("exit status %d", res.ExitCode)
			}
		default:
			res.Err = err
			if cmd.ProcessState != nil {
				res.ExitCode = cmd.ProcessState.ExitCode()
			}
		}
	}
	stdout.mu.Lock()
	if c.KeepTail > 0 {
		res.Stdout, res.Cut = stdout.headTail(c.MaxOutput, c.KeepTail)
	} else {
		res.Stdout = bytes.Clone(stdout.buf.Bytes())
		res.Truncated = stdout.dropped > 0
	}
	stdout.mu.Unlock()
	stderr.mu.Lock()
	res.Stderr = bytes.Clone(stderr.buf.Bytes())
	stderr.mu.Unlock()
	return res
}

// display renders a command for the manifest, quoting what a shell would
// split differently.
func display(path string, args []string) string {
	parts := make([]string, 0, len(args)+1)
	for _, a := range append([]string{path}, args...) {
		if a == "" || strings.ContainsAny(a, " \t\n'\"$`\\|&;<>()*?[]#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

// capped keeps the first max bytes written and counts the rest, or, with
// tail, also keeps the last tail bytes of the rest in a ring. It never
// fails a write: a command must not die of a full pipe.
type capped struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	max     int64
	dropped int64
	tail    int64
	ring    []byte
	at      int // the ring's next write position
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	if room := c.max - int64(c.buf.Len()); c.tail > 0 && int64(len(p)) > room {
		// The head is full: the rest goes round the ring.
		c.buf.Write(p[:max(room, 0)])
		p = p[max(room, 0):]
		c.dropped += int64(len(p))
		if c.ring == nil {
			c.ring = make([]byte, 0, c.tail)
		}
		if int64(len(p)) > c.tail {
			p = p[int64(len(p))-c.tail:]
		}
		for len(p) > 0 {
			if int64(len(c.ring)) < c.tail {
				k := min(int(c.tail)-len(c.ring), len(p))
				c.ring = append(c.ring, p[:k]...)
				p = p[k:]
				continue
			}
			k := copy(c.ring[c.at:], p)
			c.at = (c.at + k) % len(c.ring)
			p = p[k:]
		}
		return n, nil
	}
	room := c.max - int64(c.buf.Len())
	switch {
	case room <= 0:
		c.dropped += int64(len(p))
	case int64(len(p)) > room:
		c.buf.Write(p[:room])
		c.dropped += int64(len(p)) - room
	default:
		c.buf.Write(p)
	}
	return len(p), nil
}

// headTail is what a KeepTail command's stdout keeps: all of it when it
// fitted, else its head and tail joined as joinHeadTail does.
func (c *capped) headTail(head, tail int64) ([]byte, *manifest.Cut) {
	t := append(bytes.Clone(c.ring[c.at:]), c.ring[:c.at]...)
	h := bytes.Clone(c.buf.Bytes())
	size := int64(len(h)) + c.dropped
	if c.dropped <= int64(len(t)) {
		return append(h, t...), nil
	}
	return joinHeadTail(h, t, size, head, tail)
}
