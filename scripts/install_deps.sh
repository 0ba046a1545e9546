#!/usr/bin/env bash
# Installs the Debian packages kerascpp builds against (idempotent: apt-get skips what is there).
# Usage: scripts/install_deps.sh [extra Debian packages...]
set -euo pipefail
packages=(cmake ninja-build g++ pkg-config libdnnl-dev libhdf5-dev libprotobuf-dev protobuf-compiler
          libfmt-dev nlohmann-json3-dev doctest-dev libcli11-dev zlib1g-dev libzip-dev libisal-dev libjpeg62-turbo-dev
          libpng-dev dataset-fashion-mnist ocl-icd-opencl-dev libopenmpi-dev openmpi-bin libgloo-dev libgrpc++-dev
          protobuf-compiler-grpc "$@")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
