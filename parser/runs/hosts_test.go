package runs

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// The two-node fixture: NCCL's host:pid:tid prefix names each node, and the
// commId both nodes' ranks complete gives gpu-a02's clock as 7 s ahead.
func TestNodesAreNamedAndTheirClocksLinedUp(t *testing.T) {
	rs := split(t, "../../fixtures/multinode/sglang-2node-node-lost")
	require.Len(t, rs, 1)
	r := rs[0]
	assert.Equal(t, []string{"gpu-a01", "gpu-a02"}, r.Hosts)
	var clock string
	for _, a := range r.Facts.Assumptions {
		if strings.Contains(a, "clock") {
			clock = a
		}
	}
	assert.Contains(t, clock, "gpu-a02's clock (gpu-a02/logs/server.log) runs 7s ahead of gpu-a01's")
	assert.Contains(t, clock, "NCCL communicator 0x9f3c2a7e5d1b4c60 completing")
	for _, l := range r.Facts.Logs {
		switch l.Host {
		case "gpu-a02":
			// Its last stamped line reads 12:29:20 on its own clock.
			assert.Equal(t, "12:29:13", l.LastTime.UTC().Format("15:04:05"))
		case "gpu-a01":
			assert.Equal(t, "12:39:22", l.LastTime.UTC().Format("15:04:05"))
		default:
			t.Errorf("log %s has host %q", l.Path, l.Host)
		}
	}
}

const nodeLog = `[2025-03-08 %s] server_args=ServerArgs(model_path='/m', tp_size=4, nnodes=2)
[2025-03-08 %s TPn] Init torch distributed begin.
[2025-03-08 %s TPn] Init torch distributed ends. mem usage=0.31 GB
[2025-03-08 %s TPn] Load weight begin. avail mem=78.62 GB
`

// nodeText is an SGLang node's log whose rank is TP<rank>.
func nodeText(rank string, times ...string) string {
	s := strings.ReplaceAll(nodeLog, "TPn", "TP"+rank)
	for _, tm := range times {
		s = strings.Replace(s, "%s", tm, 1)
	}
	return s
}

func TestNodesWithoutHostTags(t *testing.T) {
	for _, tc := range []struct {
		name   string
		b      string // node-b's four stamps
		want   string // the clock assumption
		offset time.Duration
	}{
		{
			name: "lined up by the end of torch.distributed's init",
			b:    "12:00:30 12:00:31 12:00:40 12:00:41",
			want: "node-b's clock (node-b/server.log) runs 30s ahead of node-a's (node-a/server.log), from the end of torch.distributed's init",
		},
		{
			name: "behind",
			b:    "11:59:50 11:59:51 12:00:00 12:00:01",
			want: "runs 10s behind node-a's",
		},
		{
			name: "in step",
			b:    "12:00:00 12:00:01 12:00:10 12:00:11",
			want: "",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "node-a/server.log", nodeText("0", "12:00:00", "12:00:01", "12:00:10", "12:00:11"))
			write(t, dir, "node-b/server.log", nodeText("2", strings.Fields(tc.b)...))
			rs := split(t, dir)
			require.Len(t, rs, 1)
			assert.Equal(t, []string{"node-a", "node-b"}, rs[0].Hosts, "a folder names its node when each log has its own")
			var got string
			for _, a := range rs[0].Facts.Assumptions {
				if strings.Contains(a, "clock") {
					got = a
				}
			}
			if tc.want == "" {
				assert.Empty(t, got)
				return
			}
			assert.Contains(t, got, tc.want)
		})
	}
}

func TestNodesWithNothingInCommon(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "node-a/server.log", "[2025-03-08 12:00:00] server_args=ServerArgs(model_path='/m', nnodes=2)\n[2025-03-08 12:00:05 TP0] Load weight begin. avail mem=78.62 GB\n")
	write(t, dir, "node-b/server.log", "[2025-03-08 12:00:02] server_args=ServerArgs(model_path='/m', nnodes=2)\n[2025-03-08 12:00:06 TP2] Load weight begin. avail mem=78.62 GB\n")
	rs := split(t, dir)
	require.Len(t, rs, 1)
	assert.Contains(t, strings.Join(rs[0].Facts.Assumptions, "\n"), "the clocks of node-a (node-a/server.log) and node-b (node-b/server.log) could not be lined up")
}

// Folders are nodes only when each holds its own ranks: logs in one
// folder, or of the same ranks (restarts, replicas), name no node.
func TestFoldersThatAreNotNodes(t *testing.T) {
	for _, tc := range []struct {
		name         string
		pathA, pathB string
		rankB        string
	}{
		{"one folder", "server.log", "server.2.log", "2"},
		{"the same ranks", "node-a/server.log", "node-b/server.log", "0"},
		{"one at the top", "server.log", "node-b/server.log", "2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, tc.pathA, nodeText("0", "12:00:00", "12:00:01", "12:00:10", "12:00:11"))
			write(t, dir, tc.pathB, nodeText(tc.rankB, "12:00:30", "12:00:31", "12:00:40", "12:00:41"))
			for _, r := range split(t, dir) {
				assert.Empty(t, r.Hosts)
				for _, l := range r.Facts.Logs {
					assert.Empty(t, l.Host, l.Path)
				}
				for _, a := range r.Facts.Assumptions {
					assert.NotContains(t, a, "clock")
				}
			}
		})
	}
}

func TestFolderNames(t *testing.T) {
	logs := func(paths ...string) []*facts.Log {
		var out []*facts.Log
		for _, p := range paths {
			out = append(out, &facts.Log{Path: p})
		}
		return out
	}
	assert.Equal(t, []string{"gpu-a01", "gpu-a02"}, folderNames(logs("gpu-a01/logs/server.log", "gpu-a02/logs/server.log")))
	assert.Equal(t, []string{"n0", "n1"}, folderNames(logs("run/nodes/n0/server.log", "run/nodes/n1/logs/server.log")))
	assert.Equal(t, []string{"a", "b"}, folderNames(logs("a/x.log", "b/x.log")))
}

// A collect across a cluster: the manifest names the nodes by their
// folders, and the collector's reading of each clock lines them up when
// the logs share no communicator.
func TestManifestNamesTheNodes(t *testing.T) {
	rs := split(t, "../../fixtures/multinode/sglang-2node-ranks-killed")
	require.Len(t, rs, 1)
	assert.Equal(t, []string{"gpu-b01", "gpu-b02"}, rs[0].Hosts)
	assert.Contains(t, strings.Join(rs[0].Facts.Assumptions, "\n"),
		"gpu-b02's clock (nodes/gpu-b02/logs/server.log) runs 7s ahead of gpu-b01's (nodes/gpu-b01/logs/server.log), from the clocks the collector read on each node (manifest.json:")
}
