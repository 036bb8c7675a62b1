package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/internal/atomicfile"
	"github.com/coroner-dev/coroner/internal/escape"
	"github.com/coroner-dev/coroner/internal/pack"
	"github.com/coroner-dev/coroner/internal/redact"
	specialfile "github.com/coroner-dev/coroner/internal/special"
	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/bundle"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/manifest"
	"github.com/coroner-dev/coroner/reports"
)

// writeFlags are the flags of the commands that write a bundle.
type writeFlags struct {
	Output      string `short:"o" required:"" placeholder:"FILE" help:"The bundle to write (a .tar.zst)."`
	NoRedact    bool   `name:"no-redact" help:"Keep secrets (tokens, keys, passwords) in the bundle. Redaction is on by default."`
	RedactHosts bool   `name:"redact-hosts" help:"Also replace host names, IP addresses and user names by pseudonyms (the same value gets the same pseudonym across the bundle)."`
	MaxSize     string `name:"max-size" default:"25MB" help:"Trim the middle of the largest logs until the bundle fits (GitHub's attachment limit is 25MB); 0 for no limit."`
	Quiet       bool   `short:"q" help:"Print no progress on stderr."`
}

func (p *writeFlags) check() (int64, error) {
	if p.NoRedact && p.RedactHosts {
		return 0, fail(exitUsage, "--no-redact and --redact-hosts contradict each other")
	}
	max := int64(0)
	if s := strings.TrimSpace(p.MaxSize); s != "0" && s != "" {
		n, err := parseSize(s)
		if err != nil {
			return 0, fail(exitUsage, "--max-size: %v", err)
		}
		max = n
	}
	if st, err := os.Stat(p.Output); err == nil && st.IsDir() {
		return 0, fail(exitUsage, "-o %s: is a directory; name the bundle file", p.Output)
	}
	// A device, FIFO or link is refused before a collect that may take
	// minutes, not after it; writing re-checks (internal/atomicfile).
	if err := atomicfile.Check(p.Output); err != nil {
		return 0, fail(exitInternal, "-o %v; name the bundle file", err)
	}
	if dir := filepath.Dir(p.Output); dir != "" {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return 0, fail(exitUsage, "-o %s: the folder %s does not exist", p.Output, dir)
		}
	}
	return max, nil
}

// localNames are the host and user names of this machine, which
// --redact-hosts replaces even where the evidence does not reveal them as
// such.
func localNames() (hosts, users []string) {
	if h, err := os.Hostname(); err == nil {
		hosts = append(hosts, h)
	}
	if u, err := user.Current(); err == nil {
		users = append(users, u.Username)
	}
	for _, v := range []string{"SUDO_USER", "USER", "LOGNAME"} {
		if s := os.Getenv(v); s != "" {
			users = append(users, s)
		}
	}
	return hosts, users
}

// packJob is a bundle to write: its files, the manifest records that go
// with them (an artifact whose Path names an item describes it), and the
// rest of the manifest.
type packJob struct {
	items    []pack.Item
	manifest *manifest.Manifest
	redactor *redact.Redactor
	maxSize  int64
	capName  string
}

// writeBundle packs the job into out: it detects each file's kind, learns
// names for --redact-hosts, redacts the manifest's own text and writes the
// archive with the manifest last.
func writeBundle(out string, job *packJob) (*pack.Summary, error) {
	m := job.manifest
	kinds := map[string]string{}
	for _, it := range job.items {
		k, err := detectKind(it)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.Name, err)
		}
		kinds[it.Name] = string(k)
	}
	r := job.redactor
	counts := redact.Counts{}
	if r != nil && r.Hosts() {
		for _, it := range job.items {
			if !it.Text {
				continue
			}
			rc, err := it.Open()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", it.Name, err)
			}
			err = r.Learn(rc)
			rc.Close()
			if err != nil {
				return nil, fmt.Errorf("%s: %w", it.Name, err)
			}
		}
	}
	if r != nil && r.Hosts() {
		// Names and the manifest's paths are text the bundle carries too:
		// a host or user that only a folder's name gives away is learned
		// before the first pseudonym is handed out.
		for _, it := range job.items {
			r.LearnString(it.Name)
		}
		for _, s := range manifestTexts(m) {
			r.LearnString(*s)
		}
	}
	red := func(s string) string {
		if r == nil || s == "" {
			return s
		}
		return r.String(s, counts)
	}
	// Names are redacted like content: a folder named after a user or host
	// would otherwise give it away. Two names that differ only in a secret
	// may become one: the second gets a number (name~2).
	if r != nil {
		renamed := map[string]string{}
		taken := map[string]bool{}
		for i := range job.items {
			n := r.Path(job.items[i].Name, counts)
			for k, base := 2, n; taken[n]; k++ {
				n = fmt.Sprintf("%s~%d", base, k)
			}
			taken[n] = true
			renamed[job.items[i].Name] = n
			kinds[n] = kinds[job.items[i].Name]
			job.items[i].Name = n
		}
		for i := range m.Artifacts {
			if n, ok := renamed[m.Artifacts[i].Path]; ok {
				m.Artifacts[i].Path = n
			}
		}
	}
	for _, s := range manifestTexts(m) {
		*s = red(*s)
	}
	for i := range m.Artifacts {
		if a := &m.Artifacts[i]; a.Path != "" {
			a.Kind = kinds[a.Path]
		}
	}
	if job.maxSize > 0 {
		m.SizeCap = &manifest.SizeCap{MaxBytes: job.maxSize}
	}
	finalize := func(results []pack.Result) (string, []byte, error) {
		mm := *m
		mm.Artifacts = append([]manifest.Artifact(nil), m.Artifacts...)
		total := redact.Counts{}
		total.Add(counts)
		byName := map[string]*pack.Result{}
		for i := range results {
			byName[results[i].Name] = &results[i]
			total.Add(results[i].Counts)
		}
		for i := range mm.Artifacts {
			a := &mm.Artifacts[i]
			res := byName[a.Path]
			if a.Path == "" || res == nil {
				continue
			}
			a.Bytes, a.SHA256 = res.Bytes, res.SHA256
			if t := res.Trim; t != nil {
				a.Trimmed = &manifest.Cut{OriginalBytes: t.OriginalBytes, HeadBytes: t.HeadBytes, TailBytes: t.TailBytes, RemovedBytes: t.RemovedBytes, Reason: t.Reason}
			}
		}
		mm.Redaction = manifest.Redaction{Enabled: r != nil, Hosts: r != nil && r.Hosts()}
		if len(total) > 0 {
			mm.Redaction.Counts = total
		}
		var b bytes.Buffer
		if err := manifest.Encode(&b, &mm); err != nil {
			return "", nil, err
		}
		return manifest.Name, b.Bytes(), nil
	}
	return pack.WriteFile(out, job.items, finalize, pack.Options{MaxSize: job.maxSize, Redactor: r, CapName: job.capName})
}

