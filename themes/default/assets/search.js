// The search page: casebook's static index (search/browser/, written by
// src/index/browser.rs) read in the browser, with facets (system, kind, status) and their
// counts, result snippets, keyboard use, and the query in the URL. A query fetches the
// term chunks of its words and the document groups of the results it shows; the facet
// data is fetched once results are on screen, or when a facet is ticked.
// Result text is always inserted as text, never as HTML.
const root = document.getElementById("search");
const input = document.getElementById("search-input");
const facetsBox = document.getElementById("search-facets");
// Each kind's name by its code (`OBJ` → `Objects`), when the site names it.
const kindNames = JSON.parse(facetsBox.dataset.kindNames || "{}");
const statusLine = document.getElementById("search-status");
const list = document.getElementById("search-results");
const bundle = root.dataset.bundle;
const base = root.dataset.base;
const FACETS = [["system", "System"], ["kind", "Kind"], ["status", "Status"]];
const selected = Object.fromEntries(FACETS.map(([name]) => [name, new Set()]));
// A word of at least this many letters also finds the words it begins.
const PREFIX_MIN = 3;
// How much a word found by its beginning (or by its stem) counts against the word itself.
const PREFIX_WEIGHT = 0.6;
const MAX_EXPANSIONS = 40;
// A query word written as in the text counts once more (in levels: about one more
// occurrence), as casebook search's `exact` field makes it: `turns` outranks `turn`
// written three times.
const EXACT_BONUS = 2.5;
const PAGE = 10;

document.getElementById("search-nojs").remove();
root.hidden = false;

const fetched = new Map();
function load(path, as) {
  if (!fetched.has(path)) {
    fetched.set(path, fetch(bundle + path).then(async (r) => {
      if (!r.ok) throw new Error(`${path}: ${r.status}`);
      const text = await inflated(r);
      return as === "json" ? JSON.parse(text) : text;
    }));
  }
  return fetched.get(path);
}

// The index's .gz files are gzipped by the build; a host that sent one with
// Content-Encoding: gzip had the browser inflate it already, so the bytes decide.
async function inflated(response) {
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return new TextDecoder().decode(bytes);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text();
}

let meta;
try {
  meta = await load("meta.json", "json");
} catch {
  // A site built with --no-search-index has none.
  statusLine.textContent = "This copy of the site was built without its search index.";
  input.disabled = true;
  root.dataset.ready = "true";
  // Nothing more to do: the module stops here, without an error.
  await new Promise(() => {});
}
if (meta.format !== "casebook.browser-search/3") throw new Error(`unknown search index format ${meta.format}`);
const stopWords = new Set(meta.stop_words);

// The same tokenising as the build (src/index/browser.rs): words are runs of letters
// and digits; compounds join them with _ . / - (files_modified, session.py, MEM-OBJ-raw).
const RUN = /[\p{Alphabetic}\p{N}][\p{Alphabetic}\p{N}_./-]*/gu;
const WORD = /[\p{Alphabetic}\p{N}]+/gu;
// A query is read up to its first 1,000 characters and 32 terms (as `casebook search`
// reads 1,000): each term may fetch term files, and a pasted page must not fetch them all.
const MAX_QUERY_CHARS = 1000;
const MAX_QUERY_TERMS = 32;
function queryTerms(query) {
  const terms = [];
  for (const match of query.slice(0, MAX_QUERY_CHARS).matchAll(RUN)) {
    if (terms.length >= MAX_QUERY_TERMS) break;
    const run = match[0].replace(/[_./-]+$/, "").toLowerCase();
    if (/[_./-]/.test(run)) {
      terms.push({ text: run, compound: true });
      continue;
    }
    for (const word of run.match(WORD) || []) {
      if (!stopWords.has(word)) terms.push({ text: word, compound: false });
    }
  }
  // A lone letter while typing finds too much to be useful; a lone letter query is kept.
  const useful = terms.filter((t) => t.text.length > 1 || /\p{N}/u.test(t.text));
  return useful.length ? useful : terms;
}

