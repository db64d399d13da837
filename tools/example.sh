#!/usr/bin/env bash
# Build and run the main example, eager_vs_fused. Without a GPU (or without a CUDA compiler) it says so
# and runs host-only. Extra arguments go to the example, e.g. ./tools/example.sh --preset large
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/tools/install-deps.sh"
echo "== configure $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
echo "== build"
if cmake --build "$build" -j"$(nproc)" --target eager_vs_fused 2>/dev/null; then
  echo "== run eager_vs_fused $*"
  exec "$build/examples/eager_vs_fused/eager_vs_fused" "$@"
fi
echo "eager_vs_fused needs a CUDA compiler and cuBLAS (not found): running the host-only quickstart instead"
cmake --build "$build" -j"$(nproc)" --target quickstart
exec "$build/examples/quickstart"
