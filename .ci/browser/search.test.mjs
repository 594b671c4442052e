// The search page in real Chromium, over real HTTP, under a sub-path base URL, with the
// site's Content-Security-Policy: type a query, see the expected result, apply a facet,
// follow a result to its page and anchor, use the keyboard, and read the page with
// JavaScript off.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { netlifyPolicy, repo, serve, servedSite, watchedPage } from "./harness.mjs";

const BASE = "/preview/pr-12/";
let served, site, server, browser, context;
const problems = [];

before(async () => {
  served = await servedSite(BASE, repo, (built) => built.root);
  ({ site, server, browser } = served);
  context = await browser.newContext();
});

after(async () => {
  await served?.close();
  assert.deepEqual(problems, [], "no script error and no CSP violation on any page");
});

async function openSearch(query = "") {
  const page = await watchedPage(context, problems);
  await page.goto(`${server.url}${BASE}search/${query ? `?q=${encodeURIComponent(query)}` : ""}`);
  await page.waitForSelector("#search[data-ready]");
  return page;
}

const titles = (page) => page.locator("#search-results a.result-link").allInnerTexts();

test("typing a query shows the expected record", async () => {
  const page = await openSearch();
  await page.fill("#search-input", "20 turns");
  await page.waitForFunction(() => [...document.querySelectorAll("#search-results a")].some((a) => a.textContent.startsWith("OBJ-04")));
  assert.ok((await titles(page)).some((t) => t.startsWith("OBJ-04 — session_history list")));
  assert.match(await page.locator("#search-status").innerText(), /^\d+ results?/);
  assert.match(page.url(), /\?q=20\+turns$/, "the query is kept in the URL");
  // Facet counts follow the results: far fewer Fractal documents match than exist.
  const fractal = page.locator('label[data-facet="system"][data-value="Fractal"] .count');
  await page.waitForFunction(() => {
    const count = document.querySelector('label[data-facet="system"][data-value="Fractal"] .count');
    return count && Number(count.textContent.replace(/[()]/g, "")) < 40;
  });
  assert.ok(Number((await fractal.innerText()).replace(/[()]/g, "")) > 0);
  await page.close();
});

test("facet counts equal the records and subjects of the model", async () => {
  // The site's records.json lists the runs; each run's file holds its records and findings.
  const runs = JSON.parse(readFileSync(join(site.output, "records.json"), "utf8")).runs;
  const files = runs.map((run) => JSON.parse(readFileSync(join(site.output, run.path), "utf8")));
  const manifest = { records: files.flatMap((f) => f.records), findings: files.flatMap((f) => f.findings) };
  const published = manifest.records.filter((r) => r.published);
  const isPublished = new Set(published.map((r) => `${r.system}/${r.run}/${r.id}`));
  const page = await openSearch();
  const count = async (facet, value) => {
    const text = await page.locator(`label[data-facet="${facet}"][data-value="${value}"] .count`).innerText();
    return Number(text.replace(/[()]/g, ""));
  };
  for (const kind of ["OBJ", "RTE", "BAP", "NEW", "CMP"]) {
    assert.equal(await count("kind", kind), published.filter((r) => r.kind === kind).length, `kind ${kind}`);
  }
  // A status facet counts records, and the subjects of findings without a published
  // record (`Consolidation`), as the status pages do.
  const implemented = published.filter((r) => r.statuses.some((s) => s.value === "implemented")).length;
  const subjects = new Set(
    manifest.findings
      .filter((f) => f.status === "implemented" && !(f.record && isPublished.has(`${f.system}/${f.run}/${f.record}`)))
      .map((f) => `${f.system}/${f.run}/${f.subject}`),
  );
  assert.ok(subjects.size > 0, "the bundled site has findings without a record");
  assert.equal(await count("status", "implemented"), implemented + subjects.size);
  await page.close();
});

test("a facet narrows the results", async () => {
  const page = await openSearch("session");
  await page.waitForSelector("#search-results li");
  const before = await titles(page);
  assert.ok(before.some((t) => !t.startsWith("OBJ-")), "unfiltered results include sections and other kinds");
  await page.check('label[data-facet="kind"][data-value="OBJ"] input');
  await page.waitForFunction(() => {
    const links = [...document.querySelectorAll("#search-results a")];
    return links.length > 0 && links.every((a) => /^(MEM-)?OBJ-/.test(a.textContent));
  });
  const after = await titles(page);
  assert.ok(after.length > 0 && after.length <= before.length);
  assert.match(page.url(), /kind=OBJ/, "the facet is kept in the URL");
  await page.close();
});

