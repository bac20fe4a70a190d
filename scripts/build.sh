#!/usr/bin/env bash
# Configures and builds hdlab into build/ (or the folder given as $1, with extra CMake
# arguments after it). CUDA is built when nvcc is found; the GUI is part of the build
# (configuring stops, naming the packages, when Qt6 is missing; -DHDLAB_GUI=OFF leaves it
# out). Prints configure's one-line summary of the parts built.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
jobs="$(nproc)"
mkdir -p "$dir"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
grep -E '^-- hdlab [0-9]' "$dir.configure.log" | sed 's/^-- //'
cmake --build "$dir" -j "$jobs"
