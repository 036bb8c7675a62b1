package collect

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// The server's package versions are read from disk, not by running its
// Python: the directory names of the *.dist-info and *.egg-info entries in
// the site-packages directories the server's processes have mapped (every
// server maps torch's shared libraries from its own), and in those its
// environment names. Directory names are all that is read, except
// torch/version.py for the CUDA torch was built with, opened without
// following links and only when it is a regular file of the process's
// owner or root.

// sitePackages lists the site-packages directories of process pid: those
// its memory maps hold files from, then those of $VIRTUAL_ENV, $CONDA_PREFIX
// and $PYTHONPATH, in that order, each once.
func sitePackages(procRoot string, pid int, env []string) []string {
	var out []string
	seen := map[string]bool{}
	root := selfIdentity().root()
	add := func(d string) {
		d = filepath.Clean(d)
		if !filepath.IsAbs(d) || seen[d] {
			return
		}
		seen[d] = true
		w, err := walkPath(d)
		if err != nil || !w.end.IsDir() {
			return
		}
		// As root, a folder the server's user pointed elsewhere (a
		// "site-packages" that is a link to root's own) is not listed.
		if root && w.rootMayRead(w.endUID, -1) != nil {
			return
		}
		out = append(out, d)
	}
	if f, err := os.Open(filepath.Join(procRoot, strconv.Itoa(pid), "maps")); err == nil {
		sc := bufio.NewScanner(io.LimitReader(f, 64<<20))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		for sc.Scan() {
			if d := siteDir(sc.Text()); d != "" {
				add(d)
			}
		}
		f.Close()
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "VIRTUAL_ENV", "CONDA_PREFIX":
			if m, _ := filepath.Glob(filepath.Join(v, "lib", "python3*", "site-packages")); len(m) > 0 {
				sort.Strings(m)
				for _, d := range m {
					add(d)
				}
			}
		case "PYTHONPATH":
			for _, d := range filepath.SplitList(v) {
				add(d)
			}
		}
	}
	return out
}

// siteDir is the site-packages (or Debian's dist-packages) directory of a
// /proc/PID/maps line's path, "" if it has none.
func siteDir(line string) string {
	i := strings.IndexByte(line, '/')
	if i < 0 {
		return ""
	}
	p := strings.TrimSuffix(line[i:], " (deleted)")
	for _, name := range []string{"/site-packages/", "/dist-packages/"} {
		if k := strings.Index(p, name); k >= 0 {
			return p[:k+len(name)-1]
		}
	}
	return ""
}

// distInfoRe reads a distribution's name and version from its metadata
// directory: "torch-2.5.1+cu124.dist-info", "flashinfer_python-0.2.5.dist-info",
// "triton-3.1.0-py3.11.egg-info". The version is PEP 440 (no "-").
var distInfoRe = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._]*?)-([0-9][^-]*?)(?:-py\d[\d.]*)?\.(?:dist|egg)-info$`)

// pkg is one installed distribution.
type pkg struct{ name, version, dir string }

func listPackages(dirs []string) []pkg {
	var out []pkg
	seen := map[string]bool{}
	for _, d := range dirs {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			m := distInfoRe.FindStringSubmatch(e.Name())
			if m == nil {
				continue
			}
			name := strings.ToLower(strings.ReplaceAll(m[1], "_", "-"))
			// The first directory on the path wins, as in Python.
			if seen[name] {
				continue
			}
			seen[name] = true
			out = append(out, pkg{name: name, version: m[2], dir: d})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// torchCUDARe reads torch/version.py's "cuda: Optional[str] = '12.4'" (or
// "cuda = '12.4'" before type annotations).
var torchCUDARe = regexp.MustCompile(`(?m)^cuda(?::[^=]*)?\s*=\s*'([0-9.]+)'`)

// torchCUDA reads the CUDA version torch was built with, from the
// version.py beside its metadata, "" if it cannot be read safely.
func torchCUDA(siteDir string, owner int) string {
	p := filepath.Join(siteDir, "torch", "version.py")
	// A version.py that is a link is none of torch's.
	if st, err := os.Lstat(p); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	w, err := walkPath(p)
	if err != nil || !w.end.Mode().IsRegular() || w.end.Size() > 64<<10 {
		return ""
	}
	judge := func(uid int) bool {
		return (uid == 0 || uid == owner) && (!selfIdentity().root() || w.rootMayRead(uid, -1) == nil)
	}
	if !judge(w.endUID) {
		return ""
	}
	f, st, err := openWalked(w)
	if err != nil {
		return ""
	}
	defer f.Close()
	if !judge(ownerOf(st)) {
		return ""
	}
	data, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	if m := torchCUDARe.FindSubmatch(data); m != nil {
		return string(m[1])
	}
	return ""
}

// packagesFile renders the packages as `pip freeze` does, with comments
// saying where they were read (envinfo reads it as a pip list).
func packagesFile(pid int, dirs []string, pkgs []pkg, cuda string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# coroner collect: Python packages of process %d, read from the names of the *.dist-info and *.egg-info directories in the site-packages it uses (no Python was run)\n", pid)
	for _, d := range dirs {
		fmt.Fprintf(&b, "# site-packages: %s\n", d)
	}
	if cuda != "" {
		fmt.Fprintf(&b, "# torch.version.cuda: %s\n", cuda)
	}
	for _, p := range pkgs {
		fmt.Fprintf(&b, "%s==%s\n", p.name, p.version)
	}
	return b.Bytes()
}
