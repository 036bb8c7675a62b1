package pack

// Reference is the rule pack language as `coroner rules explain` prints it
// with no ID; the README carries the same text. A test checks that every
// name of View is in it.
const Reference = `Rule packs (--rules FILE): YAML, loaded without recompiling.

  signatures:            the schema of coroner's own catalog: id, pattern (RE2),
    - id: ...            category, severity, confidence, title, remedy,
                         references, outcome, phase, affected, fixed, owner.
                         Reported by the rule "signature" like the built-in ones.
  rules:
    - id: kebab-case     unique among built-in and pack rules
      title: ...         one line
      doc: ...           what the rule looks at and why that means what it says
      severity: warning  critical | error | warning (default) | info
      category: config   a cause category of the taxonomy (optional)
      confidence: 0.5    (0, 1], default 0.5
      cause: true        the finding names a cause of the outcome (default: true
                         when a category is given); false for policy checks
      layer: prior       the layer of diagnosis the cause counts in (optional):
                         class, library, prior, or fallback (counted only when
                         no other finding names a cause)
      outcome: crashed   optional claim on the verdict (ready, in-progress, hung,
      phase: ...           crashed, slow, unknown) and the phase it happened in
      remedy: ...
      references: [https://...]
      needs: [env, cmdline]   evidence kinds; the rule runs when any is present
      match:             log events to look for (all given conditions hold):
        type: [traceback, error]   event types (coroner rules explain shows them)
        msg: 'regexp'              over the message (or a traceback's
                                   "ExcType: message")
        fields: {name: 'regexp'}   over the event's fields (a name the
                                   types do not carry is a load error that
                                   lists the ones they do)
        signature: [id]            events and kernel lines a signature matched
      when: expression   expr (https://expr-lang.org) over the view below; a
                         rule with match tests it once per matched event
      message: 'text {{ expression }}'   the finding's message; default: what
                                         matched, or the condition and the
                                         values it read

A rule needs match, when, or both. It fires once per run: with match, citing
the first five events that matched (and passed when); with when alone,
citing the settings, variables and versions the expression looked up by
name, the items of gpus/procs/disks/events(...) its any/all/filter/count
predicates held for, and the snapshots of the records it named. Events after
the server was told to stop are shutdown noise and never match. Only
recognized events are kept (every error-level line, tracebacks, startup
milestones...), not plain info lines.

Expressions are compiled when the pack loads: a misspelt name or a type
error is a load error at file:line:col. An expression that fails at run time
(an index past the GPUs there are) makes the rule inconclusive, not fired.

The view:

  engine            string   "sglang", "vllm" or ""
  version           string   the engine version the log states
  settings[key]     string   engine settings by snake_case name (model_path,
                             tp_size, attention_backend...): the engine's own
                             dump (server_args, non-default args) wins over
                             the launch command
  env[name]         string   environment variables (env dumps, launch scripts,
                             collect-env)
  versions[name]    string   collect-env / check-env versions (torch, cuda,
                             nccl, driver, flashinfer, triton...)
  kinds[kind]       int      how many sources of an evidence kind the bundle has
  gpus              list     index, name, cc ("12.0"), util (%), mem_used_mib,
                             mem_total_mib (-1 when unknown), file, line
  procs             list     the latest process snapshot: pid, ppid, role
                             (sglang-scheduler, vllm-worker, compiler...),
                             state (R S D Z T), cpu_s, cpu_pct, rss_mib, comm,
                             args, server (a live inference-server process),
                             file, line
  disks             list     df: mount, fs, type, size_gib, avail_gib, used_pct
  memory            record   the latest meminfo or free: total_gib,
                             available_gib (-1 when unknown), file, line
  topology          record   nvidia-smi topo -m: nvlink (any two GPUs on
                             NVLink), links (the kinds between distinct GPUs:
                             NV18, PIX, PXB, PHB, NODE, SYS), file, line
  state             record   ready, failed, alive, shutdown (bool); workers,
                             probes_ok, probes_failed (int); silence_s (seconds
                             the logs were silent before the latest evidence);
                             phase (the furthest phase reached)
  log               record   lines (all server logs), events, path (main log)
  events(type...)   list     recognized events of those types (all without a
                             type), in log order
  event             record   in a rule with match: the event being tested:
                             type, msg, level, proc, time, fields, exc_type,
                             exc_msg, file, line; for a traceback library
                             (the one owning its innermost frames: flashinfer,
                             triton, nccl, cuda-graph ...) and frames (its
                             functions, outermost first); for a failure phase
                             (where coroner placed it)
  matches           int      in a rule with match: how many events matched

A missing key reads as "": test presence with "key" in settings. Operators:
== != < > and or not, contains, startsWith, endsWith, matches (regexp), in,
?: ; functions: any, all, none, one, filter, map, count, len, lower, upper,
trim, split, int, float... (https://expr-lang.org/docs/language-definition).

Event types: server-args non-default-args version attention-backend
config-warning engine-init dist-init-begin dist-init-end nccl-version
load-begin weights-format load-progress load-end memory-profile kv-cache-alloc
kv-cache-size available-kv max-concurrency mem-pool-end max-total-tokens
torch-compile torch-compile-end jit-begin jit-end jit-failed
graph-capture-begin graph-capture-progress graph-capture-end
graph-capture-failed init-engine-done warmup http-start ready request retract
preemption shutdown nccl-info nccl-warn nccl-error gloo python-warning torch-log
collective-timeout watchdog-timeout shm-broadcast-wait rpc-timeout route
custom-allreduce p2p jit-progress kv-insufficient placement-wait
weights-download rank-assigned cmdline deprecation signal benchmark traceback
error oom scheduler-exception child-failed engine-init-failed worker-died
engine-dead sigquit killed kernel

Test a pack with coroner rules test DIR: txtar cases (evidence files as
sections, expectations in a "want" section: RULE-ID FILE:LINE "regexp", or
verdict key=value) and bundle folders with DIR.want beside them. Every
finding of a pack rule must be wanted and every want found; each pack rule
needs a case where it fires and one where it stays quiet.
`
