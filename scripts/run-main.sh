#!/usr/bin/env bash
# The main job on bundled defaults: installs what is missing, builds, and runs the default
# sweep (profiles/sweeps/default.json): Qwen3-8B on one H100 SXM under the baseline, HD
# n = 2/4/8 (every 4th layer full, the rest intra-stream), PHD-CSWA K = 2/3, VWN
# r = 1.5/4/8 and looped x2/x4. It prints the training-step cost ratio, the prefill time of
# a 4096-token prompt, decode tokens/s at batch 1 and 16 with 8192 tokens of context and
# the KV cache of one 32k-token sequence; every row (CSV + JSON) lands in out/default/.
# Before it: parameter counts under HD n = 2/4/8; after it: PNG masks of an intra layer.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
hdlab=build/cli/hdlab
model=profiles/models/qwen3-8b.json
echo
$hdlab params "$model" -d baseline -d hd:n=2 -d hd:n=4 -d hd:n=8
echo
# --fresh: the main job always recomputes (a rebuilt hdlab refuses to resume rows an
# earlier build computed).
$hdlab sweep profiles/sweeps/default.json -o out/default --fresh
echo
for n in 2 4 8; do
  # Layer 0 is intra-stream under this layout (layers 3, 7, ... are full); 64 tokens.
  $hdlab mask "$model" -d "{\"hd\": {\"n\": $n, \"layers\": {\"full_every\": 4}}}" --layer 0 --tokens 64 \
    --layout stream_major --png "out/qwen3-8b-hd$n-intra.png"
done
echo
echo "Sweep results in out/default/ (results.csv, results.json, table.txt, summary.json); PNG masks in out/"
