#!/usr/bin/env bash
# Builds the libFuzzer targets (build-fuzz/: clang, RSZ_FUZZ=ON, ASan + UBSan, -O1) and runs each for SECONDS
# (default 60) on a copy of its seed corpus (tests/fuzz/corpus/<target>/ is never written). Fails when any target
# finds a crash, sanitizer report, leak, timeout (-timeout=10 s per input) or out-of-memory (-rss_limit_mb=2048),
# printing the reproducer path; everything the run writes is under build-fuzz/run/.
#   usage: bash tests/fuzz/run.sh [SECONDS] [TARGET...]      (targets: the fuzz_* names without the prefix)
# Reproduce a finding: build-fuzz/tests/fuzz/fuzz_<target> <reproducer>
set -euo pipefail
cd "$(dirname "$0")/../.."

seconds=${1:-60}
shift $(( $# > 0 ? 1 : 0 ))
build=build-fuzz
jobs=${RSZ_FUZZ_BUILD_JOBS:-$(nproc)}
fuzz_dir=tests/fuzz

# target name, then the largest input to try: a little above the largest seed of its format.
declare -A max_len=(
  [npy]=4096 [resample_config]=4096 [upsample2d_config]=4096 [roi_align_config]=4096 [roi_file]=4096
  [batch_file]=4096 [image_png]=16384 [image_jpeg]=32768 [image_tiff]=16384 [image_webp]=16384 [image_bmp]=16384
  [image_pnm]=8192 [image_gif]=8192 [image_heic]=8192 [image_avif]=8192 [image_jxl]=8192 [coco]=8192 [voc]=8192
)
all_targets=(npy resample_config upsample2d_config roi_align_config roi_file batch_file coco voc
             image_png image_jpeg image_tiff image_webp image_bmp image_pnm image_gif image_heic image_avif image_jxl)
targets=("${@:-${all_targets[@]}}")

bash scripts/install-deps.sh clang libclang-rt-14-dev
start=$SECONDS
echo "fuzz: building $build (clang, RSZ_FUZZ=ON)"
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" -DRSZ_FUZZ=ON -DRSZ_BUILD_TESTS=OFF -DRSZ_BUILD_BENCH=OFF > /dev/null
cmake --build "$build" -j"$jobs" --target $(printf 'fuzz_%s ' "${targets[@]}") > "$build/fuzz-build.log" 2>&1 || {
  tail -n 60 "$build/fuzz-build.log"; echo "fuzz: build failed (log: $build/fuzz-build.log)"; exit 1; }
echo "fuzz: built in $((SECONDS - start)) s; $seconds s per target"

run=$build/run
rm -rf "$run"
mkdir -p "$run/tmp"
export TMPDIR=$PWD/$run/tmp  # the targets' private folders; anything a killed target leaves stays in here
export ASAN_OPTIONS=detect_leaks=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export OPENCV_LOG_LEVEL=ERROR
if [[ -f $fuzz_dir/lsan.supp ]]; then export LSAN_OPTIONS=suppressions=$PWD/$fuzz_dir/lsan.supp; fi

# OpenCV prints every decode failure to stderr: -close_fd_mask=3 silences the target's own output (libFuzzer and the
# sanitizers keep reporting on a copy of stderr).
options=(-rss_limit_mb=2048 -timeout=10 -close_fd_mask=3)
failed=()
for target in "${targets[@]}"; do
  [[ -n ${max_len[$target]:-} ]] || { echo "fuzz: unknown target '$target' (known: ${all_targets[*]})"; exit 2; }
  corpus=$run/corpus/$target
  artifacts=$run/artifacts/$target
  log=$run/logs/$target.log
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  cp "$fuzz_dir/corpus/$target"/* "$corpus/"
  dict=()
  case $target in *_config | roi_file | batch_file | coco) dict=(-dict="$fuzz_dir/json.dict") ;; esac
  t0=$SECONDS
  rc=0
  reproducers=
  regressions=("$fuzz_dir/regressions/$target"-*)
  if [[ -e ${regressions[0]} ]]; then
    # Inputs that once failed (tests/fuzz/regressions/<target>-<name>) are replayed first; a failing one is the
    # reproducer, and the target is not fuzzed until it is fixed.
    "$build/tests/fuzz/fuzz_$target" "${options[@]}" -max_len="${max_len[$target]}" -artifact_prefix="$artifacts/" \
      "${regressions[@]}" > "$log" 2>&1 || rc=$?
    reproducers=$(grep -o '^Running: .*' "$log" | tail -n 1 | sed 's/^Running: //' || true)
  fi
  if [[ $rc -eq 0 ]]; then
    # -timeout catches a slow input; the outer timeout only guards against a target that never returns at all.
    timeout --kill-after=30 $((seconds + 300)) "$build/tests/fuzz/fuzz_$target" "${options[@]}" \
      -max_total_time="$seconds" -max_len="${max_len[$target]}" -print_final_stats=1 -artifact_prefix="$artifacts/" \
      "${dict[@]}" "$corpus" > "$log" 2>&1 || rc=$?
    reproducers=$(find "$artifacts" -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \))
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
  if [[ $rc -eq 0 ]]; then
    echo "fuzz: $target ok (${runs:-?} runs in $((SECONDS - t0)) s)"
    continue
  fi
  failed+=("$target")
  echo "fuzz: $target FAILED (exit $rc after $((SECONDS - t0)) s); log: $log"
  # The report and the stack without the fuzzer's and the sanitizers' own frames.
  grep -E '==[0-9]+== ?ERROR|^SUMMARY|runtime error|^ *#[0-9]+ ' "$log" |
    grep -vE 'in (fuzzer::|__sanitizer|__asan|__lsan|__ubsan|__interceptor|operator new|malloc|calloc|realloc|main|_start|__libc)' |
    head -n 20 | sed 's/^/    /'
  if [[ -n $reproducers ]]; then
    while read -r file; do
      echo "fuzz: reproducer: $file  (rerun: $build/tests/fuzz/fuzz_$target -rss_limit_mb=2048 $file)"
    done <<< "$reproducers"
  else
    echo "fuzz: no reproducer was written; the end of the log:"
    tail -n 20 "$log" | sed 's/^/    /'
  fi
done

echo "fuzz: done in $((SECONDS - start)) s (build and runs)"
if (( ${#failed[@]} > 0 )); then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: all ${#targets[@]} targets ran clean"
