#!/usr/bin/env bash
# Side by side: a full casebook build against Hugo + Pagefind, the pair a user would pick
# instead, on the same text (docs/performance.md, "Side by side: casebook vs Hugo + Pagefind").
#
# Usage: benches/compare.sh [N ...]        (default: 1000; the issue asks for 1000 10000)
#
# For each N, on the corpus of benches/gen_corpus.py --reports N (BENCH_DIR/corpus-N,
# generated if absent, shared with benches/run.sh), it times in one hyperfine call (or one
# call per round with ALTERNATE=1), each command starting from an empty output (the
# `rm -rf` of the previous output is inside the timed command, as for the anchors):
#   (a) casebook build --quiet --no-cache pages, record pages, both search indexes, manifest
#   (b) hugo --quiet && pagefind --site   one command: Hugo's site, then Pagefind over it
#   (c) hugo --quiet                      alone, for the breakdown
#   (d) pagefind --site                   alone, over a Hugo output built once beforehand
# Then, for casebook alone, a build that fills an empty cache (a default `casebook build`
# with no cache yet), and warm builds (its build cache and the previous output kept, as
# `casebook build` does by default): RUNS builds with nothing changed, and RUNS with one
# report changed since the last (a sentence appended, then taken out again), each under
# GNU time. Each tool process runs under GNU time (`/usr/bin/time -f`), so its own wall time (without
# the rm -rf), CPU time (user+sys) and peak RSS come from the same runs as hyperfine's wall
# times; for (b) wall and CPU are the sums over the two processes and peak the larger. Then output size (du -sb) and file count, and
# the dev server's rebuild latency after a one-report edit (cargo bench --bench
# rebuild_latency, on a copy of the casebook tree since it edits a report).
# Prints a table per N and writes BENCH_DIR/compare-N.json (all figures), next to the
# hyperfine export(s) (compare-N.hyperfine*.json) and the GNU time logs (cmp-N/*.time).
#
# Environment:
#   BENCH_DIR       work folder (default: a new temporary folder); corpora are reused
#   WARMUP          hyperfine warm-up runs per command (default 1)
#   RUNS            hyperfine timed runs per command (default 3)
#   ALTERNATE       1 runs the commands round robin (a b c d a b c d ...), one hyperfine
#                   call per round, instead of hyperfine's order (all runs of a, then b ...)
#   REBUILD_ROUNDS  one-report edits timed by rebuild_latency (default 10; 0 skips it)
#   KEEP_OUTPUT     1 keeps the built sites (default 0: removed after they are measured;
#                   at N = 10000 they take several GB)
#   OUT_DIR         where the built sites go (default: BENCH_DIR/cmp-N), e.g. /dev/shm for a
#                   tmpfs. On this project's benchmark VM the disk is ext4 without a journal,
#                   where creating a file soon after many were deleted (the rm -rf of the
#                   previous output) costs up to half a millisecond of kernel time each: a cost
#                   of the disk in proportion to the file count, not of the tools' work.
#                   docs/performance.md reports both.
#
# Installs what is missing, without prompting (as root, or with passwordless sudo):
# Debian's hugo, hyperfine and time (apt-get), Pagefind 1.6.0 (npm ci --prefix benches,
# pinned by benches/package-lock.json into benches/node_modules).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
sizes=("${@:-1000}")
warmup=${WARMUP:-1}
runs=${RUNS:-3}
rounds=${REBUILD_ROUNDS:-10}
keep=${KEEP_OUTPUT:-0}
alternate=${ALTERNATE:-0}
work=${BENCH_DIR:-$(mktemp -d)}
mkdir -p "$work"
work=$(cd "$work" && pwd)

for n in "${sizes[@]}"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "compare.sh: N must be a positive integer, not '$n'" >&2; exit 2; }
done

# ------------------------------------------------------------------ tools

apt_updated=0
apt_install() {
  local runner=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
      runner=(sudo -n)
    else
      echo "compare.sh: needs the Debian package(s) $*: install them (apt-get install $*) or run as root" >&2
      exit 1
    fi
  fi
  if [ "$apt_updated" = 0 ]; then
    "${runner[@]}" apt-get update -qq
    apt_updated=1
  fi
  echo "installing $* (apt-get)"
  "${runner[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

command -v python3 >/dev/null || apt_install python3
command -v hyperfine >/dev/null || apt_install hyperfine
[ -x /usr/bin/time ] || apt_install time
command -v hugo >/dev/null || apt_install hugo
hugo version >/dev/null || { echo "compare.sh: 'hugo version' fails" >&2; exit 1; }
command -v npm >/dev/null || apt_install npm

case $(uname -m) in
  x86_64) pf_arch=linux-x64 ;;
  aarch64) pf_arch=linux-arm64 ;;
  *) echo "compare.sh: no Pagefind binary for $(uname -m)" >&2; exit 1 ;;
