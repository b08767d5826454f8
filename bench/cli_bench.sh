#!/usr/bin/env bash
# End-to-end benchmark of the rsz command against vips, ImageMagick and Pillow on the same files, in one run, with
# comparable filters (rsz linear = DirectML RESAMPLE1 linear; vips resize --kernel linear; ImageMagick -filter
# Triangle; Pillow BILINEAR), timed by hyperfine (medians). Writes bench/RESULTS_CLI.md. Not part of the tests.
# Installs what it needs from Debian (hyperfine, libvips-tools, imagemagick, python3-pil; the Python module's
# pybind11-dev, python3-dev, python3-numpy and its peer python3-torch come with scripts/install-deps.sh). About 12
# minutes (the shell loop and the COCO job, which reads a 450 MB file 8 times, take about 3 each).
# usage: bash bench/cli_bench.sh [--quick] [--only JOB,JOB,...]
#   --quick: fewer runs (a check that the jobs work, not numbers to publish); skips coco_big's timed runs when one
#            run of each takes over two minutes.
#   --only: run only these jobs (default: all): startup jpeg_half png_half jpeg4k_224_png png16_half folder_thumbs
#            crops64 rss camera_thumb shell_loop python_calls coco_big. The report has the jobs run.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=
only=
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --only) only=${2:?--only takes a comma-separated list of jobs}; shift ;;
    --only=*) only=${1#--only=} ;;
    *) echo "usage: bash bench/cli_bench.sh [--quick] [--only JOB,JOB,...]" >&2; exit 2 ;;
  esac
  shift