// `running` → `runn`, `turns` → `turn`: a crude stem, used as a prefix, so that other
// forms of an English word are found (with a lower weight).
function stemOf(word) {
  for (const suffix of ["ing", "ed", "es", "s"]) {
    if (word.length >= suffix.length + 4 && word.endsWith(suffix)) return word.slice(0, -suffix.length);
  }
  return null;
}

function chunkOf(term) {
  const starts = meta.term_chunks;
  let lo = 0, hi = starts.length - 1, found = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (compareTerms(starts[mid], term) <= 0) { found = mid; lo = mid + 1; } else hi = mid - 1;
  }
  return found;
}

// A term chunk's file is named after its first term, in hex (of its UTF-8 bytes).
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
function chunkFile(n) {
  return `t/${Array.from(new TextEncoder().encode(meta.term_chunks[n]), (b) => HEX[b]).join("")}.txt.gz`;
}

const parsedChunks = new Map();
async function termChunk(n) {
  if (!parsedChunks.has(n)) {
    const text = await load(chunkFile(n));
    const terms = new Map();
    for (const line of text.split("\n")) {
      const tab = line.indexOf("\t");
      if (tab > 0) terms.set(line.slice(0, tab), line.slice(tab + 1));
    }
    parsedChunks.set(n, terms);
  }
  return parsedChunks.get(n);
}

// The build sorts terms by their UTF-8 bytes, which is code point order; JavaScript's own
// comparison is by UTF-16 units, which differs beyond the Basic Multilingual Plane.
function compareTerms(a, b) {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i].codePointAt(0) - y[i].codePointAt(0);
    if (d) return d;
  }
  return x.length - y.length;
}

// The index terms a query term stands for, each with its weight: the term itself, and,
// for a long enough term, the terms it begins (and those its stem begins).
async function expand(term) {
  const found = new Map();
  const exact = await termChunk(chunkOf(term.text));
  if (exact.has(term.text)) found.set(term.text, 1);
  const prefixes = [];
  if (term.text.length >= PREFIX_MIN) prefixes.push(term.text);
  const stem = term.compound ? null : stemOf(term.text);
  if (stem) prefixes.push(stem);
  for (const prefix of prefixes) {
    const candidates = [];
    // The chunks a prefix can reach: from its own, while chunks start with it (at most 4).
    for (let n = chunkOf(prefix), reached = 0; n < meta.term_chunks.length && reached < 4; n++, reached++) {
      if (reached > 0 && !meta.term_chunks[n].startsWith(prefix)) break;
      for (const t of (await termChunk(n)).keys()) {
        if (t !== term.text && t.startsWith(prefix)) candidates.push(t);
      }
    }
    candidates.sort((a, b) => a.length - b.length || compareTerms(a, b));
    for (const t of candidates.slice(0, MAX_EXPANSIONS)) if (!found.has(t)) found.set(t, PREFIX_WEIGHT);
  }
  return found;
}

function postingsOf(chunks, term) {
  for (const chunk of chunks) if (chunk.has(term)) return chunk.get(term);
  return "";
}

// Postings: a letter A–Z (the document's level for the term), then the gap from the
// previous document in base 36.
function decode(postings, visit) {
  let doc = 0, i = 0;
  while (i < postings.length) {
    const level = postings.charCodeAt(i) - 64;
    let j = i + 1, gap = 0;
    while (j < postings.length) {
      const c = postings.charCodeAt(j);
      if (c >= 65 && c <= 90) break;
      gap = gap * 36 + (c <= 57 ? c - 48 : c - 87);
      j++;
    }
    doc += gap;
    visit(doc, level);
    i = j;
  }
}

