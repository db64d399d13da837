#!/usr/bin/env bash
# Build and run everything that needs a GPU, and collect the logs: the GPU test suite, the CUDA-fault
# test, the device-timing benchmark, the host-cost benchmark, the eager_vs_fused example (both presets)
# and compute-sanitizer memcheck/racecheck runs. Used for the figures in docs/; run it on a CUDA machine:
#   tools/gpu-suite.sh [LOG_DIR]        (CUDA architectures: SCOPEPROF_CUDA_ARCH, default 90)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-$root/gpu-logs}
arch=${SCOPEPROF_CUDA_ARCH:-90}
build=$root/build-gpu
mkdir -p "$logs"
prefix="$root/.deps/usr"
if python3 -c 'import torch' 2>/dev/null; then prefix="$prefix;$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')"; fi
export LD_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
status=0
step() {  # step NAME COMMAND...: run, log to $logs/NAME.log, remember failures
  local name=$1; shift
  echo "== $name: $*"
  local t0=$SECONDS
  "$@" >"$logs/$name.log" 2>&1
  local rc=$?
  echo "   rc=$rc, $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || { status=1; tail -n 30 "$logs/$name.log"; }
  return $rc
}
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git -C "$root" rev-parse HEAD 2>/dev/null) $(git -C "$root" status --porcelain 2>/dev/null | grep -q . && echo '(with uncommitted changes)')"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null
  lscpu | grep -E 'Model name|^CPU\(s\)'
  nvcc --version | tail -n 2
} >"$logs/machine.txt" 2>&1
cat "$logs/machine.txt"
step configure cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DCMAKE_PREFIX_PATH="$prefix" -DSCOPEPROF_INSTALL=OFF || exit 1
step build cmake --build "$build" -j"$(nproc)" -- -k
step ctest ctest --test-dir "$build" --output-on-failure -LE consumer
[ -x "$build/tests/gpu/scopeprof_gpu_tests" ] && step gpu_tests "$build/tests/gpu/scopeprof_gpu_tests" -s
[ -x "$build/tests/gpu/scopeprof_gpu_fault" ] && step gpu_fault "$build/tests/gpu/scopeprof_gpu_fault"
[ -x "$build/bench/scopeprof_bench_device" ] && step bench_device "$build/bench/scopeprof_bench_device"
[ -x "$root/bench/run.sh" ] && BUILD_DIR=$build step bench_host "$root/bench/run.sh"
ex="$build/examples/eager_vs_fused/eager_vs_fused"
if [ -x "$ex" ]; then
  (cd "$logs" && step example_large "$ex" --preset large --iters 50)
  (cd "$logs" && step example_t4 "$ex" --preset t4 --iters 50 --no-trace)
  if command -v compute-sanitizer >/dev/null; then
    step memcheck_example compute-sanitizer --tool memcheck --error-exitcode 3 "$ex" --preset tiny --iters 3 --warmup 1 --no-trace
    [ -x "$build/tests/gpu/scopeprof_gpu_tests" ] && step memcheck_gpu_tests compute-sanitizer --tool memcheck --error-exitcode 3 "$build/tests/gpu/scopeprof_gpu_tests"
    [ -x "$build/tests/gpu/scopeprof_gpu_tests" ] && step racecheck_gpu_tests compute-sanitizer --tool racecheck --error-exitcode 3 "$build/tests/gpu/scopeprof_gpu_tests"
  fi
fi
echo "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
