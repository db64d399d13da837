#!/usr/bin/env python3
"""Compile time of one instrumented translation unit, per scopeprof mode, against nvtx3.hpp.

Each TU is a function with one range or scope, compiled with `c++ -std=c++17 -O2 -c`:
  plain        no instrumentation (the floor)
  nvtx3        #include <nvtx3/nvtx3.hpp> and NVTX3_FUNC_RANGE() (the baseline)
  external     #include <scopeprof.hpp> with SCOPEPROF_EXTERNAL_IMPLEMENTATION and PROF_SCOPE (what the
               CMake target scopeprof::scopeprof gives its users)
  external+cuda   the same with SCOPEPROF_WITH_CUDA=1 (the CUDA runtime headers)
  header-only  #include <scopeprof.hpp> and PROF_SCOPE, no macro (the plain-include default)
  implementation  the TU that defines SCOPEPROF_IMPLEMENTATION (compiled once per program)
Every variant is compiled --repeat times, interleaved, and the median is reported with the object's text
size. The goal: external <= 2x nvtx3. The script prints MISSED when it is not met and exits 0 either way
(it is a benchmark), unless --require is given.

    python3 bench/compile_time.py [--cxx c++] [--repeat 5] [--require]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL = 2.0

BODY_SCOPE = "int work(int x) {\n  PROF_SCOPE(\"work\");\n  return x * 2;\n}\n"
VARIANTS = [
    ("plain", "", "int work(int x) { return x * 2; }\n"),
    ("nvtx3", "", "#include <nvtx3/nvtx3.hpp>\nint work(int x) {\n  NVTX3_FUNC_RANGE();\n  return x * 2;\n}\n"),
    ("external", "", "#define SCOPEPROF_EXTERNAL_IMPLEMENTATION\n#include <scopeprof.hpp>\n" + BODY_SCOPE),
    ("external+cuda", "cuda", "#define SCOPEPROF_EXTERNAL_IMPLEMENTATION\n#define SCOPEPROF_WITH_CUDA 1\n"
     "#include <scopeprof.hpp>\n" + BODY_SCOPE),
    ("header-only", "", "#include <scopeprof.hpp>\n" + BODY_SCOPE),
    ("implementation", "", "#define SCOPEPROF_IMPLEMENTATION\n#include <scopeprof.hpp>\n"),
]


def cuda_include():
    """The CUDA toolkit's include directory (NVTX3 and the runtime headers), or None."""
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(str(Path(nvcc).resolve().parent.parent))
    for c in candidates:
        if c and (Path(c) / "include" / "nvtx3" / "nvtx3.hpp").is_file():
            return str(Path(c) / "include")
    return None


def text_size(obj):
    size = shutil.which("size")
    if not size:
        return None
    out = subprocess.run([size, obj], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    lines = out.stdout.strip().splitlines()
    return int(lines[-1].split()[0]) if len(lines) >= 2 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--require", action="store_true", help="exit 1 when the goal is missed")
    args = ap.parse_args()

    cuda_inc = cuda_include()
    include = ["-I", str(ROOT / "include")]
    if cuda_inc:
        include += ["-isystem", cuda_inc]
    runnable = [v for v in VARIANTS if cuda_inc or (v[0] != "nvtx3" and v[1] != "cuda")]
    if not cuda_inc:
        print("compile_time: the CUDA toolkit's headers (nvtx3.hpp) were not found: no nvtx3 baseline, "
              "no CUDA variant; ratios are against the plain TU")

    times = {name: [] for name, _, _ in runnable}
    sizes = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, _, source in runnable:
            Path(tmp, name + ".cpp").write_text(source)
        for _ in range(args.repeat):
            for name, _, _ in runnable:
                src, obj = str(Path(tmp, name + ".cpp")), str(Path(tmp, name + ".o"))
                cmd = [args.cxx, "-std=c++17", "-O2", "-c", *include, src, "-o", obj]
                start = time.perf_counter()
                res = subprocess.run(cmd, capture_output=True, text=True)
                times[name].append(time.perf_counter() - start)
                if res.returncode != 0:
                    print(f"compile_time: {name} failed to compile:\n{' '.join(cmd)}\n{res.stderr}", file=sys.stderr)
                    return 2
                sizes[name] = text_size(obj)

    base = "nvtx3" if "nvtx3" in times else "plain"
    med = {k: statistics.median(v) for k, v in times.items()}
    version = subprocess.run([args.cxx, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    print(f"compile time of one instrumented TU ({version}, -std=c++17 -O2 -c, median of {args.repeat}):")
    print(f"{'variant':<16} {'seconds':>8} {'text bytes':>11} {'vs ' + base:>9}")
    for name, _, _ in runnable:
        size = sizes.get(name)
        print(f"{name:<16} {med[name]:8.3f} {size if size is not None else 'n/a':>11} {med[name] / med[base]:8.2f}x")
    ratio = med["external"] / med[base]
    met = ratio <= GOAL
    print(f"external mode: {ratio:.2f}x {base} (goal <= {GOAL:.1f}x): {'met' if met else 'MISSED'}; "
          f"header-only: {med['header-only'] / med[base]:.2f}x")
    return 0 if met or not args.require else 1


if __name__ == "__main__":
    sys.exit(main())
