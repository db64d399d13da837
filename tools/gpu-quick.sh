#!/usr/bin/env bash
# The GPU figures of docs/ in one short run: GPU tests, fault test, device and host benchmarks, the
# example (large and t4 presets) and compute-sanitizer memcheck of the example. Logs go to $1.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-$root/gpu-logs}
b=$root/build-gpu
mkdir -p "$logs"
export LD_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
{ date -u +%Y-%m-%dT%H:%M:%SZ; git -C "$root" rev-parse HEAD; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  lscpu | grep -E 'Model name|^CPU\(s\)'; } >"$logs/machine.txt" 2>&1
run() { local n=$1 t=$2; shift 2; echo "== $n"; timeout "$t" "$@" >"$logs/$n.log" 2>&1; echo "   rc=$?" | tee -a "$logs/$n.log"; }
run configure 60 cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$root/.deps/usr" -DSCOPEPROF_INSTALL=OFF
run build 150 cmake --build "$b" -j16 --target eager_vs_fused scopeprof_gpu_tests scopeprof_gpu_fault scopeprof_bench_device scopeprof_bench
run gpu_tests 60 "$b/tests/gpu/scopeprof_gpu_tests"
run gpu_fault 30 "$b/tests/gpu/scopeprof_gpu_fault"
run bench_device 60 "$b/bench/scopeprof_bench_device"
run bench_host 60 "$b/bench/scopeprof_bench"
(cd "$logs" && run example_large 90 "$b/examples/eager_vs_fused/eager_vs_fused" --preset large --iters 30)
(cd "$logs" && run example_t4 40 "$b/examples/eager_vs_fused/eager_vs_fused" --preset t4 --iters 30 --no-trace)
run memcheck_example 60 compute-sanitizer --tool memcheck --error-exitcode 3 "$b/examples/eager_vs_fused/eager_vs_fused" --preset tiny --iters 3 --warmup 1 --no-trace
# Case k launches a kernel with a bad block size on purpose (API errors the sanitizer would count).
if [ -n "${SCOPEPROF_GPU_SANITIZE_TESTS:-}" ]; then  # slower: the GPU suite under memcheck and racecheck
  run memcheck_gpu_tests 150 compute-sanitizer --tool memcheck --error-exitcode 3 "$b/tests/gpu/scopeprof_gpu_tests" --test-case-exclude="gpu k*"
  run racecheck_gpu_tests 150 compute-sanitizer --tool racecheck --error-exitcode 3 "$b/tests/gpu/scopeprof_gpu_tests" --test-case-exclude="gpu k*"
fi
