#!/usr/bin/env bash
# Declared work on the GPU (issue 19): the GPU suite for declared work and calibrate_device(), the example
# (large and t4 presets, which now take their GB/s, "% of copy" and "% of peak" from scopeprof's report),
# and compute-sanitizer memcheck of the example (its calibration kernel included). Logs go to $1.
#
# With BEFORE_SRC set to a source tree of the example before declared work (its hand-written bandwidth
# code), that example is built too and both are run alternately, so tools/compare-example-rates.py can
# check the figures agree (within 1% is the goal):
#   git archive 669ea44 | tar -x -C .old      (here; .old is git-ignored, carry it) and BEFORE_SRC=$PWD/.old
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
configure_step configure 90 cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$root/.deps/usr" -DSCOPEPROF_INSTALL=OFF -DSCOPEPROF_BUILD_BENCH=OFF
build_step build 300 cmake --build "$b" -j16 --target eager_vs_fused scopeprof_gpu_work_tests scopeprof_gpu_tests
before=""
if [[ -n ${BEFORE_SRC:-} ]]; then
  bo=$root/build-gpu-before
  { cmake -S "$BEFORE_SRC" -B "$bo" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 -DSCOPEPROF_INSTALL=OFF \
      -DSCOPEPROF_BUILD_TESTS=OFF -DSCOPEPROF_BUILD_BENCH=OFF && cmake --build "$bo" -j16 --target eager_vs_fused; } \
    >"$logs/build_before.log" 2>&1 && before=$bo/examples/eager_vs_fused/eager_vs_fused
  echo "== before: ${before:-not built (see build_before.log)}"
fi
example=$b/examples/eager_vs_fused/eager_vs_fused
run gpu_work_tests 120 "$b/tests/gpu/scopeprof_gpu_work_tests" -s
run gpu_tests 120 "$b/tests/gpu/scopeprof_gpu_tests"
for round in 1 2 3; do
  for preset in large t4; do
    [[ -n $before ]] && run "before_${preset}_$round" 90 "$before" --preset "$preset" --iters 100 --no-trace
    run "after_${preset}_$round" 90 "$example" --preset "$preset" --iters 100 --no-trace
  done
done
run memcheck_example 120 compute-sanitizer --tool memcheck --error-exitcode 3 "$example" --preset tiny --iters 3 --warmup 1 --no-trace
if [[ -n $before ]]; then
  for preset in large t4; do
    python3 "$root/tools/compare-example-rates.py" "$logs"/before_${preset}_*.log -- "$logs"/after_${preset}_*.log \
      | tee "$logs/compare_$preset.txt"
  done
fi
