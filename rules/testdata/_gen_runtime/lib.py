"""Helpers to render SGLang 0.5.x and vLLM log lines for rule fixtures."""
import datetime as dt
import os

def T(s):
    return dt.datetime.strptime(s, "%Y-%m-%d %H:%M:%S")

def sg(t, msg, rank=None):
    tag = f" {rank}" if rank else ""
    return f"[{t:%Y-%m-%d %H:%M:%S}{tag}] {msg}"

def sg_args(t, **kw):
    base = dict(model_path="'Qwen/Qwen3-32B'", tokenizer_path="'Qwen/Qwen3-32B'", trust_remote_code="False",
                host="'0.0.0.0'", port="30000", dtype="'auto'", kv_cache_dtype="'auto'", mem_fraction_static="0.88",
                max_running_requests="None", chunked_prefill_size="8192", tp_size="2", pp_size="1", dp_size="1",
                attention_backend="'fa3'", sampling_backend="'flashinfer'", speculative_algorithm="None",
                speculative_draft_model_path="None", speculative_num_steps="None", speculative_eagle_topk="None",
                speculative_num_draft_tokens="None", cuda_graph_max_bs="None", disable_cuda_graph="False",
                enable_torch_compile="False", num_continuous_decode_steps="1", decode_log_interval="40")
    base.update({k: v for k, v in kw.items()})
    return sg(t, "server_args=ServerArgs(" + ", ".join(f"{k}={v}" for k, v in base.items()) + ")")

def sg_startup(t0, tp=2, graphs=True, extra=None):
    """Launch to ready in about 2 minutes; returns (lines, t_ready)."""
    L = []
    t = t0
    step = lambda s: t0 + dt.timedelta(seconds=s)
    ranks = [f"TP{i}" for i in range(tp)]
    for r in ranks:
        L.append(sg(step(8), "Init torch distributed begin.", r))
    for r in ranks:
        L.append(sg(step(9), "Init torch distributed ends. mem usage=0.58 GB", r))
    for r in ranks:
        L.append(sg(step(9), "Load weight begin. avail mem=78.55 GB", r))
    L.append("Loading safetensors checkpoint shards:   0% Completed | 0/17 [00:00<?, ?it/s]")
    L.append("Loading safetensors checkpoint shards: 100% Completed | 17/17 [00:41<00:00,  2.41s/it]")
    for r in ranks:
        L.append(sg(step(51), "Load weight end. type=Qwen3ForCausalLM, dtype=torch.bfloat16, avail mem=47.90 GB, mem usage=30.65 GB.", r))
    for r in ranks:
        L.append(sg(step(52), "KV Cache is allocated. #tokens: 412000, K size: 15.72 GB, V size: 15.72 GB", r))
    for r in ranks:
        L.append(sg(step(52), "Memory pool end. avail mem=15.21 GB", r))
    if graphs:
        for r in ranks:
            L.append(sg(step(53), "Capture cuda graph begin. This can take up to several minutes. avail mem=15.11 GB", r))
        L.append("Capturing batches (bs=1 avail_mem=14.52 GB): 100%|██████████| 52/52 [00:21<00:00,  2.41it/s]")
        for r in ranks:
            L.append(sg(step(75), "Capture cuda graph end. Time elapsed: 21.84 s. mem usage=0.61 GB. avail mem=14.50 GB.", r))
    L.append(sg(step(76), "max_total_num_tokens=412000, chunked_prefill_size=8192, max_prefill_tokens=16384, max_running_requests=4096, context_len=40960, available_gpu_mem=14.50 GB", "TP0"))
    L.append(sg(step(77), "INFO:     Started server process [5120]"))
    L.append(sg(step(77), "INFO:     Waiting for application startup."))
    L.append(sg(step(77), "INFO:     Application startup complete."))
    L.append(sg(step(77), "INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)"))
    L.append(sg(step(78), 'INFO:     127.0.0.1:48812 - "GET /get_model_info HTTP/1.1" 200 OK'))
    L.append(sg(step(78), "Prefill batch, #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0, ", "TP0"))
    L.append(sg(step(79), 'INFO:     127.0.0.1:48814 - "POST /generate HTTP/1.1" 200 OK'))
    L.append(sg(step(79), "The server is fired up and ready to roll!"))
    return L, step(79)

