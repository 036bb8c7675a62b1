package issue

import (
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/coroner-dev/coroner/parser/facts"
)

// blocks splits a markdown text and returns its blocks.
func blocks(t *testing.T, md string) *Split {
	t.Helper()
	s, ok := Read("issue.md", facts.KindMarkdown, []byte(md))
	require.True(t, ok)
	return s
}

// docLines checks that every line of every block is the line of the
// document its Offset says.
func docLines(t *testing.T, md string, s *Split) {
	t.Helper()
	lines := strings.Split(strings.ReplaceAll(md, "\r\n", "\n"), "\n")
	for _, b := range s.Blocks {
		for i, l := range strings.Split(strings.TrimSuffix(string(b.Text), "\n"), "\n") {
			doc := lines[b.Offset+i]
			assert.Contains(t, doc, strings.TrimSpace(l), "%s line %d is not document line %d", b.Name, i+1, b.Offset+i+1)
		}
	}
}

// TestVLLMTemplate is vLLM's bug template as reporters fill it: the
// environment in a <details> with a fence, the bug with a python snippet
// and the error in an unlabeled fence.
func TestVLLMTemplate(t *testing.T) {
	md := "### Your current environment\n\n<details>\n<summary>The output of <code>python collect_env.py</code></summary>\n\n" +
		"```text\nCollecting environment information...\nPyTorch version: 2.5.1+cu124\nIs debug build: False\n```\n\n</details>\n\n" +
		"### 🐛 Describe the bug\n\nI run\n\n```python\nfrom vllm import LLM\nllm = LLM(model=\"x\", tensor_parallel_size=2)\n```\n\n" +
		"```\nINFO 07-01 12:00:00 llm_engine.py:100] Initializing an LLM engine\nRuntimeError: CUDA error: out of memory\n```\n\n" +
		"### Before submitting a new issue...\n\n- [x] Make sure you already searched for relevant issues.\n"
	s := blocks(t, md)
	require.Len(t, s.Blocks, 3)
	assert.Equal(t, "issue.md#1", s.Blocks[0].Name)
	assert.Equal(t, "env.txt", s.Blocks[0].Hint, "the <summary> names the environment")
	assert.Equal(t, "fence", s.Blocks[0].How)
	assert.Equal(t, 6, s.Blocks[0].Offset, "its first line is the document's line 7")
	assert.Equal(t, "snippet.py", s.Blocks[1].Hint)
	assert.Equal(t, "server.log", s.Blocks[2].Hint)
	assert.Equal(t, "INFO 07-01 12:00:00 llm_engine.py:100] Initializing an LLM engine\nRuntimeError: CUDA error: out of memory\n", string(s.Blocks[2].Text))
	assert.Empty(t, s.Notes)
	docLines(t, md, s)
}

// TestSGLangTemplate: SGLang's sections name the command and the
// environment; the environment pasted with no fence at all is one block.
func TestSGLangTemplate(t *testing.T) {
	md := "### Checklist\n\n- [x] 1. I have searched related issues.\n\n### Describe the bug\n\nThe server crashes.\n\n" +
		"### Reproduction\n\n```\npython3 -m sglang.launch_server --model-path Qwen/Qwen2-7B --tp 2\n```\n\n" +
		"### Environment\n\nPython: 3.10.12 (main, Jul 29 2024, 16:56:48) [GCC 11.4.0]\nCUDA available: True\nGPU 0,1: NVIDIA H100 80GB HBM3\n" +
		"sglang: 0.4.0\nflashinfer: 0.1.6\n"
	s := blocks(t, md)
	require.Len(t, s.Blocks, 2)
	assert.Equal(t, "launch.sh", s.Blocks[0].Hint, "under Reproduction")
	assert.Equal(t, "unfenced", s.Blocks[1].How)
	assert.Equal(t, "env.txt", s.Blocks[1].Hint, "under Environment")
	assert.Equal(t, 5, s.Blocks[1].Lines)
	docLines(t, md, s)
}

