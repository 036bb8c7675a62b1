package bundle

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
)

// InputNames names the inputs of one analysis or one packing, so that their
// files keep the folders they came from. With a single input the result is
// [""]: its entries keep their own paths. With several, each input is named
// by its path relative to the folder that all of them share: "run1" and
// "run2" for two folders side by side, "a/server.log" and "b/server.log"
// for two logs of one name in different folders (never "server.log" and
// "server.log.2", which read as one log and its rotated piece). "-" is
// "stdin". An input named like one before it (the same path twice) gets
// "~2", "~3": a suffix that no rotated log takes.
func InputNames(paths []string) []string {
	out := make([]string, len(paths))
	if len(paths) < 2 {
		return out
	}
	elems := make([][]string, len(paths))
	var common []string
	first := true
	for i, p := range paths {
		if p == "-" {
			continue
		}
		a, err := filepath.Abs(p)
		if err != nil {
			a = filepath.Clean(p)
		}
		e := strings.Split(strings.TrimRight(filepath.ToSlash(a), "/"), "/")
		elems[i] = e
		// A path's own name is never part of the shared folder.
		dir := e[:len(e)-1]
		if first {
			common, first = dir, false
			continue
		}
		n := 0
		for n < len(common) && n < len(dir) && common[n] == dir[n] {
			n++
		}
		common = common[:n]
	}
	seen := map[string]int{}
	for i, p := range paths {
		name := "stdin"
		if p != "-" {
			name = strings.Join(elems[i][len(common):], "/")
			if name == "" {
				name = path.Base(filepath.ToSlash(p))
			}
		}
		seen[name]++
		if n := seen[name]; n > 1 {
			name = fmt.Sprintf("%s~%d", name, n)
		}
		out[i] = name
	}
	return out
}

// SingleFile reports an entry that is its bundle's only file: a bundle that
// is one file, plain or compressed, not a folder or an archive.
func (e *Entry) SingleFile() bool {
	switch e.Container {
	case "file", "gzip", "zstd", "xz":
		return true
	}
	return false
}

// Under names an entry of the input that InputNames named input: its path
// under the input's name, or, for an input that is a single file, the
// file's own name in the input's folder ("a/server.log" for the input
// a/server.log.gz).
func (e *Entry) Under(input string) string {
	return Under(input, e.Path, e.SingleFile())
}

// Under is Entry.Under for a path that a walk cited: single says whether
// the input was a single file.
func Under(input, p string, single bool) string {
	switch {
	case input == "":
		return p
	case p == "":
		return input
	case single:
		if d := path.Dir(input); d != "." {
			return d + "/" + p
		}
		return p
	}
	return input + "/" + p
}
