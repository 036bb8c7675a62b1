from lib import *
import os
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "serving-hang") + "/"

def ps_eo(at, rows):
    out = ["    PID    PPID                  STARTED ELAPSED  TIME    RSS STAT NLWP COMMAND",
           f"      1       0 Mon Oct 20 07:55:10 2025  281695    61  13172 Ss      1 /sbin/init"]
    for pid, ppid, start, cpu, rss, stat, nlwp, cmd in rows:
        el = int((at - start).total_seconds())
        out.append(f"{pid:7d} {ppid:7d} {start:%a %b %d %H:%M:%S %Y} {el:7d} {cpu:5d} {rss:6d} {stat:<4} {nlwp:4d} {cmd}")
    out.append(f"  31402   31398 {at:%a %b %d %H:%M:%S %Y}       0     0   3532 R+      1 ps -eo pid,ppid,lstart,etimes,times,rss,stat,nlwp,args")
    return out

# fire 1: V0-era vLLM (0.6.x, no process tags) keeps logging every 5 s with
# 4 running, 2 pending and no tokens.
t0 = T("2024-11-18 14:00:00")
s = lambda x: plus(t0, x)
L = [
    f"INFO {s(0):%m-%d %H:%M:%S} api_server.py:585] vLLM API server version 0.6.4.post1",
    f"INFO {s(0):%m-%d %H:%M:%S} api_server.py:586] args: Namespace(host=None, port=8000, model='meta-llama/Llama-3.1-70B-Instruct', tensor_parallel_size=4, gpu_memory_utilization=0.9, max_model_len=16384)",
    f"INFO {s(9):%m-%d %H:%M:%S} config.py:350] This model supports multiple tasks: {{'generate', 'embedding'}}. Defaulting to 'generate'.",
    f"INFO {s(12):%m-%d %H:%M:%S} llm_engine.py:249] Initializing an LLM engine (v0.6.4.post1) with config: model='meta-llama/Llama-3.1-70B-Instruct', tensor_parallel_size=4, enforce_eager=False",
    f"INFO {s(20):%m-%d %H:%M:%S} model_runner.py:1072] Starting to load model meta-llama/Llama-3.1-70B-Instruct...",
    f"INFO {s(121):%m-%d %H:%M:%S} model_runner.py:1077] Loading model weights took 32.8892 GB",
    f"INFO {s(130):%m-%d %H:%M:%S} distributed_gpu_executor.py:57] # GPU blocks: 13018, # CPU blocks: 3276",
    f"INFO {s(133):%m-%d %H:%M:%S} model_runner.py:1400] Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static.",
    f"INFO {s(151):%m-%d %H:%M:%S} model_runner.py:1528] Graph capturing finished in 18 secs, took 0.52 GiB",
    f"INFO {s(153):%m-%d %H:%M:%S} launcher.py:19] Available routes are:",
    "INFO:     Started server process [7712]",
    "INFO:     Waiting for application startup.",
    "INFO:     Application startup complete.",
    "INFO:     Uvicorn running on http://0.0.0.0:8000 (Press CTRL+C to quit)",
]
def v0(t, pr, g, run, pend, kv):
    return f"INFO {t:%m-%d %H:%M:%S} metrics.py:449] Avg prompt throughput: {pr:.1f} tokens/s, Avg generation throughput: {g:.1f} tokens/s, Running: {run} reqs, Swapped: 0 reqs, Pending: {pend} reqs, GPU KV cache usage: {kv:.1f}%, CPU KV cache usage: 0.0%."
t = s(400)
for pr, g, run, pend in [(412.3, 88.1, 4, 0), (0.0, 141.2, 4, 0), (0.0, 140.8, 4, 0), (211.0, 97.3, 4, 2)]:
    t = plus(t, 5)
    L.append(v0(t, pr, g, run, pend, 3.1))
first_zero = len(L) + 1
for k in range(12):
    t = plus(t, 5)
    L.append(v0(t, 0.0, 0.0, 4, 2, 3.1))
