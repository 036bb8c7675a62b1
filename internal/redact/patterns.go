package redact

import "regexp"

// A secretPattern finds one kind of secret in a line. The bytes of the
// submatches named by groups (the whole match when groups is empty) are
// masked; hints are lower-case substrings of which the line must hold at
// least one before the expression runs, which keeps a 50 MB log fast.
type secretPattern struct {
	kind  string
	hints []string
	// exact hints are matched as written, not against the lower-cased line:
	// an upper-case variable name needs an upper-case hint, and most log
	// lines hold "_token" in some lower-case word.
	exact bool
	need  byte // a byte the line must also hold (0: none)
	// back and window, when window > 0, run the expression only around
	// each hint (from back bytes before it to window bytes after), not
	// over the whole line: a server-argument dump is one line of 10 KB.
	back, window int
	re           *regexp.Regexp
	groups       []int
	// keep is how many leading bytes of the masked span stay readable, so
	// that a reader sees which kind of token was there (hf_****).
	keep int
}

// secretPatterns are applied in this order to every line. The generic ones
// (assignments, flags, headers) come first: they mask the whole value, and a
// value that is a known token is counted under the token's kind, once.
var secretPatterns = []secretPattern{
	{
		kind:   "private-key",
		hints:  []string{"private key"},
		re:     regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----(.+?)-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----`),
		groups: []int{1},
	},
	{
		kind:   "url-password",
		hints:  []string{"://"},
		need:   '@',
		re:     regexp.MustCompile(`\b[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@'"]+:([^/\s@'"]+)@`),
		groups: []int{1},
	},
	{
		kind:   "authorization",
		hints:  []string{"authorization"},
		back:   len("proxy-") + 1,
		window: 1024,
		re:     regexp.MustCompile(`(?i)\b(?:proxy-)?authorization\\?["']?\s*[:=]\s*\\?["']?(?:(?:bearer|basic|token|digest)\s+)?([A-Za-z0-9._~+/-]{6,}=*)`),
		groups: []int{1},
	},
	{
		kind:   "authorization",
		hints:  []string{"bearer"},
		back:   1,
		window: 1024,
		re:     regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/-]{8,}=*)`),
		groups: []int{1},
	},
	{
		kind:   "api-key-header",
		hints:  []string{"api-key:", "api-key\":", "api-key':"},
		back:   len("x-") + 1,
		window: 1024,
		re:     regexp.MustCompile(`(?i)\b(?:x-)?api-key\\?["']?\s*:\s*\\?["']?([^\s'"\\]{6,})`),
		groups: []int{1},
	},
	{
		// --api-key VALUE and --api-key=VALUE in command lines and ps args.
		kind: "secret-flag",
		hints: []string{"--api", "--admin", "--hf", "--token", "--access", "--auth", "--password", "--passwd", "--secret",
			"--wandb", "--ssl"},
		back:   1,
		window: 1024,
		re: regexp.MustCompile(`(?i)(?:^|[\s'"])--(?:api[-_]key|admin[-_]api[-_]key|hf[-_]token|token|access[-_]token|auth[-_]token|password|passwd|secret|secret[-_]key|wandb[-_]api[-_]key|ssl[-_]keyfile[-_]password)` +
			`(?:=|\s+)['"]?([^\s'"-][^\s'"]*)`),
		groups: []int{1},
	},
	{
		// Environment variables: values of *_TOKEN, *_KEY, *_SECRET and
		// *PASSWORD* names, in env dumps, shell lines, YAML and JSON.
		kind:  "secret-variable",
		hints: []string{"_TOKEN", "_KEY", "_SECRET", "PASSW", "_PAT"},
		exact: true,
		re: regexp.MustCompile(`\b(?:[A-Z][A-Z0-9_]*(?:_TOKEN|_KEY|_SECRET|_PAT)|[A-Z0-9_]*PASSW(?:OR)?D[A-Z0-9_]*)\\?["']?\s*[=:]\s*` +
			`(?:\\?"([^"\\\s]*)\\?"|'([^'\s]*)'|([^\s'",;)\]}]+))`),
		groups: []int{1, 2, 3},
	},
	{
		// Settings in code, configs and server-argument dumps:
		// api_key='...', "api_key": "...", 'api_key': ['...'], password: ...
		kind: "secret-setting",
		hints: []string{"api_key", "apikey", "api-key", "hf_token", "hf-token", "access_token", "auth_token", "bearer_token",
			"secret_key", "client_secret", "password", "passwd", "private_key", "secret_access_key"},
		back:   len("aws_") + 1,
		window: 1024,
		re: regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_#-])(?:api_key|apikey|api-key|hf_token|hf-token|access_token|auth_token|bearer_token|secret_key|client_secret|password|passwd|private_key|aws_secret_access_key|openai_api_key)` +
			`\\?["']?\s*[:=]\s*\[?\s*(?:\\?"([^"\\]*)\\?"|'([^']*)'|([^\s'",;)\]}]+))`),
		groups: []int{1, 2, 3},
	},
}

