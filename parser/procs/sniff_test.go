package procs

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/coroner-dev/coroner/parser/facts"
)

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		name, head string
		kind       facts.Kind
		score      int
	}{
		{"x.txt", "USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\nroot 1 0.0 0.0 1 1 ? S 04:24 0:00 init\n", facts.KindPS, 95},
		{"x.txt", "UID          PID    PPID  C STIME TTY          TIME CMD\n", facts.KindPS, 95},
		{"x.txt", "F S   UID     PID    PPID  C PRI  NI ADDR SZ WCHAN  TTY          TIME CMD\n", facts.KindPS, 95},
		{"x.txt", "  PID  PPID                  STARTED ELAPSED     TIME   RSS    VSZ STAT NLWP COMMAND         COMMAND\n", facts.KindPS, 90},
		{"x.txt", "    PID STAT\n      1 Ss\n", facts.KindPS, 70},
		{"x.txt", "PID   USER     TIME  COMMAND\n", facts.KindPS, 95},
		{"x.txt", "Tue Jun 10 09:12:41 UTC 2025\n  PID  PPID ELAPSED     TIME STAT COMMAND\n", facts.KindPS, 90},
		{"x.txt", "$ ps aux\nUSER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n", facts.KindPS, 95},
		{"x.txt", "top - 04:27:21 up 3 min,  0 user,  load average: 1.16, 0.53, 0.21\nTasks: 308 total\n", facts.KindTop, 95},
		{"x.txt", "Tasks: 308 total,   3 running, 305 sleeping,   0 stopped,   0 zombie\n", facts.KindTop, 80},
		{"x.txt", "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n", facts.KindTop, 85},
		// Headerless rows of ps aux | grep and ps -ef | grep.
		{"x.txt", "root      4402 99.8  3.9 198347776 82313412 pts/0 Rl+ Jun09 1234:56 sglang::scheduler_DP0_TP0_EP0\n" +
			"root     98213  0.0  0.0   6612  2268 pts/1    S+   10:02   0:00 grep --color=auto sglang\n", facts.KindPS, 50},
		{"x.txt", "$ ps aux | grep sglang\nroot      4402 99.8  3.9 198347776 82313412 pts/0 Rl+ Jun09 1234:56 sglang::scheduler_TP0\n", facts.KindPS, 50},
		{"x.txt", "root      530020      81 25 06:14 pts/1    00:02:01 python3 -m vllm.entrypoints.openai.api_server\n", facts.KindPS, 45},
		// Names alone.
		{"ps_aux.txt", "", facts.KindPS, 15},
		{"ps-ef.log", "nothing here\n", facts.KindPS, 15},
		{"top.txt", "", facts.KindTop, 15},
		// Not ours.
		{"topo.txt", "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\n", "", 0},
		{"dumps.txt", "hello\n", "", 0},
		{"server.log", "[2025-07-01 12:00:00 TP0] Load weight begin. avail mem=78.5 GB\n", "", 0},
		{"compute-apps.csv", "pid, process_name, used_gpu_memory [MiB]\n924, python3, 514 MiB\n", "", 0},
		{"pmon.txt", "# gpu         pid   type     sm    mem    enc    dec    command\n", "", 0},
		{"x.txt", "PID TTY something else\n", "", 0},
	} {
		k, s := Sniff(c.name, []byte(c.head))
		assert.Equal(t, c.kind, k, "%s %q", c.name, c.head)
		assert.Equal(t, c.score, s, "%s %q", c.name, c.head)
	}
}

// Content must beat names: a ps file named top.txt is ps at a content score.
func TestSniffContentBeatsName(t *testing.T) {
	k, s := Sniff("top.txt", []byte("USER       PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND\n"))
	assert.Equal(t, facts.KindPS, k)
	assert.Greater(t, s, 29)
}
