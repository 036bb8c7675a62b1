#!/usr/bin/env bash
# Times `coroner analyze` against baselines on the same inputs in the same
# run, best of $RUNS, and prints the ratios, the CPU time and the peak RSS.
# bench/README.md says what each line means and what was measured.
#
#   bench/run.sh                      # 1 GB inputs, generated once into bench/out/1GB
#   SIZE=3GB bench/run.sh             # the 3 GB variant (memory must not grow)
#   SIZES="1GB 3GB" bench/run.sh      # both, and the RSS of one against the other
#   RUNS=5 bench/run.sh               # best of 5 (default 3)
#   GOBENCH=1 bench/run.sh            # also the Go benchmarks of every parser (MB/s, allocs)
#   PROFILE=1 bench/run.sh            # also a CPU and a heap profile of each analyze, in $OUT/prof
#   ONLY=plain bench/run.sh           # one group: plain, zst, ranks, snapshots
#
# Needs: go, zstd, GNU time (/usr/bin/time), grep, wc, awk. The machine
# should be otherwise idle: the load average is printed before and after.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-${SIZE:-1GB}}
RUNS=${RUNS:-3}
ONLY=${ONLY:-}

for tool in zstd /usr/bin/time awk; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install zstd time gawk)" >&2; exit 2; }
done

BIN=bench/out/coroner
mkdir -p bench/out
go build -o "$BIN" ./cmd/coroner

# best CMD: the best wall time of $RUNS runs, with that run's user+system
# CPU seconds, peak RSS (KB) and CPU percentage.
best() {
	local bt="" bcpu="" brss="" bpct="" tf
	tf=$(mktemp)
	for _ in $(seq "$RUNS"); do
		# GNU time counts in hundredths: the wall time is taken in ns.
		t0=$(date +%s%N)
		# Not >/dev/null: GNU grep then stops at the first match.
		/usr/bin/time -f "%U %S %M %P" -o "$tf" bash -c "$*" >"$tf.out" 2>&1 || true
		t1=$(date +%s%N)
		t=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", (b-a)/1e9}')
		read -r u s rss pct <"$tf"
		if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN{exit !(a<b)}'; then
			bt=$t bcpu=$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.2f", u+s}') brss=$rss bpct=$pct
		fi
	done
	rm -f "$tf" "$tf.out"
	echo "$bt $bcpu $brss $bpct"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b<=0) b=0.005; printf "%.2f", a/b }'; }

# verdict RATIO TARGET: "ok" or "MISSED" ("" when there is no target).
verdict() {
	[ "$2" = "-" ] && return
	awk -v r="$1" -v t="$2" 'BEGIN{ if (r<=t) print "ok"; else print "MISSED" }'
}

# line NAME CORONER(t cpu rss pct) BASENAME BASELINE(t cpu) TARGET
line() {
	local name=$1 t=$2 cpu=$3 rss=$4 pct=$5 bname=$6 bt=$7 bcpu=$8 target=$9 r
	r=$(ratio "$t" "$bt")
	printf "%-30s %7.3fs %6.2fs cpu %5d MB %5s | %-17s %6.3fs %6.2fs cpu | %6sx  %-6s %s\n" \
		"$name" "$t" "$cpu" $((rss / 1024)) "$pct" "$bname" "$bt" "$bcpu" "$r" "$target" "$(verdict "$r" "$target")"
}

header() {
	printf "%-30s %8s %10s %8s %5s | %-17s %7s %10s | %7s  %-6s\n" \
		"input" "analyze" "" "RSS" "CPU" "baseline" "" "" "ratio" "target"
}

want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }

declare -A peak
nsizes=$(echo "$SIZES" | wc -w)
BASE=${OUT:-}
for SIZE in $SIZES; do
	# OUT names the folder of one size's inputs, or the parent of several.
	if [ -z "$BASE" ]; then
		OUT=bench/out/$SIZE
	elif [ "$nsizes" -gt 1 ]; then
		OUT=$BASE/$SIZE
	else
		OUT=$BASE
	fi
	mkdir -p "$OUT"
	if [ ! -f "$OUT/ranks.tar.zst" ]; then
		echo "generating $SIZE inputs into $OUT ..."
		go run ./bench/gen -out "$OUT" -size "$SIZE"
	fi
	log=$OUT/sglang-tp8.log
	vlog=$OUT/vllm-v1.log
	tz=$OUT/sglang-tp8.tar.zst
	ranks=$OUT/ranks.tar.zst
	snaps=$OUT/snapshots.tar.zst
	prof=""
	if [ -n "${PROFILE:-}" ]; then
		mkdir -p "$OUT/prof"
		prof=1
	fi
	# an NAME FILE: the analyze command, with profiles when asked.
	an() {
		local p=""
		[ -n "$prof" ] && p="CORONER_CPUPROFILE=$OUT/prof/$1.cpu CORONER_MEMPROFILE=$OUT/prof/$1.mem "
		echo "$p$BIN analyze --fail-on never -o $OUT/report-$1.md $2"
	}

	echo "== $SIZE: $(du -h "$log" | cut -f1) SGLang log, $(du -h "$vlog" | cut -f1) vLLM log, $(du -h "$tz" | cut -f1) tar.zst," \
		"512 rank logs ($(du -h "$ranks" | cut -f1) tar.zst), 100+100 snapshots; best of $RUNS; $(nproc) CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)"
	# Warm the page cache so that every command reads from memory.
	cat "$log" "$vlog" "$tz" "$ranks" "$snaps" >/dev/null
	header
	if want plain; then
		read -r g gc _ _ < <(best "grep -c 'Decode batch' $log")
		read -r w wc _ _ < <(best "wc -l $log")
		read -r c cc crss cpct < <(best "$(an sglang "$log")")
		line "SGLang log (plain)" "$c" "$cc" "$crss" "$cpct" "grep -c" "$g" "$gc" "2.0"
		line "" "$c" "$cc" "$crss" "$cpct" "wc -l" "$w" "$wc" "-"
		peak[$SIZE.sglang]=$crss
		read -r g gc _ _ < <(best "grep -c 'generation throughput' $vlog")
		read -r c cc crss cpct < <(best "$(an vllm "$vlog")")
		line "vLLM log (plain)" "$c" "$cc" "$crss" "$cpct" "grep -c" "$g" "$gc" "2.0"
		peak[$SIZE.vllm]=$crss
	fi
	if want zst; then
		read -r z zc _ _ < <(best "zstd -dc $tz | wc -l")
		read -r c cc crss cpct < <(best "$(an sglang-zst "$tz")")
		line "SGLang log (tar.zst)" "$c" "$cc" "$crss" "$cpct" "zstd -dc | wc -l" "$z" "$zc" "1.3"
		peak[$SIZE.zst]=$crss
	fi
	if want ranks; then
		read -r z zc _ _ < <(best "zstd -dc $ranks | wc -l")
		read -r c cc crss cpct < <(best "$(an ranks "$ranks")")
		line "512 rank logs (tar.zst)" "$c" "$cc" "$crss" "$cpct" "zstd -dc | wc -l" "$z" "$zc" "-"
	fi
	if want snapshots; then
		read -r z zc _ _ < <(best "zstd -dc $snaps | wc -l")
		read -r c cc crss cpct < <(best "$(an snapshots "$snaps")")
		line "100 ps + 100 nvidia-smi -q -x" "$c" "$cc" "$crss" "$cpct" "zstd -dc | wc -l" "$z" "$zc" "-"
	fi
	echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
	if [ -n "$prof" ]; then
		echo "profiles: go tool pprof -top $BIN $OUT/prof/sglang.cpu (and the others in $OUT/prof)"
	fi
done

# Memory must not grow with the input: compare the peaks of each size.
set -- $SIZES
if [ $# -gt 1 ]; then
	for k in sglang vllm zst; do
		a=${peak[$1.$k]:-} b=${peak[${!#}.$k]:-}
		[ -n "$a" ] && [ -n "$b" ] &&
			printf "peak RSS %-7s %s %d MB, %s %d MB (target <= 150 MB, and no growth)\n" "$k" "$1" $((a / 1024)) "${!#}" $((b / 1024))
	done
fi

if [ -n "${GOBENCH:-}" ]; then
	echo "== Go benchmarks of the parsers (MB/s of input, allocations per parse)"
	go test -run '^$' -bench . -benchmem -benchtime 3x ./parser/... 2>/dev/null | grep -E '^(Benchmark|ok|pkg)' | grep -v '^ok'
fi