// TestUnfencedLog: a log pasted into the text is found between prose, with
// its traceback's indented lines and the blank line inside it; the prose
// before it names it.
func TestUnfencedLog(t *testing.T) {
	md := "When I start the server it dies. Here is the output:\n\n" +
		"[2025-01-01 10:00:00 TP0] Load weight begin. avail mem=78.5 GB\n" +
		"[2025-01-01 10:00:05 TP0] Scheduler hit an exception: Traceback (most recent call last):\n" +
		"  File \"/x/scheduler.py\", line 10, in run\n    scheduler = Scheduler()\n\n" +
		"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n\n" +
		"I tried lowering --mem-fraction-static but it did not help. Any idea?\n"
	s := blocks(t, md)
	require.Len(t, s.Blocks, 1)
	b := s.Blocks[0]
	assert.Equal(t, "unfenced", b.How)
	assert.Equal(t, 2, b.Offset)
	assert.Equal(t, 6, b.Lines)
	assert.Equal(t, "server.log", b.Hint)
	assert.True(t, strings.HasSuffix(string(b.Text), "Tried to allocate 2.00 GiB.\n"))
	docLines(t, md, s)
}

// TestProseIsNotEvidence: sentences that mention flags, versions and
// errors stay prose.
func TestProseIsNotEvidence(t *testing.T) {
	md := "I use vllm 0.6.3 with `--tensor-parallel-size 2` and `gpu_memory_utilization=0.9`.\n" +
		"The error says that CUDA ran out of memory, but nvidia-smi shows 40 GB free.\n\n" +
		"- tried `--enforce-eager`\n- tried a smaller model\n\n1. first\n2. second\n\n" +
		"| col | col |\n|---|---|\n| a | b |\n\nThanks!\n"
	s := blocks(t, md)
	assert.Empty(t, s.Blocks)
}

// TestQuotesAndLists: a fence inside a quote or a list item, and an
// unclosed fence, which runs to the end of its quote.
func TestQuotesAndLists(t *testing.T) {
	md := "> I see this:\n> ```\n> RuntimeError: boom\n> > nested quote kept as text\n> ```\n\n" +
		"1. Run\n   ```bash\n   vllm serve m --tp 2\n   ```\n\n" +
		"> ```\n> NCCL WARN x\nafter the quote\n"
	s := blocks(t, md)
	require.Len(t, s.Blocks, 3)
	assert.Equal(t, "RuntimeError: boom\n> nested quote kept as text\n", string(s.Blocks[0].Text))
	assert.Equal(t, "vllm serve m --tp 2\n", string(s.Blocks[1].Text))
	assert.Equal(t, "launch.sh", s.Blocks[1].Hint)
	assert.Equal(t, "NCCL WARN x\n", string(s.Blocks[2].Text))
	require.Len(t, s.Notes, 1)
	assert.Contains(t, s.Notes[0].Detail, "never closed")
	assert.Equal(t, 12, s.Notes[0].Line)
	docLines(t, md, s)
}

// TestFences: longer fences hold shorter ones, tildes, and a fence never
// closed runs to the end of the document.
func TestFences(t *testing.T) {
	md := "````\n```\ninner\n```\n````\n~~~log\nERROR: x\n~~~\n```\nnever closed\n<details>\n"
	s := blocks(t, md)
	require.Len(t, s.Blocks, 3)
	assert.Equal(t, "```\ninner\n```\n", string(s.Blocks[0].Text))
	assert.Equal(t, "log", s.Blocks[1].Info)
	assert.Equal(t, "never closed\n<details>\n", string(s.Blocks[2].Text), "inside a fence, a tag is text")
	require.Len(t, s.Notes, 1)
	assert.Equal(t, 9, s.Notes[0].Line)
}

// TestDetailsAndComments: a <details> that holds only text is one block;
// HTML comments (the templates' hidden instructions) are skipped; <pre> is
// read as text with its entities decoded.
func TestDetailsAndComments(t *testing.T) {
	md := "<!-- Please paste the output of collect_env\n```\nnot evidence\n```\n-->\n" +
		"<details><summary>full log</summary>\n\nINFO 01-01 00:00:00 a.py:1] x\nERROR 01-01 00:00:01 a.py:2] y\n</details>\n\n" +
		"<pre>\nRuntimeError: a &lt; b\n</pre>\n<details><summary>x</summary>inline</details>\n"
	s := blocks(t, md)
	require.Len(t, s.Blocks, 2)
	assert.Equal(t, "details", s.Blocks[0].How)
	assert.Equal(t, "server.log", s.Blocks[0].Hint)
	assert.Equal(t, 7, s.Blocks[0].Offset)
	assert.Equal(t, "pre", s.Blocks[1].How)
	assert.Equal(t, "RuntimeError: a < b\n", string(s.Blocks[1].Text))
	assert.Equal(t, 12, s.Blocks[1].Offset)
}

