package compare

import (
	"bytes"
	"encoding/json"
	"testing"
	"testing/fstest"

	"github.com/coroner-dev/coroner/parser"
	"github.com/coroner-dev/coroner/rules"
)

// FuzzCompare feeds two arbitrary server logs through the parser, the rules
// and the diff: whatever the logs hold, the diff renders and its JSON reads
// back.
func FuzzCompare(f *testing.F) {
	f.Add("[2026-02-08 09:31:58 TP0] Decode batch, #running-req: 1, #token: 253, token usage: 0.00, cuda graph: True, gen throughput (token/s): 63.61, #queue-req: 0, \n",
		"(APIServer pid=1) INFO 02-07 10:18:12 [loggers.py:127] Engine 000: Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 82.6 tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.7%, Prefix cache hit rate: 0.0%\n")
	f.Add("[2025-12-05 10:02:19 TP0] Decode batch, #running-req: 1, #token: 261, token usage: 0.00, accept len: 1.23, accept rate: 0.23, cuda graph: False, gen throughput (token/s): 0.00, #queue-req: 3, \n",
		"INFO 05-06 10:01:45 [metrics.py:84] SpecDecoding metrics: Draft acceptance rate: nan%, Accepted: 0 tokens, Drafted: 0 tokens\n")
	f.Add("[2026-02-09 11:40:05] server_args=ServerArgs(tp_size=8, attention_backend='triton', speculative_num_draft_tokens=0)\n",
		"INFO 10-22 09:40:00 [utils.py:233] non-default args: {'tensor_parallel_size': 8, 'speculative_config': {'num_speculative_tokens': 0}}\n")
	// The catalog is compiled once: each input is then a few milliseconds.
	opts := rules.Options{Catalog: rules.BuiltinCatalog()}
	f.Fuzz(func(t *testing.T, logA, logB string) {
		run := func(name, log string) Run {
			fsys := fstest.MapFS{"server.log": {Data: []byte(log)}}
			facts, err := parser.ParseFS(fsys, parser.Options{Year: 2026})
			if err != nil {
				t.Skip()
			}
			return Run{Path: name, Facts: facts, Result: rules.Run(facts, opts)}
		}
		d := Compare(run("a", logA), run("b", logB), "fuzz")
		var md, js bytes.Buffer
		if err := Markdown(&md, d); err != nil {
			t.Fatal(err)
		}
		if err := JSON(&js, d); err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := json.Unmarshal(js.Bytes(), &back); err != nil {
			t.Fatalf("the diff's JSON does not read back: %v", err)
		}
	})
}
