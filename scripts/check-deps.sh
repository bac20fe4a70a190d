#!/usr/bin/env bash
# Proves scripts/install-deps.sh complete for a configured build folder: every package-config
# file and every library or tool that CMake found under /usr (the build's CMakeCache.txt and
# its link lines) belongs to a Debian package that install-deps installs or that one of those
# pulls in (Depends/Pre-Depends, recursively). Anything else would build here only because it
# happened to be installed by hand, and fail on a fresh machine.
#
#   scripts/check-deps.sh BUILD_DIR [--without PACKAGE ...]
#
# --without drops packages from the list first (the test that this check can fail uses it).
# Exit 0: complete. Exit 1: names each file, what found it, and the package that owns it.
# Exit 2: bad arguments or not a Debian system. /usr/local (the CUDA toolkit's runfile
# install) holds no Debian packages and is not checked.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { echo "usage: scripts/check-deps.sh BUILD_DIR [--without PACKAGE ...]" >&2; exit 2; }
[ $# -ge 1 ] || usage
build="$1"
shift
without=()
while [ $# -gt 0 ]; do
  case "$1" in
    --without) [ $# -ge 2 ] || usage; without+=("$2"); shift 2 ;;
    *) usage ;;
  esac
done
cache="$build/CMakeCache.txt"
[ -f "$cache" ] || { echo "check-deps: $cache not found (configure the build first)" >&2; exit 2; }
command -v dpkg-query >/dev/null && command -v apt-cache >/dev/null ||
  { echo "check-deps: needs dpkg-query and apt-cache (a Debian system)" >&2; exit 2; }

# The declared list, less --without.
declared=()
while read -r p; do
  skip=0
  for w in "${without[@]+"${without[@]}"}"; do [ "$p" = "$w" ] && skip=1; done
  [ $skip -eq 1 ] || declared+=("$p")
done < <(scripts/install-deps.sh --list)

# What CMake found: "file<TAB>how it was found".
found="$(mktemp)"
trap 'rm -f "$found"' EXIT
while IFS='=' read -r key value; do
  name="${key%%:*}"
  case "$value" in /usr/local/*|"") continue ;; /usr/*) ;; *) continue ;; esac
  case "$key" in
    *_DIR:PATH)  # a package-config folder: its *Config.cmake / *-config.cmake file
      for f in "$value"/*Config.cmake "$value"/*-config.cmake; do
        [ -f "$f" ] && { printf '%s\t%s\n' "$f" "$name" >>"$found"; break; }
      done ;;
    *:FILEPATH|*:INTERNAL)
      [ -f "$value" ] && printf '%s\t%s\n' "$value" "$name" >>"$found" ;;
  esac
done < <(grep -E '^[A-Za-z0-9_]+:(PATH|FILEPATH|INTERNAL)=/usr/' "$cache")
# Our own find_path for cblas.h names a folder shared by many packages: check the header.
cblas_dir="$(sed -n 's/^HDLAB_CBLAS_INCLUDE_DIR:PATH=//p' "$cache")"
[ -n "$cblas_dir" ] && [ -f "$cblas_dir/cblas.h" ] && printf '%s\t%s\n' "$cblas_dir/cblas.h" HDLAB_CBLAS_INCLUDE_DIR >>"$found"
# Libraries and tools on the link lines of every target.
while read -r f; do
  printf '%s\t%s\n' "$f" "a link line" >>"$found"
done < <(find "$build" -name link.txt -exec cat {} + | tr ' ' '\n' | grep -E '^/usr/' | grep -v '^/usr/local/' | sort -u)

# The owner of each file, from one dpkg-query call over every form of its path: dpkg knows a
# path as its package installed it, Debian 12 merges /bin and /lib into /usr, and
# alternatives (/usr/bin/c++) are links to the real file.
declare -A owner=()
mapfile -t files < <(cut -f1 "$found" | sort -u)
candidates=()
for f in "${files[@]}"; do candidates+=("$f" "${f#/usr}" "$(readlink -f "$f")"); done
while IFS= read -r line; do
  pkgs="${line%%: /*}"
  path="${line#*: }"
  owner["$path"]="$(sed 's/, .*//; s/:.*//' <<<"$pkgs")"
done < <(dpkg-query -S "${candidates[@]}" 2>/dev/null | grep -E '^[^ ]+(, [^ ]+)*: /' || true)

# Covered: the declared packages, what they depend on, Debian's essential packages
# (coreutils, ...), which every Debian system has, and apt, which install-deps.sh itself
# runs (a system without it cannot run the README's commands at all).
closure="$( (apt-cache depends --recurse --installed --no-recommends --no-suggests --no-conflicts \
  --no-breaks --no-replaces --no-enhances "${declared[@]}" 2>/dev/null | grep -v '^ ' | sed 's/:.*//'
  dpkg-query -W -f='${Package} ${Essential}\n' | awk '$2 == "yes" {print $1}'
  echo apt) | sort -u)"

checked=0
packages=()
problems=0
while IFS=$'\t' read -r f how; do
  checked=$((checked + 1))
  pkg=""
  for c in "$f" "${f#/usr}" "$(readlink -f "$f")"; do
    [ -n "${owner[$c]:-}" ] && { pkg="${owner[$c]}"; break; }
  done
  if [ -z "$pkg" ]; then
    echo "check-deps: $f (found by CMake as $how) belongs to no Debian package"
    problems=$((problems + 1))
    continue
  fi
  packages+=("$pkg")
  if ! grep -qxF "$pkg" <<<"$closure"; then
    echo "check-deps: $f (found by CMake as $how) belongs to package $pkg, which scripts/install-deps.sh neither installs nor pulls in"
    problems=$((problems + 1))
  fi
done < <(sort -u -t$'\t' -k1,1 "$found")

distinct="$(printf '%s\n' "${packages[@]+"${packages[@]}"}" | sort -u | grep -c . || true)"
if [ $problems -gt 0 ]; then
  echo "check-deps: FAILED: $problems of $checked files CMake found under /usr are not covered by scripts/install-deps.sh"
  exit 1
fi
echo "check-deps: $checked files CMake found under /usr belong to $distinct packages, all installed by scripts/install-deps.sh or pulled in by one it installs"
