#!/usr/bin/env bash
# The command line's operators on two backends, byte for byte: --backend cuda against --backend cpu by default, over
# a matrix of resample, upsample and roi-align jobs on the sample photos and on .npy tensors made from them (modes,
# presets, rounding, antialiasing, scales and sizes, 8- and 16-bit images, float32 and float16 tensors, crops with
# every reduction). Where `rsz info --backends` says the backend cannot run here, it says why and exits 77
# (skipped); on the first difference it names the job and exits 1. ctest runs it as cli.backends_agree (CPU against
# the reference twins) and, in a build with the CUDA backend, cuda.cli_backends_agree (label cuda).
# usage: bash scripts/cli-backend-check.sh [RSZ_BINARY]   (default: build/app/rsz)
# RSZ_CHECK_BACKEND=reference compares the CPU backend with the reference twins instead of the CUDA backend.
set -euo pipefail
cd "$(dirname "$0")/.."
rsz=${1:-build/app/rsz}
other=${RSZ_CHECK_BACKEND:-cuda}
if [[ ! -x $rsz ]]; then
  echo "cli-backend-check: no rsz binary at $rsz (usage: bash scripts/cli-backend-check.sh [RSZ_BINARY])" >&2
  exit 2
fi
line=$("$rsz" info --backends | grep "^$other:" || true)
if [[ $line != "$other: available"* ]]; then
  echo "cli-backend-check: skipped: ${line:-this build of rsz has no $other backend}" >&2
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
photos=samples/photos
rois=samples/rois/chelsea_eyes.json

# Tensors for the .npy jobs: a photo as float32 and float16 NCHW (resample writes .npy outputs of its inputs).
"$rsz" resample -q -i "$photos/chelsea.png" -o "$work/chelsea32.npy" --scale 1 --dtype float32 --backend cpu
"$rsz" resample -q -i "$photos/coffee.png" -o "$work/coffee16.npy" --scale 1 --dtype float16 --backend cpu
"$rsz" resample -q -i "$photos/camera.png" -o "$work/camera16.npy" --scale 1 --dtype float16 --backend cpu

jobs=0
# check NAME ARGS...: runs `rsz ARGS -o <dir>/...` on both backends (ARGS holds {out} for the output path) and
# compares every file written.
check() {
  local name=$1
  shift
  local backend
  for backend in cpu "$other"; do
    mkdir -p "$work/$backend/$name"
    local args=()
    local a
    for a in "$@"; do args+=("${a//\{out\}/$work/$backend/$name}"); done
    if ! "$rsz" "${args[@]}" -q --backend "$backend" 2> "$work/$backend.err"; then
      echo "cli-backend-check: $name: rsz failed on $backend: $(head -1 "$work/$backend.err")" >&2
      exit 1
    fi
  done
  local count=0
  local f
  while IFS= read -r f; do
    count=$((count + 1))
    if ! cmp -s "$work/cpu/$name/$f" "$work/$other/$name/$f"; then
      echo "cli-backend-check: $name: $f differs between --backend cpu and --backend $other" >&2
      exit 1
    fi
  done < <(cd "$work/cpu/$name" && find . -type f | sort)
  if [[ $count -eq 0 || $(cd "$work/$other/$name" && find . -type f | wc -l) -ne $count ]]; then
    echo "cli-backend-check: $name: the backends wrote different sets of files ($count on cpu)" >&2
    exit 1
  fi
  jobs=$((jobs + 1))
}

check resample_half_png resample -i "$photos" -o "{out}/" --scale 0.5
check resample_nearest resample -i "$photos" -o "{out}/" --scale 1.7 --mode nearest
for rounding in round_prefer_floor floor ceil; do
  check "resample_nearest_$rounding" resample -i "$photos/chelsea.png" -o "{out}/x.png" --scale 0.37 --mode nearest \
    --rounding-direction "$rounding"
done
for preset in align_corners asymmetric nearest_floor; do
  check "resample_$preset" resample -i "$photos/rocket.jpg" -o "{out}/x.png" --size 333x211 --preset "$preset"
done
check resample_224_npy32 resample -i "$photos" -o "{out}/{stem}.npy" --size 224x224 --dtype float32
check resample_npy16 resample -i "$photos" -o "{out}/{stem}.npy" --scale 1.3 --dtype float16
check resample_antialias resample -i "$photos" -o "{out}/" --scale 0.3 --antialias
check resample_depth16 resample -i "$photos/coffee.png" -o "{out}/x.png" --scale 0.8 --depth 16
check resample_offsets resample -i "$photos/camera.png" -o "{out}/x.png" --scales 1,1,0.61,1.9 \
  --input-offsets 0.25 --output-offsets 0
check resample_tensor32 resample -i "$work/chelsea32.npy" -o "{out}/x.npy" --scales 1,1,2.5,0.7
check resample_tensor16 resample -i "$work/coffee16.npy" -o "{out}/x.npy" --scales 1,1,0.5,0.5 --mode nearest
check resample_tensor16_half resample -i "$work/camera16.npy" -o "{out}/x.npy" --scales 1,1,0.5,0.5
check resample_jpeg resample -i "$photos/rocket.jpg" -o "{out}/x.jpg" --scale 0.5 --quality 95
check thumbnail thumbnail -i "$photos" -o "{out}/" --size 96
for mode in linear nearest; do
  check "upsample_$mode" upsample -i "$photos" -o "{out}/" --factor 2 --mode "$mode"
  check "upsample_${mode}_tensor16" upsample -i "$work/coffee16.npy" -o "{out}/x.npy" --factor 3,2 --mode "$mode"
done
check upsample_tensor32 upsample -i "$work/chelsea32.npy" -o "{out}/x.npy" --factor 2
check upsample_x2_tensor16 upsample -i "$work/coffee16.npy" -o "{out}/x.npy" --factor 2
check upsample_x2_nearest_tensor16 upsample -i "$work/coffee16.npy" -o "{out}/x.npy" --factor 2 --mode nearest
for reduction in average max; do
  for mode in linear nearest; do
    check "roi_${reduction}_$mode" roi-align -i "$photos/chelsea.png" --rois "$rois" -o "{out}/" \
      --output-size 64x48 --reduction "$reduction" --mode "$mode"
  done
done
check roi_samples roi-align -i "$photos/chelsea.png" --rois "$rois" -o "{out}/" --output-size 7x7 --samples 2 \
  --spatial-scale 0.5 --oob-value 0.25
check roi_aligned_corners roi-align -i "$photos/chelsea.png" --rois "$rois" -o "{out}/" --output-size 30x30 \
  --align-corners --dtype float16 --format npy
check roi_tensor roi-align -i "$work/chelsea32.npy" --rois "$rois" -o "{out}/" --output-size 14x14 --format npy
echo "cli-backend-check: $jobs jobs, every output the same bytes from --backend $other as from --backend cpu"
