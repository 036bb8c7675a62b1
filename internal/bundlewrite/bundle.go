package bundlewrite

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"time"

	"github.com/coroner-dev/coroner/internal/redact"
	"github.com/coroner-dev/coroner/internal/special"
	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/manifest"
)

// Writing a bundle: the items of coroner bundle (Bundler) or coroner
// collect, their manifest, redaction and the size cap, into one .tar.zst.

// LocalNames are the host and user names of this machine, which
// --redact-hosts replaces even where the evidence does not reveal them as
// such.
func LocalNames() (hosts, users []string) {
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

// Job is a bundle to write: its files, the manifest records that go with
// them (an artifact whose Path names an item describes it), and the rest
// of the manifest.
type Job struct {
	Items    []Item
	Manifest *manifest.Manifest
	// Redactor redacts every file, name and manifest text; nil packs
	// them as they are (--no-redact).
	Redactor *redact.Redactor
	// MaxSize trims the largest logs until the bundle fits (0: no
	// limit); CapName is the option that set it, for the manifest.
	MaxSize int64
	CapName string
}

// WriteBundle packs the job into out, a .tar.zst: it detects each file's
// kind the way the analyzer will, learns names for --redact-hosts, redacts
// the manifest's own text and writes the archive with the manifest last.
func WriteBundle(out string, job *Job) (*Summary, error) {
	m := job.Manifest
	kinds := map[string]string{}
	for _, it := range job.Items {
		k, err := detectKind(it)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.Name, err)
		}
		kinds[it.Name] = string(k)
	}
	r := job.Redactor
	counts := redact.Counts{}
	if r != nil && r.Hosts() {
		for _, it := range job.Items {
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
		for _, it := range job.Items {
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
		for i := range job.Items {
			n := r.Path(job.Items[i].Name, counts)
			for k, base := 2, n; taken[n]; k++ {
				n = fmt.Sprintf("%s~%d", base, k)
			}
			taken[n] = true
			renamed[job.Items[i].Name] = n
			kinds[n] = kinds[job.Items[i].Name]
			job.Items[i].Name = n
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
	if job.MaxSize > 0 {
		m.SizeCap = &manifest.SizeCap{MaxBytes: job.MaxSize}
	}
	finalize := func(results []Result) (string, []byte, error) {
		mm := *m
		mm.Artifacts = append([]manifest.Artifact(nil), m.Artifacts...)
		total := redact.Counts{}
		total.Add(counts)
		byName := map[string]*Result{}
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
	return WriteFile(out, job.Items, finalize, Options{MaxSize: job.MaxSize, Redactor: r, CapName: job.CapName})
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
func detectKind(it Item) (facts.Kind, error) {
	if !it.Text {
		return facts.KindUnknown, nil
	}
	head, err := readHead(it.Open)
	if err != nil {
		return "", err
	}
	return parser.Detect(path.Base(it.Name), head), nil
}

// Bundler turns files and folders into the items of a bundle (coroner
// bundle), never following a link: each file becomes an item and a
// manifest record, compressed files decompressed, archives member by
// member.
type Bundler struct {
	out    string
	redact bool
	// Items are the files to pack, Artifacts their manifest records and
	// those of what was left out.
	Items     []Item
	Artifacts []manifest.Artifact
	used      map[string]int
	// Special are the files left out for not being regular files (FIFOs,
	// sockets, devices), each to be said on stderr: a bundle without them
	// may surprise.
	Special []string
}

// NewBundler starts a bundle that will be written to out (which is never
// packed); redact drops binary content, which redaction cannot read.
func NewBundler(out string, redact bool) *Bundler {
	abs, _ := filepath.Abs(out)
	return &Bundler{out: abs, redact: redact, used: map[string]int{}}
}

// Add packs root, a file or a folder, under prefix (its name when empty).
func (b *Bundler) Add(root, prefix string) error {
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

func (b *Bundler) skip(p, name, why string) {
	b.Artifacts = append(b.Artifacts, manifest.Artifact{Source: p, ExitCode: -1, Skipped: why, Command: "pack " + name})
}

func (b *Bundler) file(p, name string, st fs.FileInfo) {
	if abs, _ := filepath.Abs(p); abs == b.out {
		return // the bundle being written
	}
	name = SafeName(name)
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(p)
		b.skip(p, name, "a symbolic link (to "+target+"): links are recorded, never followed; name the target to pack it")
		return
	case !st.Mode().IsRegular():
		why := special.Describe(st.Mode()) + ", not a regular file"
		b.skip(p, name, why)
		b.Special = append(b.Special, p+": "+why)
		return
	}
	// Compressed files are packed decompressed, archives member by member,
	// UTF-16 decoded: every byte packed is read as text and redacted.
	for _, e := range Expand(p, name, st.ModTime(), ExpandOptions{KeepBinary: !b.redact}) {
		if e.Skipped != "" {
			b.skip(p, e.Name, e.Skipped)
			continue
		}
		head, err := readHead(e.Open)
		if err != nil {
			var nr *special.NotRegularError
			if errors.As(err, &nr) {
				// Swapped for a FIFO or a device since it was listed.
				why := special.Describe(nr.Mode) + ", not a regular file"
				b.skip(p, e.Name, why)
				b.Special = append(b.Special, p+": "+why)
				continue
			}
			b.skip(p, e.Name, "unreadable: "+unwrapPathError(err).Error())
			continue
		}
		n := b.unique(e.Name)
		k := parser.Detect(path.Base(n), head)
		b.Items = append(b.Items, Item{Name: n, Size: e.Size, ModTime: e.ModTime, Open: e.Open, Text: e.Text, Log: e.Text && k.IsLog()})
		b.Artifacts = append(b.Artifacts, manifest.Artifact{Path: n, Source: p, SourceBytes: st.Size(), ModTime: e.ModTime.UTC().Truncate(time.Second),
			Command: "pack " + filepath.ToSlash(p), Note: e.Note})
	}
}

// unique returns name, or name~2, name~3 ... when it is taken (not
// name.2, which reads as a rotated piece of name).
func (b *Bundler) unique(name string) string {
	b.used[name]++
	if n := b.used[name]; n > 1 {
		return fmt.Sprintf("%s~%d", name, n)
	}
	return name
}

// unwrapPathError drops the path of an *os.PathError: the message names
// the file already.
func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
