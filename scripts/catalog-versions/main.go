// Command catalog-versions derives the versions that print each message of
// coroner's signature catalog from the release tags of the upstream
// repositories, so that a catalog entry's affected range is read from the
// source, not guessed.
//
// Each entry of rules/catalog/signatures.yaml may name its `source`: a
// repository and a fixed string of the code that prints the message (the
// stable part of a format string). Given local git clones or snapshots of
// those repositories, this program lists every release tag, searches each
// one for the entry's strings (git grep -F, one call per tag), and writes,
// per entry and repository, the first and the last release whose source
// holds the text, the first release after that without it, the derived
// range in pip's notation and the source line at the last release:
//
//	go run ./scripts/catalog-versions \
//	    -repo NVIDIA/nccl=/src/nccl -repo flashinfer-ai/flashinfer=/src/flashinfer \
//	    -o rules/catalog/versions.yaml
//	go generate ./rules/catalog   # the JSON form the binary reads
//
// A repository given as a directory that is no git repository but holds one
// folder per release (name-1.2.3/, as unpacked sdists are) is searched the
// same way, folder by folder. Entries of repositories not given keep what
// the output file already says, so one repository can be folded in at a
// time; CI needs none of the snapshots, only the checked-in result.
//
// Release tags are the tags that read as a version (v0.8.5, v2.18.3-1,
// 0.4.0.post1); pre-releases, nightlies and dev tags are left out unless
// -pre is given. NCCL's packaging suffix ("-1") is dropped from the version.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/coroner-dev/coroner/rules"
)

type repoFlag map[string]string

func (r repoFlag) String() string { return fmt.Sprint(map[string]string(r)) }

func (r repoFlag) Set(s string) error {
	name, dir, ok := strings.Cut(s, "=")
	if !ok || !strings.Contains(name, "/") || dir == "" {
		return fmt.Errorf("want OWNER/NAME=DIR, got %q", s)
	}
	r[name] = dir
	return nil
}

func main() {
	repos := repoFlag{}
	flag.Var(repos, "repo", "OWNER/NAME=DIR: a local clone or snapshot of a repository (repeatable)")
	catalog := flag.String("catalog", "rules/catalog/signatures.yaml", "the signature catalog")
	out := flag.String("o", "rules/catalog/versions.yaml", "the derived ranges to write (merged with what it holds)")
	pre := flag.Bool("pre", false, "count pre-release tags (rc, nightly, dev) as releases")
	verbose := flag.Bool("v", false, "print each entry's presence per tag")
	flag.Parse()
	if len(repos) == 0 {
		fmt.Fprintln(os.Stderr, "catalog-versions: give at least one -repo OWNER/NAME=DIR")
		os.Exit(2)
	}
	if err := run(repos, *catalog, *out, *pre, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "catalog-versions:", err)
		os.Exit(1)
	}
}

// entry is what the generator reads of a catalog entry.
type entry struct {
	ID     string              `yaml:"id"`
	Source []rules.SourceProbe `yaml:"source"`
}

func run(repos map[string]string, catalog, out string, pre, verbose bool) error {
	data, err := os.ReadFile(catalog)
	if err != nil {
		return err
	}
	var entries []entry
	if err := yaml.Unmarshal(data, &entries); err != nil {
		return fmt.Errorf("%s: %v", catalog, err)
	}
	var kept []*rules.DerivedRange
	if old, err := os.ReadFile(out); err == nil {
		ds, err := rules.ParseDerived(old, out)
		if err != nil {
			return err
		}
		for _, d := range ds {
			if _, redo := repos[d.Repo]; !redo {
				kept = append(kept, d)
			}
		}
	}
	names := make([]string, 0, len(repos))
	for n := range repos {
		names = append(names, n)
	}
	sort.Strings(names)
	derived := kept
	for _, name := range names {
		ds, err := deriveRepo(name, repos[name], entries, pre, verbose)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		derived = append(derived, ds...)
	}
	sort.SliceStable(derived, func(i, j int) bool {
		if derived[i].ID != derived[j].ID {
			return derived[i].ID < derived[j].ID
		}
		return derived[i].Repo < derived[j].Repo
	})
	return os.WriteFile(out, render(derived, names), 0o644)
}

// release is one tag (or folder) read as a version.
type release struct {
	ref     string // what git grep searches: the tag, or a folder
	tag     string // the name as GitHub knows it, for links
	version rules.Version
}