// TestCRLF: text typed into GitHub's form has CRLF line ends; blocks have
// none and the lines still map.
func TestCRLF(t *testing.T) {
	md := "Log:\r\n\r\n```\r\nERROR: a\r\nERROR: b\r\n```\r\n"
	s := blocks(t, md)
	require.Len(t, s.Blocks, 1)
	assert.Equal(t, "ERROR: a\nERROR: b\n", string(s.Blocks[0].Text))
	assert.Equal(t, 3, s.Blocks[0].Offset)
}

// TestMaxBlocks: a hostile issue of many fences yields MaxBlocks blocks and
// says it left the rest out.
func TestMaxBlocks(t *testing.T) {
	var b strings.Builder
	for i := 0; i < MaxBlocks+50; i++ {
		fmt.Fprintf(&b, "```\nERROR: %d\n```\n", i)
	}
	s := blocks(t, b.String())
	assert.Len(t, s.Blocks, MaxBlocks)
	require.Len(t, s.Notes, 1)
	assert.Contains(t, s.Notes[0].Detail, "were not read")
}

// TestJSON reads gh's issue JSON, the REST API's issue and comment list,
// and the two event payloads.
func TestJSON(t *testing.T) {
	gh := `{"body":"Log:\n\n` + "```" + `\nERROR: a\n` + "```" + `\n","comments":[{"author":{"login":"x"},"body":"` + "```" + `\nERROR: b\n` + "```" + `"}],"title":"t"}`
	assert.Equal(t, facts.KindGitHubIssue, Sniff("issue.json", []byte(gh)))
	s, ok := Read("issue.json", facts.KindGitHubIssue, []byte(gh))
	require.True(t, ok)
	assert.Equal(t, []string{"body", "comment 1"}, s.Docs)
	require.Len(t, s.Blocks, 2)
	assert.Equal(t, "body", s.Blocks[0].Doc)
	assert.Equal(t, 3, s.Blocks[0].Offset)
	assert.Equal(t, "comment 1", s.Blocks[1].Doc)
	assert.Equal(t, "issue.json#2", s.Blocks[1].Name)

	rest := `{"url":"u","number":3,"title":"t","body":null,"comments":4,"user":{"login":"x"}}`
	s, ok = Read("i.json", Sniff("i.json", []byte(rest)), []byte(rest))
	require.True(t, ok)
	assert.Equal(t, []string{"body"}, s.Docs)

	list := `[{"id":1,"body":"a"},{"id":2,"body":"b"}]`
	s, ok = Read("c.json", Sniff("c.json", []byte(list)), []byte(list))
	require.True(t, ok)
	assert.Equal(t, []string{"comment 1", "comment 2"}, s.Docs)

	ev := `{"action":"created","issue":{"number":1,"title":"t","body":"b","comments":2},"comment":{"id":5,"body":"c"},"repository":{},"sender":{}}`
	assert.Equal(t, facts.KindGitHubEvent, Sniff("event.json", []byte(ev)))
	s, ok = Read("event.json", facts.KindGitHubEvent, []byte(ev))
	require.True(t, ok)
	assert.Equal(t, facts.KindGitHubEvent, s.Kind)
	assert.Equal(t, []string{"body", "comment"}, s.Docs)

	// JSON of other shapes is not an issue.
	for _, other := range []string{`{"body":"x"}`, `{"action":"x","issue":{}}`, `{"kind":"probe","body":"ok","status":200}`, `[1,2]`, `{`, `[]`} {
		k := Sniff("x.json", []byte(other))
		if k == "" {
			continue
		}
		_, ok := Read("x.json", k, []byte(other))
		assert.False(t, ok, other)
	}
}

