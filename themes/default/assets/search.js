// The search page: Pagefind's chunked index in the browser, with facets (system, kind,
// status) and their counts, result snippets, keyboard use, and the query in the URL.
// Result text is inserted as text, never as HTML: only Pagefind's <mark> highlights are
// turned into elements.
const root = document.getElementById("search");
const input = document.getElementById("search-input");
const facetsBox = document.getElementById("search-facets");
const statusLine = document.getElementById("search-status");
const list = document.getElementById("search-results");
const FACETS = [["system", "System"], ["kind", "Kind"], ["status", "Status"]];
const selected = Object.fromEntries(FACETS.map(([name]) => [name, new Set()]));

document.getElementById("search-nojs").remove();
root.hidden = false;
const pagefind = await import(root.dataset.bundle + "pagefind.js");
await pagefind.options({ baseUrl: root.dataset.base, excerptLength: 28 });
pagefind.init();
// Facet totals come from a small file the build writes; Pagefind's own filter data,
// needed for counts within results, is loaded after the first results are shown, so a
// first query fetches only what it displays.
const allFilters = await (await fetch(root.dataset.bundle + "casebook-facets.json")).json();
let filtersLoaded = false;

function markedText(container, excerpt) {
  // Pagefind marks matches with <mark>; everything else is shown as plain text.
  const parts = excerpt.split(/(<mark>|<\/mark>)/);
  let marking = false;
  for (const part of parts) {
    if (part === "<mark>") { marking = true; continue; }
    if (part === "</mark>") { marking = false; continue; }
    const text = part.replace(/<[^>]*>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
    if (marking) {
      const mark = document.createElement("mark");
      mark.textContent = text;
      container.append(mark);
    } else {
      container.append(text);
    }
  }
}

function renderFacets(counts) {
  facetsBox.replaceChildren();
  for (const [name, title] of FACETS) {
    const values = Object.keys(allFilters[name] || {}).sort();
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
        run();
      });
      const count = (counts && counts[name] && counts[name][value]) || 0;
      label.append(check, ` ${value} `);
      const badge = document.createElement("span");
      badge.className = "count";
      badge.textContent = `(${count})`;
      label.append(badge);
      label.dataset.facet = name;
      label.dataset.value = value;
      box.append(label);
    }
    facetsBox.append(box);
  }
}

function filters() {
  const out = {};
  for (const [name] of FACETS) {
    if (selected[name].size) out[name] = { any: [...selected[name]] };
  }
  return out;
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

async function run() {
  const query = input.value.trim();
  remember(query);
  const active = filters();
  if (!query && Object.keys(active).length === 0) {
    list.replaceChildren();
    statusLine.textContent = "Type to search; tick a filter to browse.";
    renderFacets(allFilters);
    return;
  }
  const search = await pagefind.debouncedSearch(query || null, { filters: active }, 120);
  if (search === null) return; // a newer query took over
  renderFacets(filtersLoaded ? search.filters : allFilters);
  await showMore(search.results, 0, true);
  const total = search.results.length;
  statusLine.textContent = total === 0 ? "No result." : `${total} result${total === 1 ? "" : "s"}.`;
  if (!filtersLoaded) {
    await pagefind.filters();
    filtersLoaded = true;
    const counted = await pagefind.search(query || null, { filters: active });
    renderFacets(counted.filters);
  }
}

// Results are fetched ten at a time: a first query loads only what it shows.
const PAGE = 10;
// The new results replace the old ones in one step, once they are all fetched.
async function showMore(results, from, replace = false) {
  const shown = await Promise.all(results.slice(from, from + PAGE).map((r) => r.data()));
  document.getElementById("search-more")?.remove();
  const items = [];
  for (const data of shown) {
    const item = document.createElement("li");
    const link = document.createElement("a");
    link.href = data.url;
    link.className = "result-link";
    link.textContent = data.meta.title || data.url;
    const where = document.createElement("p");
    where.className = "muted small";
    where.textContent = [data.meta.system, data.meta.run, data.meta.type].filter(Boolean).join(" · ");
    const excerpt = document.createElement("p");
    markedText(excerpt, data.excerpt || "");
    item.append(link, where, excerpt);
    items.push(item);
  }
  if (replace) list.replaceChildren(...items); else list.append(...items);
  if (results.length > from + PAGE) {
    const more = document.createElement("button");
    more.id = "search-more";
    more.type = "button";
    more.textContent = `Show ${Math.min(PAGE, results.length - from - PAGE)} more`;
    more.addEventListener("click", () => showMore(results, from + PAGE));
    list.after(more);
  }
}

input.addEventListener("input", run);
input.form.addEventListener("submit", (event) => { event.preventDefault(); run(); });
document.addEventListener("keydown", (event) => {
  const links = [...list.querySelectorAll("a.result-link")];
  const at = links.indexOf(document.activeElement);
  if (event.key === "/" && document.activeElement !== input) {
    event.preventDefault();
    input.focus();
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
