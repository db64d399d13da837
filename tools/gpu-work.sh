#!/usr/bin/env bash
# Declared work on the GPU (issue 19): the GPU suite for declared work and calibrate_device(), the example
# (large and t4 presets, which now take their GB/s, "% of copy" and "% of peak" from scopeprof's report),
# compute-sanitizer memcheck of the example (its calibration kernel included) and of a drain pass over unfinished
# device work (lifecycle case p). Logs go to $1.
#
# With BEFORE_SRC set to a source tree of the example before declared work (its hand-written bandwidth
# code), that example is built too and both are run alternately, so tools/compare-example-rates.py can
# check the figures agree (within 1% is the goal):
#   git archive 669ea44 | tar -x -C .old      (here; .old is git-ignored, carry it) and BEFORE_SRC=$PWD/.old
# Where python3 imports a CUDA torch, the LibTorch variant (eager_vs_fused_torch) is built against it and run
# the same way (and its BEFORE_SRC counterpart, compared the same way); TORCH=0 leaves it out.
# Staging as tools/gpu-quick.sh: ../shared/tools/device-deps.sh (doctest), carry .deps.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-$root/gpu-logs}
b=$root/build-gpu-work
mkdir -p "$logs"
# shellcheck source=tools/gpu-common.sh
source "$root/tools/gpu-common.sh"
{ date -u +%Y-%m-%dT%H:%M:%SZ; git -C "$root" rev-parse HEAD 2>/dev/null; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  lscpu | grep -E 'Model name|^CPU\(s\)'; } >"$logs/machine.txt" 2>&1
prefix="$root/.deps/usr"
torch_prefix=""
if [[ ${TORCH:-1} != 0 ]]; then
  torch_prefix=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)' 2>/dev/null) || torch_prefix=""
  [[ -n $torch_prefix ]] && prefix="$prefix;$torch_prefix"
  echo "== LibTorch: ${torch_prefix:-not found (python3 cannot import torch), the LibTorch variant is left out}"
fi
configure_step configure 180 cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$prefix" -DSCOPEPROF_INSTALL=OFF -DSCOPEPROF_BUILD_BENCH=OFF
before="" before_torch=""
if [[ -n ${BEFORE_SRC:-} ]]; then  # built beside the main build (nothing is timed until both are done)
  bo=$root/build-gpu-before
  { cmake -S "$BEFORE_SRC" -B "$bo" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSCOPEPROF_INSTALL=OFF \
      -DCMAKE_PREFIX_PATH="$prefix" -DSCOPEPROF_BUILD_TESTS=OFF -DSCOPEPROF_BUILD_BENCH=OFF &&
    cmake --build "$bo" -j8 --target eager_vs_fused && { [[ -z $torch_prefix ]] ||
      cmake --build "$bo" -j8 --target eager_vs_fused_torch; }; } >"$logs/build_before.log" 2>&1 &
fi
build_step build 400 cmake --build "$b" -j16 --target eager_vs_fused scopeprof_gpu_work_tests scopeprof_gpu_tests \
  scopeprof_gpu_lifecycle_tests \
  eager_vs_fused_torch
wait
if [[ -n ${BEFORE_SRC:-} ]]; then
  [[ -x $bo/examples/eager_vs_fused/eager_vs_fused ]] && before=$bo/examples/eager_vs_fused/eager_vs_fused
  [[ -x $bo/examples/eager_vs_fused/eager_vs_fused_torch ]] && before_torch=$bo/examples/eager_vs_fused/eager_vs_fused_torch
  echo "== before: ${before:-not built (see build_before.log)}; LibTorch: ${before_torch:-not built}"
fi
example=$b/examples/eager_vs_fused/eager_vs_fused
example_torch=$b/examples/eager_vs_fused/eager_vs_fused_torch
run gpu_work_tests 120 "$b/tests/gpu/scopeprof_gpu_work_tests" -s
run gpu_tests 120 "$b/tests/gpu/scopeprof_gpu_tests"
for round in 1 2 3; do
  for preset in large t4; do
    [[ -n $before ]] && run "before_${preset}_$round" 90 "$before" --preset "$preset" --iters 100 --no-trace
    run "after_${preset}_$round" 90 "$example" --preset "$preset" --iters 100 --no-trace
  done
done
if [[ -n $torch_prefix ]]; then  # the profiler sessions kept short: only the rate lines are compared
  for round in 1 2 3; do
    for preset in large t4; do
      [[ -n $before_torch ]] && run "torch_before_${preset}_$round" 150 "$before_torch" --preset "$preset" --iters 100 \
        --profile-iters 3 --no-trace --torch-trace-dir /tmp
      run "torch_after_${preset}_$round" 150 "$example_torch" --preset "$preset" --iters 100 --profile-iters 3 \
        --no-trace --torch-trace-dir /tmp
    done
  done
fi
run memcheck_pending 60 compute-sanitizer --tool memcheck --error-exitcode 3 "$b/tests/gpu/scopeprof_gpu_lifecycle_tests" --test-case="gpu p*"
run memcheck_example 120 compute-sanitizer --tool memcheck --error-exitcode 3 "$example" --preset tiny --iters 3 --warmup 1 --no-trace
if [[ -n $before ]]; then
  for preset in large t4; do
    python3 "$root/tools/compare-example-rates.py" "$logs"/before_${preset}_*.log -- "$logs"/after_${preset}_*.log \
      | tee "$logs/compare_$preset.txt"
    [[ -n $before_torch ]] && python3 "$root/tools/compare-example-rates.py" "$logs"/torch_before_${preset}_*.log -- \
      "$logs"/torch_after_${preset}_*.log | tee "$logs/compare_torch_$preset.txt"
  done
fi
grep -h -E "^\s+rc=|skipped:|test cases|ERROR SUMMARY" "$logs"/*.log | sort | uniq -c
