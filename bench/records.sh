#!/usr/bin/env bash
# Times `coroner analyze` on inputs that are large in records rather than in
# bytes (issue 18, item 3) and prints each one's wall and CPU time and peak
# RSS against the target of 200 MB. The inputs are written once by
# bench/recordsgen into bench/out/records (about 1.6 GB, a minute).
#
#   bench/records.sh                         # every input, best of $RUNS (default 1)
#   ONLY="ps env" bench/records.sh           # some inputs
#   LIMITS="100MiB 200MiB off" bench/records.sh   # each input under each GOMEMLIMIT
#                                            # ("" is coroner's default)
#   BIN=/tmp/old/coroner bench/records.sh    # another build (the inputs stay)
#   TIMEOUT=120 bench/records.sh             # stop a run after 120 s (default 600)
#
# The input names: ps (10,000,000 rows of ps -eo), env (1,000,000 variables),
# env-html (the same as --format html), csv (1,000,000 GPUs of a --query-gpu
# CSV), apps (1,000,000 --query-compute-apps rows), probe (1,000,000 probes),
# pyspy (a py-spy dump of 1,000,000 frames), df (1,000,000 mounts), meminfo
# (100,000 captures), dmesg (1,000,000 Xid lines), files (a folder of 200,000
# small files), files-zst (the same folder as one tar.zst), ranks (bench/gen's
# 512 rank logs, tar.zst: the memory limit's other case).
#
# Needs: go, GNU time (/usr/bin/time), awk, tar and zstd (for files-zst).
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-1}
TIMEOUT=${TIMEOUT:-600}
OUT=bench/out/records
ONLY=${ONLY:-ps env env-html csv apps probe pyspy df meminfo dmesg files files-zst ranks}
LIMITS=${LIMITS-""}
[ -x /usr/bin/time ] || { echo "bench: GNU time is missing (apt-get install time)" >&2; exit 2; }
mkdir -p "$OUT"
if [ -z "${BIN:-}" ]; then
	BIN=bench/out/coroner
	go build -o "$BIN" ./cmd/coroner
fi
[ -d "$OUT/files" ] || go run ./bench/recordsgen -out "$OUT"
if [[ " $ONLY " == *" files-zst "* ]] && [ ! -f "$OUT/files.tar.zst" ]; then
	tar -C "$OUT" -cf - files | zstd -q -3 -o "$OUT/files.tar.zst"
fi
if [[ " $ONLY " == *" ranks "* ]] && [ ! -f "$OUT/ranks.tar.zst" ]; then
	go run ./bench/gen -out "$OUT" -what ranks,pack
fi

input() {
	case $1 in
	ps) echo "$OUT/ps_eo.txt" ;;
	env | env-html) echo "$OUT/env.txt" ;;
	csv) echo "$OUT/query-gpu.csv" ;;
	apps) echo "$OUT/compute-apps.csv" ;;
	probe) echo "$OUT/probes.jsonl" ;;
	pyspy) echo "$OUT/py-spy.txt" ;;
	df) echo "$OUT/df.txt" ;;
	meminfo) echo "$OUT/meminfo.txt" ;;
	dmesg) echo "$OUT/dmesg.txt" ;;
	files) echo "$OUT/files" ;;
	files-zst) echo "$OUT/files.tar.zst" ;;
	ranks) echo "$OUT/ranks.tar.zst" ;;
	esac
}

echo "== coroner analyze on many-records inputs; best of $RUNS; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-9s %-8s %9s %9s %8s  %s\n" input limit wall cpu "RSS" "target 200 MB"
tf=$(mktemp)
trap 'rm -f "$tf"' EXIT
for name in $ONLY; do
	in=$(input "$name")
	[ -e "$in" ] || { echo "bench: no input $in" >&2; continue; }
	format=md
	[ "$name" = env-html ] && format=html
	for lim in ${LIMITS:-default}; do
		bt="" bcpu="" brss=""
		for _ in $(seq "$RUNS"); do
			t0=$(date +%s%N)
			if [ "$lim" = default ]; then
				/usr/bin/time -f "%U %S %M" -o "$tf" env -u GOMEMLIMIT timeout "$TIMEOUT" "$BIN" analyze -q --fail-on never -f "$format" -o "$OUT/report" "$in" >/dev/null 2>&1 || true
			else
				/usr/bin/time -f "%U %S %M" -o "$tf" env GOMEMLIMIT="$lim" timeout "$TIMEOUT" "$BIN" analyze -q --fail-on never -f "$format" -o "$OUT/report" "$in" >/dev/null 2>&1 || true
			fi
			t1=$(date +%s%N)
			t=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", (b-a)/1e9}')
			# GNU time says first when the command failed ("Command exited
			# with non-zero status 3"): its figures are the last line.
			read -r u s rss < <(tail -n 1 "$tf")
			if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN{exit !(a<b)}'; then
				bt=$t bcpu=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u+s}') brss=$((rss / 1024))
			fi
		done
		ok=$(awk -v r="$brss" 'BEGIN{ print (r<200) ? "ok" : "MISSED" }')
		printf "%-9s %-8s %8ss %8ss %5d MB  %s\n" "$name" "$lim" "$bt" "$bcpu" "$brss" "$ok"
	done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
