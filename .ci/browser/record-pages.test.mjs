// A site built with `record_pages: per-run` (one page of records per run), served as a
// host without redirects serves it (its own 404 page for a missing file): a record's own
// address still leads to the record, on its run's page of records; that page passes
// axe-core's WCAG 2.2 AA checks in both colour schemes, nothing overflows sideways at
// 360 and 1280 px, and it is screenshotted at 390 and 1280 px. The site's search index
// is split into small files (`search:` of casebook.yaml), as a large site splits it into
// large ones: the search page still finds each record and leads to its place.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, appendFileSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repo, servedSite, sidewaysOverflow, wcagViolations, watchedPage } from "./harness.mjs";

const BASE = "/";
const RUN = "fractal/aas-2026-08-20-fractal-01";
const SHOTS = process.env.CASEBOOK_SCREENSHOTS ?? join(repo, "target/screenshots");
let served, site, server, browser;
const problems = [];

before(async () => {
  // The bundled site, its configuration asking for one page of records per run.
  const root = mkdtempSync(join(tmpdir(), "casebook-per-run-"));
  process.on("exit", () => rmSync(root, { recursive: true, force: true }));
  for (const folder of ["content", "themes", "static"]) {
    if (existsSync(join(repo, folder))) cpSync(join(repo, folder), join(root, folder), { recursive: true });
  }
  appendFileSync(
    join(root, "content/casebook.yaml"),
    "\nrecord_pages: per-run\nsearch:\n  documents_per_file: 5\n  term_file_kib: 4\n",
  );
  served = await servedSite(BASE, root);
  ({ site, server, browser } = served);
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await served?.close();
  assert.deepEqual(problems, [], "no script error and no CSP violation");
});

/** A page at `path` below the base, at a width and in a colour scheme. */
async function open(path, width = 1280, colorScheme = "light") {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme });
  const seen = [];
  const page = await watchedPage(context, seen);
  // The 404 page's own status is the one error Chromium reports on the way.
  page.on("close", () => problems.push(...seen.filter((m) => !m.includes("status of 404"))));
  await page.goto(`${server.url}${BASE}${path}`);
  return { page, context };
}

test("a record's own address leads to its place on its run's page of records", async () => {
  const { page, context } = await open(`${RUN}/records/OBJ-04.html`);
  await page.waitForURL(`**/${RUN}/records.html#OBJ-04.html`);
  const shown = await page.evaluate(() => {
    const record = document.getElementById("OBJ-04.html");
    const box = record?.getBoundingClientRect();
    return {
      title: record?.querySelector("h2 .rec-id")?.textContent,
      target: record?.matches(":target"),
      inView: box ? box.top >= -1 && box.top < window.innerHeight : false,
    };
  });
  assert.deepEqual(shown, { title: "OBJ-04", target: true, inView: true });
  await context.close();
});

test("an address that is no record's stays on the 404 page", async () => {
  const { page, context } = await open("no/such/page.html");
  assert.match(await page.textContent("h1"), /Page not found/);
  assert.ok(page.url().endsWith("/no/such/page.html"), page.url());
  await context.close();
});

test("a record linked from its run's page opens at its place", async () => {
  const { page, context } = await open(`${RUN}/`);
  const link = page.locator('a[href$="records.html#OBJ-04.html"]').first();
  await link.click();
  await page.waitForURL(`**/${RUN}/records.html#OBJ-04.html`);
  assert.equal(await page.evaluate(() => document.querySelector(":target")?.id), "OBJ-04.html");
  await context.close();
});

test("search over an index of small files finds each record and leads to its place", async () => {
  const browserIndex = join(site.output, "search/browser");
  const meta = JSON.parse(readFileSync(join(browserIndex, "meta.json"), "utf8"));
  assert.equal(meta.docs_per_chunk, 5);
  assert.ok(readdirSync(join(browserIndex, "d", RUN)).length > 3, "a run's documents in several files of 5");
  assert.ok(meta.term_chunks.length > 3, "several term files of about 4 KiB");
  // The relevance queries of `casebook search` (tests/search.rs), each in the top three.
  const { queries } = JSON.parse(readFileSync(join(repo, "tests/relevance.json"), "utf8"));
  const { page, context } = await open("search/");
  const misses = [];
  for (const { query, expected } of queries) {
    await page.goto(`${server.url}${BASE}search/?q=${encodeURIComponent(query)}`);
    await page.waitForSelector("#search[data-ready]");
    const top = (await page.locator("#search-results a.result-link").allInnerTexts()).slice(0, 3);
    const found = top.some((t) => t === expected || t.startsWith(`${expected} — `) || t.endsWith(`§ ${expected}`));
    if (!found) misses.push(`${query} → ${JSON.stringify(top)}, expected ${expected}`);
  }
  assert.deepEqual(misses, []);
  await page.goto(`${server.url}${BASE}search/?q=OBJ-04`);
  await page.waitForSelector("#search[data-ready]");
  await page.locator("#search-results a.result-link", { hasText: /^OBJ-04 — / }).first().click();
  await page.waitForURL(`**/${RUN}/records.html#OBJ-04.html`);
  assert.equal(await page.evaluate(() => document.querySelector(":target")?.id), "OBJ-04.html");
  await context.close();
});

test("the page of records: no WCAG 2.2 AA violation, light and dark", async () => {
  for (const scheme of ["light", "dark"]) {
    const { page, context } = await open(`${RUN}/records.html`, 1280, scheme);
    assert.deepEqual(await wcagViolations(page), [], scheme);
    await context.close();
  }
});

test("the page of records: nothing overflows sideways at 360 and 1280 px; screenshots", async () => {
  for (const width of [360, 390, 1280]) {
    const { page, context } = await open(`${RUN}/records.html`, width);
    const overflow = await sidewaysOverflow(page);
    assert.ok(overflow.page <= overflow.viewport && overflow.out.length === 0, `${width} px: ${JSON.stringify(overflow)}`);
    if (width !== 360) await page.screenshot({ path: join(SHOTS, `records-per-run-${width}.png`), fullPage: false });
    await context.close();
  }
});
