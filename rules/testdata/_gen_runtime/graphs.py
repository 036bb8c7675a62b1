from lib import *
import os
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cuda-graph-off") + "/"

# fire 1: --disable-cuda-graph, decode lines say False.
t0 = T("2025-11-10 08:00:00")
st, tr = sg_startup(t0, graphs=False)
srv = SGServer(plus(tr, 120), seed=21, idle=120, graph=False)
for i in range(3):
    srv.batch(1, 400, 480, 19.4)
    srv.wait(0.4)
log = [sg_args(t0, disable_cuda_graph="True")] + st + srv.lines
txtar(D + "sglang-disable-cuda-graph.txtar",
      """SGLang launched with --disable-cuda-graph (the server args say
disable_cuda_graph=True; no capture at startup) serving single-stream
requests eagerly: every decode line says cuda graph: False.
tz: UTC""",
      [("server.log", log)],
      ['cuda-graph-off server.log:1 "switched off \\\\(--disable-cuda-graph.*single-stream 19\\\\.[0-9] tok/s"'])

# fire 2: graphs captured, cuda_graph_max_bs=256, yet decode at 1-2 running says False.
t0 = T("2025-11-11 08:00:00")
st, tr = sg_startup(t0)
srv = SGServer(plus(tr, 60), seed=22, idle=60, graph=False)
srv.batch(1, 400, 320, 24.1)
srv.wait(0.4)
srv.batch(2, 400, 320, 46.0)
log = [sg_args(t0, cuda_graph_max_bs="256")] + st + srv.lines
cap = lineno(log, "Capture cuda graph end")
txtar(D + "sglang-captured-but-not-replayed.txtar",
      """SGLang captured decode graphs at startup (cuda_graph_max_bs=256), yet its
decode lines at 1 and 2 running requests say cuda graph: False: the graphs
are not replayed.
tz: UTC""",
      [("server.log", log)],
      [f'cuda-graph-off server.log:{cap} "decode lines at batch sizes up to 256.*captured at startup.*running-request counts 1, 2"'])

# fire 3: vLLM --enforce-eager.
t0 = T("2025-10-25 12:00:00")
st, tr = vl_startup(t0, "{'model_tag': 'Qwen/Qwen3-32B', 'model': 'Qwen/Qwen3-32B', 'tensor_parallel_size': 2, 'enforce_eager': True}", eager=True)
L = list(st)
t = plus(tr, 30)
for k, (pr, g) in enumerate([(88.1, 17.2), (0.0, 23.9), (0.0, 24.1), (0.0, 23.8), (0.0, 9.7)]):
    t = plus(t, 10)
    L.append(vl_stat(t, pr, g, 1 if k < 4 else 0, 0, 0.8 if k < 4 else 0.0))
txtar(D + "vllm-enforce-eager.txtar",
      """vLLM launched with --enforce-eager (non-default args), no graph capture
at startup, single-stream decoding at 24 tok/s.
year: 2025
tz: UTC""",
      [("server.log", L)],
      ['cuda-graph-off server.log:2 "switched off \\\\(--enforce-eager"'])

# quiet 1: cuda_graph_max_bs=8; large batches run eagerly by design.
t0 = T("2025-11-12 08:00:00")
st, tr = sg_startup(t0)
srv = SGServer(plus(tr, 60), seed=23, idle=60)
srv.batch(1, 400, 320, 61.0)
srv.wait(0.4)
srv.batch(4, 400, 320, 221.0)
srv.wait(0.4)
srv.batch(32, 400, 320, 980.0, graph=False)
txtar(D + "sglang-eager-above-max-bs.txtar",
      """SGLang with cuda_graph_max_bs=8: decode at 1 and 4 running requests
replays graphs; at 32 running requests, more than the largest captured
batch, it runs eagerly as designed.
tz: UTC""",
      [("server.log", [sg_args(t0, cuda_graph_max_bs="8")] + st + srv.lines)], ["# no finding"])

# quiet 2: graphs on everywhere; the prefill lines say False, as they do.
t0 = T("2025-11-13 08:00:00")
st, tr = sg_startup(t0)
srv = SGServer(plus(tr, 60), seed=24, idle=60)
for i in range(3):
    srv.batch(1, 400, 320, 61.0)
    srv.wait(0.4)
lines = [l.replace("#queue-req: 0, ", "#queue-req: 0, cuda graph: False, ") if "Prefill batch" in l else l for l in srv.lines]
txtar(D + "sglang-graphs-on-prefill-eager.txtar",
      """SGLang replays decode graphs (cuda graph: True on every decode line);
its prefill lines say cuda graph: False, which is how prefill runs.
tz: UTC""",
      [("server.log", [sg_args(t0)] + st + lines)], ["# no finding"])
