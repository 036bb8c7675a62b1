#!/usr/bin/env bash
# Like fuzz.sh, for the targets named in TARGETS ("pkg-with-dashes:FuzzName ..."),
# each with WORKERS fuzzing processes.
set -uo pipefail
OUT=${OUT:-/tmp/out}
FUZZTIME=${FUZZTIME:-5m}
WORKERS=${WORKERS:-4}
mkdir -p "$OUT" /tmp/fz && touch /tmp/fz/start
root=$(pwd)
pids=()
for spec in $TARGETS; do
	name=${spec%%:*} t=${spec##*:}
	bin=/tmp/fz/$name.test
	[ -x "$bin" ] || { gunzip -c ".devbin/fuzz/$name.test.gz" >"$bin" && chmod +x "$bin"; }
	dir=${name//-//}
	(cd "$root/$dir" && "$bin" -test.run='^$' -test.fuzz="^$t\$" -test.fuzztime="$FUZZTIME" \
		-test.fuzzcachedir="/tmp/fz/cache-$name-$t" -test.parallel="$WORKERS" >"$OUT/fuzz-$name-$t.log" 2>&1
	 echo "exit $?" >>"$OUT/fuzz-$name-$t.log") &
	pids+=($!)
done
wait "${pids[@]}"
for f in "$OUT"/fuzz-*.log; do
	echo "$(basename "$f" .log): $(grep -o 'execs: [0-9]*' "$f" | tail -1) $(tail -1 "$f") $(grep -m1 -E 'FAIL|panic' "$f")"
done
find . -path '*testdata/fuzz/*' -newer /tmp/fz/start -type f | tee /tmp/fz/crashers.txt
tar -czf "$OUT/fuzz-results.tgz" -C "$OUT" $(cd "$OUT" && ls fuzz-*.log) -C "$root" $(cat /tmp/fz/crashers.txt)
