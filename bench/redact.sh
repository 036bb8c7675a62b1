#!/usr/bin/env bash
# Times `coroner bundle` (redaction on, no size cap) on inputs built to be
# slow to redact and on an ordinary SGLang log of the same size, best of
# $RUNS, and prints MB/s against issue 18's target of 50 MB/s. The inputs
# are written once by bench/redactgen into bench/out/redact-SIZE.
#
#   bench/redact.sh                 # 4 MB inputs, plain redaction
#   HOSTS=1 bench/redact.sh         # with --redact-hosts too
#   SIZE=1MB RUNS=5 bench/redact.sh
#   GOBENCH=1 bench/redact.sh       # also the Go benchmarks (BenchmarkRedact*)
#   BIN=/tmp/old/coroner bench/redact.sh   # time another build (the inputs stay)
#
# Needs: go, GNU time (/usr/bin/time), awk.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${SIZE:-4MB}
RUNS=${RUNS:-3}
OUT=bench/out/redact-$SIZE
mkdir -p bench/out
if [ -z "${BIN:-}" ]; then
	BIN=bench/out/coroner
	go build -o "$BIN" ./cmd/coroner
fi
[ -f "$OUT/ordinary-sglang.log" ] || go run ./bench/redactgen -out "$OUT" -size "$SIZE"

modes=("")
[ -n "${HOSTS:-}" ] && modes+=("--redact-hosts")

# best FILE FLAGS: the best wall time (s) of $RUNS bundles of FILE.
best() {
	local bt="" t t0 t1
	for _ in $(seq "$RUNS"); do
		t0=$(date +%s%N)
		# shellcheck disable=SC2086
		"$BIN" bundle "$1" --max-size 0 $2 -o "$OUT/bundle.tar.zst" >/dev/null 2>&1
		t1=$(date +%s%N)
		t=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", (b-a)/1e9}')
		if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN{exit !(a<b)}'; then bt=$t; fi
	done
	echo "$bt"
}

echo "== coroner bundle on $SIZE inputs; best of $RUNS; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-28s %-15s %9s %10s  %s\n" input mode seconds "MB/s" "target 50 MB/s"
cat "$OUT"/*.log >/dev/null
for f in "$OUT"/*.log; do
	name=$(basename "$f" .log)
	bytes=$(stat -c %s "$f")
	for m in "${modes[@]}"; do
		t=$(best "$f" "$m")
		mbps=$(awk -v b="$bytes" -v t="$t" 'BEGIN{ if (t<=0) t=0.001; printf "%.1f", b/1e6/t }')
		ok=$(awk -v r="$mbps" 'BEGIN{ print (r>=50) ? "ok" : "MISSED" }')
		printf "%-28s %-15s %9s %10s  %s\n" "$name" "${m:-secrets}" "$t" "$mbps" "$ok"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ -n "${GOBENCH:-}" ]; then
	echo "== Go benchmarks of the redactor (MB/s of input; Learn included with hosts)"
	go test -run '^$' -bench 'Redact' -benchmem -benchtime 3x ./internal/redact | grep -E '^Benchmark'
fi
