#!/usr/bin/env bash
# Installs the Debian 12 packages hdlab builds with, only those that are missing.
# `install-deps.sh --list` prints the list (scripts/check-deps.sh proves it complete).
set -euo pipefail
packages=(
  build-essential cmake g++ clang libclang-rt-14-dev
  nlohmann-json3-dev catch2 libboost-graph-dev libopenblas-dev libcli11-dev libfmt-dev
  libpng-dev libbenchmark-dev pkgconf libnlopt-cxx-dev
  # the GUI and chart export: Qt6Charts' CMake package needs Qt6OpenGL and xkbcommon
  qt6-base-dev qt6-charts-dev qt6-svg-dev libqt6opengl6-dev libxkbcommon-dev libgl-dev
  # FindOpenGL (run by Qt's package) records these where present: listed, so that what
  # CMake finds is what this script installs (scripts/check-deps.sh checks it)
  libegl-dev libglu1-mesa-dev libglu1-mesa
)
if [ "${1:-}" = "--list" ]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