def sg_prefill(t, new, cached, usage, running, queue, rank="TP0"):
    return sg(t, f"Prefill batch, #new-seq: 1, #new-token: {new}, #cached-token: {cached}, token usage: {usage:.2f}, #running-req: {running}, #queue-req: {queue}, ", rank)

def sg_decode(t, running, tokens, usage, tput, queue=0, graph=True, accept=None, rank="TP0"):
    spec = ""
    if accept:
        spec = f"accept len: {accept[0]:.2f}, accept rate: {accept[1]:.2f}, "
    return sg(t, f"Decode batch, #running-req: {running}, #token: {tokens}, token usage: {usage:.2f}, {spec}cuda graph: {graph}, gen throughput (token/s): {tput:.2f}, #queue-req: {queue}, ", rank)

def vl(t, proc, msg, level="INFO", src="loggers.py:127"):
    pre = f"({proc}) " if proc else ""
    return f"{pre}{level} {t:%m-%d %H:%M:%S} [{src}] {msg}"

def vl_stat(t, prompt, gen, running, waiting, kv, prefix=0.0, api="APIServer pid=2231", extra=""):
    return vl(t, api, f"Engine 000: Avg prompt throughput: {prompt:.1f} tokens/s, Avg generation throughput: {gen:.1f} tokens/s, Running: {running} reqs, Waiting: {waiting} reqs, {extra}GPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: {prefix:.1f}%")

def vl_startup(t0, nondefault, api="APIServer pid=2231", version="0.11.0", eager=False):
    s = lambda x: t0 + dt.timedelta(seconds=x)
    L = [
        vl(s(0), api, f"vLLM API server version {version}", src="api_server.py:1839"),
        vl(s(0), api, "non-default args: " + nondefault, src="utils.py:233"),
        vl(s(6), api, "Resolved architecture: Qwen3ForCausalLM", src="model.py:547"),
        vl(s(6), api, "Using max model len 40960", src="model.py:1510"),
        vl(s(13), "EngineCore_DP0 pid=2402", "Waiting for init message from front-end.", src="core.py:644"),
        vl(s(20), "Worker_TP0 pid=2530", "Starting to load model Qwen/Qwen3-32B...", src="gpu_model_runner.py:2602"),
        vl(s(20), "Worker_TP0 pid=2530", "Using Flash Attention backend on V1 engine.", src="cuda.py:366"),
        "(Worker_TP0 pid=2530) Loading safetensors checkpoint shards:   0% Completed | 0/17 [00:00<?, ?it/s]",
        "(Worker_TP0 pid=2530) Loading safetensors checkpoint shards: 100% Completed | 17/17 [00:38<00:00,  2.25s/it]",
        vl(s(59), "Worker_TP0 pid=2530", "Loading weights took 38.31 seconds", src="default_loader.py:267"),
        vl(s(60), "Worker_TP0 pid=2530", "Model loading took 30.5855 GiB and 39.402117 seconds", src="gpu_model_runner.py:2653"),
    ]
    if not eager:
        L += [
            vl(s(71), "Worker_TP0 pid=2530", "torch.compile takes 10.84 s in total", src="monitor.py:34"),
            vl(s(73), "Worker_TP0 pid=2530", "Available KV cache memory: 31.87 GiB", src="gpu_worker.py:298"),
            vl(s(74), "EngineCore_DP0 pid=2402", "GPU KV cache size: 261,072 tokens", src="kv_cache_utils.py:1087"),
            "(Worker_TP0 pid=2530) Capturing CUDA graphs (decode, FULL): 100%|██████████| 67/67 [00:07<00:00,  9.04it/s]",
            vl(s(84), "Worker_TP0 pid=2530", "Graph capturing finished in 10 secs, took 0.91 GiB", src="gpu_model_runner.py:3480"),
            vl(s(84), "EngineCore_DP0 pid=2402", "init engine (profile, create kv cache, warmup model) took 24.21 seconds", src="core.py:210"),
        ]
    else:
        L += [
            vl(s(62), "Worker_TP0 pid=2530", "Available KV cache memory: 32.74 GiB", src="gpu_worker.py:298"),
            vl(s(63), "EngineCore_DP0 pid=2402", "GPU KV cache size: 268,208 tokens", src="kv_cache_utils.py:1087"),
            vl(s(63), "EngineCore_DP0 pid=2402", "init engine (profile, create kv cache, warmup model) took 3.42 seconds", src="core.py:210"),
        ]
    L += [
        vl(s(85), api, "Starting vLLM API server 0 on http://0.0.0.0:8000", src="api_server.py:1971"),
        vl(s(85), api, "Available routes are:", src="launcher.py:34"),
        vl(s(85), api, "Route: /health, Methods: GET", src="launcher.py:42"),
        f"({api}) INFO:     Started server process [2231]",
        f"({api}) INFO:     Waiting for application startup.",
        f"({api}) INFO:     Application startup complete.",
    ]
    return L, s(85)

