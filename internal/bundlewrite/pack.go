// Package bundlewrite writes bundles: a tar archive compressed with zstd, entries
// in a fixed order with fixed modes and owners, the manifest last. Content
// passes through the redactor on its way in, and a size cap is met by
// trimming the middle of the largest logs first, keeping their head and
// tail. Expand (expand.go) turns a file given to `coroner bundle` into
// what is packed: compressed files decompressed, archives member by
// member, UTF-16 decoded, and what cannot be read as text left out.
//
// Nothing is written but the output, through a temporary file beside it
// that is renamed over it (internal/atomicfile); nothing is extracted.
// Under a size cap the archive is built in memory (it is at most the cap)
// and written once it fits.
package bundlewrite

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/coroner-dev/coroner/internal/atomicfile"
	"github.com/coroner-dev/coroner/internal/redact"
)

// Item is one file to put in the bundle.
type Item struct {
	// Name is the slash-separated path inside the bundle.
	Name string
	// Size is exactly how many bytes Open yields.
	Size    int64
	ModTime time.Time
	// Open yields the content; it is called once per attempt to fit the cap.
	Open func() (io.ReadCloser, error)
	// Text content is redacted and may be trimmed; other content is written
	// as is, whole.
	Text bool
	// Log marks a server log: under a size cap, logs are trimmed first.
	Log bool
}

// Bytes returns an Item over data.
func Bytes(name string, data []byte, mod time.Time, text, log bool) Item {
	return Item{Name: name, Size: int64(len(data)), ModTime: mod, Text: text, Log: log,
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
}

// Trim says what was left out of a file: the middle, between the first
// HeadBytes and the last TailBytes of the original.
type Trim struct {
	OriginalBytes int64  `json:"original_bytes"`
	HeadBytes     int64  `json:"head_bytes"`
	TailBytes     int64  `json:"tail_bytes"`
	RemovedBytes  int64  `json:"removed_bytes"`
	Reason        string `json:"reason"`
}

// Result is what was written for one item.
type Result struct {
	Name   string
	Bytes  int64
	SHA256 string
	Trim   *Trim
	Counts redact.Counts
}

// Finalize makes the last entry (the manifest) once every item is written.
type Finalize func(results []Result) (name string, data []byte, err error)

// Options configure a write.
type Options struct {
	// MaxSize caps the compressed archive (0: no cap).
	MaxSize int64
	// Redactor redacts text items (nil: none).
	Redactor *redact.Redactor
	// MinKeep is the least a trimmed file keeps (64 KiB if 0).
	MinKeep int64
	// CapName names the cap in trim notes ("--max-size 25MB").
	CapName string
}

// Summary is the outcome of WriteFile.
type Summary struct {
	Results []Result
	// Bytes is the size of the archive written.
	Bytes int64
	// Fits is false when the cap could not be met even with every file
	// trimmed to the minimum; the archive is written anyway.
	Fits     bool
	Attempts int
}

// ErrTooBig stops an attempt that went past the cap.
var ErrTooBig = errors.New("archive larger than the size cap")

// WriteFile writes the bundle to path, trimming to fit opts.MaxSize.
func WriteFile(path string, items []Item, fin Finalize, opts Options) (*Summary, error) {
	if opts.MinKeep <= 0 {
		opts.MinKeep = 64 << 10
	}
	if opts.CapName == "" {
		opts.CapName = fmt.Sprintf("the size cap of %d bytes", opts.MaxSize)
	}
	if opts.MaxSize <= 0 {
		res, n, err := writeTo(path, items, nil, fin, opts)
		if err != nil {
			return nil, err
		}
		return &Summary{Results: res, Bytes: n, Fits: true, Attempts: 1}, nil
	}
	var total int64
	for _, it := range items {
		total += it.Size
	}
	budget := total
	var keep map[int]int64
	for attempt := 1; ; attempt++ {
		buf := &capWriter{max: opts.MaxSize}
		res, err := write(buf, items, keep, fin, opts)
		switch {
		case err == nil:
			if werr := atomicfile.WriteFile(path, buf.buf.Bytes()); werr != nil {
				return nil, werr
			}
			return &Summary{Results: res, Bytes: int64(buf.buf.Len()), Fits: true, Attempts: attempt}, nil
		case !errors.Is(err, ErrTooBig):
			return nil, err
		}
		// Estimate how much uncompressed content the cap holds from the
		// ratio seen so far, and aim a little under it.
		ratio := float64(buf.written) / float64(max(buf.in, 1))
		next := int64(float64(opts.MaxSize) / max(ratio, 0.001) * 0.9)
		if next >= budget {
			next = budget * 3 / 4
		}
		budget = next
		newKeep, minimal := plan(items, budget, opts.MinKeep)
		if minimal || attempt >= 8 {
			// Nothing more can go: write the smallest bundle there is.
			res, n, err := writeTo(path, items, newKeep, fin, opts)
			if err != nil {
				return nil, err
			}
			return &Summary{Results: res, Bytes: n, Fits: n <= opts.MaxSize, Attempts: attempt + 1}, nil
		}
		keep = newKeep
	}
}

// writeTo streams one attempt into path through atomicfile: path is
// replaced only by a whole archive, and a failed write removes nothing but
// its own temporary file (it once removed whatever path named, /dev/full
// included).
func writeTo(path string, items []Item, keep map[int]int64, fin Finalize, opts Options) ([]Result, int64, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Abort()
	cw := &countWriter{w: f}
	res, err := write(cw, items, keep, fin, opts)
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		return nil, 0, err
	}
	return res, cw.n, nil
}