// manifestTexts are the manifest's strings that come from the machine or
// the evidence, and so are redacted like the files (a.Path is renamed with
// its item).
func manifestTexts(m *manifest.Manifest) []*string {
	var out []*string
	for i := range m.Artifacts {
		a := &m.Artifacts[i]
		out = append(out, &a.Command, &a.Program, &a.RunAs, &a.Stderr, &a.Error, &a.Note, &a.Source, &a.Skipped)
	}
	if h := m.Host; h != nil {
		out = append(out, &h.Hostname, &h.User)
	}
	if t := m.Target; t != nil {
		out = append(out, &t.Model, &t.URL)
	}
	for i := range m.Notes {
		out = append(out, &m.Notes[i])
	}
	return out
}

// detectKind sniffs an item the way the analyzer will.
func detectKind(it pack.Item) (facts.Kind, error) {
	if !it.Text {
		return facts.KindUnknown, nil
	}
	rc, err := it.Open()
	if err != nil {
		return "", err
	}
	defer rc.Close()
	head := make([]byte, parser.HeadSize)
	n, err := io.ReadFull(rc, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	return parser.Detect(path.Base(it.Name), head[:n]), nil
}

// summarize says on stderr what was written.
func summarize(e *env, quiet bool, out string, redacted bool, sum *pack.Summary, maxSize int64) {
	if !sum.Fits {
		fmt.Fprintf(e.stderr, "coroner: warning: %s is %s, over --max-size %s even with every log trimmed to its minimum\n",
			out, reports.HumanBytes(sum.Bytes), reports.HumanBytes(maxSize))
	}
	if quiet || !e.stderrTTY {
		return
	}
	trimmed, secrets := 0, 0
	for _, r := range sum.Results {
		if r.Trim != nil {
			trimmed++
		}
		secrets += r.Counts.Total()
	}
	msg := fmt.Sprintf("wrote %s: %d files, %s", out, len(sum.Results)+1, reports.HumanBytes(sum.Bytes))
	if trimmed > 0 {
		msg += fmt.Sprintf(", %d trimmed to fit", trimmed)
	}
	if redacted {
		msg += fmt.Sprintf(", %d values redacted", secrets)
	} else {
		msg += ", not redacted"
	}
	fmt.Fprintf(e.stderr, "\r\x1b[Kcoroner: %s\n", msg)
}

type bundleCmd struct {
	Paths []string `arg:"" name:"path" help:"Files and folders to pack. Symbolic links are recorded, never followed." type:"string"`
	writeFlags
}

func (c *bundleCmd) Run(e *env) error {
	maxSize, err := c.check()
	if err != nil {
		return err
	}
	outAbs, _ := filepath.Abs(c.Output)
	m := &manifest.Manifest{Format: manifest.Format, Version: manifest.Version, Tool: manifest.Tool{Name: "coroner", Version: version},
		Command: "bundle"}
	b := &bundler{out: outAbs, redact: !c.NoRedact, used: map[string]int{}}
	outSt, outErr := os.Stat(c.Output)
	for _, p := range c.Paths {
		st, err := os.Lstat(p)
		if err != nil {
			return fail(exitInput, "cannot read %s: %v", p, unwrapPathError(err))
		}
		// A file named both to pack and as -o would be left out as the
		// bundle being written, then replaced by it: the evidence gone.
		// (An old bundle inside a folder to pack is only left out.)
		if outErr == nil && st.Mode().IsRegular() && os.SameFile(outSt, st) {
			return fail(exitInternal, "-o %s is %s, a file to pack: coroner does not write over its evidence; name another file", c.Output, p)
		}
	}
	// With several paths each keeps its folders below the one they share:
	// a/server.log and b/server.log, not server.log and server.log.2.
	names := bundle.InputNames(c.Paths)
	for i, p := range c.Paths {
		if err := b.add(p, names[i]); err != nil {
			return fail(exitInput, "%v", err)
		}
	}
	m.Artifacts = b.arts
	job := &packJob{items: b.items, manifest: m, maxSize: maxSize, capName: "--max-size " + c.MaxSize}
	if !c.NoRedact {
		hosts, users := localNames()
		job.redactor = redact.New(redact.Options{Hosts: c.RedactHosts, Hostnames: hosts, Users: users})
	}
	sum, err := writeBundle(c.Output, job)
	if err != nil {
		return fail(exitInternal, "write %s: %v", c.Output, err)
	}
	summarize(e, c.Quiet, c.Output, job.redactor != nil, sum, maxSize)
	if !c.Quiet {
		for _, n := range b.special {
			fmt.Fprintf(e.stderr, "coroner: skipped %s\n", escape.Text(n))
		}
	}
	return nil
}

// bundler turns paths into items, never following a link.
type bundler struct {
	out    string
	redact bool
	items  []pack.Item
	arts   []manifest.Artifact
	used   map[string]int
	// special are the files left out for not being regular files (FIFOs,
	// sockets, devices), each said on stderr: a bundle without them may
	// surprise.
	special []string
}

func (b *bundler) add(root, prefix string) error {
	st, err := os.Lstat(root)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		name := prefix
		if name == "" {
			name = filepath.Base(root)
		}
		b.file(root, name, st)
		return nil
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			b.skip(p, p, "unreadable: "+unwrapPathError(err).Error())
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		name := filepath.ToSlash(rel)
		if prefix != "" {
			name = prefix + "/" + name
		}
		info, err := d.Info()
		if err != nil {
			b.skip(p, name, "unreadable: "+err.Error())
			return nil
		}
		b.file(p, name, info)
		return nil
	})
}

