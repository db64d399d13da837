#!/usr/bin/env bash
# The second device call of 2026-12-07 (evening): the drain resolving through the driver entry points. From
# the repository root on the device (carry .deps, staged by ../shared/tools/device-deps.sh; tree A, the
# commit before, carried as .ab-old.tar, made by `git archive <commit> > .ab-old.tar`):
#   bash docs/gpu-2026-12-07-c/script-2.sh "$OUT/gpu"; tar czf "$OUT/gpu.tar.gz" -C "$OUT" gpu
# Builds first (both trees at once, nothing timed meanwhile): B, the working tree: GPU tests and the long-run
# bench; A: the long-run bench. Then B's GPU tests, memcheck of the drain's cases p and q, B's long-run bench
# at 10M scopes, and, while the call's time allows, A and B at 2M one after the other. Logs and return codes
# go to $1.
set -uo pipefail
root=$PWD
L=${1:?logs dir}
budget=${2:-560}  # seconds this script may take in all (a device call's limit is 600)
mkdir -p "$L"
export LD_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
step() {  # step NAME SECONDS COMMAND...
  local n=$1 t=$2 start=$SECONDS
  shift 2
  if ((SECONDS + t > budget)); then
    echo "== $n: not run (${SECONDS} s gone of $budget, it may take $t)" | tee "$L/$n.log"
    return
  fi
  echo "== $n $(date -u +%T)"
  timeout "$t" "$@" >"$L/$n.log" 2>&1
  echo "   rc=$? ($((SECONDS - start)) s)" | tee -a "$L/$n.log"
}
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
  lscpu | grep -E 'Model name|^CPU\(s\)'; } >"$L/machine.txt" 2>&1
a=/tmp/scopeprof-a b=$root/build-gpu
rm -rf "$a" && mkdir -p "$a" && tar xf "$root/.ab-old.tar" -C "$a"
conf=(-DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH="$root/.deps/usr" -DSCOPEPROF_INSTALL=OFF)
(cmake -S "$a" -B "$a/build" "${conf[@]}" >"$L/a-build.log" 2>&1 &&
   cmake --build "$a/build" -j6 --target scopeprof_bench_device_long >>"$L/a-build.log" 2>&1
 echo "rc=$?" >>"$L/a-build.log") &
(cmake -S "$root" -B "$b" "${conf[@]}" >"$L/b-build.log" 2>&1 &&
   cmake --build "$b" -j10 --target scopeprof_gpu_tests scopeprof_gpu_lifecycle_tests scopeprof_bench_device_long \
     >>"$L/b-build.log" 2>&1
 echo "rc=$?" >>"$L/b-build.log")
wait
echo "== built in $SECONDS s: A $(tail -1 "$L/a-build.log"), B $(tail -1 "$L/b-build.log")"
step gpu_tests 60 "$b/tests/gpu/scopeprof_gpu_tests"
step gpu_lifecycle_tests 60 "$b/tests/gpu/scopeprof_gpu_lifecycle_tests"
step memcheck_pending 90 compute-sanitizer --tool memcheck --error-exitcode 3 "$b/tests/gpu/scopeprof_gpu_lifecycle_tests" \
  --test-case="gpu p*,gpu q*"
step long-B-10M 235 "$b/bench/scopeprof_bench_device_long" --scopes 10000000 --each-round
step long-A-2M 50 "$a/build/bench/scopeprof_bench_device_long" --scopes 2000000
step long-B-2M 50 "$b/bench/scopeprof_bench_device_long" --scopes 2000000
echo "== done $(date -u +%T) ($SECONDS s)"