esac
pagefind=$repo/benches/node_modules/@pagefind/$pf_arch/bin/pagefind_extended
pf_want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["devDependencies"]["pagefind"])' benches/package.json)
if [ ! -x "$pagefind" ] || [ "$("$pagefind" --version 2>/dev/null)" != "pagefind $pf_want" ]; then
  echo "installing pagefind $pf_want (npm ci --prefix benches)"
  npm ci --prefix benches --no-audit --no-fund --loglevel=error >/dev/null
fi

cargo build --release --locked --quiet
casebook=$repo/target/release/casebook
gnu_time=/usr/bin/time

hugo_v=$(hugo version | awk '{print $2}')
pf_v=$("$pagefind" --version | awk '{print $2}')
hf_v=$(hyperfine --version | awk '{print $2}')
rustc_v=$(rustc --version)
commit=$(git rev-parse --short HEAD)
git diff --quiet HEAD -- src Cargo.toml Cargo.lock themes 2>/dev/null || commit="$commit+uncommitted changes"
machine="$(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -sr)"
echo "machine: $machine; $rustc_v"
echo "casebook $commit; Hugo $hugo_v; Pagefind $pf_v (extended); hyperfine $hf_v"
echo "hyperfine: warm-up $warmup, runs $runs per command$([ "$alternate" = 1 ] && echo ", round robin"); rebuild rounds: $rounds; work folder: $work"

q() { printf '%q' "$1"; }
timed() { # timed LOG CMD...: CMD under GNU time, appending "wall user sys peakKiB" to LOG
  local log=$1; shift
  printf '%s -a -o %s -f %s' "$gnu_time" "$(q "$log")" "'%e %U %S %M'"
  local a; for a in "$@"; do printf ' %s' "$(q "$a")"; done
}

sizes_of() { # sizes_of DIR SEARCH_SUBDIR: bytes files html search_bytes search_files
  printf '%s %s %s %s %s' "$(du -sb "$1" | cut -f1)" "$(find "$1" -type f | wc -l)" \
    "$(find "$1" -type f -name '*.html' | wc -l)" \
    "$( [ -d "$1/$2" ] && du -sb "$1/$2" | cut -f1 || echo 0)" \
    "$( [ -d "$1/$2" ] && find "$1/$2" -type f | wc -l || echo 0)"
}

# ------------------------------------------------------------------ per size

