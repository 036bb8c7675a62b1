package issue

import (
	"regexp"
	"strings"
)

// How unfenced logs are found. People paste a log, a command or
// collect_env's output straight into the issue text, with no fence. Such
// text is told from prose line by line: a line is strong evidence when it
// starts the way the lines of a log, a shell command or an environment
// report start (a timestamp, a level, a vLLM process tag, a traceback's
// frame or exception, an NCCL line, a glog or torch rank prefix, a tqdm
// bar, a compiler diagnostic, a shell prompt or a launcher, a collect_env
// or check_env key); weak when it only continues one (indented, a caret
// line, a table row); prose otherwise. A run starts at a strong line,
// takes the strong and weak lines after it with at most two blank lines in
// a row, and ends at prose, a heading or any other structure. Every run
// with a strong line becomes a block; the kind of most of its strong lines
// names it when the issue's words around it do not.

// lineClass is what a line of prose looks like.
type lineClass int

const (
	lineProse lineClass = iota
	lineLog
	lineCmd
	lineEnv
	lineWeak
	lineBlank
)

func (c lineClass) strong() bool { return c == lineLog || c == lineCmd || c == lineEnv }

var (
	logStartRe = regexp.MustCompile(`^(` +
		`\[?\d{4}[-/]\d\d[-/]\d\d[ T]\d\d:\d\d` + // ISO and SGLang stamps, docker/kubectl prefixes
		`|(INFO|WARNING|WARN|ERROR|DEBUG|CRITICAL|FATAL|TRACE)(\s+\d\d-\d\d \d\d:\d\d|:|\s+\[|\s+\d{4}-)` + // vLLM, uvicorn, logging
		`|\((\w[\w.-]*)?( \w+=[\w.-]+)* ?pid=\d+\)` + // vLLM and Ray process tags
		`|\[(rank|trainer)[^\]]{0,20}\]:` + // torch rank prefixes
		`|[IWEF]\d{4} \d\d:\d\d:\d\d` + // glog
		`|Traceback \(most recent call last\):` +
		`|\s*File "[^"]+", line \d+` +
		`|([A-Za-z_][\w]*\.)*[A-Z]\w*(Error|Exception|Warning|Interrupt|Exit|Fault)\b(\[\w+\])?:?` + // an exception
		`|(CUDA|NCCL|HIP|cuda|nccl) (error|Error|failure)` +
		`|Segmentation fault|Fatal Python error|terminate called|Aborted \(core dumped\)|\*\*\* \S|Killed\s*$` + // *** glibc, MPI
		`|#033\[|\x1b\[|\^\[\[` + // colour codes, raw or as journald and docker print them
		`|\S+\.py:\d+: ` + // Python warnings
		`|\S+:\d+:(\d+:)? (error|warning|fatal error|note):` + // compilers
		`|ninja: |FAILED: |\[\d+/\d+\] ` + // ninja
		`|[a-z_]\w*(\.\w+)+:\S` + // a Python logger's name (flashinfer.jit:...)
		`|[a-z][a-z0-9._+-]{1,40}: (\w+ )?([Ee]rror|ERROR|[Ff]atal|FATAL|[Ww]arning|WARNING)\b` + // a tool's message (docker: Error ...)
		`|(\[[^\]\s]{1,30}\]\s*){0,3}\[(ERROR|WARNING|WARN|INFO|DEBUG|FATAL|CRITICAL|TRACE|E|W|I|F)\]` + // bracketed levels
		`|\[\s*\d+\.\d+\] ` + // dmesg
		`|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d ` + // syslog
		`|\+-{3,}[-+=]*\+?\s*$|\|\s+NVIDIA-SMI ` + // nvidia-smi's table
		`|USER\s+PID\s+%CPU|\s*PID\s+PPID\s` + // ps headers
		`)`)
	ncclRe   = regexp.MustCompile(`^(\S+ )?NCCL (INFO|WARN|ERROR|TRACE) |^\S+:\d+:\d+ \[\d+\] NCCL `)
	tqdmRe   = regexp.MustCompile(`^\S.*\d+%\s*(Completed )?\|`)
	promptRe = regexp.MustCompile(`^(\$|>>>|\(\S+\)\s*\S*\$)\s+\S`)
	launchRe = regexp.MustCompile(`^(sudo\s+)?([A-Z_][A-Z0-9_]*=\S*\s+)*(` +
		`python[\d.]*\s+(-m\s+\S+|\S+\.py)` +
		`|(vllm|sglang)\s+(serve|launch|bench|collect-env)` +
		`|(torchrun|accelerate launch|deepspeed|trtllm-serve|text-generation-launcher|srun|mpirun|mpiexec)\b` +
		`|docker\s+(run|exec|compose)|pip3?\s+install|uv\s+(pip|run)|conda\s+(install|create)` +
		`)`)
	flagRe   = regexp.MustCompile(`^--[a-z][\w-]*(\s|=|$)`)
	exportRe = regexp.MustCompile(`^export [A-Za-z_]\w*=`)
	envKeyRe = regexp.MustCompile(`^(` +
		`PyTorch version|Is debug build|CUDA used to build PyTorch|ROCM used to build PyTorch|OS|GCC version|Clang version|CMake version|Libc version|` +
		`Python version|Python platform|Is CUDA available|CUDA runtime version|CUDA_MODULE_LOADING set to|GPU models and configuration|` +
		`Nvidia driver version|cuDNN version|HIP runtime version|MIOpen runtime version|Is XNNPACK available|vLLM Version|vLLM Build Flags|` +
		`GPU Topology|Versions of relevant libraries|Neuron SDK Version|` +
		`Python|CUDA available|GPU \d+(,\d+)*|GPU \d+ Compute Capability|CUDA_HOME|NVCC|CUDA Driver Version|PyTorch|sglang|sgl_kernel|` +
		`flashinfer(_python)?|triton|transformers|torchao|numpy|NVIDIA Topology|Hypervisor vendor|ulimit soft|vllm|xgrammar` +
		`)\s*:(\s|$)`)
	pipRe = regexp.MustCompile(`^(\[(pip3?|conda)\]\s+)?[A-Za-z][\w.-]*(==|\s{2,})v?\d+[.\d]`)
	pyVer = regexp.MustCompile(`^Python \d+\.\d+`)
)

