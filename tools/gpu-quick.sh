#!/usr/bin/env bash
# The GPU figures of docs/ in one short run: GPU tests (device timing, event life cycle, the report at
# exit, two devices when the host has them), fault test, device and host benchmarks (the long-run one with SCOPEPROF_LONG_SCOPES scopes), the example (large and t4 presets) and
# compute-sanitizer memcheck of the example. Logs go to $1.
#
# On a fresh GPU machine (nvcc, cmake, no Debian -dev packages), stage the test and benchmark dependencies
# into .deps/ first, from the repository root on a machine that reaches the package registry, and carry
# .deps along (the configure below looks in .deps/usr):
#   ../shared/tools/device-deps.sh libbenchmark-dev libbenchmark1debian    # doctest + Google Benchmark
# Without them the script still runs to the end: a step whose target this build does not define (the
# tests without doctest, the benchmarks without Google Benchmark) is skipped with the reason.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-$root/gpu-logs}
b=$root/build-gpu
mkdir -p "$logs"
# shellcheck source=tools/gpu-common.sh
source "$root/tools/gpu-common.sh"
export LD_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
{ date -u +%Y-%m-%dT%H:%M:%SZ; git -C "$root" rev-parse HEAD; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  lscpu | grep -E 'Model name|^CPU\(s\)'; } >"$logs/machine.txt" 2>&1
configure_step configure 60 cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$root/.deps/usr" -DSCOPEPROF_INSTALL=OFF
build_step build 150 cmake --build "$b" -j16 --target eager_vs_fused scopeprof_gpu_tests scopeprof_gpu_fault \
  scopeprof_gpu_lifecycle_tests scopeprof_gpu_exit_report scopeprof_bench_device scopeprof_bench_device_long scopeprof_bench \
  scopeprof_gpu_two_devices_tests
[[ -n ${SCOPEPROF_GPU_BUILD_ONLY:-} ]] && exit 0  # tools/gpu-all.sh builds the three builds at once
run gpu_tests 60 "$b/tests/gpu/scopeprof_gpu_tests"
run gpu_lifecycle_tests 120 "$b/tests/gpu/scopeprof_gpu_lifecycle_tests" -s
(cd "$logs" && run gpu_exit_report 60 "$b/tests/gpu/scopeprof_gpu_exit_report")
run gpu_fault 30 "$b/tests/gpu/scopeprof_gpu_fault"
# Two GPUs of one host (each case says "skipped: needs 2 CUDA devices" with fewer), and memcheck of it.
run gpu_two_devices 120 "$b/tests/gpu/scopeprof_gpu_two_devices_tests"
run memcheck_two_devices 120 compute-sanitizer --tool memcheck --error-exitcode 3 "$b/tests/gpu/scopeprof_gpu_two_devices_tests"
run bench_device 60 "$b/bench/scopeprof_bench_device"
run bench_device_long 120 "$b/bench/scopeprof_bench_device_long" --scopes "${SCOPEPROF_LONG_SCOPES:-2000000}"
run bench_host 150 "$b/bench/scopeprof_bench"
(cd "$logs" && run example_large 90 "$b/examples/eager_vs_fused/eager_vs_fused" --preset large --iters 30)
(cd "$logs" && run example_t4 40 "$b/examples/eager_vs_fused/eager_vs_fused" --preset t4 --iters 30 --no-trace)
run memcheck_example 60 compute-sanitizer --tool memcheck --error-exitcode 3 "$b/examples/eager_vs_fused/eager_vs_fused" --preset tiny --iters 3 --warmup 1 --no-trace
# A drain pass over unfinished device work must ask by queries (no API error for the sanitizer to count);
# case q: the same over a stream whose finished scopes are found by bisection.
run memcheck_pending 90 compute-sanitizer --tool memcheck --error-exitcode 3 "$b/tests/gpu/scopeprof_gpu_lifecycle_tests" \
  --test-case="gpu p*,gpu q*"
# Case k launches a kernel with a bad block size on purpose (API errors the sanitizer would count).
if [ -n "${SCOPEPROF_GPU_SANITIZE_TESTS:-}" ]; then  # slower: the GPU suite under memcheck and racecheck
  run memcheck_gpu_tests 150 compute-sanitizer --tool memcheck --error-exitcode 3 "$b/tests/gpu/scopeprof_gpu_tests" --test-case-exclude="gpu k*"
  run racecheck_gpu_tests 150 compute-sanitizer --tool racecheck --error-exitcode 3 "$b/tests/gpu/scopeprof_gpu_tests" --test-case-exclude="gpu k*"
fi
