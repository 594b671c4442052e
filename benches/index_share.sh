#!/usr/bin/env bash
# What the search indexes add to a full build: builds CORPUS with them and without them
# (`--no-search-index`) in turn, PAIRS times, and prints each time and the medians.
# Alternating, not one batch after the other: on a shared VM the machine's speed drifts
# by several percent within minutes, which one hyperfine call per variant reads as a
# difference between the two.
#
#   benches/index_share.sh CORPUS/casebook [PAIRS] [OUT_DIR]
#
# Each variant builds into its own folder under OUT_DIR (default /dev/shm), replacing its
# previous output as a user's next build does; one untimed build of each comes first.
set -euo pipefail
root=${1:?usage: benches/index_share.sh CORPUS/casebook [PAIRS] [OUT_DIR]}
pairs=${2:-15}
out=${3:-/dev/shm}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release --quiet --manifest-path "$here/Cargo.toml"
casebook="$here/target/release/casebook"

with=(); without=()
build() { # prints the wall time of one build, in seconds
    local start end
    start=$(date +%s%N)
    "$casebook" build -q --no-cache --root "$root" "$@" >/dev/null
    end=$(date +%s%N)
    echo "scale=3; ($end - $start) / 1000000000" | bc
}
build -o "$out/share-with" >/dev/null
build -o "$out/share-without" --no-search-index >/dev/null
for _ in $(seq "$pairs"); do
    with+=("$(build -o "$out/share-with")")
    without+=("$(build -o "$out/share-without" --no-search-index)")
done
rm -rf "$out/share-with" "$out/share-without"

median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'; }
m_with=$(median "${with[@]}")
m_without=$(median "${without[@]}")
echo "with the indexes:    ${with[*]}"
echo "without the indexes: ${without[*]}"
echo "median with $m_with s, without $m_without s: the indexes add" \
    "$(echo "scale=3; $m_with - $m_without" | bc) s," \
    "$(echo "scale=1; 100 * ($m_with - $m_without) / $m_without" | bc) % of the build without them"
