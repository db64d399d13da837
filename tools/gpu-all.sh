#!/usr/bin/env bash
# Every GPU check in one go: the three builds of tools/gpu-quick.sh, gpu-cupti.sh and gpu-torch.sh at once
# (nothing is timed while they build), then each script in turn, which finds its targets built. Logs go
# to $1/quick, $1/cupti and $1/torch (default $OUT, else ./gpu-logs). Same staging as those scripts
# (../shared/tools/device-deps.sh libbenchmark-dev libbenchmark1debian, carry .deps).
#   bash tools/gpu-all.sh "$OUT"            everything
#   bash tools/gpu-all.sh "$OUT" quick cupti  only these, in this order
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${1:-${OUT:-$root/gpu-logs}}
shift || true
parts=("$@")
((${#parts[@]})) || parts=(quick cupti torch)
start=$SECONDS
echo "== building: ${parts[*]}"
for p in "${parts[@]}"; do
  mkdir -p "$logs/$p"
  SCOPEPROF_GPU_BUILD_ONLY=1 bash "$root/tools/gpu-$p.sh" "$logs/$p" >"$logs/$p/build-phase.txt" 2>&1 &
done
wait
for p in "${parts[@]}"; do cat "$logs/$p/build-phase.txt"; done
echo "== built in $((SECONDS - start)) s"
for p in "${parts[@]}"; do
  echo "== gpu-$p.sh"
  bash "$root/tools/gpu-$p.sh" "$logs/$p"
done
echo "== all done in $((SECONDS - start)) s"
