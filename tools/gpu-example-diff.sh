#!/usr/bin/env bash
# The example as a run-to-run diff on the GPU: eager_vs_fused --only eager twice and --only fused once,
# each run writing its JSON report (SCOPEPROF_REPORT), then the scopeprof tool comparing them: two eager
# runs (the --fail-above 5% --fail-on device gate must pass: noise only) and eager against fused (the table
# docs/ show).
# Logs and reports go to $1.
#
# On a fresh GPU machine (nvcc, cmake, no Debian -dev packages), stage the tool's header-only dependencies
# into .deps/ first, from the repository root on a machine that reaches the package registry, and carry
# .deps along (the configure below looks in .deps/usr):
#   ../shared/tools/device-deps.sh nlohmann-json3-dev libcli11-dev
# Without them the tool is not built, and the diff steps are skipped with the reason.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-$root/gpu-logs}
b=$root/build-gpu-diff
mkdir -p "$logs"
# shellcheck source=tools/gpu-common.sh
source "$root/tools/gpu-common.sh"
{ date -u +%Y-%m-%dT%H:%M:%SZ; git -C "$root" rev-parse HEAD; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  lscpu | grep -E 'Model name|^CPU\(s\)'; } >"$logs/machine.txt" 2>&1
configure_step configure 90 cmake -S "$root" -B "$b" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_PREFIX_PATH="$root/.deps/usr" -DSCOPEPROF_INSTALL=OFF -DSCOPEPROF_BUILD_TESTS=OFF -DSCOPEPROF_BUILD_BENCH=OFF
build_step build 240 cmake --build "$b" -j16 --target eager_vs_fused scopeprof_cli
example=$b/examples/eager_vs_fused/eager_vs_fused
tool=$b/cli/scopeprof
iters=${SCOPEPROF_DIFF_ITERS:-100}
for run_name in eager eager_again fused; do
  run "only_$run_name" 120 env SCOPEPROF_REPORT="$logs/$run_name.json" "$example" --preset large --iters "$iters" \
    --no-trace --only "${run_name%_again}"
done
if ! have_target scopeprof_cli; then
  skip_line diff scopeprof_cli | tee "$logs/diff.log"
  exit 0
fi
# The gate on device spans (what a GPU block's regression is); then the same on every row, for the record:
# host times of launch-only scopes (10-30 us) shift between two processes by more than 5%, significantly.
run diff_same 30 "$tool" diff "$logs/eager.json" "$logs/eager_again.json" --fail-above 5% --fail-on device
run diff_same_all_rows 30 "$tool" diff "$logs/eager.json" "$logs/eager_again.json" --fail-above 5%
run diff_eager_fused 30 "$tool" diff "$logs/eager.json" "$logs/fused.json" --width 150
run diff_eager_fused_md 30 "$tool" diff "$logs/eager.json" "$logs/fused.json" --format md
