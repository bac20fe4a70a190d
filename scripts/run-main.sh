#!/usr/bin/env bash
# The main job on bundled defaults: installs what is missing, builds, and prints the
# parameter and mask report for Qwen3-8B under baseline and HD n = 2 / 4 / 8.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
hdlab=build/cli/hdlab
model=profiles/models/qwen3-8b.json
echo
$hdlab params "$model" -d baseline -d hd:n=2 -d hd:n=4 -d hd:n=8
mkdir -p out
for n in 2 4 8; do
  design="{\"hd\": {\"n\": $n, \"layers\": {\"full_every\": 4}}}"
  echo
  echo "== HD n=$n (every 4th layer full, the rest intra): 4096-token prefill, 128x128 tiles =="
  for layer in 3 0; do
    for layout in interleaved stream_major; do
      $hdlab mask "$model" -d "$design" --layer $layer --tokens 4096 --tile 128x128 --layout $layout --summary
    done
  done
  $hdlab mask "$model" -d "$design" --layer 0 --tokens 64 --layout stream_major --png "out/qwen3-8b-hd$n-intra.png"
done
echo
echo "PNG masks written to out/"