func (b *bundler) skip(p, name, why string) {
	b.arts = append(b.arts, manifest.Artifact{Source: p, ExitCode: -1, Skipped: why, Command: "pack " + name})
}

func (b *bundler) file(p, name string, st fs.FileInfo) {
	if abs, _ := filepath.Abs(p); abs == b.out {
		return // the bundle being written
	}
	name = pack.SafeName(name)
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		b.skip(p, name, "a symbolic link (to "+target+"): links are recorded, never followed; name the target to pack it")
		return
	case !st.Mode().IsRegular():
		why := specialfile.Describe(st.Mode()) + ", not a regular file"
		b.skip(p, name, why)
		b.special = append(b.special, p+": "+why)
		return
	}
	// Compressed files are packed decompressed, archives member by member,
	// UTF-16 decoded: every byte packed is read as text and redacted.
	for _, e := range pack.Expand(p, name, st.ModTime(), pack.ExpandOptions{KeepBinary: !b.redact}) {
		if e.Skipped != "" {
			b.skip(p, e.Name, e.Skipped)
			continue
		}
		head, err := readHead(e.Open)
		if err != nil {
			var nr *specialfile.NotRegularError
			if errors.As(err, &nr) {
				// Swapped for a FIFO or a device since it was listed.
				why := specialfile.Describe(nr.Mode) + ", not a regular file"
				b.skip(p, e.Name, why)
				b.special = append(b.special, p+": "+why)
				continue
			}
			b.skip(p, e.Name, "unreadable: "+unwrapPathError(err).Error())
			continue
		}
		n := b.unique(e.Name)
		k := parser.Detect(path.Base(n), head)
		b.items = append(b.items, pack.Item{Name: n, Size: e.Size, ModTime: e.ModTime, Open: e.Open, Text: e.Text, Log: e.Text && k.IsLog()})
		b.arts = append(b.arts, manifest.Artifact{Path: n, Source: p, SourceBytes: st.Size(), ModTime: e.ModTime.UTC().Truncate(time.Second),
			Command: "pack " + filepath.ToSlash(p), Note: e.Note})
	}
}

// unique returns name, or name~2, name~3 ... when it is taken (not
// name.2, which reads as a rotated piece of name).
func (b *bundler) unique(name string) string {
	b.used[name]++
	if n := b.used[name]; n > 1 {
		return fmt.Sprintf("%s~%d", name, n)
	}
	return name
}

// readHead reads the first bytes of an entry, for its kind.
func readHead(open func() (io.ReadCloser, error)) ([]byte, error) {
	rc, err := open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	head := make([]byte, parser.HeadSize)
	n, err := io.ReadFull(rc, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return head[:n], nil
}