for n in "${sizes[@]}"; do
  corpus=$work/corpus-$n
  dir=$work/cmp-$n
  echo
  echo "== $n reports"
  if [ ! -d "$corpus/casebook" ] || [ ! -d "$corpus/hugo" ]; then
    python3 benches/gen_corpus.py --reports "$n" --out "$corpus"
  fi
  md_bytes=$(du -sb "$corpus/casebook/content" | cut -f1)
  md_files=$(find "$corpus/casebook/content" -name '*.md' | wc -l)
  echo "markdown: $md_bytes bytes in $md_files reports (same text in $corpus/hugo)"

  rm -rf "$dir"
  mkdir -p "$dir"
  outs=${OUT_DIR:+$OUT_DIR/casebook-compare-$n}
  outs=${outs:-$dir}
  mkdir -p "$outs"
  output_fs=$(df --output=fstype "$outs" | tail -1 | tr -d ' ')
  echo "outputs in $outs ($output_fs)"
  out_cb=$outs/casebook
  out_hp=$outs/hugo-pagefind
  out_h=$outs/hugo
  out_pre=$outs/hugo-prebuilt
  # (d) indexes a Hugo site built once, here; its pagefind/ is removed inside the timed command
  hugo --source "$corpus/hugo" --destination "$out_pre" --quiet

  cmd_a="rm -rf $(q "$out_cb") && $(timed "$dir/a.time" "$casebook" build --quiet --no-cache --root "$corpus/casebook" --output "$out_cb")"
  cmd_b="rm -rf $(q "$out_hp") && $(timed "$dir/b-hugo.time" hugo --source "$corpus/hugo" --destination "$out_hp" --quiet) && $(timed "$dir/b-pagefind.time" "$pagefind" --site "$out_hp")"
  cmd_c="rm -rf $(q "$out_h") && $(timed "$dir/c.time" hugo --source "$corpus/hugo" --destination "$out_h" --quiet)"
  cmd_d="rm -rf $(q "$out_pre/pagefind") && $(timed "$dir/d.time" "$pagefind" --site "$out_pre")"
  : >"$dir/a.time"; : >"$dir/b-hugo.time"; : >"$dir/b-pagefind.time"; : >"$dir/c.time"; : >"$dir/d.time"

  bench() { # bench WARMUP RUNS JSON: the four commands in one hyperfine call
    hyperfine --style basic --shell bash --warmup "$1" --runs "$2" --export-json "$3" \
      -n "casebook build" "$cmd_a" \
      -n "hugo + pagefind" "$cmd_b" \
      -n "hugo" "$cmd_c" \
      -n "pagefind (over a built Hugo site)" "$cmd_d" 2>&1 |
      tee -a "$dir/hyperfine.log" | { grep -E "^Benchmark|Time|Range|Error" || true; }
  }
  rm -f "$work/compare-$n".hyperfine*.json
  if [ "$alternate" = 1 ]; then
    # round robin, a b c d a b c d ...: one hyperfine call per round (warm-up round first,
    # its export discarded); the script merges the rounds' times
    failed() { tail -5 "$dir/hyperfine.log" >&2; exit 1; }
    if [ "$warmup" -gt 0 ]; then
      echo "warm-up round"
      bench 0 "$warmup" "$dir/warmup.hyperfine.json" >/dev/null || failed
    fi
    for ((r = 1; r <= runs; r++)); do
      echo "round $r of $runs"
      bench 0 1 "$work/compare-$n.hyperfine-round$r.json" >/dev/null || failed
    done
  else
    # one call: hyperfine runs all the runs of (a), then all of (b), ... (it cannot interleave)
    bench "$warmup" "$runs" "$work/compare-$n.hyperfine.json"
  fi

  # (e) warm builds, on a copy of the tree (one report is edited): a first build fills the
  # cache, then nothing changed and one report changed, in turn
  warm_site=$dir/warm-site
  out_w=$outs/casebook-warm
  cache_w=$dir/warm-cache
  rm -rf "$warm_site" "$out_w" "$cache_w"
  cp -a "$corpus/casebook" "$warm_site"
  warm_build=("$casebook" build --quiet --root "$warm_site" --output "$out_w" --cache "$cache_w")
  : >"$dir/e-fill.time"
  eval "$(timed "$dir/e-fill.time" "${warm_build[@]}")" >/dev/null
  # sed, not head: under pipefail, sort killed by SIGPIPE would end the script
  edited=$(find "$warm_site/content" -name '*.md' | sort | sed -n 1p)
  cp "$edited" "$dir/edited.orig"
  : >"$dir/e-none.time"; : >"$dir/e-one.time"
  echo "warm builds: $runs with nothing changed, $runs after a change of $(basename "$edited")"
  for ((r = 1; r <= runs; r++)); do
    eval "$(timed "$dir/e-none.time" "${warm_build[@]}")" >/dev/null
    if [ $((r % 2)) = 1 ]; then
      printf '\nA sentence the benchmark added (round %s).\n' "$r" >>"$edited"
    else
      cp "$dir/edited.orig" "$edited"
    fi
    eval "$(timed "$dir/e-one.time" "${warm_build[@]}")" >/dev/null
  done
  rm -rf "$warm_site" "$out_w" "$cache_w"

  size_a=$(sizes_of "$out_cb" search)
  size_b=$(sizes_of "$out_hp" pagefind)
  size_c=$(sizes_of "$out_h" pagefind)
  size_d=$(sizes_of "$out_pre/pagefind" .)
  if [ "$keep" != 1 ]; then
    rm -rf "$out_cb" "$out_hp" "$out_h" "$out_pre"
  fi

  rebuild_line=""
  if [ "$rounds" -gt 0 ]; then
    # rebuild_latency edits a report (and restores it): give it its own copy of the tree
    cp -a "$corpus/casebook" "$dir/rebuild-site"
    if ! cargo bench --locked --quiet --bench rebuild_latency -- "$dir/rebuild-site" "$outs/rebuild-out" "$rounds" \
        >"$dir/rebuild.log" 2>"$dir/rebuild.err"; then
      tail -20 "$dir/rebuild.err" >&2
      echo "compare.sh: rebuild_latency failed (log: $dir/rebuild.err)" >&2
      exit 1
    fi
    rebuild_line=$(grep -E "one-report edits" "$dir/rebuild.log" || true)
    rm -rf "$dir/rebuild-site" "$outs/rebuild-out"
  fi

  [ "$outs" = "$dir" ] || rmdir "$outs" 2>/dev/null || true
  N=$n WORK=$work DIR=$dir OUTPUT_FS=$output_fs WARMUP_RUNS=$warmup RUNS=$runs ALTERNATE=$alternate ROUNDS=$rounds MACHINE=$machine RUSTC=$rustc_v \
  COMMIT=$commit HUGO_V=$hugo_v PF_V=$pf_v HF_V=$hf_v MD_BYTES=$md_bytes MD_FILES=$md_files \
  SIZE_A=$size_a SIZE_B=$size_b SIZE_C=$size_c SIZE_D=$size_d REBUILD_LINE=$rebuild_line \
  python3 - <<'PY'