// Scores of the documents that hold a query term (any of its expansions): BM25's idf
// times the level the build gave the document, times the expansion's weight, and a bonus
// where the term is written as in the query.
async function scoresOf(term) {
  const expansions = await expand(term);
  // A compound the index does not hold (`pre-turn` where the text says `pre turn`)
  // stands for its words, all required.
  if (expansions.size === 0 && term.compound) {
    const words = (term.text.match(WORD) || []).filter((w) => !stopWords.has(w));
    if (words.length > 1) {
      let combined = null;
      for (const word of words) {
        const scores = await scoresOf({ text: word, compound: false });
        if (combined === null) { combined = scores; continue; }
        for (const [doc, s] of combined) {
          if (scores.has(doc)) combined.set(doc, s + scores.get(doc)); else combined.delete(doc);
        }
      }
      return combined;
    }
  }
  const chunks = [...parsedChunks.values()];
  const scores = new Map();
  for (const [indexTerm, weight] of expansions) {
    const postings = postingsOf(chunks, indexTerm);
    const idf = idfOf(postings);
    decode(postings, (doc, level) => {
      const score = weight * idf * level;
      if (score > (scores.get(doc) || 0)) scores.set(doc, score);
    });
  }
  if (expansions.get(term.text) === 1) {
    const postings = postingsOf(chunks, term.text);
    const bonus = EXACT_BONUS * idfOf(postings);
    decode(postings, (doc) => scores.set(doc, scores.get(doc) + bonus));
  }
  return scores;
}

// BM25's idf of a term with these postings.
function idfOf(postings) {
  let df = 0;
  decode(postings, () => df++);
  return Math.log(1 + (meta.documents - df + 0.5) / (df + 0.5));
}

// Every word is required; when no document has them all, documents with any are shown,
// and the status line says so.
async function match(query) {
  const terms = queryTerms(query);
  const perTerm = [];
  for (const term of terms) perTerm.push(await scoresOf(term));
  if (perTerm.length === 0) return { ranked: [], partial: false, terms };
  const combine = (keep) => {
    const total = new Map();
    for (const scores of perTerm) for (const [doc, s] of scores) total.set(doc, (total.get(doc) || 0) + s);
    return [...total].filter(([doc]) => keep(doc));
  };
  let ranked = combine((doc) => perTerm.every((s) => s.has(doc)));
  let partial = false;
  if (ranked.length === 0 && perTerm.length > 1) {
    ranked = combine(() => true);
    partial = ranked.length > 0;
  }
  ranked.sort((a, b) => b[1] - a[1] || a[0] - b[0]);
  return { ranked: ranked.map(([doc]) => doc), partial, terms };
}

// Facet data: per document, its system, kind and status set, decoded from runs.
let facetData = null;
async function facets() {
  if (!facetData) {
    const raw = await load("facets.json.gz", "json");
    const expandRuns = (runs) => {
      const out = new Int32Array(meta.numbered);
      let at = 0;
      for (let i = 0; i < runs.length; i += 2) { out.fill(runs[i], at, at + runs[i + 1]); at += runs[i + 1]; }
      return out;
    };
    facetData = {
      values: raw.values,
      system: expandRuns(raw.system),
      kind: expandRuns(raw.kind),
      status: expandRuns(raw.status),
      sets: raw.status_sets,
    };
  }
  return facetData;
}

// The value names of a document's facet (statuses are a set).
function valuesOf(data, facet, doc) {
  const n = data[facet][doc];
  if (facet === "status") return data.sets[n].map((v) => data.values.status[v]);
  return n < 0 ? [] : [data.values[facet][n]];
}

function passes(data, doc, except) {
  for (const [name] of FACETS) {
    if (name === except || selected[name].size === 0) continue;
    if (!valuesOf(data, name, doc).some((v) => selected[name].has(v))) return false;
  }
  return true;
}

// Counts within the results: for each facet, the results that pass every other facet's
// selection, so ticking a value does not hide the other values' counts.
function countsWithin(data, docs) {
  const counts = {};
  for (const [name] of FACETS) {
    counts[name] = {};
    for (const doc of docs) {
      if (!passes(data, doc, name)) continue;
      for (const v of valuesOf(data, name, doc)) counts[name][v] = (counts[name][v] || 0) + 1;
    }
  }
  return counts;
}

