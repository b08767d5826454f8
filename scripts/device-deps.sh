#!/usr/bin/env bash
# Packs what a build of rsz with its codecs (RSZ_BUILD_IO=ON, RSZ_OPENCV_MODULE=OFF) needs from Debian into
# third_party/device-deps/ (git-ignored), for a machine that has a compiler, CMake and nvcc but no Debian packages,
# such as the GPU machine the `device` tool lends: name the folder in its `carry`, then run
#   RSZ_DEPS_DIR=third_party/device-deps bash scripts/test-cuda.sh
# Holds the headers, libraries and CMake package files of the libraries rsz::io links (libpng, zlib, libjpeg-turbo,
# giflib, pugixml, yaml-cpp), the headers (and the library file, whose soname the build records) of those it loads
# with dlopen (libheif, lcms2, libjxl, libarchive), the header-only CLI11 and nlohmann/json, and GoogleTest's sources.
# The libraries keep Debian's glibc needs (2.32 at most for the linked ones); the machine's compiler and libstdc++
# must be as new as Debian 12's (GCC 12). About 18 MB.
# usage: bash scripts/device-deps.sh [FOLDER]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-third_party/device-deps}
packages=(libpng-dev libpng16-16 zlib1g-dev zlib1g libjpeg62-turbo-dev libjpeg62-turbo libgif-dev libgif7
          libpugixml-dev libpugixml1v5 libyaml-cpp-dev libyaml-cpp0.7 libheif-dev libheif1 liblcms2-dev liblcms2-2
          libjxl-dev libjxl0.7 libarchive-dev libarchive13 libcli11-dev nlohmann-json3-dev googletest)
bash scripts/install-deps.sh "${packages[@]}" > /dev/null
rm -rf "$out"
mkdir -p "$out"
for package in "${packages[@]}"; do
  # Headers, libraries and CMake / pkg-config files; not documentation.
  dpkg -L "$package" | while read -r file; do
    [[ -d $file ]] && continue  # folders (and /lib, a link to one) are made as their files need them
    [[ -f $file || -L $file ]] || continue
    case $file in
      /usr/share/doc/* | /usr/share/man/* | /usr/share/lintian/* | /usr/bin/*) continue ;;
    esac
    mkdir -p "$out$(dirname "$file")"
    cp -a "$file" "$out$file"
  done
done
# Debian's /lib is /usr/lib: keep both spellings working for the symbolic links packages ship.
if [[ -d $out/lib ]]; then
  mkdir -p "$out/usr/lib"
  cp -a "$out/lib/." "$out/usr/lib/"  # zlib's library is listed under /lib
  rm -rf "$out/lib"
fi
# Links to absolute paths (zlib's libz.so -> /lib/...) point into this machine, not the copy: made relative, or the
# device machine's linker finds no libz.so and takes libz.a, which a shared module (Python's) cannot link.
find "$out" -type l -lname '/*' | while read -r link; do
  target=$(readlink "$link")
  ln -sfn "$(basename "$target")" "$link"
done
echo "device-deps: $(du -sh "$out" | cut -f1) in $out"
