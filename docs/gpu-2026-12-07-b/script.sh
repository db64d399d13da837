#!/usr/bin/env bash
# The device call of 2026-12-07 (afternoon), from the repository root on the device: bash <this> "$OUT/gpu".
# Tree B is the working tree (spans only where no timeline keeps the scopes; gpu f's pool grown with the
# drain held). Tree A is commit 23a5f1a, carried as .ab-old.tar (git archive 23a5f1a). Builds first (both
# at once, nothing timed meanwhile), then B's GPU tests, B's long-run bench at 10M scopes, then A and B at
# 2M scopes one after the other. Each step has its own time limit; logs and return codes go to $1.
# The device call (2026-12-07 14:15 UTC, tree of commit 0ed4722, carry .deps staged by device-deps.sh):
#   L=$OUT/gpu; mkdir -p $L; bash docs/gpu-2026-12-07-b/script.sh $L > $L/script-out.txt 2>&1; ...
# Only 8 of its files came back (a call returns a limited number of files): tar $L into one file next time.
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
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E 'Model name|^CPU\(s\)'; } >"$L/machine.txt" 2>&1
a=/tmp/scopeprof-a
rm -rf "$a" && mkdir -p "$a" && tar xf "$root/.ab-old.tar" -C "$a"
(cmake -S "$a" -B "$a/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH="$root/.deps/usr" \
   -DSCOPEPROF_INSTALL=OFF >"$L/a-configure.log" 2>&1 &&
   cmake --build "$a/build" -j6 --target scopeprof_bench_device_long >"$L/a-build.log" 2>&1
 echo "rc=$?" >>"$L/a-build.log") &
SCOPEPROF_GPU_BUILD_ONLY=1 bash tools/gpu-quick.sh "$L/quick" >"$L/b-build.txt" 2>&1
wait
tail -1 "$L/a-build.log"
cat "$L/b-build.txt"
bg=$root/build-gpu
step gpu_tests 90 "$bg/tests/gpu/scopeprof_gpu_tests"
step gpu_lifecycle_tests 120 "$bg/tests/gpu/scopeprof_gpu_lifecycle_tests" -s
step memcheck_pending 90 compute-sanitizer --tool memcheck --error-exitcode 3 "$bg/tests/gpu/scopeprof_gpu_lifecycle_tests" \
  --test-case="gpu p*,gpu q*"
step bench_device_long-B-10M 220 "$bg/bench/scopeprof_bench_device_long" --scopes 10000000
step bench_device_long-A-2M 60 "$a/build/bench/scopeprof_bench_device_long" --scopes 2000000
step bench_device_long-B-2M 60 "$bg/bench/scopeprof_bench_device_long" --scopes 2000000
echo "== done $(date -u +%T)"
