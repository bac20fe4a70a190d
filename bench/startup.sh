#!/usr/bin/env bash
# Start-up cost of the hdlab command: wall time and peak memory of `hdlab --version` and
# of an analytical verb (`hdlab cost`), median of N runs each (default 20), measured with
# /usr/bin/time -f "%e %M" (its wall time has 10 ms steps, so the wall time is also taken
# around each run from bash's microsecond clock). Also lists the CUDA libraries the binary
# links at load time (none since the CUDA backend is a module loaded on demand).
#
#   bench/startup.sh [HDLAB_BINARY] [RUNS]        default build/cli/hdlab, 20
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-build/cli/hdlab}"
runs="${2:-20}"
[ -x "$bin" ] || { echo "startup.sh: no executable at $bin (build it, or name it)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "startup.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# measure NAME ARGS...: prints NAME, median wall ms (bash clock), median %e s, median max RSS MiB.
measure() {
  local name="$1"; shift
  : >"$scratch/wall"; : >"$scratch/e"; : >"$scratch/rss"
  for ((i = 0; i < runs; ++i)); do
    local t0=$EPOCHREALTIME
    /usr/bin/time -f "%e %M" -o "$scratch/time" "$bin" "$@" >/dev/null 2>"$scratch/stderr" ||
      { echo "startup.sh: '$bin $*' failed:" >&2; cat "$scratch/stderr" >&2; exit 1; }
    local t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.3f\n", (b - a) * 1000}' >>"$scratch/wall"
    tail -n 1 "$scratch/time" | awk '{print $1 >> "'"$scratch/e"'"; print $2 / 1024 >> "'"$scratch/rss"'"}'
  done
  printf "%-10s %10.1f ms %10.2f s %10.1f MiB\n" "$name" "$(median <"$scratch/wall")" "$(median <"$scratch/e")" \
    "$(median <"$scratch/rss")"
}

echo "binary: $bin ($runs runs each, medians)"
echo "CUDA libraries loaded with it: $(ldd "$bin" | awk '{print $1}' | grep -E '^lib(cudart|cublas|cublasLt|cuda)\.so' | tr '\n' ' ' || true)"
printf "%-10s %13s %12s %14s\n" "verb" "wall (clock)" "wall (%e)" "max RSS (%M)"
measure "--version" --version
measure "cost" cost profiles/models/qwen3-8b.json -d hd:n=4 --hw h100-sxm