// classify says what one line of prose (quote markers removed) looks like.
func classify(l string) lineClass {
	t := strings.TrimSpace(l)
	switch {
	case t == "":
		return lineBlank
	case strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* ") || strings.HasPrefix(l, "+ "):
		return lineProse // a list item
	case l[0] != ' ' && l[0] != '\t' && plainWords(t):
		return lineProse // no regexp needed for a sentence of plain words
	case envKeyRe.MatchString(t), pipRe.MatchString(t), pyVer.MatchString(t):
		return lineEnv
	case promptRe.MatchString(t), launchRe.MatchString(t), flagRe.MatchString(t), exportRe.MatchString(t):
		return lineCmd
	case clockNearStart(t), logStartRe.MatchString(l), ncclRe.MatchString(t), tqdmRe.MatchString(t):
		return lineLog
	case strings.HasSuffix(t, ` \`) && (strings.Contains(t, " --") || strings.Contains(t, " -m ")):
		return lineCmd // a command continued on the next line
	case l[0] == ' ' || l[0] == '\t':
		return lineWeak // continues a record: a traceback's source line, a wrapped message
	case strings.Trim(t, "^~ ") == "", strings.Trim(t, "-=_*") == "":
		return lineWeak
	case strings.HasPrefix(t, "|") && strings.HasSuffix(t, "|"):
		return lineWeak // a table row: nvidia-smi's, or markdown's
	case t == ")" || t == "}" || t == "]" || t == "),":
		return lineWeak
	}
	return lineProse
}

// plainWords reports a line of letters, spaces and sentence punctuation
// only, whose first word launches nothing: prose, whatever else it is.
func plainWords(t string) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == ' ' || c == ',' || c == '.' && i == len(t)-1 || c == '\'' || c == '!' || c == '?') {
			return false
		}
	}
	w, _, _ := strings.Cut(t, " ")
	switch w {
	case "python", "python3", "vllm", "sglang", "torchrun", "accelerate", "deepspeed", "docker", "pip", "pip3", "uv", "conda", "srun", "mpirun", "sudo", "export":
		return false
	}
	return true
}

// clockNearStart reports a time of day (12:34:56) in the first 48 bytes of
// a line: where nearly every logger puts its stamp, whatever its format
// ([07/08/2025-19:47:15], W0812 14:38:42.916, Jan  1 10:00:00), and where
// prose has none.
func clockNearStart(t string) bool {
	end := min(len(t), 48)
	for i := 0; i+8 <= end+3 && i+8 <= len(t); i++ {
		if t[i+2] == ':' && t[i+5] == ':' && digit(t[i]) && digit(t[i+1]) && digit(t[i+3]) && digit(t[i+4]) && digit(t[i+6]) && digit(t[i+7]) {
			return true
		}
	}
	return false
}

func digit(c byte) bool { return '0' <= c && c <= '9' }

// looksMarkdown decides, from the head, whether a file with a fence or a
// <details> in it is a markdown document rather than a log that happens to
// hold a fence: its lines outside fences are mostly not log lines. A line
// that starts with a <details> or <summary> tag, or a name ending in .md,
// settles it.
func looksMarkdown(head []byte, isMD bool) bool {
	if isMD {
		return true
	}
	lines := splitLines(head)
	if len(lines) > 1 && len(head) >= 4<<10 {
		lines = lines[:len(lines)-1] // the last may be cut
	}
	markup, outside, logs := 0, 0, 0
	var fch byte
	var fn int
	for _, raw := range lines {
		_, body := unquote(raw)
		if fn > 0 {
			if isFenceClose(body, fch, fn) {
				fn = 0
			}
			continue
		}
		if ch, n, _, _, ok := fenceOpen(body); ok {
			fch, fn = ch, n
			markup++
			continue
		}
		t := strings.TrimSpace(body)
		if t == "" {
			continue
		}
		low := strings.ToLower(t)
		if strings.HasPrefix(low, "<details") || strings.HasPrefix(low, "</details") || strings.HasPrefix(low, "<summary") {
			return true // no log starts a line with these tags
		}
		outside++
		if classify(body).strong() {
			logs++
		}
		if outside == 64 {
			break // enough to tell
		}
	}
	return markup > 0 && logs*2 < outside+1
}

var (
	techStartRe = regexp.MustCompile(`^\s*[\[({<*#=|+/\\$%@!>~]|^\s*\d`)
	listRe      = regexp.MustCompile(`^\s*([-*+]|\d{1,3}[.)])\s`)
	pathRe      = regexp.MustCompile(`\w/[\w.-]+/|\w\.(py|pyx|cc|cpp|cu|cuh|c|h|hpp|so|rs|go|json|log|txt|sh|yaml|yml)\b`)
	assignRe    = regexp.MustCompile(`\w=\S`)
	numberRe    = regexp.MustCompile(`\d:\d|0x[0-9a-fA-F]{2,}|[0-9a-f]{16}|\d+\.\d+\.\d+|\d+(\.\d+)?\s?(GiB|GB|MiB|MB|KiB|ms|s/it|it/s|tok(en)?s?/s|req(uest)?s?/s|s\b|%)`)
	decimalsRe  = regexp.MustCompile(`\d\.\d+\D+\d+\.\d`)
	identRe     = regexp.MustCompile(`[A-Za-z0-9]_[A-Za-z0-9]|[a-z][A-Z][a-z]|\w\.\w+\(|\(\)|::`)
	bracketRe   = regexp.MustCompile(`[\[\]{}]`)
	metricRe    = regexp.MustCompile(`^[A-Za-z][\w ()/.%-]{1,60}: -?\d[\d.,]*( ?[A-Za-z%/]{1,6})?( / -?\d[\d.,]*( ?[A-Za-z%/]{1,6})?)?$`)
	wordRe      = regexp.MustCompile(`\b[A-Za-z][a-z']+\b`)
)

// technical reports a line that is not a known kind of evidence line but
// reads like output rather than prose: at least two of a symbol or digit
// at its start, a path or source file, an assignment, a number with a
// colon, a version, a unit or hex, a code identifier, brackets, two
// decimal numbers; or a "name: number" line. A line that
// reads as a sentence (eight words or more, ending with ".", "!" or "?", or
// holding inline code) is prose unless it has three of them.
func technical(l string) bool {
	t := strings.TrimSpace(l)
	if t == "" || listRe.MatchString(l) && !strings.HasPrefix(t, "*** ") {
		return false
	}
	score := 0
	for _, re := range []*regexp.Regexp{techStartRe, pathRe, assignRe, numberRe, identRe, bracketRe, decimalsRe} {
		if re.MatchString(t) {
			score++
		}
	}
	if metricRe.MatchString(t) {
		score += 2 // "Total GPU memory (GiB): 140.06": a value printed, not said
	}
	if score < 2 {
		return false
	}
	last := t[len(t)-1]
	sentence := strings.Count(t, "`") >= 2 || len(wordRe.FindAllStringIndex(t, 9)) >= 8 && (last == '.' || last == '!' || last == '?')
	return !sentence || score >= 3
}
