#!/usr/bin/env python3
"""Check that every CMake target the scripts build or run is defined by a CMakeLists.txt of the repository.

    tools/check-tool-targets.py               check tools/*.sh and .ci/run
    tools/check-tool-targets.py FILE...       check these scripts
    tools/check-tool-targets.py --self-test   check that misspelt names in a scratch script are caught

A script names a target in two ways: after `--target` (`cmake --build "$b" --target a b c`), and as a
program under a build directory (`"$b/tests/gpu/scopeprof_gpu_tests"`). The first must be defined by some
CMakeLists.txt; the second by the CMakeLists.txt of the matching source directory (tests/gpu/), where its
binary lands. A build directory is a variable whose assignment mentions "build" (b=$root/build-gpu).
`$var` inside a name is replaced by each literal value the script assigns to var; a name with a variable
the script never assigns a literal to (a loop over `cmake --build --target help`) is listed, not checked.
The CMake side is read, not run: add_executable/add_library/add_custom_target, with ${var} resolved from
set() in the same file and from the arguments of calls to the function that defines the target.
Standard library only; exits 1 when a name is not defined.
"""
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SKIP_DIRS = {".git", ".deps", "__pycache__"}
BUILTIN_TARGETS = {"all", "clean", "help", "install", "test", "rebuild_cache", "edit_cache", "list_install_components"}
GENERATED_FILES = {"Makefile", "build.ninja"}

# ---- CMake side ------------------------------------------------------------------------------------------


def strip_cmake_comments(text):
    return "\n".join(re.sub(r'#(?![^"]*"[^"]*$).*', "", line) for line in text.splitlines())


def cmake_calls(text):
    """(command, [args], offset) for every command call; arguments split on whitespace, quotes removed."""
    calls = []
    for m in re.finditer(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        args = [a.strip('"') for a in re.findall(r'"[^"]*"|[^\s()]+', text[m.end():i - 1])]
        calls.append((m.group(1).lower(), args, m.start()))
    return calls


def resolve_cmake(word, sets, params):
    """Literal values a ${var} word can take, or [] when unknown."""
    m = re.fullmatch(r"(.*)\$\{([A-Za-z0-9_]+)\}(.*)", word)
    if not m:
        return [word]
    values = sets.get(m.group(2), []) + params.get(m.group(2), [])
    out = []
    for v in values:
        out += resolve_cmake(m.group(1) + v + m.group(3), sets, params)
    return out


def cmake_targets(root):
    """{target name: set of source directories (relative) whose CMakeLists.txt defines it}."""
    defined = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.startswith("build")]
        if "CMakeLists.txt" not in filenames:
            continue
        rel = os.path.relpath(dirpath, root)
        rel = "" if rel == "." else rel
        with open(os.path.join(dirpath, "CMakeLists.txt"), encoding="utf-8") as f:
            text = strip_cmake_comments(f.read())
        calls = cmake_calls(text)
        sets = {}
        for cmd, args, _ in calls:
            if cmd == "set" and len(args) >= 2:
                sets.setdefault(args[0], []).extend(a for a in args[1:] if a not in ("PARENT_SCOPE", "CACHE"))
        # function(name p1 p2 ...) ... endfunction(): the literal arguments its callers pass for each p.
        functions = []
        for m in re.finditer(r"\bfunction\s*\(\s*([A-Za-z0-9_]+)([^)]*)\)(.*?)\bendfunction\b", text, re.S | re.I):
            functions.append((m.group(1).lower(), m.group(2).split(), m.start(), m.end()))
        for cmd, args, offset in calls:
            if cmd not in ("add_executable", "add_library", "add_custom_target") or not args:
                continue
            params = {}
            for fname, fparams, start, end in functions:
                if start <= offset < end:
                    for ccmd, cargs, _ in calls:
                        if ccmd == fname:
                            for i, p in enumerate(fparams):
                                if i < len(cargs):
                                    params.setdefault(p, []).append(cargs[i])
            for name in resolve_cmake(args[0], sets, params):
                if "$" not in name:
                    defined.setdefault(name, set()).add(rel)
        # A program named apart from its target (set_target_properties(T PROPERTIES OUTPUT_NAME name)).
        for cmd, args, _ in calls:
            if cmd == "set_target_properties" and "OUTPUT_NAME" in args[:-1]:
                defined.setdefault(args[args.index("OUTPUT_NAME") + 1], set()).add(rel)
    return defined


# ---- script side -----------------------------------------------------------------------------------------


def logical_lines(text):
    """(first line number, text) with backslash continuations joined and comments removed."""
    out, start, pending = [], 1, ""
    for number, line in enumerate(text.splitlines(), 1):
        if not pending:
            start = number
        line = re.sub(r"(^|\s)#.*$", "", line)
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        out.append((start, pending + line))
        pending = ""
    if pending:
        out.append((start, pending))
    return out


def assignments(lines):
    """{var: [literal values]} from var=value, local var=value, export var=value."""
    values = {}
    for _, line in lines:
        for m in re.finditer(r"(?:^|[\s;(])(?:local\s+|export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(\"[^\"]*\"|'[^']*'|\S*)", line):
            values.setdefault(m.group(1), []).append(m.group(2).strip("\"'"))
    return values


