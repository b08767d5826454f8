#!/usr/bin/env bash
# Writes COUNT distinct images made by rsz from the sample photos into OUT/<photo>/<photo>_NNN.<ext>: each photo
# resampled at COUNT/4 scales (0.5 to 1.0 of its size, PNG and JPEG as the photo is), so the inputs differ in size and
# content and sit in sub-folders (keys with a folder in them). Used by the engine tests (tests/engines).
# usage: make_dataset.sh RSZ SOURCE_DIR OUT COUNT
set -euo pipefail
rsz=$1 src=$2 out=$3 count=$4
per=$(((count + 3) / 4))
for ((i = 0; i < per; i++)); do
  scale=$(awk -v i="$i" -v n="$per" 'BEGIN { printf "%.4f", 0.5 + 0.5 * i / n }')
  n=$(printf '%03d' "$i")
  "$rsz" resample -i "$src/samples/photos" -o "$out/{stem}/{stem}_$n{ext}" --scale "$scale" -q --no-sync
done
