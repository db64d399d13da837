#!/usr/bin/env bash
# The CUPTI collector on a GPU: builds (sm_90) and runs its GPU tests and its benchmark. Logs go to $1
# (default $OUT, else ./gpu-cupti-logs); one line per step with its exit code.
#   bash tools/gpu-cupti.sh            # on the H200 machine, from the repository root
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-${OUT:-$root/gpu-cupti-logs}}
b=$root/build-gpu-cupti
mkdir -p "$logs"
export LD_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
{ date -u +%Y-%m-%dT%H:%M:%SZ; git -C "$root" rev-parse HEAD; git -C "$root" status --short | head -20
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E 'Model name|^CPU\(s\)'
  ldconfig -p | grep -i cupti; } >"$logs/machine.txt" 2>&1
run() { local n=$1 t=$2; shift 2; echo "== $n"; timeout "$t" "$@" >"$logs/$n.log" 2>&1; echo "   rc=$?" | tee -a "$logs/$n.log"; }
run configure 90 cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$root/.deps/usr" -DSCOPEPROF_INSTALL=OFF -DSCOPEPROF_WITH_CUPTI=ON
grep -E "scopeprof|CUPTI" "$logs/configure.log" | head -5
run build 240 cmake --build "$b" -j16 --target scopeprof_gpu_cupti_tests scopeprof_gpu_cupti_guard scopeprof_cupti_tests \
  scopeprof_bench_cupti
run cupti_nogpu_path 60 "$b/tests/cupti/scopeprof_cupti_tests"
run gpu_cupti_tests 120 "$b/tests/gpu/scopeprof_gpu_cupti_tests" -s
run gpu_cupti_guard_held 60 "$b/tests/gpu/scopeprof_gpu_cupti_guard" held
run gpu_cupti_guard_stolen 60 "$b/tests/gpu/scopeprof_gpu_cupti_guard" stolen
run bench_cupti 120 "$b/bench/scopeprof_bench_cupti"
# A report with kernels, as a user sees it (text + Chrome trace), from the GPU suite's first case.
(cd "$logs" && SCOPEPROF_CUPTI=1 SCOPEPROF_REPORT="$logs/cupti_report.txt" timeout 60 \
  "$b/tests/gpu/scopeprof_gpu_cupti_tests" --test-case='nested*' >"$logs/cupti_report_run.log" 2>&1; echo "   report rc=$?")