// A tokenPattern recognizes a secret by its shape alone. The same table
// classifies values that a generic pattern masked.
type tokenPattern struct {
	kind string
	// hints are matched as written: every token shape is case-sensitive.
	hints []string
	re    *regexp.Regexp
	keep  int
}

var tokenPatterns = []tokenPattern{
	{kind: "hf-token", hints: []string{"hf_"}, re: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), keep: 3},
	{kind: "anthropic-key", hints: []string{"sk-ant-"}, re: regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`), keep: 7},
	{kind: "openai-key", hints: []string{"sk-"}, re: regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), keep: 3},
	{kind: "github-token", hints: []string{"github_pat_"}, re: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}`), keep: 11},
	{kind: "github-token", hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, re: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`), keep: 4},
	{kind: "aws-access-key", hints: []string{"AKIA", "ASIA", "ABIA", "ACCA"}, re: regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`), keep: 4},
	{kind: "slack-token", hints: []string{"xox"}, re: regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), keep: 5},
	{kind: "google-api-key", hints: []string{"AIza"}, re: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), keep: 4},
	{kind: "jwt", hints: []string{"eyJ"}, re: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), keep: 3},
}

// placeholders are values that stand for a secret without being one:
// masking them would only add noise to the report.
var placeholderRE = regexp.MustCompile(`(?i)^(?:none|null|nil|true|false|redacted|\[redacted\]|<[^>]*>|\$.*|\*+|x+|\.\.\.|)$`)

// systemUsers are accounts that exist on every machine: they identify no
// one, and pseudonyms for them would only make a ps listing harder to read.
var systemUsers = map[string]bool{
	"root": true, "daemon": true, "bin": true, "sys": true, "sync": true, "games": true, "man": true, "lp": true,
	"mail": true, "news": true, "uucp": true, "proxy": true, "www-data": true, "backup": true, "list": true, "irc": true,
	"gnats": true, "nobody": true, "systemd+": true, "message+": true, "messagebus": true, "syslog": true, "_apt": true,
	"polkitd": true, "avahi": true, "colord": true, "sshd": true, "ntp": true, "chrony": true, "_chrony": true,
	"rpc": true, "rpcuser": true, "dbus": true, "postfix": true, "mysql": true, "postgres": true, "redis": true,
	"uuidd": true, "tss": true, "tcpdump": true, "lxd": true, "dnsmasq": true, "gdm": true, "rtkit": true,
	"kernoops": true, "whoopsie": true, "geoclue": true, "pulse": true, "usbmux": true, "landscape": true,
	"fwupd-r+": true, "nvidia-+": true, "statd": true, "_rpc": true, "pollinate": true,
	"USER": true, "UID": true,
}

// protectedNames are words the analyzer reads: a host or user that happens
// to carry one of these names is left as is, so that redaction never
// changes a diagnosis.
var protectedNames = map[string]bool{
	"localhost": true, "sglang": true, "vllm": true, "python": true, "python3": true, "nvidia": true, "cuda": true,
	"torch": true, "ray": true, "docker": true, "kernel": true, "scheduler": true, "worker": true, "server": true,
	"default": true, "none": true, "null": true, "unknown": true, "host": true, "model": true, "models": true,
	"main": true, "master": true, "node": true, "rank": true, "gpu": true, "local": true, "tmp": true, "home": true,
	"data": true, "shared": true, "ncclShmOpen": true, "INFO": true, "WARN": true, "WARNING": true, "ERROR": true,
}

