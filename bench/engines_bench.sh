#!/usr/bin/env bash
# Images per CPU-second and wall time of rsz thumbnails and ROI crops run three ways, in one run: one rsz process
# (-j 2), a real single-node Slurm array of 8 elements (scripts/slurm-local.sh; rsz plan / --plan / rsz merge) and a
# Dask LocalCluster (2 workers x 1 thread, one task per shard: rsz.run_shard), over N generated 640x480 JPEGs
# (default 2000; about 4 minutes on 2 cores). Writes bench/RESULTS_ENGINES.md (bench/engines_bench.py says how each
# CPU second is counted). Slurm needs root and slurmctld, slurmd, slurm-client and munge; Dask python3-distributed
# (bash scripts/install-deps.sh installs them): without them those rows are left out, saying why.
#
# usage: bash bench/engines_bench.sh [--images N] [--repeats R] [--build DIR]
#   R: runs of each row, interleaved (default 3; the median is shown); DIR: a build with app/rsz and python/ (build)
set -euo pipefail
cd "$(dirname "$0")/.."
source_dir=$(pwd)
images=2000
repeats=3
build=build
while (($#)); do
  case $1 in
    --images) images=$2; shift 2 ;;
    --repeats) repeats=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) echo "usage: $0 [--images N] [--repeats R] [--build DIR]" >&2; exit 2 ;;
  esac
done
rsz=$(realpath "$build/app/rsz")
[[ -x $rsz ]] || { echo "engines_bench: no $build/app/rsz: cmake --build $build --target rsz _rsz" >&2; exit 2; }
python_dir=$(realpath "$build/python")

work=$(mktemp -d "${TMPDIR:-/tmp}/rsz-engines-bench.XXXXXX")
chmod 755 "$work"  # munged (as the munge user) keeps its socket below it
cleanup() {
  bash "$source_dir/scripts/slurm-local.sh" stop "$work/slurm" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

slurm_conf=
if out=$(bash scripts/slurm-local.sh start "$work/slurm"); then
  slurm_conf=${out##*=}
else
  echo "engines_bench: no Slurm rows (scripts/slurm-local.sh start said why above)" >&2
fi
PYTHONPATH=$python_dir${PYTHONPATH:+:$PYTHONPATH} /usr/bin/python3 bench/engines_bench.py --rsz "$rsz" \
  --source "$source_dir" --work "$work" --images "$images" --repeats "$repeats" --results bench/RESULTS_ENGINES.md --slurm-conf "$slurm_conf"
