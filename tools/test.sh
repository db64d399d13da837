#!/usr/bin/env bash
# scopeprof's test command: install missing dependencies, configure, build, run every test.
#
#   ./tools/test.sh                                   build in build/
#   BUILD_DIR=build-rel ./tools/test.sh -- -DCMAKE_BUILD_TYPE=Release
#
# Arguments after `--` go to the CMake configure step. Tests run as many at a time as there are cores
# (CTEST_PARALLEL_LEVEL=1 runs them one by one); the GPU tests take the device one at a time.
# Exits non-zero if any step or any test fails.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

cmake_args=()
while (($#)); do
  case "$1" in
    --) shift; cmake_args=("$@"); break ;;
    -h | --help) sed -n '2,9s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown argument '$1' (CMake arguments go after --)" >&2; exit 2 ;;
  esac
done

build_dir=${BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)

step() { echo "==> test.sh: $*"; }

step "[1/4] dependencies: tools/install-deps.sh --viewers"
"$root/tools/install-deps.sh" --viewers

step "[2/4] configure: cmake -S . -B $build_dir ${cmake_args[*]}"
cmake -S . -B "$build_dir" "${cmake_args[@]}"

step "[3/4] build: cmake --build $build_dir -j $jobs"
cmake --build "$build_dir" -j "$jobs"

export CTEST_PARALLEL_LEVEL=${CTEST_PARALLEL_LEVEL:-$jobs}
step "[4/4] test: ctest --test-dir $build_dir --output-on-failure (CTEST_PARALLEL_LEVEL=$CTEST_PARALLEL_LEVEL)"
ctest --test-dir "$build_dir" --output-on-failure
