#!/usr/bin/env bash
# Builds the seed corpora of the fuzz targets from the site's own content (content/,
# the test fixtures, the blind corpus's analyses in other languages and the `casebook init` example) into fuzz/corpus/<target>/.
# Deterministic: the same sources give the same files, each named by the SHA-1 of its
# bytes (as libFuzzer names what it adds), so the corpora are generated, not committed.
set -euo pipefail
cd "$(dirname "$0")"
root=..
out=${1:-corpus}

# Every source file, in a stable order; and the blind corpus's analyses in other
# languages and scripts, and in other dialects of Markdown (a few: each takes the
# sanitised build a while to read).
multilingual=(tests/corpus/{langroid,qwenagent,semantickernel,agentscope,gptengineer,parlant,devika,agixt,khoj}/analysis)
mapfile -t markdown < <(cd "$root" && find content tests/sites src/init "${multilingual[@]}" -name '*.md' -type f | LC_ALL=C sort)
mapfile -t yaml < <(cd "$root" && find content tests/sites src/init -name '*.yaml' -type f | LC_ALL=C sort)

for target in config report recognise site query request redirects; do
  mkdir -p "$out/$target"
done

# Reads one seed on stdin and stores it in corpus/<target>/ under its hash.
emit() {
  local target=$1 tmp
  tmp=$(mktemp)
  cat >"$tmp"
  if [ -s "$tmp" ]; then
    mv "$tmp" "$out/$target/$(sha1sum <"$tmp" | cut -d' ' -f1)"
  else
    rm -f "$tmp"
  fi
}

# Runs awk over a file; every NUL-terminated record it prints becomes a seed of `target`.
pieces() {
  local target=$1 file=$2 program=$3 piece
  while IFS= read -r -d '' piece; do
    printf '%s' "$piece" | emit "$target"
  done < <(awk "$program" "$root/$file")
}

# Front matter: the `---` block at the top of a report, fences included.
front_matter='NR == 1 && $0 != "---" { exit } { block = block $0 "\n" } NR > 1 && $0 == "---" { printf "%s%c", block, 0; exit }'
# Tables: runs of lines starting with `|`.
tables='/^\|/ { block = block $0 "\n"; next } block != "" { printf "%s%c", block, 0; block = "" } END { if (block != "") printf "%s%c", block, 0 }'
# Sections: from one heading to the next.
sections='/^#/ && block != "" { printf "%s%c", block, 0; block = "" } { block = block $0 "\n" } END { if (block != "") printf "%s%c", block, 0 }'
# Paragraphs that cite, quote or name records.
citing='/^$/ { if (block ~ /SRC-[0-9]|[a-z]\.[a-z]+:[0-9]|^--- |[A-Z][A-Z]+-[A-Za-z0-9]/) printf "%s%c", block, 0; block = ""; next } { block = block $0 "\n" }
        END { if (block ~ /SRC-[0-9]|[a-z]\.[a-z]+:[0-9]|^--- |[A-Z][A-Z]+-[A-Za-z0-9]/) printf "%s%c", block, 0 }'

for file in "${yaml[@]}"; do
  emit config <"$root/$file"
done
for file in "${markdown[@]}"; do
  emit report <"$root/$file"
  emit site <"$root/$file"
  pieces config "$file" "$front_matter"
  pieces report "$file" "$tables"
  pieces site "$file" "$tables"
  pieces report "$file" "$sections"
  pieces recognise "$file" "$citing"
done

# The recognise target reads its first line as an ID grammar: the configured grammars
# over a few paragraphs that use them.
grammars=(
  '(?P<family>[A-Z][A-Z0-9]{1,5})-(?P<kind>[A-Z]{2,5})-(?P<name>[a-z0-9]+(?:[-_][a-z0-9]+)*)'
  '(?P<kind>[A-Z]{2,5})-(?P<number>[0-9]+)'
)
for grammar in "${grammars[@]}"; do
  printf '%s\nSee MEM-OBJ-raw and OBJ-03 (SRC-1 session.py:278-279); On OBJ-04\n' "$grammar" | emit recognise
done

# Redirects: every redirects.yaml of the content and the test cases.
while IFS= read -r file; do
  emit redirects <"$root/$file"
done < <(cd "$root" && find content tests -name 'redirects.yaml' -type f | LC_ALL=C sort)

# Queries: the forms the search page and the CLI take (words, IDs, fields, phrases,
# operators, groups), one per seed; a second line is a status to filter by.
queries=(
  'memory' 'OBJ-02' 'MEM-OBJ-raw' 'summary AND history' '"compacted history"' 'kind:OBJ'
  'label:(raw OR summary) -compact' 'session.py' 'hist*' 'status:wired' $'memory\nwired'
  '((a OR b) AND (c OR (d AND e)))' 'text:"oldest turns"~2' 'title:[a TO z]' '+must -not'
)
for query in "${queries[@]}"; do
  printf '%b' "$query" | emit query
done

# Requests: raw HTTP/1.1 as a browser sends them to the dev server.
requests=(
  'GET / HTTP/1.1\r\nHost: localhost\r\n\r\n'
  'GET /fuzz/run-1/ HTTP/1.1\r\nHost: 127.0.0.1:1111\r\n\r\n'
  'GET /fuzz/run-1/records/OBJ-02.html HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\r\n'
  'GET /api/search?q=memory&status=wired&limit=5 HTTP/1.1\r\nHost: localhost\r\nSec-Fetch-Site: same-origin\r\n\r\n'
  'GET /api/search?q=%28%28a%29%29 HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n\r\n'
  'GET /__casebook/status HTTP/1.1\r\nHost: localhost\r\n\r\n'
  'GET /__casebook/reload.js HTTP/1.1\r\nHost: [::1]:8000\r\n\r\n'
  'GET /../secret.txt HTTP/1.1\r\nHost: localhost\r\n\r\n'
  'GET /fuzz/%2e%2e/%2e%2e/secret.txt HTTP/1.1\r\nHost: localhost\r\n\r\n'
  'GET /fuzz HTTP/1.1\r\nHost: evil.example\r\n\r\n'
  'HEAD /search/ HTTP/1.1\r\nHost: localhost\r\n\r\nGET /sitemap.xml HTTP/1.1\r\nHost: localhost\r\n\r\n'
)
for request in "${requests[@]}"; do
  printf '%b' "$request" | emit request
done

for target in config report recognise site query request redirects; do
  echo "$target: $(find "$out/$target" -type f | wc -l) seeds"
done
