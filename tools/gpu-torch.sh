#!/usr/bin/env bash
# The LibTorch GPU checks on a machine with a CUDA torch (pip wheel) and nvcc: configure against the
# wheel's CMake prefix, build the torch suites and the hook benchmark, run them. Logs go to $1 (default
# $OUT, else ./gpu-torch-logs). Needs doctest staged in .deps/ (../shared/tools/device-deps.sh) when the
# machine has no doctest of its own.
#
#   bash tools/gpu-torch.sh "$OUT"
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-${OUT:-$root/gpu-torch-logs}}
b=$root/build-gpu-torch
mkdir -p "$logs"
export LD_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
torch_prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)')
{ date -u +%Y-%m-%dT%H:%M:%SZ; git -C "$root" rev-parse HEAD; git -C "$root" status --short | head -50
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c 'import torch;print("torch", torch.__version__, "cuda", torch.version.cuda)'
  lscpu | grep -E 'Model name|^CPU\(s\)'; } >"$logs/machine.txt" 2>&1
run() { local n=$1 t=$2; shift 2; echo "== $n"; timeout "$t" "$@" >"$logs/$n.log" 2>&1; echo "   rc=$?" | tee -a "$logs/$n.log"; }
run configure 180 cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$root/.deps/usr;$torch_prefix" -DSCOPEPROF_INSTALL=OFF -DSCOPEPROF_BUILD_EXAMPLES=OFF
grep -E "scopeprof|Torch|Caffe2" "$logs/configure.log" | head -20
run build 400 cmake --build "$b" -j16 --target scopeprof_torch_tests scopeprof_torch_gpu_tests scopeprof_torch_gpu_collision
# The hook benchmark only where Google Benchmark was found.
if grep -q "scopeprof_bench_torch:" "$b/Makefile" 2>/dev/null; then run build_bench 200 cmake --build "$b" -j16 --target scopeprof_bench_torch; fi
# CPU torch suite against the CUDA wheel (Kineto present: the trace subcase writes a file here).
(cd "$logs" && run torch_tests 120 "$b/tests/torch/scopeprof_torch_tests")
(cd "$logs" && run torch_gpu_tests 300 "$b/tests/torch_gpu/scopeprof_torch_gpu_tests" --success=false)
(cd "$logs" && run torch_gpu_collision 120 "$b/tests/torch_gpu/scopeprof_torch_gpu_collision")
[ -x "$b/bench/scopeprof_bench_torch" ] && run bench_torch 120 "$b/bench/scopeprof_bench_torch"
cp -f "$logs"/scopeprof_torch_gpu_trace.json "$logs/torch_gpu_trace.json" 2>/dev/null || true
grep -h -E "^\s+rc=|test cases|PASS|FAIL|hook cost" "$logs"/*.log
