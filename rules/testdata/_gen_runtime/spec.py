from lib import *
import os
import statistics
D = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "spec-decode-acceptance") + "/"

def sg_spec_args(t0, algo, draft, steps, topk, ntok):
    return sg_args(t0, speculative_algorithm=f"'{algo}'", speculative_draft_model_path=f"'{draft}'",
                   speculative_num_steps=str(steps), speculative_eagle_topk=str(topk), speculative_num_draft_tokens=str(ntok))

# fire 1: SGLang EAGLE3, 1 step (2 draft tokens), accept len ~1.2, rate ~0.2.
t0 = T("2025-12-05 10:00:00")
st, tr = sg_startup(t0)
def acc(rng):
    a = 1 + rng.uniform(0.17, 0.26)
    return (a, (a - 1) / 1)
srv = SGServer(plus(tr, 60), seed=51, idle=60, accept=acc)
for i in range(2):
    srv.batch(1, 500, 400, 48.2)
    srv.wait(0.3)
log = [sg_spec_args(t0, "EAGLE3", "/models/qwen3-32b-eagle3-r1", 1, 1, 2)] + st + srv.lines
import re
lens = [float(m.group(1)) for l in log for m in [re.search(r"accept len: ([\d.]+)", l)] if m]
rates = [float(m.group(1)) for l in log for m in [re.search(r"accept rate: ([\d.]+)", l)] if m]
ml, mr = sum(lens) / len(lens), sum(rates) / len(rates)
print("sg eagle", ml, mr, len(lens))
txtar(D + "sglang-eagle3-accept-1.2.txtar",
      f"""SGLang with an EAGLE-3 drafter (1 step, 2 draft tokens): its decode lines
show accept len 1.17-1.26 and accept rate 0.17-0.26, a mean accept length
of {ml:.2f} over {len(lens)} lines: almost every drafted token is rejected.
tz: UTC""",
      [("server.log", log)],
      [f'spec-decode-acceptance server.log:1 "EAGLE3 drafter /models/qwen3-32b-eagle3-r1 of SGLang TP0 shows a mean accept length of {ml:.2f}.*{mr*100:.0f}% of drafted tokens accepted over {len(lens)} stat lines"'])

# fire 2: vLLM 0.11 EAGLE3, 3 speculative tokens, mean acceptance length ~1.1.
t0 = T("2025-10-28 10:00:00")
nd = "{'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', 'model': 'meta-llama/Llama-3.1-8B-Instruct', 'speculative_config': {'method': 'eagle3', 'model': 'yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', 'num_speculative_tokens': 3}}"
st, tr = vl_startup(t0, nd)
L = list(st)
t = plus(tr, 30)
rng = random.Random(52)
acc_tot, dr_tot = 0, 0
for k in range(6):
    t = plus(t, 10)
    L.append(vl_stat(t, 40.1 if k == 0 else 0.0, 101.2 + rng.uniform(-2, 2), 1, 0, 1.1))
    drafts = 80 + k
    accepted = int(drafts * 0.1 + rng.uniform(0, 2))
    drafted = drafts * 3
    acc_tot += accepted; dr_tot += drafted
    mal = 1 + accepted / drafts
    pos = [accepted / drafts * 0.8, accepted / drafts * 0.2, 0.0]
    L.append(vl(t, "APIServer pid=2231", f"SpecDecoding metrics: Mean acceptance length: {mal:.2f}, Accepted throughput: {accepted / 10:.2f} tokens/s, Drafted throughput: {drafted / 10:.2f} tokens/s, Accepted: {accepted} tokens, Drafted: {drafted} tokens, Per-position acceptance rate: {pos[0]:.3f}, {pos[1]:.3f}, {pos[2]:.3f}, Avg Draft acceptance rate: {100 * accepted / drafted:.1f}%", src="metrics.py:96"))
rate = acc_tot / dr_tot
mlen = 1 + acc_tot / (dr_tot / 3)
print("vllm eagle", mlen, rate)
txtar(D + "vllm-eagle3-wrong-target.txtar",
      f"""vLLM 0.11 with an EAGLE-3 drafter proposing 3 tokens per step; about one
step in ten gets a token accepted: over the six SpecDecoding lines {acc_tot} of
{dr_tot} drafted tokens are accepted ({100 * rate:.1f}%), a mean acceptance length
of {mlen:.2f}.
year: 2025
tz: UTC""",
      [("server.log", L)],
      [f'spec-decode-acceptance server.log:2 "eagle3 drafter yuhuili/EAGLE3-LLaMA3.1-Instruct-8B of vLLM APIServer shows a mean accept length of {mlen:.2f}"'])

