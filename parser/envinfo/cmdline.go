package envinfo

import (
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/coroner-dev/coroner/parser/facts"
	"github.com/coroner-dev/coroner/parser/textio"
)

// A launch command is a shell line or a script: env assignments before the
// program or in export lines, wrappers (env, nohup, numactl, sudo, uv run
// ...), `docker run` with -e options, `bash -c '...'`, and the server:
// `python -m sglang.launch_server`, `sglang serve`, `vllm serve MODEL`,
// `python -m vllm.entrypoints.openai.api_server`. Each server command
// becomes one Cmdline whose Flags use the engine's own argument names.

var (
	launchRe  = regexp.MustCompile(`(?:^|[\s;&|(])(?:\S*/)?(?:python[0-9.]*\s+(?:-[A-Za-z]+\s+)*-m\s+(?:sglang|sglang_router|vllm)\.|sglang\s+serve\b|vllm\s+serve\b|(?:docker|podman|nvidia-docker)\s+(?:container\s+)?run\b)`)
	logLineRe = regexp.MustCompile(`^(?:\[\d|\d{4}-\d\d-\d\d|(?:INFO|WARNING|ERROR|DEBUG|CRITICAL)\b)`)
)

func sniffCmdline(lines []string, name string) int {
	if isMarkdown(name, lines) {
		return 0 // prose that quotes a command; its quotes would derail the shell reader
	}
	found, logLike := false, 0
	var logical strings.Builder
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t != "" && (t[0] == '[' || t[0] >= '0' && t[0] <= '9' || t[0] >= 'A' && t[0] <= 'Z') && logLineRe.MatchString(t) {
			logLike++
		}
		if strings.HasSuffix(t, `\`) {
			logical.WriteString(strings.TrimSuffix(t, `\`))
			logical.WriteByte(' ')
			continue
		}
		logical.WriteString(t)
		cmd := strings.TrimSpace(strings.TrimLeft(logical.String(), "$+ "))
		logical.Reset()
		if strings.HasPrefix(cmd, "#") || logLineRe.MatchString(cmd) {
			continue
		}
		if (strings.Contains(cmd, "sglang") || strings.Contains(cmd, "vllm") || strings.Contains(cmd, " run")) &&
			startsCommand(cmd) && launchRe.MatchString(cmd) {
			found = true
		}
	}
	isScript := strings.HasSuffix(name, ".sh") || strings.Contains(name, "cmdline") || strings.Contains(name, "command") || strings.Contains(name, "launch")
	switch {
	case found && logLike <= 3:
		return 85
	case found:
		return 30 // a log that quotes its own command: the log parser should win
	case isScript:
		return 20
	}
	return 0
}

// commandStarts are the words a launch line may begin with besides the
// server program itself: assignments aside, shell keywords and wrappers.
var commandStarts = map[string]bool{
	"export": true, "env": true, "nohup": true, "exec": true, "time": true, "sudo": true, "numactl": true,
	"taskset": true, "nice": true, "timeout": true, "setsid": true, "stdbuf": true, "uv": true, "conda": true,
	"micromamba": true, "poetry": true, "pipenv": true, "bash": true, "sh": true, "docker": true, "podman": true,
	"nvidia-docker": true, "sglang": true, "vllm": true, "then": true, "do": true, "if": true, "until": true, "while": true,
}

// startsCommand reports a line that begins like a shell command running a
// program, so that a ps line or a py-spy "Process 1: python3 -m ..." that
// quotes a command is not taken for one.
func startsCommand(cmd string) bool {
	first, _, _ := strings.Cut(cmd, " ")
	if i := strings.IndexByte(first, '='); i > 0 && isName(first[:i]) {
		return true
	}
	base := path.Base(first)
	return commandStarts[base] || isPython(base)
}

// isMarkdown recognizes a document by its name or its code fences.
func isMarkdown(name string, lines []string) bool {
	if strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".markdown") || strings.HasSuffix(name, ".rst") {
		return true
	}
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			return true
		}
	}
	return false
}

// engineFlags hold the engine's canonical names for the aliases users type.
var (
	sglangAliases = map[string]string{
		"tp": "tp_size", "tensor_parallel_size": "tp_size",
		"pp": "pp_size", "pipeline_parallel_size": "pp_size",
		"dp": "dp_size", "data_parallel_size": "dp_size",
		"ep": "ep_size", "expert_parallel_size": "ep_size",
		"model": "model_path", "mem_fraction": "mem_fraction_static",
	}
	vllmAliases = map[string]string{
		"tp": "tensor_parallel_size", "pp": "pipeline_parallel_size", "dp": "data_parallel_size",
		"q": "quantization", "O": "compilation_config", "model_tag": "model",
	}
	// boolFlags never take the next word as their value.
	boolFlags = map[string]bool{
		"trust_remote_code": true, "enforce_eager": true, "log_requests": true, "is_embedding": true,
		"headless": true, "help": true, "version": true, "h": true, "skip_server_warmup": true,
	}
	// vllmMulti are vLLM flags of nargs='+'.
	vllmMulti = map[string]bool{"served_model_name": true, "allowed_origins": true, "allowed_methods": true,
		"allowed_headers": true, "middleware": true, "cuda_graph_sizes": true, "api_key": true, "lora_modules": true}
)

// cmdParser holds the state of one script.
type cmdParser struct {
	in  *textio.Input
	out *facts.Facts
	// env is the script's environment so far: exports and assignments.
	env map[string]envVal
}

type envVal struct {
	v    string
	line int
}

func parseCmdline(in *textio.Input, out *facts.Facts) {
	p := &cmdParser{in: in, out: out, env: map[string]envVal{}}
	var lx lexer
	found := 0
	for in.Scan() {
		l := text(in, in.Bytes())
		if lx.line(stripPrompt(l, lx.quote == 0 && len(lx.words) == 0 && !lx.has), in.Line()) {
			for _, cmd := range splitCommands(lx.take()) {
				found += p.command(cmd, 0)
			}
		}
	}
	if lx.quote != 0 {
		in.Issuef(facts.IssueIncomplete, "a quote opened on line %d is never closed", lx.start)
	}
	lx.flush()
	for _, cmd := range splitCommands(lx.take()) {
		found += p.command(cmd, 0)
	}
	if found == 0 {
		in.IssueAt(0, facts.IssueUnrecognized, "no SGLang or vLLM launch command found")
	}
}

// stripPrompt removes a shell prompt or set -x marker at a command's start.
func stripPrompt(l string, atStart bool) string {
	if !atStart {
		return l
	}
	t := strings.TrimLeft(l, " \t")
	for _, p := range []string{"$ ", "+ ", "++ ", "# $ ", "> "} {
		if strings.HasPrefix(t, p) {
			return t[len(p):]
		}
	}
	return l
}

var shellKeywords = map[string]bool{"then": true, "do": true, "else": true, "{": true, "!": true, "elif": true, "if": true, "while": true, "until": true}

// command reads one simple command and returns 1 when it launched a server.
func (p *cmdParser) command(ws []word, depth int) int {
	i := 0
	for i < len(ws) && shellKeywords[ws[i].s] {
		i++
	}
	if i == len(ws) {
		return 0
	}
	switch ws[i].s {
	case "export", "declare", "typeset", "readonly", "local":
		for _, w := range ws[i+1:] {
			if isAssignment(w) {
				p.assign(w)
			}
		}
		return 0
	case "unset":
		for _, w := range ws[i+1:] {
			delete(p.env, w.s)
		}
		return 0
	}
	local := map[string]envVal{}
	for i < len(ws) && isAssignment(ws[i]) {
		name, v, _ := strings.Cut(ws[i].s, "=")
		local[name] = envVal{v, ws[i].line}
		i++
	}
	if i == len(ws) {
		// Assignments alone set shell variables for the rest of the script.
		for j := 0; j < len(ws); j++ {
			if isAssignment(ws[j]) {
				p.assign(ws[j])
			}
		}
		return 0
	}
	first := ws[0]
	i = skipWrappers(ws, i, local)
	if i >= len(ws) {
		return 0
	}
	c := &facts.Cmdline{Src: facts.Source{File: p.in.Path, Line: first.line}}
	if last := ws[len(ws)-1].line; last > first.line {
		c.EndLine = last
	}
	prog := path.Base(ws[i].s)
	var engine facts.Engine
	var args []word
	switch {
	case prog == "docker" || prog == "podman" || prog == "nvidia-docker":
		return p.docker(c, ws, i, local, depth)
	case (prog == "bash" || prog == "sh") && i+2 < len(ws) && ws[i+1].s == "-c" && depth < 3:
		p.recordLocal(local)
		n := 0
		for _, sub := range splitWords(ws[i+2].s, ws[i+2].line) {
			n += p.commandWith(sub, local, depth+1)
		}
		return n
	default:
		engine, args = launch(ws, i)
		if engine == facts.EngineUnknown {
			return 0
		}
	}
	p.emit(c, ws, engine, args, local)
	return 1
}

// commandWith runs a sub-command (bash -c, a container's command) with the
// outer command's environment added.
func (p *cmdParser) commandWith(ws []word, env map[string]envVal, depth int) int {
	saved := p.env
	p.env = make(map[string]envVal, len(saved)+len(env))
	for k, v := range saved {
		p.env[k] = v
	}
	for k, v := range env {
		p.env[k] = v
	}
	n := p.command(ws, depth)
	p.env = saved
	return n
}

// assign records a script-level assignment (export, or VAR=x alone).
func (p *cmdParser) assign(w word) {
	name, v, _ := strings.Cut(w.s, "=")
	v = p.expand(v)
	p.env[name] = envVal{v, w.line}
	p.out.Env = append(p.out.Env, &facts.EnvVar{Src: facts.Source{File: p.in.Path, Line: w.line}, Name: name,
		Value: Redact(name, v), From: "cmdline"})
}

// launch recognizes the server program at ws[i] and returns its arguments.
func launch(ws []word, i int) (facts.Engine, []word) {
	prog := path.Base(ws[i].s)
	switch {
	case prog == "sglang" && i+1 < len(ws) && ws[i+1].s == "serve":
		return facts.EngineSGLang, ws[i+2:]
	case prog == "vllm" && i+1 < len(ws) && ws[i+1].s == "serve":
		return facts.EngineVLLM, ws[i+2:]
	case isPython(prog):
		j := i + 1
		for j < len(ws) && strings.HasPrefix(ws[j].s, "-") && ws[j].s != "-m" {
			if ws[j].s == "-X" || ws[j].s == "-W" {
				j++
			}
			j++
		}
		if j+1 >= len(ws) || ws[j].s != "-m" {
			return facts.EngineUnknown, nil
		}
		mod := ws[j+1].s
		rest := ws[j+2:]
		switch {
		case strings.HasPrefix(mod, "sglang.") || strings.HasPrefix(mod, "sglang_router."):
			if strings.Contains(mod, "launch") || strings.Contains(mod, "serve") {
				return facts.EngineSGLang, rest
			}
		case strings.HasPrefix(mod, "vllm.entrypoints."):
			if len(rest) > 0 && rest[0].s == "serve" {
				rest = rest[1:]
			}
			return facts.EngineVLLM, rest
		}
	}
	return facts.EngineUnknown, nil
}

func isPython(prog string) bool {
	rest, ok := strings.CutPrefix(prog, "python")
	if !ok {
		return false
	}
	for _, c := range rest {
		if c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// skipWrappers steps over programs that run the next one (env, nohup,
// numactl ...) and the assignments env takes.
func skipWrappers(ws []word, i int, local map[string]envVal) int {
	for i < len(ws) {
		switch path.Base(ws[i].s) {
		case "env":
			i++
			for i < len(ws) {
				if ws[i].s == "-u" || ws[i].s == "--unset" || ws[i].s == "-C" || ws[i].s == "--chdir" {
					i += 2
				} else if strings.HasPrefix(ws[i].s, "-") {
					i++
				} else if isAssignment(ws[i]) {
					name, v, _ := strings.Cut(ws[i].s, "=")
					local[name] = envVal{v, ws[i].line}
					i++
				} else {
					break
				}
			}
		case "nohup", "exec", "time", "setsid", "command", "builtin", "caffeinate":
			i++
		case "sudo", "nice", "numactl", "taskset", "timeout", "stdbuf", "ionice", "chrt":
			prog := path.Base(ws[i].s)
			i++
			i = skipOptions(ws, i, prog)
		case "uv", "conda", "micromamba", "poetry", "pipenv":
			if i+1 < len(ws) && ws[i+1].s == "run" {
				prog := path.Base(ws[i].s)
				i = skipOptions(ws, i+2, prog)
			} else {
				return i
			}
		default:
			for i < len(ws) && isAssignment(ws[i]) {
				name, v, _ := strings.Cut(ws[i].s, "=")
				local[name] = envVal{v, ws[i].line}
				i++
			}
			return i
		}
	}
	return i
}

// optionTakesValue lists the wrapper options that take the next word.
var optionTakesValue = map[string]map[string]bool{
	"sudo":       {"-u": true, "-g": true, "-C": true, "-D": true, "-h": true, "-p": true, "-r": true, "-t": true, "-U": true},
	"nice":       {"-n": true},
	"numactl":    {"-N": true, "-m": true, "-C": true, "-c": true, "-p": true, "-i": true, "-P": true, "--cpunodebind": true, "--membind": true, "--physcpubind": true, "--interleave": true, "--preferred": true},
	"taskset":    {},
	"timeout":    {"-s": true, "-k": true, "--signal": true, "--kill-after": true},
	"ionice":     {"-c": true, "-n": true, "-p": true},
	"chrt":       {},
	"stdbuf":     {"-i": true, "-o": true, "-e": true},
	"uv":         {"--with": true, "--python": true, "-p": true, "--project": true, "--directory": true, "--env-file": true, "--package": true, "--extra": true, "--group": true},
	"conda":      {"-n": true, "--name": true, "-p": true, "--prefix": true, "--cwd": true},
	"micromamba": {"-n": true, "--name": true, "-p": true, "--prefix": true},
}

// skipOptions steps over a wrapper's options and, for taskset, timeout and
// chrt, their positional argument.
func skipOptions(ws []word, i int, prog string) int {
	takes := optionTakesValue[prog]
	for i < len(ws) && strings.HasPrefix(ws[i].s, "-") && ws[i].s != "-" {
		o := ws[i].s
		i++
		if o == "--" {
			break
		}
		if takes[o] && !strings.Contains(o, "=") {
			i++
		}
	}
	switch prog {
	case "taskset", "timeout", "chrt":
		i++ // the mask, duration or priority
	}
	return i
}

// docker reads `docker run [options] IMAGE [COMMAND [ARGS]]`.
func (p *cmdParser) docker(c *facts.Cmdline, ws []word, i int, local map[string]envVal, depth int) int {
	j := i + 1
	if j < len(ws) && ws[j].s == "container" {
		j++
	}
	if j >= len(ws) || ws[j].s != "run" {
		return 0
	}
	j++
	cont := map[string]string{}
	denv := map[string]envVal{}
	for j < len(ws) && strings.HasPrefix(ws[j].s, "-") {
		o := ws[j].s
		j++
		if o == "--" {
			break
		}
		name, val, eq := strings.Cut(strings.TrimLeft(o, "-"), "=")
		long := strings.HasPrefix(o, "--")
		if !long && len(name) > 1 && !eq {
			// -it, -dit: short flags bundled; a value-taking one last takes the next word.
			last := name[len(name)-1:]
			for _, f := range name[:len(name)-1] {
				dockerOption(cont, string(f), "true")
			}
			name = last
		}
		if !eq {
			if dockerValueOpts[name] && j < len(ws) {
				val = ws[j].s
				j++
			} else {
				val = "true"
			}
		}
		switch name {
		case "e", "env":
			k, v, has := strings.Cut(val, "=")
			if !has {
				// -e NAME passes the caller's value through.
				v = p.env[k].v
				if lv, ok := local[k]; ok {
					v = lv.v
				}
			}
			denv[k] = envVal{v, ws[j-1].line}
		default:
			dockerOption(cont, name, val)
		}
	}
	if j >= len(ws) {
		return 0
	}
	image := ws[j].s
	cont["image"] = image
	inner := ws[j+1:]
	c.Container = cont
	var engine facts.Engine
	var args []word
	if len(inner) == 0 || strings.HasPrefix(inner[0].s, "-") {
		// Arguments to the image's entrypoint: the engine's server.
		img := strings.ToLower(image)
		switch {
		case strings.Contains(img, "vllm"):
			engine = facts.EngineVLLM
		case strings.Contains(img, "sglang"):
			engine = facts.EngineSGLang
		}
		args = inner
	} else {
		k := skipWrappers(inner, 0, denv)
		if k < len(inner) {
			prog := path.Base(inner[k].s)
			if (prog == "bash" || prog == "sh") && k+2 < len(inner) && inner[k+1].s == "-c" && depth < 3 {
				for _, sub := range splitWords(inner[k+2].s, inner[k+2].line) {
					if e, a, ok := subLaunch(sub, denv); ok {
						engine, args = e, a
						break
					}
				}
			} else {
				engine, args = launch(inner, k)
			}
		}
	}
	p.emit(c, ws, engine, args, mergeEnv(local, denv))
	return 1
}

// subLaunch finds the server in a bash -c command of a container.
func subLaunch(ws []word, env map[string]envVal) (facts.Engine, []word, bool) {
	i := 0
	for i < len(ws) && isAssignment(ws[i]) {
		name, v, _ := strings.Cut(ws[i].s, "=")
		env[name] = envVal{v, ws[i].line}
		i++
	}
	i = skipWrappers(ws, i, env)
	if i >= len(ws) {
		return facts.EngineUnknown, nil, false
	}
	e, a := launch(ws, i)
	return e, a, e != facts.EngineUnknown
}

func mergeEnv(a, b map[string]envVal) map[string]envVal {
	out := make(map[string]envVal, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// dockerValueOpts are the docker run options that take a value.
var dockerValueOpts = map[string]bool{
	"e": true, "env": true, "env-file": true, "v": true, "volume": true, "p": true, "publish": true, "name": true,
	"gpus": true, "shm-size": true, "ipc": true, "network": true, "net": true, "runtime": true, "w": true, "workdir": true,
	"entrypoint": true, "ulimit": true, "device": true, "cap-add": true, "cap-drop": true, "u": true, "user": true,
	"platform": true, "mount": true, "l": true, "label": true, "h": true, "hostname": true, "memory": true, "m": true,
	"cpus": true, "cpuset-cpus": true, "restart": true, "security-opt": true, "log-driver": true, "log-opt": true,
	"pull": true, "add-host": true, "dns": true, "pid": true, "uts": true, "group-add": true, "tmpfs": true,
	"memory-swap": true, "oom-score-adj": true, "stop-signal": true, "stop-timeout": true, "cidfile": true,
	"expose": true, "link": true, "volumes-from": true, "sysctl": true, "storage-opt": true, "cgroupns": true,
	"cgroup-parent": true, "userns": true, "isolation": true, "annotation": true, "health-cmd": true,
	"health-interval": true, "health-timeout": true, "health-retries": true, "health-start-period": true,
	"device-cgroup-rule": true, "memory-reservation": true, "cpu-shares": true, "c": true, "blkio-weight": true,
}

// dockerShort names the single-letter options by their long names.
var dockerShort = map[string]string{"v": "volume", "p": "publish", "w": "workdir", "u": "user", "l": "label",
	"h": "hostname", "m": "memory", "d": "detach", "i": "interactive", "t": "tty", "P": "publish-all", "c": "cpu-shares"}

func dockerOption(cont map[string]string, name, val string) {
	if l, ok := dockerShort[name]; ok {
		name = l
	}
	key := strings.ReplaceAll(name, "-", "_")
	val = Redact(key, val)
	if old, ok := cont[key]; ok && old != val {
		val = old + "," + val // repeated options: volumes, devices, ulimits
	}
	cont[key] = cut(val)
}

// emit records a server command: argv, env, flags and one Setting per flag.
func (p *cmdParser) emit(c *facts.Cmdline, ws []word, engine facts.Engine, args []word, local map[string]envVal) {
	c.Engine = engine
	env := map[string]string{}
	for k, v := range p.env {
		env[k] = Redact(k, v.v)
	}
	for k, v := range local {
		env[k] = Redact(k, p.expand(v.v))
	}
	p.recordLocal(local)
	if len(env) > 0 {
		c.Env = env
	}
	c.Argv = argv(ws)
	flags := parseFlags(engine, args)
	if len(flags) > 0 {
		c.Flags = map[string]string{}
	}
	for _, f := range flags {
		v := Redact(f.key, p.expand(f.val))
		c.Flags[f.key] = v
		p.out.Settings = append(p.out.Settings, &facts.Setting{Src: facts.Source{File: p.in.Path, Line: f.line},
			Key: f.key, Value: v, From: "cmdline"})
	}
	p.out.Cmds = append(p.out.Cmds, c)
}

// recordLocal records a command's own assignments (VAR=x cmd, env VAR=x,
// docker -e) as environment facts, in the order they were written.
func (p *cmdParser) recordLocal(local map[string]envVal) {
	names := make([]string, 0, len(local))
	for k := range local {
		names = append(names, k)
	}
	sort.Slice(names, func(a, b int) bool {
		la, lb := local[names[a]].line, local[names[b]].line
		return la < lb || la == lb && names[a] < names[b]
	})
	for _, k := range names {
		v := p.expand(local[k].v)
		p.out.Env = append(p.out.Env, &facts.EnvVar{Src: facts.Source{File: p.in.Path, Line: local[k].line}, Name: k,
			Value: Redact(k, v), From: "cmdline"})
	}
}

// argv is the command without its leading assignments, secrets redacted.
func argv(ws []word) []string {
	i := 0
	for i < len(ws) && isAssignment(ws[i]) {
		i++
	}
	out := make([]string, 0, len(ws)-i)
	secretNext := false
	for _, w := range ws[i:] {
		s := w.s
		switch {
		case secretNext:
			s = Redacted
			secretNext = false
		case strings.HasPrefix(s, "-"):
			name, _, eq := strings.Cut(strings.TrimLeft(s, "-"), "=")
			if IsSecretName(name) {
				if eq {
					s = s[:strings.IndexByte(s, '=')+1] + Redacted
				} else {
					secretNext = true
				}
			}
		case isAssignment(w):
			name, v, _ := strings.Cut(s, "=")
			s = name + "=" + Redact(name, v)
		}
		out = append(out, RedactValue(s))
	}
	return out
}

type flag struct {
	key, val string
	line     int
}

// parseFlags reads the engine's arguments into snake_case names as the
// engine parses them. vLLM's first positional is the model.
func parseFlags(engine facts.Engine, args []word) []flag {
	var out []flag
	aliases := sglangAliases
	if engine == facts.EngineVLLM {
		aliases = vllmAliases
	}
	for i := 0; i < len(args); i++ {
		a := args[i].s
		line := args[i].line
		if a == "--" {
			break
		}
		if !looksLikeFlag(a) {
			if engine == facts.EngineVLLM && !hasFlag(out, "model") {
				out = append(out, flag{"model", a, line})
			}
			continue
		}
		name, val, eq := strings.Cut(strings.TrimLeft(a, "-"), "=")
		// vLLM's -O3 is -O 3.
		if engine == facts.EngineVLLM && !strings.HasPrefix(a, "--") && len(name) > 1 && name[0] == 'O' && isDigits(name[1:]) {
			name, val, eq = "O", name[1:], true
		}
		key := strings.ReplaceAll(name, "-", "_")
		if engine != facts.EngineUnknown {
			if k, ok := aliases[key]; ok {
				key = k
			}
		}
		if !eq {
			switch {
			case isBoolName(key):
				val = "true"
				if i+1 < len(args) && isBoolWord(args[i+1].s) {
					i++
					val = args[i].s
				}
			case i+1 < len(args) && !looksLikeFlag(args[i+1].s):
				i++
				val = args[i].s
				// nargs='+': SGLang has no positionals, so every following
				// plain word belongs to the flag.
				for i+1 < len(args) && !looksLikeFlag(args[i+1].s) && (engine == facts.EngineSGLang || vllmMulti[key]) {
					i++
					val += " " + args[i].s
				}
			default:
				val = "true"
			}
		}
		out = append(out, flag{key, cut(val), line})
	}
	return out
}

func hasFlag(fs []flag, key string) bool {
	for _, f := range fs {
		if f.key == key {
			return true
		}
	}
	return false
}

func isBoolName(key string) bool {
	return boolFlags[key] || strings.HasPrefix(key, "enable_") || strings.HasPrefix(key, "disable_") ||
		strings.HasPrefix(key, "no_") || strings.HasPrefix(key, "skip_")
}

func isBoolWord(s string) bool {
	switch s {
	case "true", "false", "True", "False", "1", "0":
		return true
	}
	return false
}

// looksLikeFlag tells an option from a value; "-1" and "-0.5" are values.
func looksLikeFlag(s string) bool {
	if len(s) < 2 || s[0] != '-' {
		return false
	}
	_, err := strconv.ParseFloat(s, 64)
	return err != nil
}

var varRe = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// expand substitutes $NAME, ${NAME} and ${NAME:-default} from the script's
// own assignments; unknown variables stay as written.
func (p *cmdParser) expand(s string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	return varRe.ReplaceAllStringFunc(s, func(m string) string {
		sm := varRe.FindStringSubmatch(m)
		name := sm[1] + sm[3]
		if v, ok := p.env[name]; ok {
			return v.v
		}
		if sm[1] != "" && strings.Contains(m, "-") {
			return sm[2]
		}
		return m
	})
}
