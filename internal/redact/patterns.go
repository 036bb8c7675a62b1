package redact

import "regexp"

// The tables of --redact-hosts: accounts and words that are never
// pseudonyms, and the learners that find host and user names in evidence.
// (The secrets are found by the scanner, scan.go, and its tables:
// words.go, tokens.go, url.go.)

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
	// Home directories: /home/alice/..., /Users/alice, /data/users/alice,
	// C:\Users\alice (also with the backslashes escaped, as in JSON).
	{hints: []string{"/home/", "/users/"}, re: regexp.MustCompile(`(?:/home|/[Uu]sers)/([A-Za-z_][A-Za-z0-9_.-]*)`), user: 1},
	{hints: []string{`:\users\`, `:\\users\\`}, re: regexp.MustCompile(`[A-Za-z]:\\{1,2}[Uu]sers\\{1,2}([A-Za-z_][A-Za-z0-9_.-]*)`), user: 1},
	// Shell prompts: alice@gpu17:~$, [alice@gpu17 run]$.
	{hints: []string{"@"}, re: regexp.MustCompile(`(?:^|[\s\[(])([a-z_][a-z0-9_-]{1,31})@([A-Za-z0-9][A-Za-z0-9.-]{0,62})(?::[~/]|\s[^\]]*\][$#])`), user: 1, host: 2},
	// uname -a.
	{hints: []string{"Linux "}, exact: true, re: regexp.MustCompile(`^Linux ([A-Za-z0-9][A-Za-z0-9.-]*) \d+\.\d+`), host: 1},
	// syslog and journald prefixes: "Nov 30 04:24:37 gpu17 kernel: ..."
	{hints: []string{":"}, pre: startsWith('A', 'Z'), re: regexp.MustCompile(`^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d ([A-Za-z0-9][A-Za-z0-9.-]*) [A-Za-z0-9_.@/-]+(?:\[\d+\])?: `), host: 1},
	{hints: []string{":"}, pre: startsWith('0', '9'), re: regexp.MustCompile(`^\d{4}-\d\d-\d\dT[\d:.]+(?:Z|[+-]\d\d:?\d\d) ([A-Za-z0-9][A-Za-z0-9.-]*) [A-Za-z0-9_.@/-]+(?:\[\d+\])?: `), host: 1},
	// Variables and flags that name a machine or a user.
	{hints: []string{"HOSTNAME", "HOST_NAME", "NODE_NAME", "MASTER_ADDR", "hostname"}, exact: true, re: regexp.MustCompile(`\b(?:HOSTNAME|HOST_NAME|NODE_NAME|MASTER_ADDR|hostname)\s*[=:]\s*["']?([A-Za-z][A-Za-z0-9.-]*)`), host: 1},
	{hints: []string{"USER", "LOGNAME"}, exact: true, re: regexp.MustCompile(`\b(?:USER|LOGNAME|SUDO_USER|USERNAME)\s*[=:]\s*["']?([A-Za-z_][A-Za-z0-9_.-]*)`), user: 1},
	{hints: []string{"--dist-init-addr", "--master-addr", "--node-ip-address", "--host", "--address"}, re: regexp.MustCompile(`--(?:dist-init-addr|master-addr|node-ip-address|host|address)[= ]["']?([A-Za-z][A-Za-z0-9.-]*)`), host: 1},
}