import glob, json, os, re, statistics, sys
env = os.environ
n, work, d, warmup, runs = int(env["N"]), env["WORK"], env["DIR"], int(env["WARMUP_RUNS"]), int(env["RUNS"])
meta = {
    "machine": env["MACHINE"], "rustc": env["RUSTC"], "casebook_commit": env["COMMIT"],
    "hugo": env["HUGO_V"], "pagefind": env["PF_V"], "hyperfine": env["HF_V"],
    "warmup": warmup, "runs": runs, "alternate": env["ALTERNATE"] == "1", "rebuild_rounds": int(env["ROUNDS"]),
    "markdown_bytes": int(env["MD_BYTES"]), "reports": int(env["MD_FILES"]),
    "output_filesystem": env["OUTPUT_FS"],
}
sizes = {k: dict(zip(("bytes", "files", "html_files", "search_bytes", "search_files"), map(int, env[v].split())))
         for k, v in (("a", "SIZE_A"), ("b", "SIZE_B"), ("c", "SIZE_C"), ("d", "SIZE_D"))}
rebuild_line = env["REBUILD_LINE"].strip()

def times(name, warmup=warmup, runs=runs):
    rows = []
    for line in open(f"{d}/{name}.time"):
        parts = line.split()
        if len(parts) == 4 and not line.startswith("Command"):
            wall, user, sys_, peak = map(float, parts)
            rows.append({"wall_s": wall, "cpu_s": user + sys_, "peak_kib": int(peak)})
    if len(rows) != warmup + runs:
        sys.exit(f"compare.sh: {name}.time has {len(rows)} lines, expected {warmup + runs}")
    return rows[warmup:]  # the warm-up runs come first

# hyperfine's times: one export, or one per round (ALTERNATE=1), merged
exports = sorted(glob.glob(f"{work}/compare-{n}.hyperfine*.json"))
hf = {}
for path in exports:
    for r in json.load(open(path))["results"]:
        hf.setdefault(r["command"], {"command": r["command"], "times": []})["times"] += r["times"]
for r in hf.values():
    t = r["times"]
    r.update(median=statistics.median(t), min=min(t), max=max(t), mean=statistics.mean(t))
per_run = {
    "a": times("a"),
    "b": [{"wall_s": h["wall_s"] + p["wall_s"], "cpu_s": h["cpu_s"] + p["cpu_s"],
           "peak_kib": max(h["peak_kib"], p["peak_kib"])}
          for h, p in zip(times("b-hugo"), times("b-pagefind"))],
    "c": times("c"),
    "d": times("d"),
}
names = {"a": "casebook build", "b": "hugo + pagefind", "c": "hugo", "d": "pagefind (over a built Hugo site)"}
labels = {"a": "casebook build (pages, record pages, 2 search indexes, manifest)",
          "b": "Hugo + Pagefind (one command)", "c": "  Hugo alone", "d": "  Pagefind alone, over Hugo's output"}
results = {}
for k, name in names.items():
    r = hf[name]
    results[k] = {
        "command_name": name, "command": r["command"],
        "wall_s": {"median": r["median"], "min": r["min"], "max": r["max"], "mean": r["mean"], "runs": r["times"]},
        "process_wall_s_median": statistics.median(x["wall_s"] for x in per_run[k]),
        "cpu_s_median": statistics.median(x["cpu_s"] for x in per_run[k]),
        "peak_rss_kib_median": int(statistics.median(x["peak_kib"] for x in per_run[k])),
        "per_run_gnu_time": per_run[k],
        "output": sizes[k],
    }
