#!/usr/bin/env python3
"""Hold the structure of include/: the layering of the headers, and their size.

Every header under include/ belongs to one layer (LAYERS below, by path). A header may include only the
layers its own layer lists in MAY_INCLUDE. A header that no layer claims is an error, so a new file must
be placed deliberately. The second check: no header has more than MAX_LINES lines, unless LONG_FILES names
it with the reason.

    python3 tools/check-structure.py            # exit 1 on any violation, with one line per violation
    python3 tools/check-structure.py --print    # the layer of every header, then the checks

docs/design.md draws the same map.
"""

import argparse
import fnmatch
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = ROOT / "include"
MAX_LINES = 500

# (layer, patterns relative to include/), first match wins.
LAYERS = [
    ("umbrella", ["scopeprof.hpp"]),
    ("base", ["scopeprof/version.hpp", "scopeprof/config.hpp", "scopeprof/clock.hpp", "scopeprof/detail/log.hpp",
              "scopeprof/detail/text.hpp", "scopeprof/detail/bounded_ring.hpp", "scopeprof/detail/demangle.hpp",
              "scopeprof/detail/env.hpp"]),
    ("model", ["scopeprof/report_types.hpp", "scopeprof/report.hpp", "scopeprof/detail/raw_snapshot.hpp"]),
    ("hot", ["scopeprof/detail/recorder.hpp", "scopeprof/backends/nvtx.hpp", "scopeprof/backends/torch.hpp",
             "scopeprof/backends/cuda_events.hpp", "scopeprof/backends/cupti.hpp", "scopeprof/scope.hpp",
             "scopeprof/macros.hpp"]),
    ("api", ["scopeprof/runtime.hpp"]),
    ("backend", ["scopeprof/backends/cuda_driver.hpp", "scopeprof/backends/cuda_device.hpp",
                 "scopeprof/backends/cuda_resolve.hpp", "scopeprof/backends/cupti/*.hpp",
                 "scopeprof/detail/activity.hpp", "scopeprof/detail/chunk_pool.hpp", "scopeprof/detail/snapshot.hpp"]),
    ("builder", ["scopeprof/detail/report_builder.hpp"]),
    ("serializer", ["scopeprof/format/*.hpp", "scopeprof/detail/sink.hpp", "scopeprof/detail/key_averages.hpp"]),
    ("impl", ["scopeprof/impl/*.hpp"]),
    ("addon", ["scopeprof/torch_session.hpp"]),
]

# What each layer may include. The model never sees the recorder or a backend; backends hand data over
# as a raw snapshot and never see the report class, a builder or a serializer; serializers read the
# report only; only the umbrella and impl/ reach the cold definitions.
MAY_INCLUDE = {
    "base": {"base"},
    "model": {"base", "model"},
    "hot": {"base", "hot"},
    "api": {"base", "model"},
    "backend": {"base", "hot", "backend", "raw"},
    "builder": {"base", "model"},
    "serializer": {"base", "model", "serializer"},
    "impl": {"base", "model", "hot", "api", "backend", "builder", "serializer", "impl"},
    "addon": {"base", "model", "hot", "api", "backend", "builder", "serializer"},
    "umbrella": {"base", "model", "hot", "api", "impl-entry"},
}
# Narrower classes some layers may use without the whole layer.
SPECIAL = {
    "scopeprof/detail/raw_snapshot.hpp": "raw",          # backends fill it
    "scopeprof/report_types.hpp": "raw",                 # ... with these value types
    "scopeprof/impl/implementation.hpp": "impl-entry",   # the umbrella's one way in
}

# Headers allowed past MAX_LINES, and why.
LONG_FILES = {}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]((?:scopeprof/)?[^>"]+\.hpp)[>"]', re.M)


def layer_of(rel):
    for layer, patterns in LAYERS:
        if any(fnmatch.fnmatchcase(rel, p) for p in patterns):
            return layer
    return None


def allowed(from_layer, to_rel):
    may = MAY_INCLUDE[from_layer]
    to_layer = layer_of(to_rel)
    if to_layer in may:
        return True
    return SPECIAL.get(to_rel) in may


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--print", action="store_true", help="print the layer of every header")
    args = ap.parse_args()

    headers = sorted(p.relative_to(INCLUDE).as_posix() for p in INCLUDE.rglob("*.hpp"))
    errors = []
    for rel in headers:
        layer = layer_of(rel)
        text = (INCLUDE / rel).read_text(encoding="utf-8")
        lines = text.count("\n")
        if args.print:
            print(f"{layer or '?':<11} {lines:5d}  {rel}")
        if layer is None:
            errors.append(f"include/{rel}: belongs to no layer (add it to LAYERS in tools/check-structure.py)")
            continue
        for m in INCLUDE_RE.finditer(text):
            target = m.group(1)
            if not target.startswith("scopeprof") or target == "scopeprof.hpp" and rel != "scopeprof.hpp":
                if target == "scopeprof.hpp":
                    errors.append(f"include/{rel}: includes the umbrella <scopeprof.hpp>")
                continue
            if layer_of(target) is None and not (INCLUDE / target).is_file():
                errors.append(f"include/{rel}: includes <{target}>, which does not exist")
                continue
            if not allowed(layer, target):
                errors.append(f"include/{rel} ({layer}) includes <{target}> ({layer_of(target)}): "
                              f"a {layer} header may include only {', '.join(sorted(MAY_INCLUDE[layer]))}")
        if lines > MAX_LINES and rel not in LONG_FILES:
            errors.append(f"include/{rel}: {lines} lines (more than {MAX_LINES}: split it, or say why in LONG_FILES)")
    for e in errors:
        print(e)
    print(f"check-structure: {len(headers)} headers, {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
