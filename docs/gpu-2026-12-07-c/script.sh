#!/usr/bin/env bash
# The device call of 2026-12-07 (evening): issue 16's 10M figure, with every round's figures. From the
# repository root on the device (carry .deps, staged by ../shared/tools/device-deps.sh):
#   bash docs/gpu-2026-12-07-c/script.sh "$OUT/gpu"; tar czf "$OUT/gpu.tar.gz" -C "$OUT" gpu
# Builds the long-run bench alone, then runs 10M scopes in 100 rounds of 100,000 and in 20 rounds of 500,000,
# one after the other (nothing else runs meanwhile). Logs and return codes go to $1.
set -uo pipefail
root=$PWD
L=${1:?logs dir}
mkdir -p "$L"
export LD_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
step() {  # step NAME SECONDS COMMAND...
  local n=$1 t=$2
  shift 2
  echo "== $n $(date -u +%T)"
  timeout "$t" "$@" >"$L/$n.log" 2>&1
  echo "   rc=$?" | tee -a "$L/$n.log"
}
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  lscpu | grep -E 'Model name|^CPU\(s\)'; } >"$L/machine.txt" 2>&1
b=$root/build-gpu
step configure 90 cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$root/.deps/usr" -DSCOPEPROF_INSTALL=OFF
step build 150 cmake --build "$b" -j16 --target scopeprof_bench_device_long
step long-10M-100rounds 235 "$b/bench/scopeprof_bench_device_long" --scopes 10000000 --rounds 100 --each-round
step long-10M-20rounds 235 "$b/bench/scopeprof_bench_device_long" --scopes 10000000 --each-round
echo "== done $(date -u +%T)"