// Learners find host and user names in evidence (with --redact-hosts): the
// names are then replaced everywhere in the bundle, not only where they
// were learned.
type learner struct {
	hints []string
	exact bool // hints matched as written
	// pre, if set, is a cheap test of the line's start that the
	// expression needs.
	pre func(line []byte) bool
	re  *regexp.Regexp
	// user and host are the submatches holding a user and a host name (0: none).
	user, host int
}

// startsWith tests the first byte of a line against a range.
func startsWith(lo, hi byte) func([]byte) bool {
	return func(l []byte) bool { return len(l) > 0 && lo <= l[0] && l[0] <= hi }
}

var learners = []learner{
	// Home directories: /home/alice/..., /Users/alice.
	{hints: []string{"/home/", "/users/"}, re: regexp.MustCompile(`(?:/home|/Users)/([A-Za-z_][A-Za-z0-9_.-]*)`), user: 1},
	// Shell prompts: alice@gpu17:~$, [alice@gpu17 run]$.
	{hints: []string{"@"}, re: regexp.MustCompile(`(?:^|[\s\[(])([a-z_][a-z0-9_-]{1,31})@([A-Za-z0-9][A-Za-z0-9.-]{0,62})(?::[~/]|\s[^\]]*\][$#])`), user: 1, host: 2},
	// NCCL lines: gpu17:1234:1290 [0] NCCL INFO ...
	{hints: []string{"nccl"}, re: regexp.MustCompile(`(?:^|[\s)\]])([A-Za-z][A-Za-z0-9.-]{0,62}):\d+:\d+ \[\d+\] NCCL`), host: 1},
	// uname -a.
	{hints: []string{"Linux "}, exact: true, re: regexp.MustCompile(`^Linux ([A-Za-z0-9][A-Za-z0-9.-]*) \d+\.\d+`), host: 1},
	// syslog and journald prefixes: "Nov 30 04:24:37 gpu17 kernel: ..."
	{hints: []string{":"}, pre: startsWith('A', 'Z'), re: regexp.MustCompile(`^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d ([A-Za-z0-9][A-Za-z0-9.-]*) [A-Za-z0-9_.@/-]+(?:\[\d+\])?: `), host: 1},
	{hints: []string{":"}, pre: startsWith('0', '9'), re: regexp.MustCompile(`^\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d) ([A-Za-z0-9][A-Za-z0-9.-]*) [A-Za-z0-9_.@/-]+(?:\[\d+\])?: `), host: 1},
	// Variables and flags that name a machine or a user.
	{hints: []string{"HOSTNAME", "HOST_NAME", "NODE_NAME", "MASTER_ADDR", "hostname"}, exact: true, re: regexp.MustCompile(`\b(?:HOSTNAME|HOST_NAME|NODE_NAME|MASTER_ADDR|hostname)\s*[=:]\s*["']?([A-Za-z][A-Za-z0-9.-]*)`), host: 1},
	{hints: []string{"USER", "LOGNAME"}, exact: true, re: regexp.MustCompile(`\b(?:USER|LOGNAME|SUDO_USER|USERNAME)\s*[=:]\s*["']?([A-Za-z_][A-Za-z0-9_.-]*)`), user: 1},
	{hints: []string{"--dist-init-addr", "--master-addr", "--node-ip-address", "--host", "--address"}, re: regexp.MustCompile(`--(?:dist-init-addr|master-addr|node-ip-address|host|address)[= ]["']?([A-Za-z][A-Za-z0-9.-]*)`), host: 1},
	// df of a network file system: "nfs-models:/export/models 1048576 ...".
	{hints: []string{":/"}, pre: startsWith('A', 'z'), re: regexp.MustCompile(`^([A-Za-z][A-Za-z0-9.-]*):/\S*\s`), host: 1},
	// URLs to machines of a private network: one label, or an internal domain.
	{hints: []string{"://"}, re: regexp.MustCompile(`\b[a-z][a-z0-9+.-]*://(?:([A-Za-z0-9_.-]+)(?::[^@/\s]*)?@)?([A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*\.(?:local|internal|lan|corp|intranet|home\.arpa|cluster\.local|svc)|[A-Za-z][A-Za-z0-9-]*)(?:[:/\s'"]|$)`), user: 1, host: 2},
}
