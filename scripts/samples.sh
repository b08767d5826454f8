#!/usr/bin/env bash
# The main job on the samples: installs what is missing, builds rsz, and runs configs/batch.json, which resizes the
# photos in samples/photos and cuts the labelled crops of samples/rois/dataset.json into out/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release > /dev/null
cmake --build build -j"$(nproc)" --target rsz
build/app/rsz run configs/batch.json