// TestSniffOrdinaryFiles: the files of an ordinary bundle are not issues,
// a log that holds a fence is still a log, and a markdown file is one by
// its name or its fences and prose.
func TestSniffOrdinaryFiles(t *testing.T) {
	for name, text := range map[string]string{
		"server.log":  "[2025-01-01 10:00:00 TP0] a\n[2025-01-01 10:00:01 TP0] b\n",
		"launch.sh":   "#!/bin/bash\n# start it\npython -m sglang.launch_server --tp 8\n",
		"prompt.log":  "INFO 01-01 00:00:00 a.py:1] prompt:\n```python\nprint(1)\n```\nINFO 01-01 00:00:01 a.py:2] done\nINFO 01-01 00:00:02 a.py:2] done\n",
		"env.txt":     "CUDA_VISIBLE_DEVICES=0\nNCCL_DEBUG=INFO\n",
		"manifest":    `{"schema":1,"files":[]}`,
		"nvidia-smi":  "+-----------------------------------------------------------------------------+\n| NVIDIA-SMI 550.54.15 |\n",
		"probe.jsonl": `{"url":"http://x/health","status":200,"body":"ok"}`,
	} {
		assert.Equal(t, facts.Kind(""), Sniff(name, []byte(text)), name)
	}
	assert.Equal(t, facts.KindMarkdown, Sniff("issue.md", []byte("just text")))
	assert.Equal(t, facts.KindMarkdown, Sniff("stdin", []byte("It crashes:\n\n```\nERROR: x\n```\n")))
	assert.Equal(t, facts.KindMarkdown, Sniff("body", []byte("<details><summary>env</summary>\n\nPython: 3.10\n</details>\n")))
}

// TestVisit reads the blocks again by name, as the brief's excerpts do.
func TestVisit(t *testing.T) {
	md := "Log:\n\n```\nERROR: a\n```\n\nand\n\n```\nERROR: b\n```\n"
	got := map[string]string{}
	err := Visit("x/issue.md", strings.NewReader(md), func(name string, r io.Reader) error {
		b, err := io.ReadAll(r)
		got[name] = string(b)
		return err
	})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"x/issue.md#1": "ERROR: a\n", "x/issue.md#2": "ERROR: b\n"}, got)
	require.NoError(t, Visit("x/server.log", strings.NewReader("ERROR: a\n"), func(string, io.Reader) error {
		t.Fatal("a log is no issue")
		return nil
	}))
}

// BenchmarkSniff: what recognizing issues costs every file of an ordinary
// bundle (an 8 KiB log head without a fence), and a markdown head.
func BenchmarkSniff(b *testing.B) {
	var log strings.Builder
	for log.Len() < SniffSize {
		log.WriteString("[2025-01-01 10:00:00 TP0] Decode batch. #running-req: 1, #token: 100, gen throughput (token/s): 50.00\n")
	}
	head := []byte(log.String()[:SniffSize])
	b.Run("log", func(b *testing.B) {
		for b.Loop() {
			Sniff("server.log", head)
		}
	})
	md := []byte(strings.Repeat("Some words about the bug.\n\n```\nERROR: x\n```\n", 200)[:SniffSize])
	b.Run("markdown", func(b *testing.B) {
		for b.Loop() {
			Sniff("body", md)
		}
	})
}

// TestEnvironmentSectionUnfenced: collect_env's output pasted with no
// fence under "Your current environment", banners, blank lines, tables and
// all, is one block; a section that holds a fence yields the fence.
func TestEnvironmentSectionUnfenced(t *testing.T) {
	env, err := os.ReadFile("../envinfo/testdata/vllm-collect-env-new.txt")
	require.NoError(t, err)
	md := "### Your current environment\n\n" + string(env) + "\n### 🐛 Describe the bug\n\nIt crashes.\n"
	s := blocks(t, md)
	require.Len(t, s.Blocks, 1)
	assert.Equal(t, "env.txt", s.Blocks[0].Hint)
	assert.Equal(t, 2, s.Blocks[0].Offset)
	assert.Equal(t, strings.Count(strings.TrimRight(string(env), "\n"), "\n")+1, s.Blocks[0].Lines)
	docLines(t, md, s)

	md = "### Environment\n\nsee below\n\n```\nPython: 3.10\nCUDA available: True\n```\n"
	s = blocks(t, md)
	require.Len(t, s.Blocks, 1)
	assert.Equal(t, "fence", s.Blocks[0].How)
}

// TestProseWithColons: sentences that open with a word and a colon are
// prose, tools' messages are not.
func TestProseWithColons(t *testing.T) {
	for _, l := range []string{"Note: the error is gone after the upgrade.", "Update: it works now, thanks!", "Edit: typo", "Error: it does not start"} {
		assert.False(t, classify(l).strong(), l)
	}
	for _, l := range []string{"docker: Error response from daemon: failed to create task", "flashinfer.jit:Loading JIT ops: batch_prefill",
		"[TensorRT-LLM][ERROR] CUDA runtime error in error: peer access is not supported", "nvidia-container-cli: requirement error: unsatisfied condition"} {
		assert.True(t, classify(l).strong(), l)
	}
	assert.True(t, technical("Decode 0. Batch size: 128, latency: 0.17131 s, throughput:    747.20 token/s"))
}
