#!/usr/bin/env bash
# Runs on the GPU machine (the `device` tool): starts the workload, lets
# coroner collect two rounds of real snapshots while it starts, then analyzes
# the bundle there too. Everything it produces goes to $OUT.
#   carry: .devbin (a coroner binary built for linux/amd64)
set -uo pipefail
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
BIN=.devbin/coroner
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
log=/tmp/workload.log
PORT=8123 python3 scripts/device/workload.py >"$log" 2>&1 &
wl=$!
sleep 6
# Round 1 while the workers allocate and the extension builds, round 2 later.
$BIN collect --pid "$wl" --log "$log" --url http://127.0.0.1:8123 --count 2 --every 20s --timeout 30s \
	-o "$OUT/h200-capture.tar.zst" 2>"$OUT/collect.stderr"
echo "collect exit $?" >>"$OUT/collect.stderr"
$BIN sources "$OUT/h200-capture.tar.zst" >"$OUT/sources.txt" 2>&1
$BIN analyze --fail-on never "$OUT/h200-capture.tar.zst" -o "$OUT/report.md" 2>>"$OUT/collect.stderr"
kill -- -$wl 2>/dev/null; kill $wl 2>/dev/null; pkill -f workload.py
nvidia-smi >"$OUT/nvidia-smi-after.txt" 2>&1
cat "$OUT/collect.stderr" "$OUT/sources.txt"
head -40 "$OUT/report.md"
