#!/usr/bin/env bash
# Times `coroner analyze` against baselines on the same inputs in the same
# run, best of $RUNS, and prints the ratios and peak RSS.
#
#   bench/run.sh                 # 1 GB inputs (generated once into bench/out)
#   SIZE=3GB bench/run.sh        # the 3 GB variant (memory must not grow)
#   RUNS=5 bench/run.sh
#
# Needs: go, zstd, GNU time (/usr/bin/time), grep, wc.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=${SIZE:-1GB}
RUNS=${RUNS:-3}
OUT=${OUT:-bench/out/$SIZE}
BIN=$OUT/coroner

for tool in zstd /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install zstd time)" >&2; exit 2; }
done

mkdir -p "$OUT"
go build -o "$BIN" ./cmd/coroner
if [ ! -f "$OUT/ranks.tar.zst" ]; then
	echo "generating $SIZE inputs into $OUT ..."
	go run ./bench/gen -out "$OUT" -size "$SIZE"
fi

# best <cmd...>: the best wall time of $RUNS runs, its peak RSS (KB) and CPU%.
best() {
	local bt="" brss="" bcpu=""
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %M %P" -o "$OUT/time.txt" bash -c "$*" >/dev/null 2>&1 || true
		read -r t rss cpu <"$OUT/time.txt"
		if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN{exit !(a<b)}'; then
			bt=$t brss=$rss bcpu=$cpu
		fi
	done
	echo "$bt $brss $bcpu"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b<=0) b=0.001; printf "%.2f", a/b }'; }

report() { # name coroner-time baseline-name baseline-time target rss cpu
	local r
	r=$(ratio "$2" "$4")
	printf "%-34s coroner %7.2fs  %-22s %7.2fs  ratio %5sx (target <= %s)  peak RSS %4d MB  CPU %s\n" \
		"$1" "$2" "$3" "$4" "$r" "$5" $(($6 / 1024)) "$7"
}

log=$OUT/sglang-tp8.log
vlog=$OUT/vllm-v1.log
tz=$OUT/sglang-tp8.tar.zst
ranks=$OUT/ranks.tar.zst
snaps=$OUT/snapshots.tar.zst
an="$BIN analyze --fail-on never -o $OUT/report.md"

echo "inputs: $(du -h "$log" | cut -f1) SGLang log, $(du -h "$vlog" | cut -f1) vLLM log, $(du -h "$tz" | cut -f1) tar.zst, 512 rank logs ($(du -h "$ranks" | cut -f1) tar.zst), 100+100 snapshots; best of $RUNS"

read -r g _ _ < <(best "grep -c 'Decode batch' $log")
read -r w _ _ < <(best "wc -l $log")
read -r c crss ccpu < <(best "$an $log")
report "SGLang log ($SIZE, plain)" "$c" "grep -c" "$g" "2.0" "$crss" "$ccpu"
report "" "$c" "wc -l" "$w" "-" "$crss" "$ccpu"

read -r g _ _ < <(best "grep -c 'generation throughput' $vlog")
read -r c crss ccpu < <(best "$an $vlog")
report "vLLM log ($SIZE, plain)" "$c" "grep -c" "$g" "2.0" "$crss" "$ccpu"

read -r z _ _ < <(best "zstd -dc $tz | wc -l")
read -r c crss ccpu < <(best "$an $tz")
report "SGLang log ($SIZE, tar.zst)" "$c" "zstd -dc | wc -l" "$z" "1.3" "$crss" "$ccpu"

read -r z _ _ < <(best "zstd -dc $ranks | wc -l")
read -r c crss ccpu < <(best "$an $ranks")
report "512 rank logs (tar.zst)" "$c" "zstd -dc | wc -l" "$z" "-" "$crss" "$ccpu"

read -r z _ _ < <(best "zstd -dc $snaps | wc -l")
read -r c crss ccpu < <(best "$an $snaps")
report "100 ps + 100 nvidia-smi -q -x" "$c" "zstd -dc | wc -l" "$z" "-" "$crss" "$ccpu"