txtar(D + "vllm-v0-running-no-tokens.txtar",
      """vLLM 0.6 (V0 engine, stat lines every 5 s) serving four requests at 140
tok/s, then a minute of stat lines with 4 running, 2 pending and no tokens
at all: the engine holds its requests and makes nothing.
year: 2024
tz: UTC""",
      [("server.log", L)],
      [f'serving-hang server.log:{first_zero} "12 stat lines in a row with 4 running, 2 waiting and no tokens"'])

# fire 2: vLLM 0.11: last stat line shows 8 running and 0 tokens, then only
# health checks for 6 minutes and shm broadcast waits.
t0 = T("2025-10-22 09:40:00")
st, tr = vl_startup(t0, "{'model_tag': 'Qwen/Qwen3-32B', 'model': 'Qwen/Qwen3-32B', 'tensor_parallel_size': 2}")
L = list(st)
t = plus(tr, 60)
for pr, g, run in [(3310.2, 401.2, 8), (0.0, 612.3, 8), (0.0, 610.9, 8), (0.0, 203.4, 8)]:
    t = plus(t, 10)
    L.append(vl_stat(t, pr, g, run, 0, 4.2))
t = plus(t, 10)
L.append(vl_stat(t, 0.0, 0.0, 8, 3, 4.2))
last_stat = len(L)
hz = t
waits = []
for k in range(36):
    hz = plus(hz, 10)
    L.append(f'(APIServer pid=2231) INFO:     10.0.0.5:{40100 + k} - "GET /health HTTP/1.1" 200 OK')
    if k % 6 == 5:
        L.append(vl(hz, "EngineCore_DP0 pid=2402", "No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation).", src="shm_broadcast.py:466"))
        waits.append(len(L))
L.append(f'(APIServer pid=2231) INFO:     10.0.0.5:40200 - "GET /health HTTP/1.1" 200 OK')
txtar(D + "vllm-v1-zero-line-then-health-checks.txtar",
      """vLLM 0.11 TP2 decoding 8 requests at 610 tok/s; then one stat line with 8
running, 3 waiting and no tokens, and no stat line after it (vLLM logs an
all-zero interval at DEBUG level) for six minutes while the API server keeps
answering health checks and the engine core waits on its workers every
minute ("No available shared memory broadcast block found").
year: 2025
tz: UTC""",
      [("server.log", L)],
      [f'serving-hang server.log:{last_stat} "last stat line of vLLM APIServer.*8 running, 3 waiting, and no stat line follows for 6 min, while the log goes on.*waited on its workers 6 times"'])

# fire 3: SGLang: last decode line shows 12 queued; ps 20 min later, alive.
t0 = T("2025-11-20 10:00:00")
st, tr = sg_startup(t0)
srv = SGServer(plus(tr, 60), seed=31, idle=60)
srv.batch(16, 600, 400, 812.0, queue=12)
log = [sg_args(t0)] + st + srv.lines
last = len(log)
at = plus(srv.now(), 20 * 60)
start = plus(t0, -5)
ps = ps_eo(at, [(5120, 4990, start, 41, 1652304, "Sl", 92, "python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp 2"),
                (5301, 5120, start, 1320, 16540212, "Rl", 80, "sglang::scheduler_TP0"),
                (5302, 5120, start, 1318, 16540212, "Rl", 80, "sglang::scheduler_TP1"),
                (5303, 5120, start, 9, 612344, "Sl", 4, "sglang::detokenizer")])
txtar(D + "sglang-queue-then-silence.txtar",
      """SGLang decoding 16 requests with 12 more waiting in the queue; then
nothing for 20 minutes, while a process snapshot shows the schedulers alive
(and busy). Waiting requests would be scheduled and logged: the scheduler is
stuck.
tz: UTC""",
      [("server.log", log), ("ps_eo.txt", ps)],
      [f'serving-hang server.log:{last} "16 running, 12 waiting, and no stat line follows for 20 min, up to the process snapshot"'])

