#!/usr/bin/env bash
# The launcher tests: real multi-rank runs of rank_worker, merged and compared by the scopeprof tool.
#
#   launchers.sh mpirun  WORKER TOOL DIR   Open MPI's mpirun -np 4 --oversubscribe, rank 2 three times slower:
#                                          four reports (templated and untemplated paths), and the merge
#                                          names rank 2 the straggler of every scope
#   launchers.sh torchrun WORKER TOOL DIR  four processes with the environment torchrun gives its workers
#                                          (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR...);
#                                          then four writing Chrome traces, merged into one trace
#   launchers.sh diff    WORKER TOOL DIR   two runs of one program, and a third whose backward is 20% slower:
#                                          diff --fail-above 5% exits 0 on the first pair, 1 on the second
# Exits 0 when every check holds; otherwise prints what failed and exits 1.
set -uo pipefail
mode=$1 worker=$2 tool=$3 dir=$4
rm -rf "$dir" && mkdir -p "$dir"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect_file() { [[ -s $1 ]] || fail "no report $1"; }

# Checks that the merged JSON $1 names rank $2 the straggler of scope path $3 ("step/backward").
expect_straggler() {
  local merged=$1 rank=$2 path=$3
  python3 - "$merged" "$rank" "$path" <<'PY' || fail "merge of $1: rank $2 is not the straggler of $3"
import json, sys
doc = json.load(open(sys.argv[1]))
want_rank, want_path = int(sys.argv[2]), sys.argv[3].split("/")
for node in doc["nodes"]:
    if node["path"] == want_path:
        host = node["host_total"]
        print(f"{'/'.join(want_path)}: straggler {host['straggler']}, imbalance {host['imbalance']:.2f}")
        sys.exit(0 if host["straggler"] == want_rank and host["imbalance"] > 1.5 else 1)
print("no node", want_path)
sys.exit(1)
PY
}

case $mode in
  mpirun)
    root_flag=()
    [[ $(id -u) == 0 ]] && root_flag=(--allow-run-as-root)
    SCOPEPROF_REPORT="$dir/run.{rank}.json" mpirun "${root_flag[@]}" -np 4 --oversubscribe \
      -x SCOPEPROF_REPORT "$worker" --steps 20 --slow-rank 2 --factor 3 || fail "mpirun exited $?"
    for r in 0 1 2 3; do expect_file "$dir/run.$r.json"; done
    # A path without a template: each rank adds its own number, nothing is clobbered.
    SCOPEPROF_REPORT="$dir/plain.json" mpirun "${root_flag[@]}" -np 4 --oversubscribe \
      -x SCOPEPROF_REPORT "$worker" --steps 2 2>"$dir/plain.err" || fail "mpirun (plain path) exited $?"
    for r in 0 1 2 3; do expect_file "$dir/plain.rank$r.json"; done
    grep -q "rank" "$dir/plain.err" || fail "no warning about the shared path"
    "$tool" merge "$dir"/run.{0,1,2,3}.json -o "$dir/merged.json" || fail "merge exited $?"
    "$tool" merge "$dir"/run.{0,1,2,3}.json --width 100 || fail "merge (text) exited $?"
    for p in step step/forward step/backward step/sync; do expect_straggler "$dir/merged.json" 2 "$p"; done
    ;;
  torchrun)
    pids=()
    for r in 0 1 2 3; do
      RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r LOCAL_WORLD_SIZE=4 GROUP_RANK=0 ROLE_RANK=$r ROLE_WORLD_SIZE=4 \
        MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 TORCHELASTIC_RUN_ID=scopeprof-test \
        SCOPEPROF_REPORT="$dir/run.{rank}.json" "$worker" --steps 20 --slow-rank 1 --factor 3 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || fail "a worker exited $?"; done
    for r in 0 1 2 3; do expect_file "$dir/run.$r.json"; done
    "$tool" merge "$dir"/run.*.json -o "$dir/merged.json" || fail "merge exited $?"
    expect_straggler "$dir/merged.json" 1 step/backward
    # Three of four ranks: the merge names the missing one and fails.
    if "$tool" merge "$dir"/run.{0,1,3}.json >"$dir/missing.out" 2>"$dir/missing.err"; then
      fail "merge of three of four ranks succeeded"
    fi
    grep -q "2" "$dir/missing.err" || fail "the missing rank is not named: $(cat "$dir/missing.err")"
    # The same ranks writing Chrome traces: merged into one trace, a process group per rank.
    pids=()
    for r in 0 1 2 3; do
      RANK=$r WORLD_SIZE=4 LOCAL_RANK=$r SCOPEPROF_REPORT="$dir/run.{rank}.trace.json" "$worker" --steps 3 &
      pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || fail "a trace worker exited $?"; done
    "$tool" merge "$dir"/run.*.trace.json -o "$dir/merged.trace.json" || fail "trace merge exited $?"
    python3 - "$dir/merged.trace.json" <<'PY' || fail "the merged trace does not hold the four ranks apart"
import json, sys
doc = json.load(open(sys.argv[1]))
names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
ranks = {int(n.split(":")[0].split()[1]) for n in names.values()}
slices = [e for e in doc["traceEvents"] if e["ph"] == "X"]
steps = {}
for e in slices:
    if e["name"] == "step":
        steps.setdefault(names[e["pid"]], []).append(e)
print(f"merged trace: {len(slices)} slices, processes {sorted(names.values())}")
sys.exit(0 if ranks == {0, 1, 2, 3} and all(len(v) == 3 for v in steps.values()) and len(steps) == 4 else 1)
PY
    ;;
  diff)
    SCOPEPROF_REPORT="$dir/a.json" "$worker" --steps 100 || fail "run a exited $?"
    SCOPEPROF_REPORT="$dir/b.json" "$worker" --steps 100 || fail "run b exited $?"
    SCOPEPROF_REPORT="$dir/slow.json" "$worker" --steps 100 --slow-scope backward --factor 1.2 || fail "slow run exited $?"
    "$tool" diff "$dir/a.json" "$dir/b.json" --fail-above 5% || fail "diff of two runs of the same program exited $?"
    "$tool" diff "$dir/a.json" "$dir/slow.json" --fail-above 5% --format md >"$dir/slow.md"
    rc=$?
    cat "$dir/slow.md"
    [[ $rc == 1 ]] || fail "diff against the 20% slower run exited $rc, not 1"
    grep -q "backward" "$dir/slow.md" || fail "the slower scope is not named"
    ;;
  *) echo "launchers.sh: unknown mode $mode" >&2; exit 2 ;;
esac
((failures == 0)) || { echo "$failures check(s) failed" >&2; exit 1; }
echo "launchers.sh $mode: ok"
