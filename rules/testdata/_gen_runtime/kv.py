from lib import *
import os
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kv-pressure") + "/"

# fire 1: SGLang retractions with token usage at 0.98-0.99.
t0 = T("2025-11-25 10:00:00")
st, tr = sg_startup(t0)
srv = SGServer(plus(tr, 60), seed=41, idle=60, max_tokens=120000)
srv.batch(96, 900, 400, 2710.0, queue=40, usage_fn=lambda made: min(0.99, 0.90 + made / 3000))
L = srv.lines
# retractions interleaved after the usage reaches 0.97
out = []
r = 0
for l in L:
    out.append(l)
    if "Decode batch" in l and ("token usage: 0.98" in l or "token usage: 0.99" in l) and r < 3:
        t = l[1:20]
        out.append(f"[{t} TP0] KV cache pool is full. Retract requests. #retracted_reqs: {2 + r}, #new_tokens_gained: {3100 + 211 * r}, #new_token_ratio: 0.{4512 + 100 * r} -> 0.{6113 + 90 * r}")
        r += 1
log = [sg_args(t0)] + st + out
first_retract = lineno(log, "Retract requests")
total = sum(2 + k for k in range(r))
assert r == 3, r
txtar(D + "sglang-retractions-cache-full.txtar",
      """SGLang with 96 running requests and 40 queued: token usage climbs to 0.99
and the scheduler retracts requests three times (2, 3 and 4 of them) to free
KV cache.
tz: UTC""",
      [("server.log", log)],
      [f'kv-pressure server.log:{first_retract} "retracted {total} running request.*KV cache at 95% or more \\\\(peak 99%"'])

# fire 2: vLLM late-2025 stat lines with Preemptions and growing Waiting.
t0 = T("2025-12-10 16:00:00")
st, tr = vl_startup(t0, "{'model_tag': 'Qwen/Qwen3-32B', 'model': 'Qwen/Qwen3-32B', 'tensor_parallel_size': 2, 'max_num_seqs': 256}", version="0.12.0")
L = list(st)
t = plus(tr, 30)
seq = [(9100.0, 1210.0, 64, 0, 41.0, 0), (4100.0, 2011.0, 128, 12, 77.9, 0), (2100.0, 2310.0, 151, 37, 96.2, 0),
       (0.0, 2402.0, 150, 58, 98.8, 3), (1200.0, 2290.0, 149, 81, 99.1, 5), (0.0, 2395.0, 150, 104, 99.0, 2)]
for pr, g, run, w, kv, pre in seq:
    t = plus(t, 10)
    extra = f"Preemptions: {pre}, " if pre else ""
    L.append(vl_stat(t, pr, g, run, w, kv, extra=extra))
first_pre = lineno(L, "Preemptions:")
txtar(D + "vllm-preemptions-queue-growing.txtar",
      """vLLM 0.12 under a load that outgrows the KV cache: usage reaches 99%, the
waiting queue grows from 37 to 104 requests, and the scheduler preempts 10
requests over three intervals ("Preemptions: N" appears in the stat line only
when non-zero).
year: 2025
tz: UTC""",
      [("server.log", L)],
      [f'kv-pressure server.log:{first_pre} "preempted 10 running request.*queue grew from 37 to 104"'])

# quiet 1: SGLang token usage 0.95-0.97 with an empty, steady queue and no
# retraction: full, but healthy.
t0 = T("2025-11-26 10:00:00")
st, tr = sg_startup(t0)
srv = SGServer(plus(tr, 60), seed=42, idle=60, max_tokens=120000)
srv.batch(64, 1600, 240, 2210.0, queue=0, usage_fn=lambda made: min(0.97, 0.93 + made / 4000))
txtar(D + "sglang-full-cache-no-eviction.txtar",
      """SGLang running 64 long requests with token usage at 0.95-0.97, an empty
queue and no retraction: the cache is well used, which SGLang's tuning guide
calls good utilization.
tz: UTC""",
      [("server.log", [sg_args(t0)] + st + srv.lines)], ["# no finding"])

# quiet 2: vLLM V0 preempts once at 62% usage.
t0 = T("2024-11-19 10:00:00")
s = lambda x: plus(t0, x)
L = [
    f"INFO {s(0):%m-%d %H:%M:%S} api_server.py:585] vLLM API server version 0.6.4.post1",
    f"INFO {s(0):%m-%d %H:%M:%S} api_server.py:586] args: Namespace(host=None, port=8000, model='meta-llama/Llama-3.1-8B-Instruct', tensor_parallel_size=1, max_model_len=32768)",
    f"INFO {s(30):%m-%d %H:%M:%S} model_runner.py:1077] Loading model weights took 14.9888 GB",
    "INFO:     Started server process [7712]",
    "INFO:     Waiting for application startup.",
    "INFO:     Application startup complete.",
]
def v0(t, pr, g, run, pend, kv):
    return f"INFO {t:%m-%d %H:%M:%S} metrics.py:449] Avg prompt throughput: {pr:.1f} tokens/s, Avg generation throughput: {g:.1f} tokens/s, Running: {run} reqs, Swapped: 0 reqs, Pending: {pend} reqs, GPU KV cache usage: {kv:.1f}%, CPU KV cache usage: 0.0%."
t = s(120)
for pr, g, run, pend, kv in [(2210.0, 301.0, 12, 0, 38.2), (0.0, 611.0, 12, 0, 55.0)]:
    t = plus(t, 5)
    L.append(v0(t, pr, g, run, pend, kv))
L.append(f"WARNING {t:%m-%d %H:%M:%S} scheduler.py:1481] Sequence group cmpl-8c1f2a0b7e4d4c6e9f3a-0 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=1")
for pr, g, run, pend, kv in [(0.0, 598.0, 11, 1, 62.1), (310.0, 587.0, 12, 0, 58.0), (0.0, 120.0, 0, 0, 0.0)]:
    t = plus(t, 5)
    L.append(v0(t, pr, g, run, pend, kv))
txtar(D + "vllm-v0-one-preemption.txtar",
      """vLLM 0.6 preempts one sequence group once, with the cache at 55-62%:
a single eviction on a cache short of full is not pressure.
year: 2024
tz: UTC""",
      [("server.log", L)], ["# no finding"])
