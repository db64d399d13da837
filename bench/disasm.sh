#!/usr/bin/env bash
# Show the machine code of one PROF_SCOPE and count the instructions on its hot path (entry + exit).
#
#   bench/disasm.sh [extra compiler flags...]        e.g. bench/disasm.sh -march=native
#   CXX=clang++ bench/disasm.sh
#
# A tiny program with one PROF_SCOPE in a noinline function (body: a compiler barrier, no instructions) is
# built at -O2, once with SCOPEPROF_WITH_NVTX=0 and once with NVTX on (when the NVTX3 headers are found),
# and the function is disassembled. The hot path is counted by running the program under gdb and
# single-stepping one steady-state call (the third; the first registers the site), from the function's
# first instruction to its return: the instructions executed in the function itself are marked '>' in the
# listing and counted, those executed in callees (NVTX with no tool attached calls none) are counted
# apart. Without gdb the count is static: the fall-through path from entry to `ret` (the compiler lays the
# likely path out as fall-through; the cold paths are the jumps away from it), which may count an
# instruction or two that a run skips (SCOPEPROF_DISASM_STATIC=1 forces it). An empty noinline function
# is 1 instruction (ret).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")
cxx=${CXX:-g++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/one_scope.cpp" <<'EOF'
#include <scopeprof.hpp>
extern "C" __attribute__((noinline)) void scopeprof_disasm_one_scope() {
  PROF_SCOPE("disasm.scope");
  asm volatile("" ::: "memory");
}
int main() {
  for (int i = 0; i < 4; ++i) scopeprof_disasm_one_scope();
  return 0;
}
EOF

cat >"$work/step.py" <<'EOF'
# gdb script: single-step the third call of scopeprof_disasm_one_scope; print the pcs executed.
import gdb
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("break *scopeprof_disasm_one_scope", to_string=True)
gdb.execute("run", to_string=True)
for _ in range(2):
    gdb.execute("continue", to_string=True)
lo = int(gdb.parse_and_eval("(unsigned long)&scopeprof_disasm_one_scope"))
ret = int(gdb.parse_and_eval("*(unsigned long*)$sp"))
pcs = []
while len(pcs) < 100000:
    pc = int(gdb.parse_and_eval("$pc"))
    if pc == ret:
        break
    pcs.append(pc - lo)
    gdb.execute("stepi", to_string=True)
print("STEPPED " + " ".join("%x" % p for p in pcs))
gdb.execute("kill", to_string=True)
EOF

cat >"$work/count.py" <<'EOF'
# count.py LISTING FUNC_START [STEPPED_FILE]: mark and count the hot path of the disassembled function.
import re, sys
listing, start = open(sys.argv[1]).read().splitlines(), int(sys.argv[2], 16)
insns = []  # (offset, text, mnemonic, operands)
for line in listing:
    m = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
    if m:
        insns.append((int(m.group(1), 16) - start, line, m.group(2), m.group(3)))
offsets = {o: i for i, (o, *_rest) in enumerate(insns)}
hot, outside, method = [], 0, ""
if len(sys.argv) > 3:
    text = open(sys.argv[3]).read()
    m = re.search(r"^STEPPED (.*)$", text, re.M)
    if m:
        method = "executed, gdb single-step of one steady-state call"
        for tok in m.group(1).split():
            off = int(tok, 16)
            if off in offsets:
                hot.append(off)
            else:
                outside += 1
if not method:
    method = "static: fall-through path from entry to ret"
    i, seen = 0, set()
    while 0 <= i < len(insns) and i not in seen:
        seen.add(i)
        off, _, mn, ops = insns[i]
        hot.append(off)
        if mn.startswith("ret"):
            break
        if mn == "jmp":
            t = re.match(r"([0-9a-f]+)\s", ops + " ")
            dest = int(t.group(1), 16) - start if t else None
            if dest is None or dest not in offsets:
                break  # tail call
            i = offsets[dest]
            continue
        i += 1
hot_set = set(hot)
for off, line, *_ in insns:
    print(("> " if off in hot_set else "  ") + line.strip())
print()
print("hot path (%s): %d instructions in the function" % (method, len(hot))
      + (", %d more in callees" % outside if method.startswith("executed") else ""))
EOF

nvtx_inc=""
for d in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda /usr; do
  if [[ -n "$d" && -f "$d/include/nvtx3/nvToolsExt.h" ]]; then nvtx_inc="$d/include"; break; fi
done

variants=("host:-DSCOPEPROF_WITH_NVTX=0")
if [[ -n "$nvtx_inc" ]]; then
  variants+=("nvtx:-DSCOPEPROF_WITH_NVTX=1 -I$nvtx_inc")
else
  echo "(NVTX3 headers not found: only the host-only variant)"
fi

have_gdb=0
[[ -z "${SCOPEPROF_DISASM_STATIC:-}" ]] && command -v gdb >/dev/null 2>&1 && have_gdb=1

for v in "${variants[@]}"; do
  name=${v%%:*}
  defs=${v#*:}
  exe="$work/one_scope_$name"
  # shellcheck disable=SC2086
  "$cxx" -std=c++17 -O2 -DSCOPEPROF_WITH_CUDA=0 $defs -I"$root/include" "$@" "$work/one_scope.cpp" \
    -o "$exe" -pthread -ldl
  echo "==== PROF_SCOPE, $name ($cxx -O2 $defs $*) ===="
  objdump -d --no-show-raw-insn -C --disassemble=scopeprof_disasm_one_scope "$exe" |
    sed -n '/<scopeprof_disasm_one_scope>:/,$p' | grep -E '^\s+[0-9a-f]+:' >"$work/listing_$name"
  start=$(nm "$exe" | awk '$3 == "scopeprof_disasm_one_scope" {print $1}')
  stepped=()
  if [[ $have_gdb == 1 ]]; then
    if env -u NVTX_INJECTION64_PATH -u SCOPEPROF_REPORT gdb -q -batch -x "$work/step.py" "$exe" \
        >"$work/gdb_$name" 2>&1 && grep -q '^STEPPED ' "$work/gdb_$name"; then
      stepped=("$work/gdb_$name")
    else
      echo "(gdb could not step the program; static count instead)"
    fi
  fi
  python3 "$work/count.py" "$work/listing_$name" "$start" "${stepped[@]}"
  cold=$(nm "$exe" | awk '$3 ~ /^scopeprof_disasm_one_scope\./ {print $3}')
  for c in $cold; do
    echo "-- $c (cold part, not counted) --"
    objdump -d --no-show-raw-insn -C --disassemble="$c" "$exe" | grep -E '^\s+[0-9a-f]+:'
  done
  echo
done
