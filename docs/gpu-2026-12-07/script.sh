#!/usr/bin/env bash
# one-off: C (the fix) GPU suites, then bench_device_long (interleaved) A (f6a7689) and C alternately.
# $1: few files (summary), $2: logs.
set -u
o=$1; l=$2; mkdir -p "$o" "$l"
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; lscpu | grep -E 'Model name|^CPU\(s\)'; } > "$o/machine.txt"
s=$SECONDS
export LD_LIBRARY_PATH="$PWD/.deps/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
for v in A C; do
  ( t=scopeprof_bench_device_long; j=4; extra=(-DSCOPEPROF_BUILD_TESTS=OFF)
    if [ $v = C ]; then t="$t scopeprof_gpu_tests scopeprof_gpu_lifecycle_tests"; j=12; extra=(); fi
    cmake -S .var/$v -B .var/$v/b -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 "${extra[@]}" -DSCOPEPROF_INSTALL=OFF \
      -DSCOPEPROF_BUILD_EXAMPLES=OFF -DSCOPEPROF_BUILD_CLI=OFF -DCMAKE_PREFIX_PATH=$PWD/.deps/usr > "$l/cfg_$v.txt" 2>&1 &&
    cmake --build .var/$v/b -j$j --target $t > "$l/build_$v.txt" 2>&1; echo "build $v rc=$?" ) &
done
wait
echo "built in $((SECONDS - s)) s"
g=.var/C/b/tests/gpu
timeout 60 $g/scopeprof_gpu_lifecycle_tests -s > "$l/c_lifecycle.log" 2>&1; echo "C lifecycle rc=$?"; tail -3 "$l/c_lifecycle.log"
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 3 $g/scopeprof_gpu_lifecycle_tests --test-case="gpu p*,gpu q*" \
  > "$l/c_memcheck_pq.log" 2>&1; echo "C memcheck p,q rc=$?"
timeout 60 $g/scopeprof_gpu_tests > "$l/c_gpu_tests.log" 2>&1; echo "C gpu_tests rc=$?"; tail -3 "$l/c_gpu_tests.log"
echo "tests done at $((SECONDS - s)) s"
rep=0
for v in A C A C; do
  rep=$((rep + 1))
  echo "== run $rep variant $v" >> "$o/runs.txt"
  timeout 40 .var/$v/b/bench/scopeprof_bench_device_long --scopes 500000 >> "$o/runs.txt" 2>&1
done
echo "all done at $((SECONDS - s)) s"
date -u >> "$o/machine.txt"
