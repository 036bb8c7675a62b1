from lib import *
import os
import statistics, re

D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "throughput") + "/"

def steady_median(lines, batch):
    """Independent check: decode lines whose previous stat line is a decode
    line of the same batch (no prefill between) and no idle gap."""
    vals = []
    prev = None
    for l in lines:
        if "Prefill batch" in l:
            prev = None
            continue
        m = re.search(r"#running-req: (\d+), #token: (\d+).*gen throughput \(token/s\): ([\d.]+)", l)
        if not m:
            continue
        b, tok, v = int(m.group(1)), int(m.group(2)), float(m.group(3))
        if prev and prev[0] == b == batch and tok >= prev[1]:
            vals.append(v)
        prev = (b, tok)
    return statistics.median(vals), len(vals)

# 1. SGLang: idle, then a sequential single-stream benchmark and two rounds at 8.
t0 = T("2025-11-04 09:12:03")
head = [sg_args(t0)]
st, tready = sg_startup(t0)
srv = SGServer(plus(tready, 600), seed=3, idle=600)
for i in range(5):
    srv.batch(1, 180 + 20 * i, 600, 71.3)
    srv.wait(0.2)
for i in range(2):
    srv.batch(8, 200, 400, 421.0)
    srv.wait(0.3)
log = head + st + srv.lines
med, n = steady_median(log, 1)
med8, n8 = steady_median(log, 8)
print("sglang single", med, n, "bs8", med8, n8)
first_decode = lineno(log, "Decode batch")
txtar(D + "sglang-single-stream-and-batch8.txtar",
      f"""SGLang 0.5-era TP2 server, idle for 10 minutes after startup, then a
sequential single-stream benchmark (5 requests of 600 tokens) and two rounds
of 8 concurrent requests. The first decode line after the idle period counts
the 10 idle minutes (a tiny gen throughput); the first line of each request
counts its prefill. Neither is decoding speed: the single-stream figure is the
median of the steady lines, {med:.2f} tok/s over {n} lines (computed by the
generator from the lines themselves); at 8 running requests {med8:.2f}.
tz: UTC""",
      [("server.log", log)],
      [f'throughput server.log:{first_decode} "single-stream {med:.1f} tok/s \\\\(median of {n} steady stat lines at 1 running request.*8: {med8:.1f}"'])

# 2. vLLM V1: single stream at 82.5 (10 s intervals), then 16 concurrent.
t0 = T("2025-10-22 09:40:00")
st, tready = vl_startup(t0, "{'model_tag': 'Qwen/Qwen3-32B', 'model': 'Qwen/Qwen3-32B', 'tensor_parallel_size': 2, 'max_model_len': 40960}")
L = list(st)
rng = random.Random(5)
t = plus(tready, 120)
# four requests of 2048 tokens back to back: ~25 s each at 82.5 tok/s
stats = []
for r in range(4):
    for k in range(3):
        t = plus(t, 10)
        if k == 0:
            stats.append((t, 92.4, 61.7 + rng.uniform(-1, 1), 1, 0))
        else:
            stats.append((t, 0.0, 82.5 + rng.uniform(-0.4, 0.4), 1, 0))
    stats.append(f"(APIServer pid=2231) INFO:     127.0.0.1:{51200 + r} - \"POST /v1/completions HTTP/1.1\" 200 OK")
for k in range(6):
    t = plus(t, 10)
    stats.append((t, 0.0 if k else 1843.0, 1108.0 + rng.uniform(-6, 6) if k else 703.2, 16, 0))
t = plus(t, 10)
stats.append((t, 0.0, 311.4, 0, 0))
for x in stats:
    if isinstance(x, str):
        L.append(x)
        continue
    (tt, pr, g, run, w) = x
    L.append(vl_stat(tt, pr, g, run, w, 0.9 if run == 1 else (6.3 if run else 0.0)))
stats = [x for x in stats if not isinstance(x, str)]
ss = [g for (tt, pr, g, run, w) in stats if run == 1 and pr == 0]
# steady = previous line same batch and no prompt
steady1 = []
prev = None
for (tt, pr, g, run, w) in stats:
    if prev is not None and prev == run and pr == 0 and run > 0:
        if run == 1:
            steady1.append(g)
    prev = run
med = statistics.median(steady1)
print("vllm single", med, len(steady1))
txtar(D + "vllm-single-stream-82.txtar",
      f"""vLLM 0.11 TP2: four single-stream requests back to back (10 s stat
intervals; the first interval of each request also ran its prompt), then 16
concurrent requests. Single-stream is the median of the {len(steady1)} steady lines
at "Running: 1 reqs" with no prompt throughput: {med:.2f} tok/s.
year: 2025
tz: UTC""",
      [("server.log", L)],
      [f'throughput server.log "vLLM APIServer: single-stream {med:.1f} tok/s"'])

# 3. quiet: SGLang ready, warmup prefill only, no decode lines.
t0 = T("2025-11-05 14:02:11")
st, tready = sg_startup(t0)
txtar(D + "sglang-ready-no-traffic.txtar",
      """SGLang server that came up and served nothing but its own warmup request
(one prefill line, no decode line): there is no throughput to report.
tz: UTC""",
      [("server.log", [sg_args(t0)] + st)], ["# no finding: nothing was decoded"])

# 4. quiet: vLLM with --disable-log-stats serving requests: no stat lines.
t0 = T("2025-10-23 08:00:00")
st, tready = vl_startup(t0, "{'model_tag': 'Qwen/Qwen3-32B', 'model': 'Qwen/Qwen3-32B', 'tensor_parallel_size': 2, 'disable_log_stats': True}")
L = st + [f"(APIServer pid=2231) INFO:     127.0.0.1:{40112 + i} - \"POST /v1/chat/completions HTTP/1.1\" 200 OK" for i in range(6)]
txtar(D + "vllm-disable-log-stats.txtar",
      """vLLM server launched with --disable-log-stats: it serves requests (the
access log shows them) but prints no stat line, so there is no throughput
to report.
year: 2025
tz: UTC""",
      [("server.log", L)], ["# no finding: no stat line"])