warm = {}
for k, name, count in (("fills_cache", "e-fill", 1), ("nothing_changed", "e-none", runs), ("one_report", "e-one", runs)):
    rows = times(name, warmup=0, runs=count)
    warm[k] = {"process_wall_s_median": statistics.median(x["wall_s"] for x in rows),
               "cpu_s_median": statistics.median(x["cpu_s"] for x in rows),
               "peak_rss_kib_median": int(statistics.median(x["peak_kib"] for x in rows)),
               "per_run_gnu_time": rows}
    warm[k]["over_cold_process_wall"] = warm[k]["process_wall_s_median"] / results["a"]["process_wall_s_median"]
a, b = results["a"], results["b"]
ratio = {
    "wall": a["wall_s"]["median"] / b["wall_s"]["median"],
    "process_wall": a["process_wall_s_median"] / b["process_wall_s_median"],
    "cpu": a["cpu_s_median"] / b["cpu_s_median"],
    "peak_rss": a["peak_rss_kib_median"] / b["peak_rss_kib_median"],
}
rebuild = None
m = re.search(r"(\d+) one-report edits: pages written p50 (\d+) ms p90 (\d+) ms; whole rebuild p50 (\d+) ms p90 (\d+) ms", rebuild_line)
if m:
    rebuild = {"rounds": int(m[1]), "pages_written_ms": {"p50": int(m[2]), "p90": int(m[3])},
               "whole_rebuild_ms": {"p50": int(m[4]), "p90": int(m[5])}, "line": rebuild_line}
json.dump({"n": n, **meta, "results": results, "ratio_casebook_over_hugo_pagefind": ratio,
           "warm_builds": warm, "rebuild_latency": rebuild}, open(f"{work}/compare-{n}.json", "w"), indent=2)

print()
print(f"{n} reports, {meta['markdown_bytes'] / 1e6:.1f} MB of Markdown, outputs on {meta['output_filesystem']}. wall: hyperfine median (min-max) of {runs} "
      f"after {warmup} warm-up, the rm -rf of the previous output included; process wall, CPU user+sys, peak RSS: "
      f"medians of GNU time over the same runs, the tool process(es) only")
head = ("command", "wall s", "process wall s", "CPU s", "peak MiB", "output MB (files)", "search index MB (files)", "reports/s")
rows = []
for k in "abcd":
    r = results[k]; w = r["wall_s"]; o = r["output"]
    out = f"{o['bytes'] / 1e6:.1f} ({o['files']})" if k != "d" else "-"
    rows.append((labels[k], f"{w['median']:.2f} ({w['min']:.2f}-{w['max']:.2f})",
                 f"{r['process_wall_s_median']:.2f}", f"{r['cpu_s_median']:.1f}",
                 f"{r['peak_rss_kib_median'] / 1024:.0f}", out,
                 f"{o['search_bytes'] / 1e6:.1f} ({o['search_files']})" if k != "c" else "-",
                 f"{n / w['median']:.0f}"))
widths = [max(len(str(x[i])) for x in rows + [head]) for i in range(len(head))]
for i, row in enumerate([head] + rows):
    print(" | ".join(str(c).ljust(widths[j]) if j == 0 else str(c).rjust(widths[j]) for j, c in enumerate(row)))
    if i == 0:
        print("-+-".join("-" * w for w in widths))
print(f"casebook / (Hugo + Pagefind): wall {ratio['wall']:.2f} (process wall {ratio['process_wall']:.2f}), "
      f"CPU {ratio['cpu']:.2f}, peak RSS {ratio['peak_rss']:.2f}")
print(f"HTML pages: casebook {sizes['a']['html_files']}, Hugo {sizes['b']['html_files']}")
for k, label in (("fills_cache", "filling an empty cache (one build)"), ("nothing_changed", "nothing changed"),
                 ("one_report", "one report changed")):
    w = warm[k]
    print(f"casebook build with its cache, {label}: process wall {w['process_wall_s_median']:.2f} s "
          f"({w['over_cold_process_wall']:.2f} of cold), CPU {w['cpu_s_median']:.1f} s, "
          f"peak {w['peak_rss_kib_median'] / 1024:.0f} MiB")
if rebuild_line:
    print(rebuild_line)
print(f"figures: {work}/compare-{n}.json")
PY
done
