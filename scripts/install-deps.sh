#!/usr/bin/env bash
# Installs the Debian 12 packages rsz needs to build and test, if any are missing (idempotent; root or sudo).
# Further package names given as arguments (the benchmarks' peers) are installed the same way.
# usage: bash scripts/install-deps.sh [PACKAGE...]
set -euo pipefail

# The Python module: pybind11-dev, python3-dev, python3-numpy; its tests: python3-pytest and the peers it is checked
# against, python3-torch, python3-torchvision and python3-pil (GIF pixels). The engine tests (tests/engines) and bench/engines_bench.sh: a local
# Slurm (slurmctld, slurmd, slurm-client, munge; started by scripts/slurm-local.sh, never as services) and Dask
# (python3-distributed). The docs' GNU parallel recipe (tests/python/test_docs.py): parallel.
packages=(g++ make cmake pkgconf libgtest-dev libcli11-dev nlohmann-json3-dev libpng-dev libjpeg-dev libgif-dev libheif-dev libheif-examples liblcms2-dev libjxl-dev libjxl-tools libopencv-imgcodecs-dev
          libwebp-dev libtiff-dev libpugixml-dev libyaml-cpp-dev libarchive-dev libdeflate-dev help2man pybind11-dev python3-dev python3-numpy python3-pytest python3-torch python3-torchvision python3-pil
          slurmctld slurmd slurm-client munge python3-distributed parallel
          "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
((${#missing[@]})) || exit 0

echo "rsz: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
apt_opts=(-o DPkg::Lock::Timeout=600 -q)
# Packages that ship a service (munge, slurmctld, slurmd) start it from their postinst through invoke-rc.d; on a
# machine or container without systemd that would start daemons (or hang). A policy-rc.d that denies every start
# (exit 101) stops that for this install only, where the machine has none of its own.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\n# rsz install-deps.sh: no service starts while packages install\nexit 101\n' |
    "${sudo_cmd[@]}" tee /usr/sbin/policy-rc.d >/dev/null
  "${sudo_cmd[@]}" chmod 755 /usr/sbin/policy-rc.d
  trap '"${sudo_cmd[@]}" rm -f /usr/sbin/policy-rc.d' EXIT
fi
"${sudo_cmd[@]}" apt-get "${apt_opts[@]}" update
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get "${apt_opts[@]}" install -y --no-install-recommends \
  "${missing[@]}"
