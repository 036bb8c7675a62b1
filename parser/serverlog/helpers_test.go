package serverlog

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
	"github.com/stretchr/testify/require"
)

// parseText parses s as a file named path with the given kind hint.
func parseText(path, s string, kind facts.Kind) (*facts.Facts, []facts.Issue) {
	var issues []facts.Issue
	in := textio.NewInput(path, strings.NewReader(s), 0, func(is facts.Issue) { issues = append(issues, is) })
	out := &facts.Facts{Clocks: map[string]facts.Clock{}}
	Parse(in, kind, out)
	return out, issues
}

// parseFile parses a fixture file, sniffing its kind as the orchestrator would.
func parseFile(t testing.TB, path string) (*facts.Facts, []facts.Issue, facts.Kind) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	head := data
	if len(head) > 8192 {
		head = head[:8192]
	}
	kind, _ := Sniff(path, head)
	out, issues := parseText(path, string(data), kind)
	require.Len(t, out.Logs, 1)
	return out, issues, kind
}

// dump renders what a parse found, for reading while writing tests.
func dump(out *facts.Facts) string {
	var b strings.Builder
	l := out.Logs[0]
	fmt.Fprintf(&b, "engine=%s version=%s lines=%d first=%s last=%s lastsrc=%d dropped=%d\n", l.Engine, l.Version, l.Lines, l.FirstTime, l.LastTime, l.LastSrc.Line, l.DroppedEvents)
	for _, p := range l.Procs {
		fmt.Fprintf(&b, "proc %q pid=%d host=%s rank=%v lines=%d first=%s last=%s lastsrc=%d msg=%.80q\n", p.Proc.Name, p.Proc.PID, p.Proc.Host, p.Proc.Rank, p.Lines, p.FirstTime.Format("01-02 15:04:05"), p.LastTime.Format("01-02 15:04:05"), p.LastSrc.Line, p.LastMsg)
	}
	for _, e := range l.Events {
		if e.Type == facts.EventRoute || e.Type == facts.EventRequest {
			continue
		}
		fields := facts.Fields(e.Data)
		if e.Repeated > 0 {
			fields["repeated"] = float64(e.Repeated)
		}
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var fs []string
		for _, k := range keys {
			if len(fs) > 12 {
				fs = append(fs, "...")
				break
			}
			fs = append(fs, fmt.Sprintf("%s=%v", k, fields[k]))
		}
		fmt.Fprintf(&b, "%5d-%d %s %-8s %-22s %-14q %.90q %s\n", e.Src.Line, e.EndLine, e.Time.Format("01-02 15:04:05"), e.Level, e.Type, e.Proc.Name, e.Msg, strings.Join(fs, " "))
		if e.Traceback != nil {
			fmt.Fprintf(&b, "      tb %s: %.100q chained=%d frames=%d\n", e.Traceback.ExcType, e.Traceback.ExcMsg, e.Traceback.Chained, len(e.Traceback.Frames))
		}
	}
	for _, br := range l.Bars {
		fmt.Fprintf(&b, "bar %q %q proc=%q %d/%d el=%.0f upd=%d src=%d first=%d\n", br.Desc, br.Detail, br.Proc.Name, br.N, br.Total, br.Elapsed, br.Updates, br.Src.Line, br.FirstSrc.Line)
	}
	for _, s := range l.Series {
		fmt.Fprintf(&b, "series %s %q stream=%q count=%d first=%v last=%v\n", s.Type, s.Proc.Name, s.Stream, s.Count, s.First.Values, s.Last.Values)
	}
	fmt.Fprintf(&b, "settings=%d clocks=%v assumptions=%v\n", len(out.Settings), out.Clocks, out.Assumptions)
	return b.String()
}

func TestDump(t *testing.T) {
	p := os.Getenv("DUMP")
	if p == "" {
		t.Skip("set DUMP=path to print what a file parses into")
	}
	out, issues, kind := parseFile(t, p)
	fmt.Println("kind", kind)
	fmt.Print(dump(out))
	for _, is := range issues {
		fmt.Println("issue", is.Error())
	}
}

// payloadMismatch says how an event's payload differs from the type
// facts.PayloadOf declares for its event type ("" when it does not): the
// schema packs are checked against holds only if the parser keeps to it.
func payloadMismatch(e *facts.LogEvent) string {
	if e.Data == nil {
		return ""
	}
	want := facts.PayloadOf(e.Type)
	if want == nil {
		return fmt.Sprintf("line %d: %s carries %T, but its type declares no payload", e.Src.Line, e.Type, e.Data)
	}
	if reflect.TypeOf(want) != reflect.TypeOf(e.Data) {
		return fmt.Sprintf("line %d: %s carries %T, its type declares %T", e.Src.Line, e.Type, e.Data, want)
	}
	return ""
}
