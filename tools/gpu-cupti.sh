#!/usr/bin/env bash
# The CUPTI collector on a GPU: builds (sm_90) and runs its GPU tests and its benchmark. Logs go to $1
# (default $OUT, else ./gpu-cupti-logs); one line per step with its exit code.
#   bash tools/gpu-cupti.sh            # on the H200 machine, from the repository root
#
# On a fresh GPU machine (nvcc, cmake, no Debian -dev packages), stage the test and benchmark dependencies
# into .deps/ first, from the repository root on a machine that reaches the package registry, and carry
# .deps along (the configure below looks in .deps/usr):
#   ../shared/tools/device-deps.sh libbenchmark-dev libbenchmark1debian    # doctest + Google Benchmark
# Without them the script still runs to the end: a step whose target this build does not define (the
# tests without doctest, the benchmark without Google Benchmark) is skipped with the reason.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-${OUT:-$root/gpu-cupti-logs}}
b=$root/build-gpu-cupti
mkdir -p "$logs"
# shellcheck source=tools/gpu-common.sh
source "$root/tools/gpu-common.sh"
export LD_LIBRARY_PATH="$root/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
{ date -u +%Y-%m-%dT%H:%M:%SZ; git -C "$root" rev-parse HEAD; git -C "$root" status --short | head -20
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E 'Model name|^CPU\(s\)'
  ldconfig -p | grep -i cupti; } >"$logs/machine.txt" 2>&1
configure_step configure 90 cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$root/.deps/usr" -DSCOPEPROF_INSTALL=OFF -DSCOPEPROF_WITH_CUPTI=ON
build_step build 240 cmake --build "$b" -j16 --target scopeprof_gpu_cupti_tests scopeprof_gpu_cupti_guard scopeprof_cupti_tests \
  scopeprof_bench_cupti
[[ -n ${SCOPEPROF_GPU_BUILD_ONLY:-} ]] && exit 0  # tools/gpu-all.sh builds the three builds at once
# The collector against older CUPTI headers (compile only): Triton's wheel bundles a CUDA 12.x set. Only its
# cupti*.h are used, ahead of the toolkit's, as a CUDA 12 user would have them.
old_cupti=$(python3 -c 'import os,triton;print(os.path.join(os.path.dirname(triton.__file__),"backends","nvidia","include"))' 2>/dev/null)
if [[ -n $old_cupti && -f $old_cupti/cupti_version.h ]]; then
  old_dir=$(mktemp -d) && cp "$old_cupti"/cupti*.h "$old_dir/"
  grep -h "^#define CUPTI_API_VERSION" "$old_dir/cupti_version.h" | tee "$logs/cupti_old_headers_version.txt"
  run cupti_old_headers 120 "${CXX:-c++}" -std=c++17 -fsyntax-only -Wall -Wextra -Wshadow -Werror -I "$root/include" \
    -isystem "$old_dir" -isystem /usr/local/cuda/include -DSCOPEPROF_WITH_NVTX=1 -DSCOPEPROF_WITH_CUDA=1 \
    -DSCOPEPROF_WITH_CUPTI=1 "$root/tests/compile/headers.cpp"
else
  echo "== cupti_old_headers: skipped (no Triton CUPTI headers on this machine)"
fi
run cupti_nogpu_path 60 "$b/tests/cupti/scopeprof_cupti_tests"
run gpu_cupti_tests 120 "$b/tests/gpu/scopeprof_gpu_cupti_tests" -s
run gpu_cupti_guard_held 60 "$b/tests/gpu/scopeprof_gpu_cupti_guard" held
run gpu_cupti_guard_stolen 60 "$b/tests/gpu/scopeprof_gpu_cupti_guard" stolen
run bench_cupti 120 "$b/bench/scopeprof_bench_cupti"
# A report with kernels, as a user sees it (text + Chrome trace), from the GPU suite's first case.
if have_target scopeprof_gpu_cupti_tests; then
  (cd "$logs" && SCOPEPROF_CUPTI=1 SCOPEPROF_REPORT="$logs/cupti_report.txt" timeout 60 \
    "$b/tests/gpu/scopeprof_gpu_cupti_tests" --test-case='nested*' >"$logs/cupti_report_run.log" 2>&1; echo "   report rc=$?")
else
  echo "== cupti_report: skipped (scopeprof_gpu_cupti_tests is not defined in this build: see above)"
fi