def expand(word, values, seen=()):
    """All literal spellings of a word with $var / ${var}; None when a variable has no literal value."""
    m = re.search(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", word)
    if not m:
        return [word]
    var = m.group(1)
    if var in seen or not values.get(var):
        return None
    out = []
    for v in values[var]:
        if "$(" in v or "`" in v:
            return None
        more = expand(word[:m.start()] + v + word[m.end():], values, seen + (var,))
        if more is None:
            return None
        out += more
    return out


def script_names(path):
    """([(line number, target, kind, expected source dir or None)], [(line number, unresolved word)])."""
    with open(path, encoding="utf-8") as f:
        lines = logical_lines(f.read())
    values = assignments(lines)
    build_vars = {v for v, vals in values.items() if any("build" in x.lower() for x in vals)}
    names, unresolved = [], []
    for number, line in lines:
        for m in re.finditer(r"--target\s+(.*)", line):
            for word in m.group(1).split():
                end = re.search(r"[;&|()<>]", word)  # a shell operator ends the list
                if word.startswith("-") or re.match(r"^\d*>", word):
                    break
                word = word[:end.start()] if end else word
                if not re.fullmatch(r"[\w.+${}\"'-]*", word):  # e.g. [[ $a == --target ]]: not a list
                    break
                word = word.strip("\"'")
                targets = expand(word, values) if word else []
                if targets is None:
                    unresolved.append((number, word))
                else:
                    names += [(number, t, "--target", None) for t in targets if t not in BUILTIN_TARGETS]
                if end:
                    break
        for m in re.finditer(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/([A-Za-z0-9_./${}+-]+)", line):
            if m.group(1) not in build_vars:
                continue
            for rest in expand(m.group(2), values) or []:
                parts = rest.split("/")
                subdir, name = "/".join(parts[:-1]), parts[-1]
                # Only programs: a path into a source directory with a CMakeLists.txt, no build files.
                if (not name or "." in name or "CMakeFiles" in parts or name in GENERATED_FILES
                        or not os.path.isfile(os.path.join(ROOT, subdir, "CMakeLists.txt"))
                        or os.path.isdir(os.path.join(ROOT, rest))):
                    continue
                names.append((number, name, "program", subdir))
            if expand(m.group(2), values) is None:
                unresolved.append((number, m.group(0)))
    return names, unresolved


def check(scripts, root=ROOT, out=sys.stdout):
    defined = cmake_targets(root)
    problems = 0
    for path in scripts:
        names, unresolved = script_names(path)
        rel = os.path.relpath(path, root)
        for number, name, kind, subdir in names:
            where = defined.get(name)
            if not where:
                print(f"{rel}:{number}: {kind} '{name}' is not defined by any CMakeLists.txt", file=out)
                problems += 1
            elif subdir is not None and subdir not in where:
                print(f"{rel}:{number}: program '{subdir}/{name}' is defined in "
                      f"{', '.join(sorted(w or '.' for w in where))}/CMakeLists.txt, not {subdir}/CMakeLists.txt "
                      "(its binary is not where the script runs it)", file=out)
                problems += 1
        checked = sorted({n for _, n, _, _ in names})
        print(f"{rel}: {len(checked)} target names checked" + (f" ({', '.join(checked)})" if checked else ""), file=out)
        for number, word in unresolved:
            print(f"{rel}:{number}: '{word}' is computed at run time: not checked", file=out)
    return problems


def self_test():
    """A scratch script naming real targets, then misspelt ones: only the misspelt ones may be reported."""
    body = ('b=$root/build-gpu\n'
            'cmake --build "$b" -j16 --target scopeprof_gpu_tests {t1} \\\n  quickstart\n'
            '"$b/bench/{t2}" --flag\n'
            '"$b/tests/gpu/{t3}"\n')
    good = body.format(t1="scopeprof_bench", t2="scopeprof_bench_device", t3="scopeprof_gpu_fault")
    bad = body.format(t1="scopeprof_bench_hots", t2="scopeprof_bench_devise", t3="scopeprof_bench_device")
    with tempfile.TemporaryDirectory() as tmp:
        import io
        results = []
        for name, text in (("good.sh", good), ("bad.sh", bad)):
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            report = io.StringIO()
            results.append((check([path], out=report), report.getvalue()))
    (good_problems, good_report), (bad_problems, bad_report) = results
    failures = []
    if good_problems:
        failures.append("correct names were reported:\n" + good_report)
    for expected in ("'scopeprof_bench_hots' is not defined", "'scopeprof_bench_devise' is not defined",
                     "'tests/gpu/scopeprof_bench_device' is defined in bench/CMakeLists.txt"):
        if expected not in bad_report:
            failures.append(f"not reported: {expected}\n" + bad_report)
    if bad_problems != 3:
        failures.append(f"{bad_problems} problems reported, 3 expected:\n" + bad_report)
    if failures:
        print("self-test FAILED:\n" + "\n".join(failures))
        return 1
    print("self-test passed: 3 misspelt or misplaced names reported, none of the correct ones")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if any(a.startswith("-") for a in argv[1:]):
        print(__doc__)
        return 2
    scripts = argv[1:] or sorted(
        [os.path.join(ROOT, "tools", f) for f in os.listdir(os.path.join(ROOT, "tools")) if f.endswith(".sh")]
        + [os.path.join(ROOT, ".ci", "run")])
    problems = check(scripts)
    if problems:
        print(f"{problems} target name(s) not defined where the scripts expect them")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