var (
	// A release tag is a version, maybe after a "v" (v0.8.5, v2.18.3-1,
	// 0.4.0.post1); a folder of unpacked sources may name its package
	// first (vllm-0.8.5). Tags of a repository's other products
	// (nccl4py-v0.3.1) and nightlies are no releases of the library.
	tagRE       = regexp.MustCompile(`^v?(\d+(?:\.\d+)+(?:\.?(?:post|rc|a|b|dev)\d*)*(?:-\d+)?)$`)
	folderRE    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*-v?(\d+(?:\.\d+)+(?:\.?(?:post|rc|a|b|dev)\d*)*)$`)
	packagingRE = regexp.MustCompile(`-\d+$`)
)

// versionOf reads a tag or folder name as a release, without NCCL's
// packaging revision.
func versionOf(name string, pre, folder bool) (rules.Version, bool) {
	re := tagRE
	if folder {
		re = folderRE
	}
	m := re.FindStringSubmatch(name)
	if m == nil {
		return rules.Version{}, false
	}
	v, ok := rules.ParseVersion(packagingRE.ReplaceAllString(m[1], ""))
	if !ok {
		return rules.Version{}, false
	}
	if !pre && (v.Pre != "" || v.Dev >= 0) {
		return rules.Version{}, false
	}
	return v, true
}

func releases(dir string, pre bool) ([]release, bool, error) {
	var out []release
	if isGit(dir) {
		b, err := git(dir, "tag", "--list")
		if err != nil {
			return nil, true, err
		}
		for _, t := range strings.Fields(string(b)) {
			if v, ok := versionOf(t, pre, false); ok {
				out = append(out, release{ref: t, tag: t, version: v})
			}
		}
		return sortReleases(out), true, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if v, ok := versionOf(e.Name(), pre, true); ok {
			out = append(out, release{ref: filepath.Join(dir, e.Name()), tag: "v" + v.Text, version: v})
		}
	}
	return sortReleases(out), false, nil
}

func sortReleases(rs []release) []release {
	sort.SliceStable(rs, func(i, j int) bool { return rs[i].version.Compare(rs[j].version) < 0 })
	// Two tags of one version (v2.5.6-1 and v2.5.6-2): keep the first.
	var out []release
	for i, r := range rs {
		if i > 0 && r.version.Compare(rs[i-1].version) == 0 {
			continue
		}
		out = append(out, r)
	}
	return out
}

func isGit(dir string) bool {
	_, err := git(dir, "rev-parse", "--git-dir")
	return err == nil
}

func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && stderr.Len() == 0 {
			return b, nil // git grep: nothing found
		}
		return b, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return b, nil
}

// probe is one source string of one entry.
type probe struct {
	id string
	rules.SourceProbe
}

// hit is where a probe's text was found in one release.
type hit struct {
	path string
	line int
}

// skipPath leaves tests and documentation out: a message quoted in a test
// or a doc is not printed by the release.
func skipPath(p string) bool {
	for _, part := range strings.Split(p, "/") {
		switch part {
		case "test", "tests", "docs", "doc", "benchmarks", "examples":
			return true
		}
	}
	return strings.HasSuffix(p, ".md") || strings.HasSuffix(p, ".rst") || strings.HasPrefix(filepath.Base(p), "test_")
}

func deriveRepo(name, dir string, entries []entry, pre, verbose bool) ([]*rules.DerivedRange, error) {
	var probes []probe
	for _, e := range entries {
		for _, s := range e.Source {
			if s.Repo == name {
				probes = append(probes, probe{id: e.ID, SourceProbe: s})
			}
		}
	}
	if len(probes) == 0 {
		return nil, nil
	}
	rels, isGitDir, err := releases(dir, pre)
	if err != nil {
		return nil, err
	}
	if len(rels) == 0 {
		return nil, fmt.Errorf("no release tags or folders in %s", dir)
	}
	// found[release][id] is the first hit of the entry's probes.
	found := make([]map[string]hit, len(rels))
	for i, r := range rels {
		found[i], err = search(dir, r, isGitDir, probes)
		if err != nil {
			return nil, err
		}
	}
	ids := map[string]bool{}
	var order []string
	pkg := map[string]string{}
	fixedBy := map[string]string{}
	for _, p := range probes {
		if p.FixedBy != "" {
			fixedBy[p.id] = p.FixedBy
		}
		if !ids[p.id] {
			ids[p.id] = true
			order = append(order, p.id)
		}
		if p.Package != "" && pkg[p.id] == "" {
			pkg[p.id] = p.Package
		}
	}
	var out []*rules.DerivedRange
	for _, id := range order {
		first, last, gaps := -1, -1, 0
		for i := range rels {
			if _, ok := found[i][id]; ok {
				if first < 0 {
					first = i
				} else if last < i-1 {
					gaps++
				}
				last = i
			}
		}
		if verbose {
			var marks strings.Builder
			for i := range rels {
				if _, ok := found[i][id]; ok {
					marks.WriteByte('#')
				} else {
					marks.WriteByte('.')
				}
			}
			fmt.Fprintf(os.Stderr, "%-40s %s\n", id, marks.String())
		}
		p := pkg[id]
		if p == "" {
			p = packageOf(name)
		}
		d := &rules.DerivedRange{ID: id, Repo: name, Package: p, Tags: len(rels)}
		if first < 0 {
			d.Affected = ""
			out = append(out, d)
			fmt.Fprintf(os.Stderr, "%s: %s: no release of %s holds its text\n", name, id, name)
			continue
		}
		d.First, d.Last = rels[first].version.Text, rels[last].version.Text
		d.Affected = fmt.Sprintf("%s >=%s", p, d.First)
		if last < len(rels)-1 {
			d.Gone = rels[last+1].version.Text
			d.Affected += ", <" + d.Gone
		}
		h := found[last][id]
		d.At = fmt.Sprintf("https://github.com/%s/blob/%s/%s#L%d", name, rels[last].tag, h.path, h.line)
		if c := fixedBy[id]; c != "" && isGitDir {
			fx, err := firstRelease(dir, c)
			if err != nil {
				return nil, fmt.Errorf("%s: fixed_by %s: %w", id, c, err)
			}
			if fx != "" {
				d.Fixed = p + " " + fx
			}
		}
		if gaps > 0 {
			fmt.Fprintf(os.Stderr, "%s: %s: the text is missing from %d stretch(es) of releases between %s and %s\n", name, id, gaps, d.First, d.Last)
		}
		out = append(out, d)
	}
	return out, nil
}

// firstRelease is the oldest release tag, pre-releases included, that
// contains commit: the first version with the fix.
func firstRelease(dir, commit string) (string, error) {
	b, err := git(dir, "tag", "--contains", commit)
	if err != nil {
		return "", err
	}
	var best *rules.Version
	for _, t := range strings.Fields(string(b)) {
		v, ok := versionOf(t, true, false)
		if !ok {
			continue
		}
		if best == nil || v.Compare(*best) < 0 {
			vv := v
			best = &vv
		}
	}
	if best == nil {
		return "", nil
	}
	return best.Text, nil
}

// packageOf is the version key of a repository's releases.
func packageOf(repo string) string {
	switch repo {
	case "NVIDIA/nccl":
		return "nccl"
	case "flashinfer-ai/flashinfer":
		return "flashinfer"
	case "deepseek-ai/DeepGEMM":
		return "deep_gemm"
	case "huggingface/text-generation-inference":
		return "tgi"
	case "vllm-project/vllm":
		return "vllm"
	case "sgl-project/sglang":
		return "sglang"
	case "pytorch/pytorch":
		return "torch"
	case "triton-lang/triton":
		return "triton"
	case "NVIDIA/TensorRT-LLM":
		return "tensorrt_llm"
	}
	_, n, _ := strings.Cut(repo, "/")
	return strings.ToLower(n)
}

// search finds every probe in one release with one git grep (or one walk
// of a folder).
func search(dir string, r release, isGitDir bool, probes []probe) (map[string]hit, error) {
	out := map[string]hit{}
	texts := map[string]bool{}
	args := []string{"grep", "-F", "-n", "-I"}
	for _, p := range probes {
		if !texts[p.Text] {
			texts[p.Text] = true
			args = append(args, "-e", p.Text)
		}
	}
	var lines []string
	if isGitDir {
		args = append(args, r.ref)
		b, err := git(dir, args...)
		if err != nil {
			return nil, err
		}
		lines = strings.Split(string(b), "\n")
	} else {
		// A folder: git grep --no-index searches it as files.
		args = append([]string{"grep", "--no-index"}, args[1:]...)
		b, err := git(r.ref, args...)
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l != "" {
				lines = append(lines, r.ref+":"+l)
			}
		}
	}
	for _, l := range lines {
		// REF:PATH:LINE:TEXT
		rest, ok := strings.CutPrefix(l, r.ref+":")
		if !ok {
			continue
		}
		path, rest, ok := strings.Cut(rest, ":")
		if !ok || skipPath(path) {
			continue
		}
		ln, text, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(ln)
		for _, p := range probes {
			if _, done := out[p.id]; done || !strings.Contains(text, p.Text) {
				continue
			}
			if p.Path != "" && !strings.HasPrefix(path, p.Path) {
				continue
			}
			out[p.id] = hit{path: path, line: n}
		}
	}
	return out, nil
}

func render(ds []*rules.DerivedRange, redone []string) []byte {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	fmt.Fprintf(w, "# Versions that print each catalog message, derived from the release tags\n")
	fmt.Fprintf(w, "# of the upstream repositories by scripts/catalog-versions; do not edit.\n")
	fmt.Fprintf(w, "# Re-run it with local snapshots to fold in new releases:\n")
	fmt.Fprintf(w, "#   go run ./scripts/catalog-versions -repo OWNER/NAME=DIR ...\n")
	fmt.Fprintf(w, "# (the last run searched: %s)\n", strings.Join(redone, ", "))
	if len(ds) == 0 {
		fmt.Fprintln(w, "[]")
	}
	for _, d := range ds {
		fmt.Fprintf(w, "\n- id: %s\n  repo: %s\n  package: %s\n  tags: %d\n", d.ID, d.Repo, d.Package, d.Tags)
		if d.First != "" {
			fmt.Fprintf(w, "  first: %q\n  last: %q\n", d.First, d.Last)
		}
		if d.Gone != "" {
			fmt.Fprintf(w, "  gone: %q\n", d.Gone)
		}
		if d.Affected != "" {
			fmt.Fprintf(w, "  affected: %q\n", d.Affected)
		}
		if d.Fixed != "" {
			fmt.Fprintf(w, "  fixed: %q\n", d.Fixed)
		}
		if d.At != "" {
			fmt.Fprintf(w, "  at: %s\n", d.At)
		}
	}
	w.Flush()
	return b.Bytes()
}
