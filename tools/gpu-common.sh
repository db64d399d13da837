# Shared by tools/gpu-quick.sh, gpu-cupti.sh and gpu-torch.sh (sourced, not run): the step runner, and
# building and running only the targets the build defines. A fresh GPU machine may lack doctest, Google
# Benchmark or LibTorch; the configure then leaves their targets out, and each step that needs one is
# skipped with the reason instead of failing. The caller sets b (build directory) and logs (log directory).
#
#   configure_step NAME SECONDS cmake -S ... -B "$b" ...       configure, then list the targets of $b
#   build_step NAME SECONDS cmake --build "$b" ... --target T...   build the Ts this build defines
#   run NAME SECONDS COMMAND...      run a step; skipped when it runs a program "$b/..." of an undefined target

# run NAME SECONDS COMMAND...: output in $logs/NAME.log, one line with the exit code (or why it was skipped).
run() {
  local n=$1 t=$2 a
  shift 2
  for a in "$@"; do
    # (a program left in $b by an earlier configure would give stale figures: the target decides)
    if [[ $a == "$b"/* && ! -d $a ]] && ! have_target "$(basename "$a")"; then
      skip_line "$n" "$(basename "$a")" | tee "$logs/$n.log"
      return 0
    fi
  done
  echo "== $n"
  timeout "$t" "$@" >"$logs/$n.log" 2>&1
  echo "   rc=$?" | tee -a "$logs/$n.log"
}

configure_step() {
  run "$@"
  # Makefile generators list "... target", Ninja "target: phony".
  cmake --build "$b" --target help 2>/dev/null | sed -n -e 's/^\.\.\. \([^ ]*\).*/\1/p' -e 's/^\([^ :]*\): .*/\1/p' \
    >"$logs/targets.txt"
  if [[ ! -s "$logs/targets.txt" ]]; then
    echo "   (no targets: the configure failed, see $logs/$1.log)"
  fi
  grep -h "^-- scopeprof" "$logs/$1.log" | sed 's/^-- /   configure: /'
}

# build_step NAME SECONDS cmake --build DIR [OPTIONS] --target T...: the Ts this build does not define are
# dropped, each with the reason; the step is skipped when none is left.
build_step() {
  local n=$1 t=$2 a in_targets=0 cmd=() kept=()
  shift 2
  for a in "$@"; do
    if ((in_targets)); then
      if have_target "$a"; then kept+=("$a"); else skip_line "$n" "$a"; fi
    else
      cmd+=("$a")
      [[ $a == --target ]] && in_targets=1
    fi
  done
  if ((${#kept[@]} == 0)); then
    echo "== $n: skipped (none of its targets is defined in this build)" | tee "$logs/$n.log"
    return 0
  fi
  run "$n" "$t" "${cmd[@]}" "${kept[@]}"
}

have_target() { grep -qxF -- "$1" "$logs/targets.txt" 2>/dev/null; }

# "== STEP: skipped: TARGET is not defined in this build; needs: WHAT [configure said: LINE]; ..." Only the
# needs the configure reported missing are listed; all of them when it reported none.
skip_line() {
  local step=$1 target=$2 reasons=() reported=() need said
  add_reason() {  # add_reason WHAT KEY: KEY finds the configure's status line about it
    said=$(grep -h -F -- "$2" "$logs"/configure*.log 2>/dev/null | grep -m1 -F "scopeprof:" | sed 's/^-- //')
    reasons+=("$1")
    [[ -n $said ]] && reported+=("$1 [configure said: $said]")
  }
  [[ $target == scopeprof_bench* && $target != scopeprof_bench_device && $target != scopeprof_bench_cupti ]] &&
    add_reason "Google Benchmark (stage it: ../shared/tools/device-deps.sh libbenchmark-dev libbenchmark1debian)" \
      "Google Benchmark not found"
  [[ $target == scopeprof_*test* || $target =~ _(fault|guard|collision|handoff)$ ]] &&
    add_reason "doctest (stage it: ../shared/tools/device-deps.sh)" "doctest not found"
  [[ $target == *cupti* ]] && add_reason "the CUPTI headers" "CUPTI headers not found"
  [[ $target == *torch* ]] && add_reason "LibTorch" "LibTorch not found"
  [[ $target == eager_vs_fused ]] && add_reason "cuBLAS" "eager_vs_fused example skipped"
  [[ $target == *gpu* || $target == *device* || $target == eager_vs_fused || $target == scopeprof_bench_cupti ]] &&
    add_reason "a CUDA compiler" "no CUDA compiler"
  ((${#reported[@]})) && reasons=("${reported[@]}")
  ((${#reasons[@]})) || reasons=("see $logs/configure.log")
  [[ -s "$logs/targets.txt" ]] || reasons=("the configure failed: see $logs/configure.log")
  need=$(printf '%s; ' "${reasons[@]}")
  echo "== $step: skipped: $target is not defined in this build; needs: ${need%; }"
}