function renderFacets(counts) {
  // The list is made anew with each count; a keyboard user keeps the box they ticked.
  const focused = facetsBox.contains(document.activeElement) ? document.activeElement : null;
  const refocus = focused && { name: focused.name, value: focused.value };
  facetsBox.replaceChildren();
  for (const [name, title] of FACETS) {
    const values = Object.keys(meta.totals[name] || {}).sort();
    if (values.length === 0) continue;
    const box = document.createElement("fieldset");
    box.className = "facet";
    const legend = document.createElement("legend");
    legend.textContent = title;
    box.append(legend);
    for (const value of values) {
      const label = document.createElement("label");
      const check = document.createElement("input");
      check.type = "checkbox";
      check.name = name;
      check.value = value;
      check.checked = selected[name].has(value);
      check.addEventListener("change", () => {
        if (check.checked) selected[name].add(value); else selected[name].delete(value);
        schedule(0);
      });
      const count = (counts[name] && counts[name][value]) || 0;
      // A value no result has cannot narrow them: shown, so the reader sees what exists,
      // but not tickable (unless ticked already, so it can be unticked).
      check.disabled = count === 0 && !check.checked;
      const badge = document.createElement("span");
      badge.className = "count";
      badge.textContent = `(${count})`;
      const shown = name === "kind" && kindNames[value] ? `${kindNames[value]} (${value})` : value;
      label.append(check, ` ${shown} `, badge);
      if (check.disabled) label.classList.add("none");
      label.dataset.facet = name;
      label.dataset.value = value;
      box.append(label);
      if (refocus && refocus.name === name && refocus.value === value) queueMicrotask(() => check.focus());
    }
    facetsBox.append(box);
  }
}

function remember(query) {
  const url = new URL(location.href);
  if (query) url.searchParams.set("q", query); else url.searchParams.delete("q");
  for (const [name] of FACETS) {
    url.searchParams.delete(name);
    for (const value of selected[name]) url.searchParams.append(name, value);
  }
  history.replaceState(null, "", url);
}

const filtering = () => FACETS.some(([name]) => selected[name].size > 0);

// A query is run after a short pause in typing; an older one that finishes late is dropped.
let generation = 0;
let timer = null;
function schedule(delay = 120) {
  clearTimeout(timer);
  timer = setTimeout(run, delay);
}

async function run() {
  const mine = ++generation;
  const query = input.value.trim();
  remember(query);
  if (!query && !filtering()) {
    list.replaceChildren();
    document.getElementById("search-more")?.remove();
    statusLine.textContent = "Type to search; tick a filter to browse.";
    renderFacets(meta.totals);
    return;
  }
  let { ranked, partial, terms } = query
    ? await match(query)
    : { ranked: meta.runs.flatMap(([, start, docs]) => Array.from({ length: docs }, (_, i) => start + i)), partial: false, terms: [] };
  const data = filtering() || facetData ? await facets() : null;
  if (mine !== generation) return;
  const all = ranked;
  if (data) ranked = ranked.filter((doc) => passes(data, doc));
  await showMore(ranked, 0, terms, true);
  if (mine !== generation) return;
  const total = ranked.length;
  statusLine.textContent = total === 0
    ? "No result."
    : partial
      ? `${total} result${total === 1 ? "" : "s"} with some of the words (none has them all).`
      : `${total} result${total === 1 ? "" : "s"}.`;
  // Counts within the results come once the results are on screen.
  const counted = data || await facets();
  if (mine !== generation) return;
  renderFacets(countsWithin(counted, all));
}

// A document's run (meta.runs: [key, first number, documents], in number order) holds
// its text in groups of docs_per_chunk, from its first number.
async function shownDoc(n) {
  let lo = 0, hi = meta.runs.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (meta.runs[mid][1] <= n) lo = mid; else hi = mid - 1;
  }
  const [key, start] = meta.runs[lo];
  const group = await load(`d/${key}/${Math.floor((n - start) / meta.docs_per_chunk)}.json.gz`, "json");
  return group[(n - start) % meta.docs_per_chunk];
}

