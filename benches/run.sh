#!/usr/bin/env bash
# The search benchmark (docs/performance.md): on a generated corpus of N reports, measure
#  - a full build: wall, CPU, peak memory, and the share of the two search indexers;
#  - the size of the tantivy index and of the browser index;
#  - `casebook search` latency: warm in one process (p50/p99) and as a whole process;
#  - the bytes a browser fetches to show the first results of a query.
# Usage: benches/run.sh [N ...]          (default: 1000)
# Needs: python3, hyperfine and Node.js (Debian packages), and `npm ci --prefix .ci`.
set -euo pipefail
cd "$(dirname "$0")/.."
sizes=("${@:-1000}")
work=${BENCH_DIR:-$(mktemp -d)}
cargo build --release --locked --quiet
casebook=$PWD/target/release/casebook
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; $(rustc --version)"

for n in "${sizes[@]}"; do
  corpus=$work/corpus-$n
  out=$work/site-$n
  echo
  echo "== $n reports"
  [ -d "$corpus" ] || python3 benches/gen_corpus.py --reports "$n" --out "$corpus" >/dev/null
  echo "markdown: $(du -sb "$corpus/casebook/content" | cut -f1) bytes in $(find "$corpus/casebook/content" -name '*.md' | wc -l) reports"

  hyperfine --style basic --warmup 1 --runs 3 --export-json "$work/build-$n.json" \
    "rm -rf $out && $casebook build --quiet --no-cache --root $corpus/casebook --output $out" | grep -E "Time|Range"
  /usr/bin/time -f "peak RSS %M KiB, %e s wall, %U+%S s CPU" \
    "$casebook" build --quiet --no-cache --timings --root "$corpus/casebook" --output "$out" 2>&1 | grep -E "peak|pages|stages|index|tantivy|browser|render|parse|write"

  echo "tantivy index: $(du -sb "$out/search/tantivy" | cut -f1) bytes; browser index: $(du -sb "$out/search/browser" | cut -f1) bytes in $(find "$out/search/browser" -type f | wc -l) files"
  cargo bench --quiet --bench search_latency -- "$out" 50 2>/dev/null | grep search_latency
  hyperfine --style basic --warmup 3 --runs 30 -N --export-json "$work/search-$n.json" \
    "$casebook search --index $out --limit 10 session summary" | grep -E "Time|Range"
  node benches/browser_payload.mjs "$out" "session summary"
done
echo
echo "raw results in $work"
