#!/usr/bin/env bash
# Install the Debian/Ubuntu packages that scopeprof's build and tests need, if any is missing.
#
#   tools/install-deps.sh            cmake, make, g++, python3, zlib1g-dev, doctest-dev, libbenchmark-dev,
#                                    nlohmann-json3-dev and libcli11-dev (the scopeprof tool), openmpi-bin and
#                                    libopenmpi-dev (the multi-rank tests under mpirun), libtorch-dev and
#                                    libgloo-dev (LibTorch's gloo process group: two ranks over c10d)
#   tools/install-deps.sh --fuzz     also clang and libclang-rt-14-dev (libFuzzer, clang sanitizers; the
#                                    clang++ header checks of tests/compile run when clang++ is there)
#   tools/install-deps.sh --cross    also g++-aarch64-linux-gnu and qemu-user (the AArch64 build-and-run test)
#   tools/install-deps.sh --viewers  also chromium (and nodejs, npm where absent), and the pinned npm packages of
#                                    tests/viewers (playwright-core, speedscope) into tests/viewers/node_modules
#   tools/install-deps.sh --no-torch without libtorch-dev and libgloo-dev (LibTorch 1.13, CPU: the torch suite
#                                    and tests/torch_dist; ~16 s to install)
#
# Idempotent: prints nothing and changes nothing when every package is installed. Needs root (or sudo)
# only when something is missing. Never installs CUDA: the build uses the toolkit when it is there.
set -euo pipefail

usage() { sed -n '2,16s/^# \{0,1\}//p' "$0"; }

packages=(cmake make g++ python3 zlib1g-dev doctest-dev libbenchmark-dev nlohmann-json3-dev libcli11-dev openmpi-bin
  libopenmpi-dev)
with_torch=1
with_viewers=0
for arg in "$@"; do
  case "$arg" in
    --fuzz) packages+=(clang libclang-rt-14-dev) ;;
    --cross) packages+=(g++-aarch64-linux-gnu qemu-user) ;;
    --viewers)
      packages+=(chromium)
      # The machine's own Node.js and npm when there are (they need not come from Debian's packages).
      command -v node >/dev/null 2>&1 || packages+=(nodejs)
      command -v npm >/dev/null 2>&1 || packages+=(npm)
      with_viewers=1
      ;;
    --no-torch) with_torch=0 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install-deps.sh: unknown argument '$arg'" >&2; usage >&2; exit 2 ;;
  esac
done
# Debian's LibTorch (1.13, CPU, no Kineto) for the torch suite (a distribution without it: --no-torch), and
# gloo's headers, which LibTorch's c10d gloo process group includes (tests/torch_dist).
if ((with_torch)); then packages+=(libtorch-dev libgloo-dev); fi

if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
  # Not Debian-like: say what is needed; fail only if the basic tools are absent.
  missing_tools=()
  for t in cmake c++ python3; do command -v "$t" >/dev/null 2>&1 || missing_tools+=("$t"); done
  if ((${#missing_tools[@]})); then
    echo "install-deps.sh: no apt-get here; install these yourself: ${packages[*]} (missing now: ${missing_tools[*]})" >&2
    exit 1
  fi
  exit 0
fi

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

# The viewer tests' npm packages, pinned by tests/viewers/package-lock.json (npm ci: exactly those).
install_viewer_packages() {
  ((with_viewers)) || return 0
  local dir
  dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/tests/viewers"
  [[ -d "$dir/node_modules/playwright-core" && -d "$dir/node_modules/speedscope" ]] && return 0
  echo "install-deps.sh: npm ci in $dir"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
}

if ! ((${#missing[@]})); then
  install_viewer_packages
  exit 0
fi

as_root=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "install-deps.sh: missing packages ${missing[*]}; run as root (no sudo here)" >&2
    exit 1
  fi
fi

echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
install_viewer_packages
