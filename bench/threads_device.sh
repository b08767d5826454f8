#!/usr/bin/env bash
# OpenMP (fa03ef8) against rsz's own pool (447936c and later) on one machine: bench/RESULTS_THREADS.md.
#
# usage (repository root): bench/threads_device.sh OMP_RSZ_BENCH POOL_RSZ_BENCH
#   e.g. bench/threads_build.sh && bench/threads_device.sh build-omp/bench/rsz_bench build-pool/bench/rsz_bench
# Writes its logs to $OUT (default /tmp/threads-out). $BUDGET_S (default 470) bounds the whole script: the scaling
# runs get what the machine facts and the busy-machine test leave, under `timeout`; every run's JSON lines are kept in
# $OUT/raw_*.jsonl as they come (scaling_runs.py's $RAW, opened line-buffered here through runpy: the script itself is
# unchanged), so a cut invocation loses only the run in flight, and bench/threads_report.py makes the tables from them.
#
# 1. The machine: CPU model, CPUs, cgroup quota, load.
# 2. The busy-machine test: bench/busy_bench.cpp, built against each binary's core library, times one small resample
#    with threads 1, 16 and 0 (default: every usable CPU), each in a process of its own, on a quiet machine and then
#    with 16 busy-loop processes on the 16 cores; rsz_bench --threads 1,16 --only resample_1080p_to_224 under the same
#    load. The busy processes are ended by their ids.
# 3. bench/scaling_runs.py 5 1,4,16 on the resample workloads (resample_1080p) and the ROI ones (roi_), omp and pool
#    in turns.
set -uo pipefail
omp=$(realpath "$1")
pool=$(realpath "$2")
out=${OUT:-/tmp/threads-out}
mkdir -p "$out"
budget=${BUDGET_S:-470}
rounds=${ROUNDS:-5}
start=$SECONDS
here=$(cd "$(dirname "$0")" && pwd)

{
  echo "== machine"
  grep -m1 "model name" /proc/cpuinfo
  echo "cpus: $(nproc) (nproc), $(grep -c ^processor /proc/cpuinfo) (cpuinfo)"
  lscpu 2>/dev/null | grep -E "^(Model name|Socket|Core|Thread|CPU\(s\)|L2|L3|NUMA node\(s\)|Flags)" | cut -c1-200
  cat /sys/fs/cgroup/cpu.max 2>/dev/null | sed 's/^/cgroup cpu.max: /'
  uptime
  echo "OMP_WAIT_POLICY=${OMP_WAIT_POLICY-unset} GOMP_SPINCOUNT=${GOMP_SPINCOUNT-unset} OMP_NUM_THREADS=${OMP_NUM_THREADS-unset}"
} 2>&1 | tee "$out/machine.log"

# busy_bench against each binary's own core library and headers (the build's source folder, from its CMakeCache).
busy_bin() {  # BINARY LABEL -> prints the path of busy_bench for it
  local build src lib extra=()
  build=$(dirname "$(dirname "$1")")
  src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")
  lib=$build/core/librsz_core.a
  [ "$(nm -A "$lib" 2>/dev/null | grep -c GOMP_)" -gt 0 ] && extra=(-fopenmp)  # the OpenMP build
  c++ -O2 -std=c++17 -I"$src/core/include" "$here/busy_bench.cpp" "$lib" -pthread "${extra[@]}" -o "$build/busy_bench" \
    >&2 && echo "$build/busy_bench"
}
# busy_bench_cases SECONDS PREFIX: each binary's busy_bench with threads 1, 16 and 0, its lines prefixed.
busy_bench_cases() {
  local t label b
  for t in 1 16 0; do
    for label in omp pool; do
      b=$busy_omp; [ $label = pool ] && b=$busy_pool
      "$b" "$1" "$t" | sed "s/^/$2 $label /"
    done
  done
}
{
  echo "== busy_bench builds"
  busy_omp=$(busy_bin "$omp" omp) && echo "omp: $busy_omp (links: $(ldd "$busy_omp" | grep -o 'libgomp[^ ]*' | head -1))"
  busy_pool=$(busy_bin "$pool" pool) && echo "pool: $busy_pool (links: $(ldd "$busy_pool" | grep -o 'libgomp[^ ]*' | head -1))"
  echo "== quiet machine: busy_bench 1 s per case, one process per thread setting"
  busy_bench_cases 1 quiet
  echo "== busy machine: 16 busy loops"
  hogs=()
  for i in $(seq 16); do (while :; do :; done) & hogs+=($!); done
  trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
  sleep 1
  uptime
  echo "== busy machine: busy_bench 3 s per case, one process per thread setting"
  busy_bench_cases 3 busy
  echo "== busy machine: rsz_bench --quick --only resample_1080p_to_224 --threads 1,16"
  for label in omp pool; do
    b=$omp; [ $label = pool ] && b=$pool
    mkdir -p "/tmp/rsz-busy-$label"
    "$b" "$here/workloads.json" "/tmp/rsz-busy-$label" --quick --only resample_1080p_to_224 --threads 1,16 |
      sed "s/^/busy $label /"
  done
  uptime
  kill "${hogs[@]}" 2>/dev/null
  wait "${hogs[@]}" 2>/dev/null
  trap - EXIT
  echo "== busy loops ended; $((SECONDS - start)) s so far"
} 2>&1 | tee "$out/busy.log"

# scaling_runs.py as it is, with its $RAW file line-buffered (a run cut by `timeout` keeps every finished run's lines).
scaling='import builtins, functools, runpy, sys; builtins.open = functools.partial(builtins.open, buffering=1); \
sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")'
# The scaling runs: what is left of the budget, 55% to the resample workloads and the rest to the ROI ones.
left=$((budget - (SECONDS - start)))
t_resample=$((left * 55 / 100))
echo "== scaling: resample ($t_resample s at most)" | tee "$out/scaling_resample.log"
RAW=$out/raw_resample.jsonl PYTHONUNBUFFERED=1 timeout -k 5 "$t_resample" \
  python3 -c "$scaling" "$here/scaling_runs.py" "$rounds" 1,4,16 resample_1080p omp="$omp" pool="$pool" 2>&1 |
  tee -a "$out/scaling_resample.log"
echo "rc ${PIPESTATUS[0]}; $((SECONDS - start)) s so far" | tee -a "$out/scaling_resample.log"
t_roi=$((budget - (SECONDS - start)))
echo "== scaling: roi ($t_roi s at most)" | tee "$out/scaling_roi.log"
RAW=$out/raw_roi.jsonl PYTHONUNBUFFERED=1 timeout -k 5 "$t_roi" \
  python3 -c "$scaling" "$here/scaling_runs.py" "$rounds" 1,4,16 roi_ omp="$omp" pool="$pool" 2>&1 | tee -a "$out/scaling_roi.log"
echo "rc ${PIPESTATUS[0]}; $((SECONDS - start)) s in all" | tee -a "$out/scaling_roi.log"
