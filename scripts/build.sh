#!/usr/bin/env bash
# Configures and builds hdlab into build/ (or the folder given as $1, with extra CMake
# arguments after it). CUDA is built when nvcc is found, the GUI when Qt6 is.
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"
shift || true
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
jobs="$(nproc)"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
cmake --build "$dir" -j "$jobs"
