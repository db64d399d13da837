#!/usr/bin/env bash
# The LibTorch GPU checks on a machine with a CUDA torch (pip wheel) and nvcc: configure against the
# wheel's CMake prefix, build the torch suites, the hook benchmark and the LibTorch example, run them
# (the example with the large and t4 presets, and a short run under compute-sanitizer memcheck; set
# SCOPEPROF_SKIP_MEMCHECK=1 to skip that). Logs go to $1 (default $OUT, else ./gpu-torch-logs).
#
#   bash tools/gpu-torch.sh "$OUT"
#
# On a fresh GPU machine (nvcc, cmake, a pip torch, no Debian -dev packages), stage the test and benchmark
# dependencies into .deps/ first, from the repository root on a machine that reaches the package registry,
# and carry .deps along (the configure below looks in .deps/usr):
#   ../shared/tools/device-deps.sh libbenchmark-dev libbenchmark1debian    # doctest + Google Benchmark
# Without them the script still runs to the end: a step whose target this build does not define (the
# torch suites without doctest, the hook benchmark without Google Benchmark) is skipped with the reason.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-${OUT:-$root/gpu-torch-logs}}
b=$root/build-gpu-torch
mkdir -p "$logs"
# shellcheck source=tools/gpu-common.sh
source "$root/tools/gpu-common.sh"
export LD_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
torch_prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
{ date -u +%Y-%m-%dT%H:%M:%SZ; git -C "$root" rev-parse HEAD; git -C "$root" status --short | head -50
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch;print("torch", torch.__version__, "cuda", torch.version.cuda)'
  lscpu | grep -E 'Model name|^CPU\(s\)'; } >"$logs/machine.txt" 2>&1
configure_step configure 180 cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$root/.deps/usr;$torch_prefix" -DSCOPEPROF_INSTALL=OFF -DSCOPEPROF_BUILD_EXAMPLES=ON
grep -E "Torch|Caffe2" "$logs/configure.log" | head -10
build_step build 400 cmake --build "$b" -j16 --target scopeprof_torch_tests scopeprof_torch_gpu_tests \
  scopeprof_torch_gpu_collision scopeprof_torch_gpu_cupti_handoff eager_vs_fused_torch
# The hook benchmark apart: a failure to build it must not hold back the suites.
build_step build_bench 200 cmake --build "$b" -j16 --target scopeprof_bench_torch
[[ -n ${SCOPEPROF_GPU_BUILD_ONLY:-} ]] && exit 0  # tools/gpu-all.sh builds the three builds at once
# CPU torch suite against the CUDA wheel (Kineto present: the trace subcase writes a file here).
(cd "$logs" && run torch_tests 120 "$b/tests/torch/scopeprof_torch_tests")
(cd "$logs" && run torch_gpu_tests 300 "$b/tests/torch_gpu/scopeprof_torch_gpu_tests" --success=false)
(cd "$logs" && run torch_gpu_collision 120 "$b/tests/torch_gpu/scopeprof_torch_gpu_collision")
(cd "$logs" && run torch_gpu_cupti_handoff 120 "$b/tests/torch_gpu/scopeprof_torch_gpu_cupti_handoff" handoff)
(cd "$logs" && run torch_gpu_cupti_overlap 120 "$b/tests/torch_gpu/scopeprof_torch_gpu_cupti_handoff" overlap)
run bench_torch 120 "$b/bench/scopeprof_bench_torch"
# The LibTorch example: large preset (tensors >= 8x L2), the seed's t4 size, and memcheck of a short run.
ex=$b/examples/eager_vs_fused/eager_vs_fused_torch
grep -h -o -E "(compute|sm)_[0-9]+" "$b/examples/eager_vs_fused/CMakeFiles/eager_vs_fused_torch_kernel.dir/flags.make" 2>/dev/null |
  sort -u | tr '\n' ' ' >"$logs/example_torch_arch.txt"
mkdir -p "$logs/traces"
(cd "$logs" && run example_torch_large 150 "$ex" --preset large --iters 30 --torch-trace-dir "$logs/traces" \
  --trace "$logs/traces/eager_vs_fused_torch.trace.json")
(cd "$logs" && run example_torch_t4 90 "$ex" --preset t4 --iters 30 --no-trace --torch-trace-dir /tmp)
if [ -z "${SCOPEPROF_SKIP_MEMCHECK:-}" ]; then
  run memcheck_example_torch 240 compute-sanitizer --tool memcheck --error-exitcode 3 \
    "$ex" --preset tiny --iters 3 --warmup 1 --profile-iters 1 --no-trace --torch-trace-dir /tmp
fi
cp -f "$logs"/scopeprof_torch_gpu_trace.json "$logs/torch_gpu_trace.json" 2>/dev/null || true
grep -h -E "^\s+rc=|skipped:|test cases|PASS|FAIL|hook cost|ERROR SUMMARY" "$logs"/*.log
