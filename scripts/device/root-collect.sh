#!/usr/bin/env bash
# Runs on the GPU machine (the `device` tool), as root: the recorded
# workload collected as capture.sh does, then what collect does for a server
# of another user (nobody), whose log is in its own folder: it reads that
# log, and refuses a link the same user planted to a file of root's.
#   carry: .devbin (a coroner binary built for linux/amd64)
set -u
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
BIN=$PWD/.devbin/coroner
bash scripts/device/capture.sh >"$OUT/capture.txt" 2>&1
mkdir -p /tmp/alice && chown nobody /tmp/alice
su -s /bin/bash nobody -c 'cd /tmp/alice && (python3 -c "import time; print(\"INFO starting\", flush=True); time.sleep(120)" >/tmp/alice/server.log 2>&1 &)'
sleep 2
PID=$(pgrep -u nobody -f "sleep.120" | head -1)
{
	echo "== as root: nobody's own log"
	$BIN collect --pid "$PID" --log /tmp/alice/server.log --count 1 -o "$OUT/own.tar.zst"
	echo "exit $?"
	echo "== as root: a link nobody planted to a file of root's"
	su -s /bin/bash nobody -c 'ln -sf /etc/shadow /tmp/alice/evil.log'
	$BIN collect --pid "$PID" --log /tmp/alice/evil.log --count 1 -o "$OUT/evil.tar.zst"
	echo "exit $?"
	echo "== sources of the first bundle"
	$BIN sources "$OUT/own.tar.zst"
} >"$OUT/root-other-user.txt" 2>&1
kill "$PID" 2>/dev/null
tail -40 "$OUT/capture.txt"
cat "$OUT/root-other-user.txt"
