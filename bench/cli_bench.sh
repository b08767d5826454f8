#!/usr/bin/env bash
# End-to-end benchmark of the rsz command against vips, ImageMagick and Pillow on the same files, in one run, with
# comparable filters (rsz linear = DirectML RESAMPLE1 linear; vips resize --kernel linear; ImageMagick -filter
# Triangle; Pillow BILINEAR), timed by hyperfine (medians). Writes bench/RESULTS_CLI.md. Not part of the tests.
# Installs what it needs from Debian (hyperfine, libvips-tools, imagemagick, python3-pil). About 5 minutes.
# usage: bash bench/cli_bench.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
quick="${1:-}"
root=$PWD

bash scripts/install-deps.sh hyperfine libvips-tools imagemagick python3-pil time

cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DRSZ_BUILD_TESTS=OFF > /dev/null
cmake --build build-bench -j"$(nproc)" --target rsz rsz_opencv_codecs
rsz="$root/build-bench/app/rsz"
work="$root/build-bench/cli"
rm -rf "$work"
mkdir -p "$work"
cd "$work"

echo "cli-bench: making the inputs from samples/photos" >&2
/usr/bin/python3 "$root/bench/cli_inputs.py" "$root/samples/photos" "$work"
convert in1080.png -depth 16 PNG48:in16.png  # a 16-bit RGB PNG

runs=7
folder_runs=3
[ -z "$quick" ] || { runs=3; folder_runs=1; }
py=/usr/bin/python3
mkdir -p results
# hyperfine: one file of results per job; every command cleans its outputs first where it writes a folder.
job() {  # job NAME RUNS rsz-cmd vips-cmd magick-cmd pillow-cmd [vipsthumbnail-cmd]
  local name=$1 n=$2
  shift 2
  local names=(rsz vips ImageMagick Pillow vipsthumbnail)
  local args=()
  local i=0
  for cmd in "$@"; do
    args+=(-n "${names[$i]}" "$cmd")
    printf '%s\t%s\t%s\n' "$name" "${names[$i]}" "$cmd" >> results/commands.tsv
    i=$((i + 1))
  done
  echo "cli-bench: $name" >&2
  # The shell hyperfine starts each command in is measured and subtracted by hyperfine itself.
  hyperfine --style basic --warmup 1 --runs "$n" --export-json "results/$name.json" "${args[@]}" > /dev/null
}

job startup "$runs" "$rsz --version" "vips --version" "convert -version" "$py -c 'import PIL.Image'"
job jpeg_half "$runs" \
  "$rsz resample -i in1080.jpg -o r_half.jpg --scale 0.5 -q" \
  "vips resize in1080.jpg v_half.jpg 0.5 --kernel linear" \
  "convert in1080.jpg -filter Triangle -resize 50% m_half.jpg" \
  "$py $root/bench/cli_pillow.py resize in1080.jpg p_half.jpg 960 540" \
  "vipsthumbnail in1080.jpg -s 960x540 -o t_half.jpg"
job png_half "$runs" \
  "$rsz resample -i in1080.png -o r_half.png --scale 0.5 -q" \
  "vips resize in1080.png v_half.png 0.5 --kernel linear" \
  "convert in1080.png -filter Triangle -resize 50% m_half.png" \
  "$py $root/bench/cli_pillow.py resize in1080.png p_half.png 960 540"
job jpeg4k_224_png "$runs" \
  "$rsz resample -i in4k.jpg -o r_224.png --size 224x224 -q" \
  "vips resize in4k.jpg v_224.png 0.058333333 --vscale 0.103703704 --kernel linear" \
  "convert in4k.jpg -filter Triangle -resize 224x224! m_224.png" \
  "$py $root/bench/cli_pillow.py resize in4k.jpg p_224.png 224 224" \
  "vipsthumbnail in4k.jpg -s 224x224! -o t_224.png"
job png16_half "$runs" \
  "$rsz resample -i in16.png -o r_16.png --scale 0.5 -q" \
  "vips resize in16.png v_16.png 0.5 --kernel linear" \
  "convert in16.png -filter Triangle -resize 50% m_16.png" \
  "$py $root/bench/cli_pillow.py resize in16.png p_16.png 960 540"
job folder_thumbs "$folder_runs" \
  "rm -rf r_thumbs && $rsz resample -i photos -o r_thumbs/ --width 256 -j 2 -q" \
  "rm -rf v_thumbs && mkdir v_thumbs && ls photos | xargs -P 2 -I{} vips resize photos/{} v_thumbs/{} 0.25 --kernel linear" \
  "rm -rf m_thumbs && mkdir m_thumbs && ls photos/*.jpg | xargs -P 2 -n 100 mogrify -path m_thumbs -filter Triangle -resize 256x" \
  "rm -rf p_thumbs && $py $root/bench/cli_pillow.py folder photos p_thumbs 256 2" \
  "rm -rf t_thumbs && mkdir t_thumbs && vipsthumbnail photos/*.jpg -s 256 -o $work/t_thumbs/%s.jpg"
job crops64 "$folder_runs" \
  "rm -rf r_crops && $rsz roi-align --rois crops.json --output-size 224x224 -o r_crops/{id}.png -q" \
  "rm -rf v_crops && mkdir v_crops && for y in 0 224 448 672 896 1120 1344 1568; do for x in 0 224 448 672 896 1120 1344 1568; do vips crop in4k.jpg v_crops/\$x-\$y.png \$x \$y 224 224; done; done" \
  "rm -rf m_crops && mkdir m_crops && convert in4k.jpg -crop 1792x1792+0+0 +repage -crop 224x224 +repage m_crops/%d.png" \
  "rm -rf p_crops && $py $root/bench/cli_pillow.py crops in4k.jpg p_crops"

echo "cli-bench: peak memory (the 4K job)" >&2
for tool in rsz vips ImageMagick Pillow; do
  case $tool in
    rsz) cmd=("$rsz" resample -i in4k.jpg -o r_224.png --size 224x224 -q) ;;
    vips) cmd=(vips resize in4k.jpg v_224.png 0.058333333 --vscale 0.103703704 --kernel linear) ;;
    ImageMagick) cmd=(convert in4k.jpg -filter Triangle -resize '224x224!' m_224.png) ;;
    Pillow) cmd=("$py" "$root/bench/cli_pillow.py" resize in4k.jpg p_224.png 224 224) ;;
  esac
  /usr/bin/time -f "$tool %M" "${cmd[@]}" 2>> results/rss.txt > /dev/null
done
# The 4K JPEG decoded: 3840 x 2160 x 3 bytes.
"$py" "$root/bench/cli_report.py" results "$(nproc)" "$(lscpu | sed -n 's/^Model name: *//p')" > "$root/bench/RESULTS_CLI.md"
echo "cli-bench: wrote bench/RESULTS_CLI.md" >&2