// plan decides how many bytes each trimmable item keeps so that all items
// together take about budget bytes: logs first, down to minKeep, then the
// other text files. It levels the largest files down to one size, so the
// small ones stay whole. minimal reports that every trimmable file is
// already at minKeep.
func plan(items []Item, budget, minKeep int64) (keep map[int]int64, minimal bool) {
	keep = map[int]int64{}
	sizes := func(pick func(Item) bool) []int {
		var idx []int
		for i, it := range items {
			if it.Text && pick(it) && it.Size > minKeep {
				idx = append(idx, i)
			}
		}
		return idx
	}
	tiers := [][]int{sizes(func(it Item) bool { return it.Log }), sizes(func(it Item) bool { return !it.Log })}
	var total int64
	for _, it := range items {
		total += it.Size
	}
	for _, tier := range tiers {
		if total <= budget {
			break
		}
		var tierSize int64
		for _, i := range tier {
			tierSize += items[i].Size
		}
		avail := tierSize - (total - budget)
		level := levelFor(items, tier, avail, minKeep)
		for _, i := range tier {
			if items[i].Size > level {
				keep[i] = level
				total -= items[i].Size - level
			}
		}
	}
	minimal = true
	for _, tier := range tiers {
		for _, i := range tier {
			if k, ok := keep[i]; !ok || k > minKeep {
				minimal = false
			}
		}
	}
	return keep, minimal
}

// levelFor finds the size L such that the tier's files, each cut to at most
// L, take avail bytes (at least minKeep each).
func levelFor(items []Item, tier []int, avail, minKeep int64) int64 {
	s := make([]int64, len(tier))
	for j, i := range tier {
		s[j] = items[i].Size
	}
	sort.Slice(s, func(a, b int) bool { return s[a] < s[b] })
	var below int64
	for j, size := range s {
		rest := int64(len(s) - j)
		if level := (avail - below) / rest; level <= size {
			return max(level, minKeep)
		}
		below += size
	}
	return s[len(s)-1]
}

// write writes one attempt. keep maps item index to bytes kept.
func write(w io.Writer, items []Item, keep map[int]int64, fin Finalize, opts Options) ([]Result, error) {
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	in := &countWriter{w: enc}
	if cw, ok := w.(*capWriter); ok {
		cw.inCounter = in
	}
	tw := tar.NewWriter(in)
	results := make([]Result, 0, len(items))
	for i, it := range items {
		res, err := writeItem(tw, it, keep[i], opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.Name, err)
		}
		results = append(results, res)
	}
	if fin != nil {
		name, data, err := fin(results)
		if err != nil {
			return nil, err
		}
		if err := writeEntry(tw, name, time.Time{}, int64(len(data)), bytes.NewReader(data)); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return results, nil
}

