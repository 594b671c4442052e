#!/usr/bin/env bash
# Records in one run (docs/performance.md, "One run of many records"): `check` and
# `build` on one system with one run of N records (benches/gen_one_run.py), where a pass
# over the whole run for each record would be quadratic. Prints wall time and peak memory
# per size, and the growth from one size to the next.
# Usage: benches/one_run.sh [N ...]          (default: 1000 10000 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("${@:-1000 10000 100000}")
# shellcheck disable=SC2206
sizes=(${sizes[*]})
work=${BENCH_DIR:-$(mktemp -d)}
cargo build --release --locked --quiet
casebook=$PWD/target/release/casebook
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $(rustc --version)"
previous=""
for n in "${sizes[@]}"; do
  site=$work/one-run-$n
  [ -d "$site" ] || python3 benches/gen_one_run.py --records "$n" --out "$site"
  for command in check build; do
    rm -rf "$work/out-$n"
    flags=(--quiet --root "$site")
    [ "$command" = build ] && flags+=(--no-cache --output "$work/out-$n")
    /usr/bin/time -o "$work/time" -f "%e %M" "$casebook" "$command" "${flags[@]}" >/dev/null 2>&1
    read -r seconds kib < <(tail -1 "$work/time")
    echo "$n records, $command: ${seconds} s, peak ${kib} KiB"
    if [ "$command" = check ]; then
      [ -n "$previous" ] && awk -v a="$previous" -v b="$seconds" 'BEGIN { printf "  growth of check from the size before: %.1fx\n", b / a }'
      previous=$seconds
    fi
  done
done
echo "sites in $work"