// The stretch of text that holds the most of the query's words, with the matches marked.
const SNIPPET_WORDS = 28;
function snippet(container, text, terms) {
  const words = text.split(" ");
  const matchers = terms.map((t) => {
    const stem = t.compound ? null : stemOf(t.text);
    return (w) => w === t.text || (t.text.length >= PREFIX_MIN && w.startsWith(t.text)) || (t.compound && w.includes(t.text)) || (stem !== null && w.startsWith(stem));
  });
  // For each word, which query terms it matches (as a bit set).
  const hits = words.map((word) => {
    const w = word.toLowerCase().replace(/^[^\p{Alphabetic}\p{N}]+|[^\p{Alphabetic}\p{N}]+$/gu, "");
    return w ? matchers.reduce((bits, m, i) => (m(w) ? bits | (1 << (i % 30)) : bits), 0) : 0;
  });
  const distinct = (from) => {
    let bits = 0;
    for (let i = from; i < Math.min(words.length, from + SNIPPET_WORDS); i++) bits |= hits[i];
    let n = 0;
    for (; bits; bits &= bits - 1) n++;
    return n;
  };
  let best = 0, bestCount = -1;
  for (let i = 0; i < words.length; i++) {
    if (!hits[i]) continue;
    const from = Math.max(0, i - 4);
    const n = distinct(from);
    if (n > bestCount) { best = from; bestCount = n; }
  }
  const to = Math.min(words.length, best + SNIPPET_WORDS);
  if (best > 0) container.append("… ");
  for (let i = best; i < to; i++) {
    if (i > best) container.append(" ");
    if (hits[i]) {
      const mark = document.createElement("mark");
      mark.textContent = words[i];
      container.append(mark);
    } else {
      container.append(words[i]);
    }
  }
  if (to < words.length) container.append(" …");
}

// Results are shown ten at a time; the new ones replace the old in one step.
async function showMore(docs, from, terms, replace = false) {
  const shown = await Promise.all(docs.slice(from, from + PAGE).map(shownDoc));
  document.getElementById("search-more")?.remove();
  const items = shown.map(([url, title, place, text]) => {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = base + url.replace(/^\//, "");
    link.className = "result-link";
    link.textContent = title;
    const where = document.createElement("p");
    where.className = "muted small";
    where.textContent = place;
    const excerpt = document.createElement("p");
    snippet(excerpt, text, terms);
    item.append(link, where, excerpt);
    return item;
  });
  if (replace) list.replaceChildren(...items); else list.append(...items);
  if (docs.length > from + PAGE) {
    const more = document.createElement("button");
    more.id = "search-more";
    more.type = "button";
    more.textContent = `Show ${Math.min(PAGE, docs.length - from - PAGE)} more`;
    more.addEventListener("click", () => showMore(docs, from + PAGE, terms));
    list.after(more);
  }
}

input.addEventListener("input", () => schedule());
input.form.addEventListener("submit", (event) => { event.preventDefault(); schedule(0); });
document.addEventListener("keydown", (event) => {
  const links = [...list.querySelectorAll("a.result-link")];
  const at = links.indexOf(document.activeElement);
  const typing = event.target.closest?.("input, textarea, select, [contenteditable]");
  // The arrows move through the results only from the search box or a result: elsewhere
  // they scroll the page, as everywhere.
  const inResults = document.activeElement === input || at >= 0;
  if (event.key === "/" && !typing) {
    event.preventDefault();
    input.focus();
  } else if (!inResults) {
    return;
  } else if (event.key === "ArrowDown" && links.length) {
    event.preventDefault();
    links[Math.min(at + 1, links.length - 1)].focus();
  } else if (event.key === "ArrowUp" && links.length) {
    event.preventDefault();
    if (at <= 0) input.focus(); else links[at - 1].focus();
  }
});

// A query in the URL (from the header's search box, or a shared link) is run at once;
// anything typed while the index loaded is kept.
const params = new URL(location.href).searchParams;
if (params.has("q") && !input.value) input.value = params.get("q");
for (const [name] of FACETS) for (const value of params.getAll(name)) selected[name].add(value);
input.focus();
await run();
root.dataset.ready = "true";