def txtar(path, comment, files, want):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    out = comment.rstrip("\n") + "\n"
    for name, lines in files:
        out += f"-- {name} --\n" + "\n".join(lines) + "\n"
    out += "-- want --\n" + "\n".join(want) + "\n"
    with open(path, "w") as f:
        f.write(out)

def lineno(lines, needle, nth=1):
    c = 0
    for i, l in enumerate(lines):
        if needle in l:
            c += 1
            if c == nth:
                return i + 1
    raise KeyError(needle)

def plus(t, s):
    return t + dt.timedelta(seconds=s)

import random

class SGServer:
    """Simulates an SGLang scheduler's stat lines (decode_log_interval 40):
    gen throughput is the tokens made since the previous decode line over the
    wall time since it, idle time included."""
    def __init__(self, t, rank="TP0", max_tokens=412000, seed=1, graph=True, accept=None, idle=0.0):
        self.t = t
        self.frac = 0.0
        self.rank = rank
        self.max_tokens = max_tokens
        self.rng = random.Random(seed)
        self.lines = []
        self.graph = graph
        self.accept = accept
        self.last_log = -idle  # the previous decode line, before an idle period
        self.since = 0  # tokens since the last decode line

    def now(self):
        return self.t + dt.timedelta(seconds=self.frac)

    def wait(self, s):
        self.frac += s

    def add(self, line):
        self.lines.append(line)

    def batch(self, n, prompt, out, rate, jitter=0.004, graph=None, queue=0, rate_fn=None, usage_fn=None):
        """n requests arriving together, each generating `out` tokens; `rate`
        is the batch's tokens/s while decoding."""
        graph = self.graph if graph is None else graph
        self.add(sg_prefill(self.now(), prompt * n, 0, prompt * n / self.max_tokens, 0, queue, self.rank).replace("#new-seq: 1,", f"#new-seq: {n},"))
        self.wait(0.05 + prompt * n / 20000)
        made = 0
        while made + 40 <= out:
            r = rate_fn(made) if rate_fn else rate
            r = r * (1 + self.rng.uniform(-jitter, jitter))
            self.wait(40 * n / r)
            made += 40
            self.since += 40 * n
            toks = n * (prompt + made)
            shown = self.since / (self.frac - self.last_log)
            self.last_log, self.since = self.frac, 0
            acc = self.accept(self.rng) if self.accept else None
            usage = usage_fn(made) if usage_fn else toks / self.max_tokens
            self.add(sg_decode(self.now(), n, toks, usage, shown, queue, graph, acc, self.rank))
        rest = out - made
        self.wait(rest * n / rate)
        self.since += rest * n
