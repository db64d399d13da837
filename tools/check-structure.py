#!/usr/bin/env python3
"""Hold the structure of include/: the layering of the headers, and their size.

Every header under include/ belongs to one layer (LAYERS below, by path). A header may include only the
layers its own layer lists in MAY_INCLUDE. A header that no layer claims is an error, so a new file must
be placed deliberately. The second check: no header has more than MAX_LINES lines, unless LONG_FILES names
it with the reason. The third: no function body has more than MAX_FUNCTION_LINES lines (from the line of
its opening brace to that of its closing one), unless LONG_FUNCTIONS names it with the reason.

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
              "scopeprof/detail/env.hpp", "scopeprof/detail/call_path_fold.hpp", "scopeprof/detail/running_stats.hpp",
              "scopeprof/detail/log_histogram.hpp", "scopeprof/detail/distribution.hpp",
              "scopeprof/declared_work.hpp"]),
    ("model", ["scopeprof/report_types.hpp", "scopeprof/report.hpp", "scopeprof/detail/raw_snapshot.hpp",
               "scopeprof/work_rate.hpp", "scopeprof/device_peak.hpp"]),
    ("hot", ["scopeprof/detail/recorder.hpp", "scopeprof/detail/chunked_log.hpp", "scopeprof/detail/scope_hooks.hpp",
             "scopeprof/backends/nvtx_hook.hpp", "scopeprof/backends/nvtx.hpp", "scopeprof/backends/torch.hpp",
             "scopeprof/backends/cuda_events.hpp", "scopeprof/backends/cupti.hpp", "scopeprof/scope.hpp",
             "scopeprof/macros.hpp", "scopeprof/detail/work_mark.hpp"]),
    ("api", ["scopeprof/runtime.hpp"]),
    ("backend", ["scopeprof/backends/backend_hooks.hpp", "scopeprof/backends/backend_list.hpp",
                 "scopeprof/backends/cuda_collect.hpp", "scopeprof/backends/cuda_driver.hpp", "scopeprof/backends/cuda_device.hpp",
                 "scopeprof/backends/cuda_resolve.hpp", "scopeprof/backends/cupti/*.hpp",
                 "scopeprof/detail/activity.hpp", "scopeprof/detail/chunk_pool.hpp", "scopeprof/detail/snapshot.hpp",
                 "scopeprof/detail/timeline.hpp", "scopeprof/detail/drain.hpp", "scopeprof/detail/device_fold.hpp",
                 "scopeprof/detail/intervals.hpp", "scopeprof/detail/work_match.hpp"]),
    ("builder", ["scopeprof/detail/report_builder.hpp", "scopeprof/detail/report/*.hpp",
                 "scopeprof/detail/process_identity.hpp"]),
    ("serializer", ["scopeprof/format/*.hpp", "scopeprof/detail/sink.hpp", "scopeprof/detail/gzip_sink.hpp",
                    "scopeprof/detail/key_averages.hpp", "scopeprof/detail/trace_meta.hpp",
                    "scopeprof/detail/trace_launches.hpp", "scopeprof/detail/trace_steps.hpp",
                    "scopeprof/detail/process_text.hpp", "scopeprof/detail/output_path.hpp"]),
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
    "builder": {"base", "model", "builder"},
    "serializer": {"base", "model", "serializer"},
    "impl": {"base", "model", "hot", "api", "backend", "builder", "serializer", "impl"},
    "addon": {"base", "model", "hot", "api", "backend", "builder", "serializer"},
    "umbrella": {"base", "model", "hot", "api", "impl-entry"},
}
# Narrower classes some layers may use without the whole layer.
SPECIAL = {
    "scopeprof/detail/raw_snapshot.hpp": "raw",          # backends fill it
    "scopeprof/report_types.hpp": "raw",                 # ... with these value types
    "scopeprof/device_peak.hpp": "raw",
    "scopeprof/impl/implementation.hpp": "impl-entry",   # the umbrella's one way in
}

# Headers allowed past MAX_LINES, and why.
LONG_FILES = {}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s*[<"]((?:scopeprof/)?[^>"]+\.hpp)[>"]', re.M)

# The third check: no function body in include/ passes MAX_FUNCTION_LINES lines, counted from the line
# of its opening brace to the line of its closing brace.
MAX_FUNCTION_LINES = 80
# Functions allowed past MAX_FUNCTION_LINES, and why: name as the check reports it (class-qualified for a
# member defined in its class, text_table::print) -> reason.
LONG_FUNCTIONS = {}

# Heuristic brace matching over the code with comments, literals and preprocessor lines blanked: a brace
# opens a function body when the text before it (since the last ';', '{' or '}' at that level) ends in a
# parameter list with its qualifiers, or in a constructor's member initialisers. Namespaces, classes,
# structs, unions and enums are scanned inside; initialiser braces and lambdas outside a function are not.
_CONTAINER_RE = re.compile(r'^(?:template\s*<.*>\s*)?(?:typedef\s+|inline\s+)?'
                           r'(?:namespace|class|struct|union|enum|extern\s*"[^"]*")(?!\w)', re.S)
_LEAD_RE = re.compile(r'^\s*(?:(?:public|private|protected)\s*:(?!:)\s*|[A-Z][A-Z0-9_]*\b(?!\s*\()\s*)+')
_CONTROL_RE = re.compile(r'^(?:if|for|while|switch|catch|do|else|try)\b')
_TRAILING_RE = re.compile(r'(?:\s+|\bconst\b|\bvolatile\b|\boverride\b|\bfinal\b|\bmutable\b|&&?|'
                          r'\bnoexcept\s*\([^()]*\)|\bnoexcept\b|->\s*[\w:<>,*&\s]+)$')
_NAME_RE = re.compile(r'((?:[A-Za-z_]\w*\s*::\s*)*~?\s*(?:operator\s*(?:\(\)|[^\w\s(]+|\w+)|[A-Za-z_]\w*))\s*$')
_CLASS_NAME_RE = re.compile(r'\b(?:class|struct|union)\s+(?:\w+\s+)*?([A-Za-z_]\w*)\s*(?:final\b)?\s*(?::[^{]*)?$')


def _blank_code(text):
    """`text` with comments, string and character literals and preprocessor lines blanked, lines kept."""
    out, i, n, line_start = [], 0, len(text), True
    while i < n:
        c = text[i]
        if line_start and c in " \t":
            out.append(c)
            i += 1
            continue
        if line_start and c == "#":  # a directive, with its continuation lines
            while i < n and text[i] != "\n":
                step = 2 if text.startswith("\\\n", i) else 1
                out.append(" \n" if step == 2 else " ")
                i += step
            continue
        line_start = c == "\n"
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif text.startswith('R"', i) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            d = text.find("(", i + 2)
            end = text.find(")" + text[i + 2:d] + '"', d)
            j = n if end < 0 else end + d - i
        elif c in "\"'":
            start = i
            while start and (text[start - 1].isalnum() or text[start - 1] in "'."):
                start -= 1
            if c == "'" and start < i and text[start].isdigit():  # a digit separator: 1'000
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
        else:
            out.append(c)
            i += 1
            continue
        blank = re.sub(r"[^\n]", " ", text[i:j])
        if c in "\"'R":  # a literal keeps its quotes: extern "C"
            blank = text[i] + blank[1:-1] + text[j - 1]
        out.append(blank)
        i = j
    return "".join(out)


def _closing_brace(code, i):
    depth = 0
    for j in range(i, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return -1


def _strip_trailing(head):
    """`head` without the qualifiers after a parameter list (const, noexcept, override, -> type...)."""
    prev = None
    while prev != head:
        prev, head = head, _TRAILING_RE.sub("", head).rstrip()
    return head


def _function_name(head):
    """The name of the function whose body follows `head`, or None when the brace opens no function."""
    head = _LEAD_RE.sub("", head).strip()
    if not head or _CONTROL_RE.match(head) or _CONTAINER_RE.match(head):
        return None
    depth = 0
    for k, c in enumerate(head):  # a constructor's member initialisers: cut at the ':' after the parameters
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(c, 0)
        if (c == ":" and depth == 0 and head[k - 1:k] != ":" and head[k + 1:k + 2] != ":"
                and _strip_trailing(head[:k]).endswith(")")):
            if not head[k + 1:].rstrip().endswith((")", "}")):  # a member's brace initialiser
                return None
            head = head[:k]
            break
    head = _strip_trailing(head)
    if not head.endswith(")"):
        return None
    depth, k = 0, len(head) - 1
    for k in range(len(head) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(head[k], 0)
        if depth == 0:
            break
    before = head[:k].rstrip()
    if before.endswith("]"):  # a lambda
        return None
    flat = re.sub(r"operator\s*\S+", "", before)
    while True:
        stripped = re.sub(r"\([^()]*\)|<[^<>]*>", "", flat)
        if stripped == flat:
            break
        flat = stripped
    if "=" in flat:  # an initialiser: a lambda, or a brace-initialised object
        return None
    m = _NAME_RE.search(before)
    if not m or m.group(1) in ("if", "for", "while", "switch", "catch", "return", "sizeof", "decltype", "alignas"):
        return None
    return re.sub(r"\s+", "", m.group(1))


def function_lengths(text):
    """(line of the opening brace, name, lines) of every function definition; then unmatched braces."""
    code = _blank_code(text)
    found, problems = [], []

    def line_of(pos):
        return code.count("\n", 0, pos) + 1

    def scan(lo, hi, scopes):
        i, head_start = lo, lo
        while i < hi:
            c = code[i]
            if c == ";" or c == "}":
                if c == "}":
                    problems.append(f"line {line_of(i)}: unmatched '}}'")
                head_start = i + 1
            elif c == "{":
                j = _closing_brace(code, i)
                if j < 0 or j >= hi:
                    problems.append(f"line {line_of(i)}: unmatched '{{'")
                    return
                head = code[head_start:i]
                if _CONTAINER_RE.match(_LEAD_RE.sub("", head).strip()):
                    m = _CLASS_NAME_RE.search(head)
                    scan(i + 1, j, scopes + ([m.group(1)] if m else []))
                    head_start = j + 1
                else:
                    name = _function_name(head)
                    if name is not None:
                        found.append((line_of(i), "::".join(scopes + [name]), line_of(j) - line_of(i) + 1))
                        head_start = j + 1
                    # else an initialiser brace: part of the statement, whose head goes on
                i = j
            i += 1

    scan(0, len(code), [])
    return found, problems


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
    long_seen = set()
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
        functions, unmatched = function_lengths(text)
        for problem in unmatched:
            errors.append(f"include/{rel}: {problem} (the function-length check cannot read this file)")
        for line, name, length in functions:
            if length <= MAX_FUNCTION_LINES:
                continue
            if name in LONG_FUNCTIONS:
                long_seen.add(name)
            else:
                errors.append(f"include/{rel}:{line} {name} {length} lines "
                              f"(more than {MAX_FUNCTION_LINES}: split it, or say why in LONG_FUNCTIONS)")
    for name in sorted(set(LONG_FUNCTIONS) - long_seen):
        print(f"note: LONG_FUNCTIONS names {name}, which is no longer long (or no longer there): remove the entry")
    for e in errors:
        print(e)
    print(f"check-structure: {len(headers)} headers, {len(errors)} violation(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