func writeItem(tw *tar.Writer, it Item, keep int64, opts Options) (Result, error) {
	res := Result{Name: it.Name}
	rc, err := it.Open()
	if err != nil {
		return res, err
	}
	defer rc.Close()
	var r io.Reader = rc
	var stream *redact.Stream
	if it.Text && opts.Redactor != nil {
		stream = opts.Redactor.NewStream()
		r = redact.NewReader(r, stream)
	}
	size := it.Size
	if keep > 0 && keep < it.Size {
		// Cut points are found on the raw content; redaction keeps every
		// byte where it is, so they hold for the redacted stream too.
		cuts, err := findCuts(it, keep)
		if err != nil {
			return res, err
		}
		cuts.note = fmt.Sprintf("[coroner: %d bytes were left out here to fit the bundle under %s; see manifest.json]\n",
			cuts.tailStart-cuts.headEnd, opts.CapName)
		if cuts.headEnd > 0 && !cuts.headNL {
			cuts.note = "\n" + cuts.note
		}
		r = cuts.reader(r)
		size = cuts.size(it.Size)
		res.Trim = &Trim{OriginalBytes: it.Size, HeadBytes: cuts.headEnd, TailBytes: it.Size - cuts.tailStart,
			RemovedBytes: cuts.tailStart - cuts.headEnd, Reason: "to fit " + opts.CapName}
	}
	h := sha256.New()
	if err := writeEntry(tw, it.Name, it.ModTime, size, io.TeeReader(r, h)); err != nil {
		return res, err
	}
	res.Bytes = size
	res.SHA256 = hex.EncodeToString(h.Sum(nil))
	if stream != nil {
		res.Counts = stream.Counts()
	}
	return res, nil
}

func writeEntry(tw *tar.Writer, name string, mod time.Time, size int64, r io.Reader) error {
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     name,
		Mode:     0o644,
		Size:     size,
		ModTime:  mod.UTC().Truncate(time.Second),
	}
	if mod.IsZero() {
		hdr.ModTime = time.Unix(0, 0).UTC()
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.CopyN(tw, r, size)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("the content ended after %d of %d bytes (the file shrank while it was packed?)", n, size)
		}
		return err
	}
	return nil
}

// cuts are where a trimmed file's head ends and its tail starts, on line
// boundaries where there is one near the limit.
type cuts struct {
	headEnd, tailStart int64
	headNL             bool // the head ends with a newline
	note               string
}

func (c *cuts) size(total int64) int64 {
	return c.headEnd + int64(len(c.note)) + total - c.tailStart
}

// reader yields the head, the note and the tail of r.
func (c *cuts) reader(r io.Reader) io.Reader {
	head := io.LimitReader(r, c.headEnd)
	rest := readerFunc(func(p []byte) (int, error) {
		if _, err := io.CopyN(io.Discard, r, c.tailStart-c.headEnd); err != nil {
			return 0, err
		}
		return 0, io.EOF
	})
	return io.MultiReader(head, strings.NewReader(c.note), rest, r)
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// findCuts reads the item once to put the cuts on line boundaries: the
// head keeps a quarter of keep (at most 1 MiB; the start of a log holds the
// configuration), the tail the rest (the end holds what went wrong).
func findCuts(it Item, keep int64) (*cuts, error) {
	headWant := min(keep/4, 1<<20)
	tailWant := keep - headWant
	rc, err := it.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	c := &cuts{headEnd: headWant, tailStart: it.Size - tailWant}
	var pos int64
	lastNL, firstNL := int64(-1), int64(-1)
	buf := make([]byte, 256<<10)
	for {
		n, err := rc.Read(buf)
		for i := 0; i < n; i++ {
			if buf[i] != '\n' {
				continue
			}
			p := pos + int64(i)
			if p < headWant {
				lastNL = p
			}
			if p >= it.Size-tailWant && firstNL < 0 {
				firstNL = p
			}
		}
		pos += int64(n)
		if err == io.EOF || firstNL >= 0 {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	// A line boundary counts only near the limit: a head made of one
	// giant line is cut where it is.
	if lastNL >= 0 && headWant-lastNL < 64<<10 {
		c.headEnd, c.headNL = lastNL+1, true
	}
	if firstNL >= 0 && firstNL-(it.Size-tailWant) < 64<<10 && firstNL+1 < it.Size {
		c.tailStart = firstNL + 1
	}
	return c, nil
}

// countWriter counts what goes through.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// capWriter keeps the archive in memory and fails once it passes max.
type capWriter struct {
	buf       bytes.Buffer
	max       int64
	written   int64
	in        int64
	inCounter *countWriter
}

func (c *capWriter) Write(p []byte) (int, error) {
	c.written += int64(len(p))
	if c.inCounter != nil {
		c.in = c.inCounter.n
	}
	if c.written > c.max {
		return 0, ErrTooBig
	}
	return c.buf.Write(p)
}

// SafeName cleans a path for the archive: slash-separated, relative, no
// "..", no empty or dot elements.
func SafeName(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	var out []string
	for _, e := range strings.Split(p, "/") {
		if e == "" || e == "." || e == ".." {
			continue
		}
		out = append(out, e)
	}
	return path.Join(out...)
}