done
all_jobs=" startup jpeg_half png_half jpeg4k_224_png png16_half folder_thumbs crops64 rss camera_thumb shell_loop python_calls coco_big "
for j in ${only//,/ }; do
  [[ $all_jobs == *" $j "* ]] || { echo "cli-bench: --only: no job $j (jobs:$all_jobs)" >&2; exit 2; }
done
want() { [ -z "$only" ] || [[ ",$only," == *",$1,"* ]]; }
root=$PWD
# The peers as Debian installs them: a machine may put wrappers of the same names earlier in PATH (a convert that
# hands its calls on to the real one); the bench times the real programs.
export PATH="/usr/bin:$PATH"

bash scripts/install-deps.sh hyperfine libvips-tools imagemagick python3-pil time

cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DRSZ_BUILD_TESTS=OFF > /dev/null
jobs=$(nproc)
((jobs <= 2)) || jobs=2  # the bench machine is shared: at most 2 compile jobs
cmake --build build-bench -j"$jobs" --target rsz rsz_opencv_codecs
rsz="$root/build-bench/app/rsz"
work="$root/build-bench/cli"
rm -rf "$work"
mkdir -p "$work/results"
# The codecs alone (bench/codec_floor.cpp): each single-file job's input decoded and its output encoded with the same
# libraries and rsz's default settings, in one process: the floor beside each rsz row.
floor="$root/build-bench/codec_floor"
g++ -O2 -std=c++17 "$root/bench/codec_floor.cpp" -ljpeg -lpng -ldeflate -o "$floor"
# The Python module (python/, target _rsz) for python_calls: built where pybind11 and the Python headers are; where it
# cannot be, the report says why instead of the bench failing.
python_module=
if want python_calls; then
  if cmake --build build-bench -j"$jobs" --target _rsz > "$work/results/python_build.log" 2>&1; then
    python_module="$root/build-bench/python"
  else
    echo "cli-bench: the Python module (target _rsz) did not build; see build-bench/cli/results/python_build.log" >&2
  fi
fi
cd "$work"

runs=7
folder_runs=3
loop_runs=3
coco_runs=3
[ -z "$quick" ] || { runs=3; folder_runs=1; loop_runs=1; coco_runs=1; }
py=/usr/bin/python3
echo "cli-bench: making the inputs from samples/photos" >&2
skip=()
want camera_thumb || skip+=(cam8k)
want coco_big || skip+=(coco_big)
skip_list=$(IFS=,; echo "${skip[*]:-}")
"$py" "$root/bench/cli_inputs.py" "$root/samples/photos" "$work" ${skip_list:+--skip "$skip_list"}
convert in1080.png -depth 16 PNG48:in16.png  # a 16-bit RGB PNG

# hyperfine: one file of results per job; every command cleans its outputs first where it writes a folder.
warmup=1
named_job() {  # named_job NAME RUNS TOOL CMD [TOOL CMD]...
  local name=$1 n=$2
  shift 2
  local args=()
  while (($#)); do
    args+=(-n "$1" "$2")
    printf '%s\t%s\t%s\n' "$name" "$1" "$2" >> results/commands.tsv
    shift 2
  done
  echo "cli-bench: $name" >&2
  # The shell hyperfine starts each command in is measured and subtracted by hyperfine itself.
  hyperfine --style basic --warmup "$warmup" --runs "$n" --export-json "results/$name.json" "${args[@]}" > /dev/null
}
job() {  # [FLOOR=cmd] job NAME RUNS rsz-cmd vips-cmd magick-cmd pillow-cmd [vipsthumbnail-cmd]
  want "$1" || return 0
  local name=$1 n=$2
  shift 2
  local names=(rsz vips ImageMagick Pillow vipsthumbnail)
  local args=()
  local i=0
  for cmd in "$@"; do
    args+=("${names[$i]}" "$cmd")
    i=$((i + 1))
  done
  [ -z "${FLOOR:-}" ] || args+=("codecs alone" "$FLOOR")
  named_job "$name" "$n" "${args[@]}"
}
# The floor's raster: rsz's output pixels of the job as a PPM (8 or 16 bits), made once before the job is timed.
raster() {  # raster NAME rsz-args...
  want "$1" || return 0
  shift
  "$rsz" "$@" -q
}
# CPU time and peak memory: /usr/bin/time's user s, system s and max RSS KiB, one line per run: TOOL<tab>USER SYS KIB.
cpu_rss() {  # cpu_rss FILE RUNS TOOL CMD (CMD run by sh -c, its output to /dev/null)
  local file=$1 n=$2 tool=$3 cmd=$4 r
  for ((r = 0; r < n; r++)); do
    /usr/bin/time -o results/time.tmp -f '%U %S %M' sh -c "$cmd" > /dev/null || return 1
    printf '%s\t%s\n' "$tool" "$(tail -n 1 results/time.tmp)" >> "$file"
  done
}

job startup "$runs" "$rsz --version" "vips --version" "convert -version" "$py -c 'import PIL.Image'"
raster jpeg_half resample -i in1080.jpg -o f_half.ppm --scale 0.5
raster png_half resample -i in1080.png -o f_halfp.ppm --scale 0.5
raster jpeg4k_224_png resample -i in4k.jpg -o f_224.ppm --size 224x224
raster png16_half resample -i in16.png -o f_16.ppm --scale 0.5
raster camera_thumb thumbnail -i cam8k.jpg -o f_cam.ppm --size 512
FLOOR="$floor in1080.jpg f_half.ppm f_half.jpg 95" job jpeg_half "$runs" \
  "$rsz resample -i in1080.jpg -o r_half.jpg --scale 0.5 -q" \
  "vips resize in1080.jpg v_half.jpg 0.5 --kernel linear" \
  "convert in1080.jpg -filter Triangle -resize 50% m_half.jpg" \
  "$py $root/bench/cli_pillow.py resize in1080.jpg p_half.jpg 960 540" \
  "vipsthumbnail in1080.jpg -s 960x540 -o t_half.jpg"
FLOOR="$floor in1080.png f_halfp.ppm f_half.png" job png_half "$runs" \
  "$rsz resample -i in1080.png -o r_half.png --scale 0.5 -q" \
  "vips resize in1080.png v_half.png 0.5 --kernel linear" \
  "convert in1080.png -filter Triangle -resize 50% m_half.png" \
  "$py $root/bench/cli_pillow.py resize in1080.png p_half.png 960 540"
FLOOR="$floor in4k.jpg f_224.ppm f_224.png" job jpeg4k_224_png "$runs" \
  "$rsz resample -i in4k.jpg -o r_224.png --size 224x224 -q" \
  "vips resize in4k.jpg v_224.png 0.058333333 --vscale 0.103703704 --kernel linear" \
  "convert in4k.jpg -filter Triangle -resize 224x224! m_224.png" \
  "$py $root/bench/cli_pillow.py resize in4k.jpg p_224.png 224 224" \
  "vipsthumbnail in4k.jpg -s 224x224! -o t_224.png"
FLOOR="$floor in16.png f_16.ppm f_16.png" job png16_half "$runs" \
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

if want rss; then
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
fi

# A camera-size JPEG (8000x6000, 9 MB) to a 512-px thumbnail: rsz exact (every pixel decoded, band by band) and with
# --shrink-on-load, against the shrink-on-load tools: vipsthumbnail, Pillow's draft + thumbnail, ImageMagick with the
# jpeg:size hint. Then the CPU time and peak memory of each (3 runs, medians in the report).
if want camera_thumb; then
  cam=(rsz "$rsz thumbnail -i cam8k.jpg -o r_cam.jpg --size 512 -q"
       "rsz --shrink-on-load" "$rsz thumbnail -i cam8k.jpg -o r_cam_sol.jpg --size 512 --shrink-on-load -q"
       vipsthumbnail "vipsthumbnail cam8k.jpg -s 512 -o t_cam.jpg"
       Pillow "$py $root/bench/cli_pillow.py thumbnail cam8k.jpg p_cam.jpg 512"
       ImageMagick "convert -define jpeg:size=1024x1024 cam8k.jpg -thumbnail 512x512 m_cam.jpg"
       "codecs alone" "$floor cam8k.jpg f_cam.ppm f_cam.jpg 95")
  named_job camera_thumb "$runs" "${cam[@]}"
  echo "cli-bench: camera_thumb CPU time and peak memory" >&2
  for ((k = 0; k < ${#cam[@]}; k += 2)); do
    cpu_rss results/camera_thumb_time.txt 3 "${cam[$k]}" "${cam[$((k + 1))]}"
  done
fi

# 200 photos to 256-px thumbnails one process per file, as a user's shell loop does: start-up and small-file overhead.
if want shell_loop; then
  loop() { echo "rm -rf $1 && mkdir $1 && for f in photos/*.jpg; do $2; done"; }
  warmup=0
  [ -n "$quick" ] || warmup=1
  named_job shell_loop "$loop_runs" \
    rsz "$(loop r_loop "$rsz thumbnail -i \"\$f\" -o \"r_loop/\${f##*/}\" --size 256 -q")" \
    vipsthumbnail "$(loop t_loop "vipsthumbnail \"\$f\" -s 256 -o $work/t_loop/%s.jpg")" \
    ImageMagick "$(loop m_loop "convert \"\$f\" -thumbnail 256x256 \"m_loop/\${f##*/}\"")" \
    Pillow "$(loop p_loop "$py $root/bench/cli_pillow.py thumbnail \"\$f\" \"p_loop/\${f##*/}\" 256")"
  warmup=1
fi

# rsz's Python module against torch, per call (timeit).
if want python_calls; then
  echo "cli-bench: python_calls" >&2
  if [ -z "$python_module" ]; then
    echo "the Python module (CMake target _rsz) did not build in build-bench: $(grep -m1 -iE 'error|unknown target|no rule' results/python_build.log || tail -n 1 results/python_build.log)" > results/python_calls.txt
  elif ! PYTHONPATH="$python_module" "$py" "$root/bench/cli_python_calls.py" ${quick:+--quick} results/python_calls.json 2> results/python_calls.log; then
    cat results/python_calls.log >&2
    echo "bench/cli_python_calls.py failed: $(tail -n 1 results/python_calls.log)" > results/python_calls.txt
  fi
  printf 'python_calls\trsz, torch\t%s\n' "PYTHONPATH=build-bench/python $py BENCH/cli_python_calls.py" >> results/commands.tsv
fi

# A COCO file of train2017's size: rsz's parsing and planning (a dry run, nothing decoded or written; its line per crop
# to /dev/null) against Python's json.load, the first thing pycocotools' COCO() does. rsz's default memory budget
# (the smallest of 4 GiB and half the RAM) may refuse the file (a JSON file needs twice its size to read, then what
# its document builds is counted): the refusal is recorded and the job timed with --max-memory 17G. Peak memory first (one run of each); in quick mode
# the timed runs are skipped when that one run of each took more than two minutes.
if want coco_big; then
  rsz_coco="$rsz roi-align --rois coco_big.json --image-root photos --output-size 32x32 -o 'c/{id}.png' --dry-run"
  echo "cli-bench: coco_big: rsz with its default memory budget" >&2
  if ! sh -c "$rsz_coco" > /dev/null 2> results/coco_big_refusal.txt; then
    printf 'coco_big\t%s\t%s\n' "rsz, default budget (refused)" "$rsz_coco > /dev/null" >> results/commands.tsv
    rsz_coco+=" --max-memory 17G"
  else
    rm -f results/coco_big_refusal.txt
  fi
  coco=(rsz "$rsz_coco > /dev/null"
        "Python json.load" "$py -c 'import json; json.load(open(\"coco_big.json\"))'")
  echo "cli-bench: coco_big peak memory" >&2
  start=$(date +%s)
  if cpu_rss results/coco_big_time.txt 1 "${coco[0]}" "${coco[1]}" &&
     cpu_rss results/coco_big_time.txt 1 "${coco[2]}" "${coco[3]}"; then
    took=$(($(date +%s) - start))
    if [ -n "$quick" ] && ((took > 120)); then
      echo "cli-bench: coco_big timing skipped in quick mode (one run of each took ${took} s)" >&2
      echo "timing skipped in quick mode: one run of each took ${took} s" > results/coco_big.txt
      printf 'coco_big\t%s\t%s\n' "${coco[0]}" "${coco[1]}" "${coco[2]}" "${coco[3]}" >> results/commands.tsv
    else
      warmup=0
      named_job coco_big "$coco_runs" "${coco[@]}"
      warmup=1
    fi
  else
    echo "cli-bench: coco_big failed; see results/coco_big.txt" >&2
    echo "not measured: a command failed" > results/coco_big.txt
    printf 'coco_big\t%s\t%s\n' "${coco[0]}" "${coco[1]}" "${coco[2]}" "${coco[3]}" >> results/commands.tsv
  fi
fi
rm -f results/time.tmp
"$py" "$root/bench/cli_report.py" results "$(nproc)" "$(lscpu | sed -n 's/^Model name: *//p')" > "$root/bench/RESULTS_CLI.md"
echo "cli-bench: wrote bench/RESULTS_CLI.md" >&2
