// Package serverlog reads the logs of LLM inference servers, SGLang and vLLM
// of every era, and plain Python server logs, into facts.Log: recognized
// events with typed fields, per-process line counts and silences, progress
// bars reduced to their last state, and stat lines as bounded series.
//
// # Reading a line
//
// A physical line is split on "\r" (tqdm rewrites, vLLM's multi-line
// records) and after a progress bar glued to the next record. Each piece then
// loses, in this order: ANSI colours; the wrappers of a container runtime or
// collector (docker logs -t and kubectl --timestamps RFC 3339 stamps,
// journald short and short-iso, Buildkite, docker compose); the process tags
// of vLLM and Ray, innermost kept; the header of whoever wrote it (SGLang of
// every era, vLLM with and without "[", uvicorn, torch glog and c10d,
// flashinfer's and Ray's Python logging, Ray's C++ logging, NCCL, Gloo).
// What remains is the message, matched against the known milestones and
// failures by prefix first, with a few signatures searched anywhere.
//
// # Choices
//
//   - Levels. vLLM, uvicorn, glog, NCCL and SGLang's 2026 main-process
//     prefix print one. For the others a level is inferred: a line that
//     opens a traceback or names an exception ("RuntimeError: ...") is ERROR,
//     one that starts with "Warning" is WARNING, an SGLang-prefixed line is
//     INFO, an unprefixed one LevelNone. An event of an unlevelled line whose
//     text says "failed", "error" or "deprecated" is a WARNING, not an ERROR:
//     real SGLang lines such as "Failed to import amdsmi" are benign. An
//     ERROR line that means nothing more specific is an EventError.
//   - Processes. SGLang rank tags as printed ("TP0", "DP1 TP3",
//     "DP0 PP1 ATTN_CP1 MOE_DP2 TP3 EP3", legacy "gpu=0"), with Rank filled.
//     vLLM tags without the pid ("APIServer", "EngineCore_DP0",
//     "EngineCore", "Worker_TP3", "Worker_TP0_EP0", "ApiServer_2");
//     "VllmWorker rank=2" is "VllmWorker_rank2" (TP 2) and "VllmWorker TP0"
//     "VllmWorker_TP0". Tags that name no rank keep the pid so that workers
//     stay apart: "VllmWorkerProcess_5", "RayWorkerWrapper_345"; with Ray's
//     ip= the host is appended and set as Proc.Host
//     ("RayWorkerWrapper_345@10.0.0.2"); Ray's unnamed "(pid=7)" is "pid_7".
//     The main process is Name "" (key "main"); it is left out of Procs when
//     it wrote nothing.
//   - Lines without a prefix belong to the multi-line record they continue
//     (an SGLang traceback belongs to the rank that announced it), a bar
//     after a line holding only a vLLM tag to that tag's process, an
//     unprefixed bar of an SGLang log to the rank-0 scheduler (the only one
//     that prints them), anything else to the main process.
//   - Tracebacks are one EventTraceback at the line that opened the record
//     (the announcing line when there is one: "Scheduler hit an exception:",
//     vLLM's "EngineCore failed to start." whose next lines repeat its
//     header); that event's Traceback is shared with the announcing event.
//     A chain is one event: ExcType/ExcMsg are the last exception's,
//     Fields first_exc_type/first_exc_msg the first's, Chained counts the
//     earlier parts. A traceback printed twice is two events. The exception
//     also yields the event it means, at its own line: EventOOM (with
//     tried/total/free/in-use GiB), EventEngineInitFailed, EventEngineDead,
//     EventRPCTimeout, EventKVInsufficient, EventChildFailed,
//     EventGraphFailed, EventCollectiveTimout.
//   - Weights. "Loading weights took" and "Model loading took" are both
//     EventLoadEnd, Fields stage "weights" and "model"; vLLM's
//     "Starting to load model" is EventLoadBegin. A weights bar's last state
//     is an EventLoadProgress, a capture bar's an EventGraphProgress.
//   - "Application startup complete" is EventReady for vLLM (and logs of no
//     known engine) but EventHTTPStart for SGLang, which is ready only after
//     its warmup request ("The server is fired up", EventReady).
//   - Access-log lines all go to an EventRequest series (status,
//     client_error, server_error); the first 100 and up to 1000 failed ones
//     are also events, so that a busy server does not crowd out the rest.
//   - Settings: ServerArgs, non-default args and args: Namespace(...) become
//     one event with every key and one facts.Setting per key. None values are
//     absent from the event's fields and kept as "None" in the setting.
//     Values of secret keys, by internal/redact's policy (a name ending in a
//     secret word: api_key, admin_api_key, ssl_keyfile_password, hf_token;
//     a cache_key only when its value looks like a key), are "<set>" (an
//     absent or None API key is false); the event's message names the dump,
//     it never copies it.
//   - Stat keys are snake_case of the printed key with SGLang's "#token" as
//     "tokens" and percentages suffixed "_pct"; vLLM keys are mapped to
//     prompt_throughput, gen_throughput, running, waiting (V0's Pending),
//     swapped, preemptions, kv_cache_usage_pct, prefix_cache_hit_pct ...;
//     speculative decoding to acceptance_rate_pct (a fraction printed by old
//     versions is turned into percent), mean_acceptance_length,
//     accepted_tokens, draft_tokens, acceptance_pos_0.. . A vLLM engine other
//     than 000 is its own Series.Stream.
//
// # Time
//
// Times without a zone are wall-clock readings in UTC (Clock.NoZone);
// a file whose first stamp comes from a zoned wrapper is read in instants,
// and its lines without the wrapper are placed by the offset learned from
// lines with both. Stamps without a year take the year of the file's dated
// stamps when it has some (an SGLang log with vLLM import lines, torch or
// Ray lines); otherwise they are in facts.BaseYear, a December to January
// passage adds a year, and the file is NoYear. SGLang's 2024 "[HH:MM:SS]"
// stamps have no date at all: they sit on the placeholder's first day and
// the package records that assumption. A clock that goes back more than five
// minutes within one process and one stamp format is an IssueClockJump.
package serverlog