# fire 3 (weak): vLLM April-2025 format, acceptance rate only (no length, no
# token count in the args).
t0 = T("2025-05-06 10:00:00")
s_ = lambda x: plus(t0, x)
L = [
    f"INFO {s_(0):%m-%d %H:%M:%S} [api_server.py:1043] vLLM API server version 0.8.5",
    f"INFO {s_(0):%m-%d %H:%M:%S} [cli_args.py:297] non-default args: {{'model': 'Qwen/Qwen2.5-7B-Instruct', 'speculative_config': {{'model': 'Qwen/Qwen2.5-0.5B-Instruct'}}}}",
    f"INFO {s_(40):%m-%d %H:%M:%S} [loader.py:458] Loading weights took 3.12 seconds",
    "INFO:     Started server process [412]",
    "INFO:     Waiting for application startup.",
    "INFO:     Application startup complete.",
]
t = s_(100)
for k, (a, d) in enumerate([(21, 155), (19, 160), (24, 150), (18, 165)]):
    t = plus(t, 5)
    L.append(f"INFO {t:%m-%d %H:%M:%S} [loggers.py:111] Avg prompt throughput: {31.0 if k == 0 else 0.0:.1f} tokens/s, Avg generation throughput: {44.2 + k:.1f} tokens/s, Running: 1 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.4%, Prefix cache hit rate: 0.0%")
    L.append(f"INFO {t:%m-%d %H:%M:%S} [metrics.py:84] SpecDecoding metrics: Draft acceptance rate: {100 * a / d:.1f}%, Accepted: {a} tokens, Drafted: {d} tokens")
rate = sum(a for a, d in [(21, 155), (19, 160), (24, 150), (18, 165)]) / sum(d for a, d in [(21, 155), (19, 160), (24, 150), (18, 165)])
txtar(D + "vllm-draft-model-rate-only.txtar",
      f"""vLLM 0.8.5 with a small draft model; this era prints only the draft
acceptance rate and token counts: {100 * rate:.1f}% of drafted tokens accepted over
four lines. Without an accept length or the tokens drafted per step the
rule can only say the rate is low.
year: 2025
tz: UTC""",
      [("server.log", L)],
      [f'spec-decode-acceptance * "{100 * rate:.0f}% of drafted tokens accepted over 4 stat lines"'])

# quiet 1: SGLang DFLASH with 16 draft tokens: accept len ~2.5, rate ~0.10.
t0 = T("2026-08-01 23:37:40")
st, tr = sg_startup(t0, tp=1)
def acc2(rng):
    a = 2.2 + rng.uniform(0, 0.8)
    return (a, (a - 1) / 15)
srv = SGServer(plus(tr, 60), rank="TP0", seed=53, idle=60, accept=acc2)
for i in range(2):
    srv.batch(1, 300, 600, 19.8)
    srv.wait(0.3)
txtar(D + "sglang-dflash-16-tokens.txtar",
      """SGLang with a DFlash drafter proposing blocks of 16 tokens (15 drafted
per step): accept len 2.2-3.0 and accept rate about 0.10. The rate is low
because the later positions of a long block are rarely accepted, but every
verify step still gains 1.2-2 tokens: the drafter works.
tz: UTC""",
      [("server.log", [sg_spec_args(t0, "DFLASH", "poolside/Laguna-S-2.1-DFlash-INT4", 1, 1, 16)] + st + srv.lines)], ["# no finding"])

# quiet 2: vLLM EAGLE3 healthy: mean acceptance length ~2.9 with 3 tokens.
t0 = T("2025-10-29 10:00:00")
st, tr = vl_startup(t0, "{'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', 'model': 'meta-llama/Llama-3.1-8B-Instruct', 'speculative_config': {'method': 'eagle3', 'model': 'yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', 'num_speculative_tokens': 3}}")
L = list(st)
t = plus(tr, 30)
for k in range(5):
    t = plus(t, 10)
    L.append(vl_stat(t, 40.1 if k == 0 else 0.0, 231.2 + k, 1, 0, 1.1))
    drafts = 80
    accepted = 151 + k
    L.append(vl(t, "APIServer pid=2231", f"SpecDecoding metrics: Mean acceptance length: {1 + accepted / drafts:.2f}, Accepted throughput: {accepted / 10:.2f} tokens/s, Drafted throughput: {drafts * 3 / 10:.2f} tokens/s, Accepted: {accepted} tokens, Drafted: {drafts * 3} tokens, Per-position acceptance rate: 0.812, 0.641, 0.449, Avg Draft acceptance rate: {100 * accepted / (drafts * 3):.1f}%", src="metrics.py:96"))
txtar(D + "vllm-eagle3-healthy.txtar",
      """vLLM with an EAGLE-3 drafter that fits its target: mean acceptance
length about 2.9 of 4 possible, 63% of drafted tokens accepted.
year: 2025
tz: UTC""",
      [("server.log", L)], ["# no finding"])

# quiet 3: SGLang EAGLE3 with low acceptance in only two decode lines: too
# few to judge.
t0 = T("2025-12-06 10:00:00")
st, tr = sg_startup(t0)
srv = SGServer(plus(tr, 60), seed=54, idle=60, accept=acc)
srv.batch(1, 500, 90, 48.2)
txtar(D + "sglang-eagle3-two-lines.txtar",
      """SGLang with an EAGLE-3 drafter served one short request: two decode lines
with accept len about 1.2. Two lines are too few to judge a drafter.
tz: UTC""",
      [("server.log", [sg_spec_args(t0, "EAGLE3", "/models/qwen3-32b-eagle3-r1", 1, 1, 2)] + st + srv.lines)], ["# no finding"])
