#!/usr/bin/env bash
# Runs every fuzz target for FUZZTIME on the GPU machine's CPUs (no GPU
# needed; it only has the cores). Test binaries are built here with
#   go test -c -ldflags="-s -w" -o .devbin/fuzz/<pkg-with-dashes>.test ./<pkg>
# and gzipped; each runs in its package directory so that its seed corpus
# (testdata/fuzz) and fixtures are found. Crashers land in $OUT.
set -uo pipefail
OUT=${OUT:-/tmp/out}
FUZZTIME=${FUZZTIME:-5m}
mkdir -p "$OUT" /tmp/fz && touch /tmp/fz/start
root=$(pwd)
pids=()
for gz in .devbin/fuzz/*.test.gz; do
	name=$(basename "$gz" .test.gz)
	bin=/tmp/fz/$name.test
	gunzip -c "$gz" >"$bin" && chmod +x "$bin"
	dir=${name//-//}
	targets=$(grep -h '^func Fuzz' "$dir"/*_test.go | sed 's/func \(Fuzz[A-Za-z0-9_]*\).*/\1/')
	for t in $targets; do
		(cd "$root/$dir" && "$bin" -test.run='^$' -test.fuzz="^$t\$" -test.fuzztime="$FUZZTIME" \
			-test.fuzzcachedir="/tmp/fz/cache-$name-$t" -test.parallel=1 >"$OUT/fuzz-$name-$t.log" 2>&1
		 echo "exit $?" >>"$OUT/fuzz-$name-$t.log") &
		pids+=($!)
	done
done
wait "${pids[@]}"
for f in "$OUT"/fuzz-*.log; do
	echo "$(basename "$f" .log): $(grep -o 'execs: [0-9]*' "$f" | tail -1) $(tail -1 "$f") $(grep -m1 -E 'FAIL|panic' "$f")"
done
# Crashers the fuzzers wrote into the packages' testdata, and every log, in
# one archive (the tool returns at most 8 files).
find . -path '*testdata/fuzz/*' -newer /tmp/fz/start -type f >/tmp/fz/crashers.txt
tar -czf "$OUT/fuzz-results.tgz" -C "$OUT" $(cd "$OUT" && ls fuzz-*.log) -C "$root" $(cat /tmp/fz/crashers.txt)
rm -f "$OUT"/fuzz-*.log
cat /tmp/fz/crashers.txt
