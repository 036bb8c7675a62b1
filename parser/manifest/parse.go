package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// MaxBytes bounds the manifest read: a collect of many rounds is a few
// hundred kilobytes.
const MaxBytes = 32 << 20

// Sniff recognizes a coroner manifest by its format key.
func Sniff(name string, head []byte) (facts.Kind, int) {
	t := bytes.TrimSpace(head)
	if len(t) == 0 || t[0] != '{' {
		return "", 0
	}
	if bytes.Contains(t, []byte(`"format": "`+Format+`"`)) || bytes.Contains(t, []byte(`"format":"`+Format+`"`)) {
		return facts.KindManifest, 100
	}
	if strings.EqualFold(name, Name) && bytes.Contains(t, []byte(`"artifacts"`)) {
		return facts.KindManifest, 40
	}
	return "", 0
}

// Parse reads a manifest into facts: the artifacts, a capture stamp per
// round directory and the host's UTC offset.
func Parse(in *textio.Input, _ facts.Kind, out *facts.Facts) {
	var data []byte
	var starts []int
	for in.Scan() {
		starts = append(starts, len(data))
		data = append(data, in.Bytes()...)
		data = append(data, '\n')
		if len(data) > MaxBytes {
			in.Issuef(facts.IssueSizeLimit, "the manifest is larger than %d bytes; the rest was not read", MaxBytes)
			break
		}
	}
	// lineAt turns a byte offset into the 1-based line that holds it.
	lineAt := func(off int64) int {
		return sort.Search(len(starts), func(i int) bool { return int64(starts[i]) > off })
	}
	m, at, err := decode(data, lineAt)
	if err != nil {
		line := 0
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line = lineAt(se.Offset)
		}
		in.IssueAt(line, facts.IssueMalformed, "the manifest is not valid JSON: %v; kept what was read before", err)
	}
	if m.Format != "" && m.Format != Format {
		in.IssueAt(at.key["format"], facts.IssueUnrecognized, "format %q is not %q", m.Format, Format)
		return
	}
	if m.Version > Version {
		in.IssueAt(at.key["version"], facts.IssueUnrecognized, "manifest version %d is newer than this coroner reads (%d); read what it knows", m.Version, Version)
	}
	dir := path.Dir(in.Path)
	if dir == "." {
		dir = ""
	}
	join := func(p string) string {
		if p == "" || dir == "" {
			return p
		}
		return dir + "/" + p
	}
	src := func(line int) facts.Source { return facts.Source{File: in.Path, Line: line} }
	for i, a := range m.Artifacts {
		fa := &facts.Artifact{
			Src:      src(at.artifacts[i]),
			Path:     join(a.Path),
			Program:  a.Program,
			Command:  a.Command,
			Round:    a.Round,
			Start:    a.Start,
			End:      a.End,
			ExitCode: a.ExitCode,
			TimedOut: a.TimedOut,
			NotFound: a.NotFound,
			Skipped:  a.Skipped,
			Error:    a.Error,
			Stderr:   a.Stderr,
			Bytes:    a.Bytes,
			Trimmed:  a.Trimmed != nil || a.Truncated != nil,
			Timeout:  time.Duration(a.TimeoutS * float64(time.Second)),
			SHA256:   a.SHA256,
		}
		if fa.Program == "" {
			fa.Program = programOf(a.Command)
		}
		out.Runs = append(out.Runs, fa)
	}
	for i, r := range m.Rounds {
		if r.Start.IsZero() || r.Dir == "" {
			continue
		}
		// A malformed manifest (duplicate keys) can hold more rounds than the
		// positions found for them: cite the manifest itself then.
		line := 0
		if i < len(at.rounds) {
			line = at.rounds[i]
		}
		out.Capture = append(out.Capture, &facts.CaptureStamp{Src: src(line), At: r.Start.UTC(), Scope: join(r.Dir), Zoned: true})
	}
	for i, n := range m.Nodes {
		line := at.key["nodes"]
		if i < len(at.nodes) {
			line = at.nodes[i]
		}
		fn := &facts.Node{Src: src(line), Name: n.Name, Dir: join(n.Dir), Host: n.Host, Status: n.Status, Error: n.Error}
		if n.ClockOffsetS != nil {
			fn.ClockOffset = time.Duration(*n.ClockOffsetS * float64(time.Second))
			fn.HasClock = true
		}
		out.Nodes = append(out.Nodes, fn)
	}
	if m.Host != nil && !m.Host.Clock.IsZero() {
		out.Env = append(out.Env, &facts.EnvVar{Src: src(at.key["host"]), Name: "TZ_OFFSET_SECONDS",
			Value: strconv.Itoa(m.Host.UTCOffsetS), From: "manifest"})
	}
}

// programOf is the plain name of a command's program.
func programOf(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return ""
	}
	return path.Base(f[0])
}

// lines says where things start: the value of each top-level key, each
// artifact, each round and each node.
type lines struct {
	key       map[string]int
	artifacts []int
	rounds    []int
	nodes     []int
}

// decodeList reads a top-level array of records into list, and the line
// where each starts into lines.
func decodeList[T any](dec *json.Decoder, data []byte, lineAt func(int64) int, list *[]T, lines *[]int) error {
	return decodeArray(dec, data, lineAt, func(line int) error {
		var v T
		if err := dec.Decode(&v); err != nil {
			return err
		}
		*list = append(*list, v)
		*lines = append(*lines, line)
		return nil
	})
}

// decode reads the manifest token by token so that every artifact can be
// cited by its line. On an error it returns what it read before.
func decode(data []byte, lineAt func(int64) int) (*Manifest, *lines, error) {
	m := &Manifest{}
	at := &lines{key: map[string]int{}}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		if err == nil {
			err = fmt.Errorf("expected an object, found %v", tok)
		}
		return m, at, err
	}
	top := map[string]json.RawMessage{}
	var err error
	for dec.More() {
		var tok json.Token
		if tok, err = dec.Token(); err != nil {
			break
		}
		key, _ := tok.(string)
		at.key[key] = lineAt(valueStart(data, dec.InputOffset()))
		switch key {
		case "artifacts":
			err = decodeList(dec, data, lineAt, &m.Artifacts, &at.artifacts)
		case "rounds":
			err = decodeList(dec, data, lineAt, &m.Rounds, &at.rounds)
		case "nodes":
			err = decodeList(dec, data, lineAt, &m.Nodes, &at.nodes)
		default:
			var raw json.RawMessage
			if err = dec.Decode(&raw); err == nil {
				top[key] = raw
			}
		}
		if err != nil {
			break
		}
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		// One key at a time: a field of the wrong type is dropped alone.
		one, _ := json.Marshal(map[string]json.RawMessage{k: top[k]})
		_ = json.Unmarshal(one, m)
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return m, at, err
}

// decodeArray reads a JSON array, calling each for every element with the
// line it starts on.
func decodeArray(dec *json.Decoder, data []byte, lineAt func(int64) int, each func(line int) error) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != json.Delim('[') {
		return fmt.Errorf("expected an array, found %v", tok)
	}
	for dec.More() {
		if err := each(lineAt(valueStart(data, dec.InputOffset()))); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// valueStart skips the separators after off to where the next value starts.
func valueStart(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\n', '\r', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}