# quiet 1: vLLM idle after traffic: last line Running 0, then silence; ps alive.
t0 = T("2025-10-23 09:40:00")
st, tr = vl_startup(t0, "{'model_tag': 'Qwen/Qwen3-32B', 'model': 'Qwen/Qwen3-32B', 'tensor_parallel_size': 2}")
L = list(st)
t = plus(tr, 60)
for pr, g, run in [(310.2, 81.2, 1), (0.0, 82.3, 1), (0.0, 31.9, 0)]:
    t = plus(t, 10)
    L.append(vl_stat(t, pr, g, run, 0, 0.9 if run else 0.0))
at = plus(t, 3600)
start = plus(t0, -2)
ps = ps_eo(at, [(2231, 2100, start, 95, 2652304, "Sl", 40, "/usr/bin/python3 /usr/local/bin/vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2"),
                (2402, 2231, start, 80, 3540212, "Sl", 50, "VLLM::EngineCore"),
                (2530, 2402, start, 120, 9540212, "Sl", 60, "VLLM::Worker_TP0"),
                (2531, 2402, start, 118, 9540212, "Sl", 60, "VLLM::Worker_TP1")])
txtar(D + "vllm-idle-after-traffic.txtar",
      """vLLM served a request; its last stat line shows nothing running (the
request finished in that interval), then an hour without stat lines while
the processes are alive and idle. An idle vLLM prints no stat lines.
year: 2025
tz: UTC""",
      [("server.log", L), ("ps_eo.txt", ps)], ["# no finding"])

# quiet 2: shm waits during startup (compilation), then normal serving.
t0 = T("2025-10-24 09:40:00")
st, tr = vl_startup(t0, "{'model_tag': 'Qwen/Qwen3-32B', 'model': 'Qwen/Qwen3-32B', 'tensor_parallel_size': 2}")
i = lineno(st, "torch.compile takes")
st = st[:i - 1] + [vl(plus(t0, 65), "EngineCore_DP0 pid=2402", "No available shared memory broadcast block found in 60 seconds. This typically happens when some processes are hanging or doing some time-consuming work (e.g. compilation).", src="shm_broadcast.py:466")] * 2 + st[i - 1:]
L = list(st)
t = plus(tr, 60)
for pr, g, run in [(310.2, 81.2, 1), (0.0, 82.3, 1), (0.0, 31.9, 0)]:
    t = plus(t, 10)
    L.append(vl_stat(t, pr, g, run, 0, 0.9 if run else 0.0))
txtar(D + "vllm-shm-waits-during-startup.txtar",
      """vLLM's engine core waited on its workers twice while they compiled
(before the server was ready), then served normally: startup waits are
compilation, not a hang.
year: 2025
tz: UTC""",
      [("server.log", L)], ["# no finding"])

# quiet 3: SGLang benchmark end: last decode line 1 running, queue 0, then
# 30 min of silence while alive: the request finished, the server idles.
t0 = T("2025-11-21 10:00:00")
st, tr = sg_startup(t0)
srv = SGServer(plus(tr, 60), seed=32, idle=60)
srv.batch(1, 600, 620, 61.0)
log = [sg_args(t0)] + st + srv.lines
at = plus(srv.now(), 30 * 60)
start = plus(t0, -5)
ps = ps_eo(at, [(5120, 4990, start, 41, 1652304, "Sl", 92, "python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B --tp 2"),
                (5301, 5120, start, 70, 16540212, "Sl", 80, "sglang::scheduler_TP0"),
                (5302, 5120, start, 69, 16540212, "Sl", 80, "sglang::scheduler_TP1")])
txtar(D + "sglang-benchmark-end-idle.txtar",
      """SGLang's last decode line shows 1 running request and an empty queue;
the request finished within the next 40 tokens and the server has idled for
30 minutes since. SGLang prints nothing while idle: no hang.
tz: UTC""",
      [("server.log", log), ("ps_eo.txt", ps)], ["# no finding"])
