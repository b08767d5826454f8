#!/usr/bin/env bash
# HEIC and AVIF thumbnails against their peers, all in one run on the same files: an iPhone-size (4032 x 3024) HEIC
# and AVIF made from samples/photos/rocket.jpg with libheif's heif-enc, each to a 512-px JPEG thumbnail by rsz,
# vipsthumbnail and ImageMagick (Pillow reads neither without a plugin Debian does not ship), beside the codec floor:
# libheif's own heif-convert decoding the file and writing raw frames (.y4m), the least any tool reading through
# libheif can take. hyperfine medians in ms, ratios against rsz. Rewrites the section between the heif markers of
# bench/RESULTS_CLI.md. Not part of the tests.
#   usage: bash bench/heif_bench.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
bash scripts/install-deps.sh hyperfine libvips-tools imagemagick libheif-examples
rsz=build/app/rsz
[[ -x $rsz ]] || { echo "heif_bench: build rsz first (cmake --build build)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$rsz" resample -i samples/photos/rocket.jpg -o "$work/big.png" --size '4032x3024!' --strip -q
heif-enc -q 50 "$work/big.png" -o "$work/iphone.heic" > /dev/null
heif-enc -A -q 50 "$work/big.png" -o "$work/photo.avif" > /dev/null
rows=""
for f in iphone.heic photo.avif; do
  in=$work/$f
  hyperfine -N --warmup 1 --runs "$runs" --export-json "$work/$f.json" \
    -n rsz "$rsz thumbnail -i $in -o $work/r.jpg --size 512 -q" \
    -n vipsthumbnail "vipsthumbnail $in -s 512 -o $work/v.jpg" \
    -n imagemagick "convert $in -thumbnail 512x512 $work/m.jpg" \
    -n floor "heif-convert $in $work/floor.y4m" > /dev/null
  rows+=$(/usr/bin/python3 - "$work/$f.json" "$f" <<'PY'
import json, sys
r = {x["command"]: x["median"] * 1000 for x in json.load(open(sys.argv[1]))["results"]}
rsz = r["rsz"]
cell = lambda k: "%.0f (%.2f)" % (r[k], r[k] / rsz)
print("| %s -> 512-px JPEG | %.0f | %s | %s | %s | %.2f |" % (sys.argv[2], rsz, cell("vipsthumbnail"),
      cell("imagemagick"), "%.0f" % r["floor"], rsz / r["floor"]))
PY
)$'\n'
done
cpu=$(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
section="<!-- heif -->
## HEIC and AVIF inputs

Written by \`bash bench/heif_bench.sh\` on a $(nproc)-core $cpu, all tools in one run on the same files: a
4032 x 3024 HEIC and AVIF (heif-enc -q 50 from samples/photos/rocket.jpg) to a 512-px JPEG thumbnail.
hyperfine medians in ms; in brackets the peer's over rsz's (above 1: rsz is faster). \"libheif floor\" is
heif-convert decoding the same file and writing raw frames (.y4m): the least a tool reading through libheif takes
(target: rsz within 1.25x of it). Pillow reads neither format without a plugin.

| job | rsz | vipsthumbnail | ImageMagick | libheif floor | rsz / floor |
| --- | --- | --- | --- | --- | --- |
${rows%$'\n'}
<!-- /heif -->"
/usr/bin/python3 - bench/RESULTS_CLI.md "$section" <<'PY'
import re, sys
path, section = sys.argv[1], sys.argv[2]
text = open(path).read()
if "<!-- heif -->" in text:
    text = re.sub(r"<!-- heif -->.*<!-- /heif -->", lambda m: section, text, flags=re.S)
else:
    text = text.rstrip("\n") + "\n\n" + section + "\n"
open(path, "w").write(text)
PY
echo "heif_bench: wrote bench/RESULTS_CLI.md"