test("kinds are named beside their codes, and a value no result has cannot be ticked", async () => {
  const page = await openSearch("session");
  await page.waitForSelector('label[data-facet="kind"][data-value="OBJ"] input');
  const obj = (await page.locator('label[data-facet="kind"][data-value="OBJ"]').innerText()).trim();
  assert.match(obj, /^operative object \(OBJ\) \(\d+\)$/, "the site's name for the kind, then its code");
  // Narrowed to one system, some values of the other facets have no result left.
  await page.check('label[data-facet="system"][data-value="Fractal"] input');
  await page.waitForSelector("#search-facets label.none");
  const none = await page.locator("#search-facets label.none").evaluateAll((labels) =>
    labels.map((l) => ({ count: l.querySelector(".count").textContent, disabled: l.querySelector("input").disabled })));
  assert.ok(none.length > 0);
  assert.ok(none.every((v) => v.count === "(0)" && v.disabled), "every value counted 0 is disabled");
  const counted = await page.locator("#search-facets label:not(.none) input").evaluateAll((inputs) => inputs.every((i) => !i.disabled));
  assert.ok(counted, "a value with results stays tickable");
  await page.close();
});

test("each count of the home page's kinds table opens the search page listing that many records", async () => {
  const page = await watchedPage(context, problems);
  await page.goto(`${server.url}${BASE}`);
  const cells = await page.locator("table.kinds td a").evaluateAll((links) =>
    links.map((a) => ({ href: a.getAttribute("href"), count: Number(a.textContent) })));
  assert.ok(cells.length >= 5, `${cells.length} linked cells`);
  const home = page.url();
  for (const { href, count } of cells.slice(0, 6)) {
    const target = new URL(href, home);
    assert.ok(target.pathname === `${BASE}search/` && target.searchParams.has("system"), href);
    await page.goto(target.href);
    await page.waitForSelector("#search[data-ready]");
    await page.waitForFunction(() => /result|No result/.test(document.getElementById("search-status").textContent));
    assert.equal(await page.locator("#search-status").innerText(), `${count} result${count === 1 ? "" : "s"}.`, href);
    const kind = target.searchParams.get("kind");
    assert.ok(await page.locator(`label[data-facet="kind"][data-value="${kind}"] input`).isChecked(), `${kind} is ticked`);
  }
  await page.close();
});

test("each relevance query finds its record in the top three", async () => {
  // The same queries as `casebook search` (tests/search.rs), against the browser index.
  const { queries } = JSON.parse(readFileSync(new URL("../../tests/relevance.json", import.meta.url), "utf8"));
  const misses = [];
  const page = await watchedPage(context, problems);
  for (const { query, expected } of queries) {
    await page.goto(`${server.url}${BASE}search/?q=${encodeURIComponent(query)}`);
    await page.waitForSelector("#search[data-ready]");
    const top = (await titles(page)).slice(0, 3);
    const found = top.some((t) => t === expected || t.startsWith(`${expected} — `) || t.endsWith(`§ ${expected}`));
    if (!found) misses.push(`${query} → ${JSON.stringify(top)}, expected ${expected}`);
  }
  assert.deepEqual(misses, []);
  await page.close();
});

test("a host that sends the index gzip-encoded gives the same results", async () => {
  // The browser inflates such files itself; the page must not inflate them again.
  const encoded = await serve(site.root, { "Content-Security-Policy": netlifyPolicy() }, { gzipEncoded: true });
  try {
    const page = await watchedPage(context, problems);
    await page.goto(`${encoded.url}${BASE}search/?q=${encodeURIComponent("20 turns")}`);
    await page.waitForSelector("#search[data-ready]");
    await page.waitForFunction(() => [...document.querySelectorAll("#search-results a")].some((a) => a.textContent.startsWith("OBJ-04")));
    // The facet data (also a .gz file) is fetched once results are shown; a file the
    // page could not read would be a script error, which `after` fails on.
    await page.waitForLoadState("networkidle");
    await page.waitForSelector("#search-facets input");
    await page.close();
  } finally {
    encoded.close();
  }
});

test("an exact ID ranks its record first", async () => {
  const page = await openSearch("MEM-OBJ-raw");
  assert.ok((await titles(page))[0].startsWith("MEM-OBJ-raw — "), (await titles(page)).join("\n"));
  await page.close();
});

test("a record result leads to the record's page under the base URL", async () => {
  const page = await openSearch("MEM-OBJ-raw");
  const link = page.locator("#search-results a.result-link", { hasText: "MEM-OBJ-raw — Raw conversation batches" });
  await link.first().click();
  await page.waitForURL(`**${BASE}exia-seed/c7497ac/records/MEM-OBJ-raw.html`);
  assert.equal(await page.locator("h1 .rec-id").innerText(), "MEM-OBJ-raw");
  await page.close();
});

