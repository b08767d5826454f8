# bash completion for rsz: subcommands, each subcommand's flags, the values of choice flags, and file or folder
# names where a flag takes a path. Installed to share/bash-completion/completions/rsz (loaded on demand by the
# bash-completion package); or source it from ~/.bashrc. tests/cli checks it against `rsz <command> --help`.

_rsz_flags() {
  local io="-h --help -i --input -o --output --config --dtype -j --jobs --json -n --dry-run -q --quiet -r --recursive --hidden
            --no-exif --alpha --backend --device -v --verbose --max-pixels --max-memory --quality --png-compression --skip-existing
            --grayscale --colorspace --depth --format --tar-part-size --strip --no-sync --lossless --strict --background --shard --plan"
  case $1 in
    resample) echo "$io --mode --scale --size --fit --gravity --width --height --scales --input-offsets --output-offsets
                    --output-sizes --preset --antialias --rounding-direction --shrink-on-load --decode --encode --linear" ;;
    thumbnail) echo "$io --size --fit --gravity --mode --enlarge --no-antialias --shrink-on-load --decode --encode --linear" ;;
    upsample) echo "$io --factor --mode" ;;
    roi-align) echo "$io --rois --image-root --allow-outside-root --names --rois-check --size-mismatch --skip-crowd --skip-difficult
                     --manifest --batch-indices --output-size --reduction --mode --samples --spatial-scale --oob-value
                     --input-offset --output-offset --align-corners --max-samples --decode --encode" ;;
    run) echo "-h --help -o --output --dtype -j --jobs --json -n --dry-run -q --quiet -r --recursive --hidden --no-exif --alpha
               --backend --device -v --verbose --max-pixels --max-memory --max-samples --quality --lossless --strict --background
               --no-sync --strip --grayscale --colorspace --depth --skip-existing --png-compression --shrink-on-load --decode --encode --linear --shard --plan" ;;
    plan) echo "-h --help -i --input -r --recursive --hidden --shards -o --output -q --quiet" ;;
    merge) echo "-h --help --json --clean" ;;
    info) echo "-h --help -r --recursive --json --no-exif --backends" ;;
  esac
}

_rsz() {
  local cur=${COMP_WORDS[COMP_CWORD]}
  local prev=${COMP_WORDS[COMP_CWORD - 1]}
  local command="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      resample | thumbnail | upsample | roi-align | run | plan | merge | info) command=${COMP_WORDS[i]}; break ;;
    esac
  done
  if [[ -z $command ]]; then
    COMPREPLY=($(compgen -W "resample thumbnail upsample roi-align run plan merge info -h --help -V --version" -- "$cur"))
    return
  fi
  case $prev in
    --dtype) COMPREPLY=($(compgen -W "float32 float16" -- "$cur")); return ;;
    --alpha) COMPREPLY=($(compgen -W "premultiplied straight" -- "$cur")); return ;;
    --backend) COMPREPLY=($(compgen -W "auto cpu reference cuda" -- "$cur")); return ;;
    --mode) COMPREPLY=($(compgen -W "nearest linear" -- "$cur")); return ;;
    --reduction) COMPREPLY=($(compgen -W "average max" -- "$cur")); return ;;
    --rois-check) COMPREPLY=($(compgen -W "warn error off skip" -- "$cur")); return ;;
    --size-mismatch) COMPREPLY=($(compgen -W "fail scale" -- "$cur")); return ;;
    --depth) COMPREPLY=($(compgen -W "8 16" -- "$cur")); return ;;
    --colorspace) COMPREPLY=($(compgen -W "keep srgb" -- "$cur")); return ;;
    --format) COMPREPLY=($(compgen -W "png jpg bmp tif webp ppm pgm npy" -- "$cur")); return ;;
    --fit) COMPREPLY=($(compgen -W "fill inside outside cover contain" -- "$cur")); return ;;
    --gravity)
      COMPREPLY=($(compgen -W "center north south east west northeast northwest southeast southwest" -- "$cur"))
      return ;;
    --rounding-direction)
      COMPREPLY=($(compgen -W "round_prefer_ceil round_prefer_floor floor ceil decreasing increasing" -- "$cur"))
      return ;;
    --preset) COMPREPLY=($(compgen -W "half_pixel align_corners asymmetric nearest_floor" -- "$cur")); return ;;
    -i | --input | -o | --output | --config | --rois | --names | --manifest | --batch-indices)
      compopt -o filenames 2> /dev/null
      COMPREPLY=($(compgen -f -- "$cur"))
      return ;;
    --image-root | --plan)
      compopt -o filenames 2> /dev/null
      COMPREPLY=($(compgen -d -- "$cur"))
      return ;;
    -j | --jobs | --width | --height | --quality | --png-compression | --max-pixels | --max-memory | --max-samples | \
      --scale | --size | --scales | --input-offsets | --output-offsets | --output-sizes | --factor | --output-size | \
      --samples | --spatial-scale | --oob-value | --input-offset | --output-offset | --shard | --shards | --tar-part-size)
      return ;;  # a value: nothing to offer
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_rsz_flags "$command")" -- "$cur"))
  elif [[ $command == merge ]]; then
    compopt -o filenames 2> /dev/null
    COMPREPLY=($(compgen -d -- "$cur"))  # the plan's state folder
  elif [[ $command == run || $command == info ]]; then
    compopt -o filenames 2> /dev/null
    COMPREPLY=($(compgen -f -- "$cur"))  # the batch file; info's inputs
  fi
}

complete -F _rsz rsz
