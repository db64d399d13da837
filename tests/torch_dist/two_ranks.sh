#!/usr/bin/env bash
# Two LibTorch ranks over c10d gloo (CPU), each writing its report, then `scopeprof merge` (the part of the
# two-GPU issue a machine without GPUs can run): rank 1's compute is 3x slower, so the merge must name rank 1
# the straggler of step/compute and rank 0 the straggler of step/all_reduce (its all_reduce holds the wait
# for rank 1), while whole steps take the same time on both ranks.
#   two_ranks.sh WORKER TOOL DIR
# Exits 0 when every check holds; otherwise prints what failed and exits 1.
set -uo pipefail
worker=$1 tool=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir"
pids=()
for r in 0 1; do
  RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r SCOPEPROF_REPORT="$dir/run.{rank}.json" \
    timeout 120 "$worker" "$dir/store" --steps 20 --slow-rank 1 --factor 3 --compute-us 2000 >"$dir/rank$r.log" 2>&1 &
  pids+=($!)
done
status=0
for p in "${pids[@]}"; do wait "$p" || status=1; done
if ((status)); then
  echo "FAIL: a rank exited non-zero"; cat "$dir"/rank*.log; exit 1
fi
"$tool" merge "$dir"/run.*.json -o "$dir/merged.json" || { echo "FAIL: merge exited $?"; exit 1; }
"$tool" merge "$dir"/run.*.json
python3 - "$dir/merged.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
nodes = {"/".join(n["path"]): n for n in doc["nodes"]}
failures = []
def host(path):
    n = nodes.get(path)
    if n is None:
        failures.append(f"no node {path}")
        return None
    return n["host_total"]
c, a, s = host("step/compute"), host("step/all_reduce"), host("step")
if c and (c["straggler"] != 1 or c["imbalance"] < 1.3):
    failures.append(f"step/compute: straggler {c['straggler']}, imbalance {c['imbalance']:.2f} (want rank 1, > 1.3)")
if a and a["straggler"] != 0:
    failures.append(f"step/all_reduce: straggler {a['straggler']} (want rank 0, which waits for rank 1)")
if c and a:
    waited = a["per_rank"][0] - a["per_rank"][1]
    slower = c["per_rank"][1] - c["per_rank"][0]
    print(f"rank 1's compute is {slower / 1e6:.1f} ms longer; rank 0's all_reduce {waited / 1e6:.1f} ms longer")
    if waited < 0.5 * slower:
        failures.append("rank 0's all_reduce does not hold its wait for rank 1")
if s and s["imbalance"] > 1.2:
    failures.append(f"step: imbalance {s['imbalance']:.2f}; the collective should even the steps out")
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
PY
