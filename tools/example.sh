#!/usr/bin/env bash
# Build and run the main example, eager_vs_fused. Without a GPU (or without a CUDA compiler) it says so
# and runs host-only. Extra arguments go to the example, e.g. ./tools/example.sh --preset large
#   ./tools/example.sh --torch [ARGS]   the LibTorch variant, eager_vs_fused_torch (needs LibTorch: a pip
#                                       torch through TORCH_PREFIX=$(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)'),
#                                       or Debian's libtorch-dev, CPU only, which runs it host-only)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
target=eager_vs_fused
if [[ "${1:-}" == "--torch" ]]; then
  target=eager_vs_fused_torch
  shift
fi
"$root/tools/install-deps.sh"
echo "== configure $build"
torch_args=()
if [[ "$target" == eager_vs_fused_torch ]]; then
  torch_args=(-DSCOPEPROF_WITH_TORCH=ON)  # (a cache from an earlier configure may have it OFF)
  [[ -n "${TORCH_PREFIX:-}" ]] && torch_args+=(-DCMAKE_PREFIX_PATH="$TORCH_PREFIX")
fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "${torch_args[@]}" >/dev/null
if [[ "$target" == eager_vs_fused_torch ]] && ! grep -q '^SCOPEPROF_WITH_TORCH:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "eager_vs_fused_torch needs LibTorch (not found): set TORCH_PREFIX to torch's CMake prefix" \
    "(python3 -c 'import torch;print(torch.utils.cmake_prefix_path)'), or install libtorch-dev" >&2
  exit 1
fi
echo "== build"
if [[ "$target" == eager_vs_fused_torch ]]; then
  cmake --build "$build" -j"$(nproc)" --target "$target"
  echo "== run $target $*"
  exec "$build/examples/eager_vs_fused/$target" "$@"
fi
if cmake --build "$build" -j"$(nproc)" --target "$target" 2>/dev/null; then
  echo "== run $target $*"
  exec "$build/examples/eager_vs_fused/$target" "$@"
fi
echo "eager_vs_fused needs a CUDA compiler and cuBLAS (not found): running the host-only quickstart instead"
cmake --build "$build" -j"$(nproc)" --target quickstart
exec "$build/examples/quickstart"