test("a section result leads to the section's anchor", async () => {
  const page = await openSearch("Write agency");
  const link = page.locator("#search-results a.result-link", { hasText: "§ 2.1 Write agency" });
  await link.first().click();
  await page.waitForURL(`**${BASE}fractal/aas-2026-08-20-fractal-01/memory/#2-1-write-agency`);
  assert.equal(await page.evaluate(() => location.hash), "#2-1-write-agency");
  assert.ok(await page.evaluate(() => document.getElementById("2-1-write-agency")?.tagName === "H3"));
  await page.close();
});

test("the keyboard reaches and opens results", async () => {
  const page = await openSearch();
  await page.locator("body").click();
  await page.keyboard.press("/");
  await page.keyboard.type("thesaurus.json");
  await page.waitForFunction(() => document.querySelector("#search-results a")?.textContent.startsWith("MEM-OBJ-thesaurus"));
  await page.keyboard.press("ArrowDown");
  const focused = await page.evaluate(() => document.activeElement.textContent);
  assert.ok(focused.startsWith("MEM-OBJ-thesaurus"), focused);
  await page.keyboard.press("Enter");
  await page.waitForURL("**/records/MEM-OBJ-thesaurus.html");
  await page.close();
});

test("ticking a facet with the keyboard keeps the focus on it", async () => {
  const page = await openSearch("session");
  await page.waitForSelector('label[data-facet="system"][data-value="Fractal"] input');
  await page.focus('label[data-facet="system"][data-value="Fractal"] input');
  // The facets are made anew with the new counts: the box ticked is still the focus, in
  // the new list (the box the key was pressed on is marked, to tell it from its successor).
  const pressAndWait = async (state) => {
    await page.evaluate(() => { document.activeElement.dataset.pressed = "yes"; });
    await page.keyboard.press("Space");
    await page.waitForFunction((state) => {
      const e = document.activeElement;
      return e?.matches?.(`input[name="system"][value="Fractal"]${state}`) && !e.dataset.pressed;
    }, state);
  };
  await pressAndWait(":checked");
  await pressAndWait(":not(:checked)");
  // From a facet, the arrows do not jump into the results.
  await page.keyboard.press("ArrowDown");
  const focused = await page.evaluate(() => document.activeElement.className || document.activeElement.tagName);
  assert.notEqual(focused, "result-link", "ArrowDown from a facet stays out of the results");
  await page.close();
});

test("the first Tab reaches the skip link, which leads to the content", async () => {
  const page = await watchedPage(context, problems);
  await page.goto(`${server.url}${BASE}fractal/aas-2026-08-20-fractal-01/records/OBJ-04.html`);
  await page.keyboard.press("Tab");
  assert.equal(await page.evaluate(() => document.activeElement.textContent), "Skip to the content");
  assert.ok(await page.evaluate(() => document.activeElement.getBoundingClientRect().top >= 0), "shown when focused");
  await page.keyboard.press("Enter");
  assert.equal(await page.evaluate(() => document.activeElement.id), "main");
  assert.equal(await page.locator('nav.crumbs [aria-current="page"]').count(), 1);
  assert.equal(await page.locator('header nav[aria-label="Site"]').count(), 1);
  // On paper, the header and the breadcrumbs are left out.
  await page.emulateMedia({ media: "print" });
  assert.equal(await page.locator("header.site").evaluate((e) => getComputedStyle(e).display), "none");
  await page.close();
});

test("the header's search box opens the search page with its query", async () => {
  const page = await watchedPage(context, problems);
  await page.goto(`${server.url}${BASE}`);
  await page.fill("form.site-search input", "associative graph");
  await page.press("form.site-search input", "Enter");
  await page.waitForURL(`**${BASE}search/?q=associative+graph`);
  await page.waitForSelector("#search[data-ready]");
  assert.ok((await titles(page)).some((t) => t.startsWith("MEM-OBJ-graphe")), (await titles(page)).join("\n"));
  await page.close();
});

test("without JavaScript the page says so and stays readable", async () => {
  const noScript = await browser.newContext({ javaScriptEnabled: false });
  const page = await noScript.newPage();
  await page.goto(`${server.url}${BASE}search/`);
  assert.match(await page.locator("#search-nojs").innerText(), /needs JavaScript, which is off/);
  assert.equal(await page.locator("#search").isVisible(), false);
  await page.goto(`${server.url}${BASE}exia-seed/c7497ac/records/MEM-OBJ-raw.html`);
  assert.match(await page.locator("main").innerText(), /Referenced by/);
  await noScript.close();
});
