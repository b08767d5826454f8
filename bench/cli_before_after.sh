#!/usr/bin/env bash
# The rsz rows of bench/RESULTS_CLI.md again, each timed against another rsz binary (an earlier build) in the same
# hyperfine call: what a change did to the whole command's speed, as ratios measured in one run. Run it after
# bench/cli_bench.sh (it reuses its inputs and commands in build-bench/cli); appends a table to
# bench/RESULTS_CLI.md. Not part of the tests.
# usage: bash bench/cli_before_after.sh BASELINE_RSZ [LABEL]
set -euo pipefail
cd "$(dirname "$0")/.."
baseline=$(realpath "$1")
label=${2:-baseline}
root=$PWD
work="$root/build-bench/cli"
rsz="$root/build-bench/app/rsz"
[[ -x "$baseline" && -x "$rsz" && -f "$work/results/commands.tsv" ]] || {
  echo "cli_before_after: run bench/cli_bench.sh first, and give an rsz binary to compare with" >&2
  exit 2
}
cd "$work"
mkdir -p before_after
rows=()
while IFS=$'\t' read -r job tool cmd; do
  [[ $tool == rsz ]] || continue
  # The COCO job takes half a minute a run (bench/cli_bench.sh times it against Python); the shell loop seconds.
  [[ $job == coco_big ]] && continue
  runs=21
  [[ $job == folder_thumbs || $job == crops64 || $job == camera_thumb ]] && runs=7
  [[ $job == shell_loop ]] && runs=3
  echo "cli-before-after: $job" >&2
  hyperfine --style basic --warmup 1 --runs "$runs" --export-json "before_after/$job.json" \
    -n "$label" "${cmd//$rsz/$baseline}" -n current "$cmd" > /dev/null
  rows+=("$job")
done < results/commands.tsv
/usr/bin/python3 - "$label" "${rows[@]}" >> "$root/bench/RESULTS_CLI.md" <<'PY'
import json, sys
label, jobs = sys.argv[1], sys.argv[2:]
print("\n## This build against %s, same run\n" % label)
print("hyperfine medians in milliseconds, each pair in one hyperfine call; the ratio is %s's time over this build's"
      " (above 1: this build is faster)." % label)
print("\n| job | %s | this build | ratio |\n| --- | --- | --- | --- |" % label)
for job in jobs:
    results = {r["command"]: r["median"] * 1000 for r in json.load(open("before_after/%s.json" % job))["results"]}
    before, after = results[label], results["current"]
    print("| %s | %.3g | %.3g | %.2f |" % (job, before, after, before / after))
PY
echo "cli-before-after: appended to bench/RESULTS_CLI.md" >&2
