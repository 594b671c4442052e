// A site of fewer files: the bundled site built with `record_pages: per-run` (one page of
// records per run), `status_pages: per-system` (one page of statuses per system) and its
// search index split into small files (`search:`), served as a host without redirects
// serves it (its own 404 page for a missing file). A record's and a status's own address
// still lead to their places on those pages; the pages pass axe-core's WCAG 2.2 AA checks
// in both colour schemes, nothing overflows sideways at 360 and 1280 px, and they are
// screenshotted at 390 and 1280 px; the search page finds each record and leads to its
// place.
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
    "\nrecord_pages: per-run\nstatus_pages: per-system\nsearch:\n  documents_per_file: 5\n  term_file_kib: 4\n",
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

/** Opens `path` (an address the site no longer writes) and says how the element `id` it
 *  should land on is shown: the text of `title` in it, whether it is the target, and
 *  whether it is in view. */
async function landing(path, url, id, title) {
  const { page, context } = await open(path);
  await page.waitForURL(url);
  const shown = await page.evaluate(([id, title]) => {
    const place = document.getElementById(id);
    const box = place?.getBoundingClientRect();
    return {
      title: place?.querySelector(title)?.textContent,
      target: place?.matches(":target"),
      inView: box ? box.top >= -1 && box.top < window.innerHeight : false,
    };
  }, [id, title]);
  await context.close();
  return shown;
}

test("a record's own address leads to its place on its run's page of records", async () => {
  const shown = await landing(`${RUN}/records/OBJ-04.html`, `**/${RUN}/records.html#OBJ-04.html`, "OBJ-04.html", "h2 .rec-id");
  assert.deepEqual(shown, { title: "OBJ-04", target: true, inView: true });
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

test("a system's status's own address leads to its place on the system's page of statuses", async () => {
  const shown = await landing("fractal/statuses/implemented/", "**/fractal/statuses.html#implemented/", "implemented/", "h2");
  assert.deepEqual(shown, { title: "implemented", target: true, inView: true });
});

test("a status linked from its system's page opens at its place", async () => {
  const { page, context } = await open("fractal/");
  await page.locator('a[href$="statuses.html#uninspected/"]').first().click();
  await page.waitForURL("**/fractal/statuses.html#uninspected/");
  assert.equal(await page.evaluate(() => document.querySelector(":target")?.id), "uninspected/");
  await context.close();
});

const SHARED_PAGES = [[`${RUN}/records.html`, "records-per-run"], ["fractal/statuses.html", "statuses-per-system"]];

test("the pages of records and of statuses: no WCAG 2.2 AA violation, light and dark", async () => {
  for (const [path] of SHARED_PAGES) {
    for (const scheme of ["light", "dark"]) {
      const { page, context } = await open(path, 1280, scheme);
      assert.deepEqual(await wcagViolations(page), [], `${path}, ${scheme}`);
      await context.close();
    }
  }
});

test("the pages of records and of statuses: nothing overflows sideways at 360 and 1280 px; screenshots", async () => {
  for (const [path, shot] of SHARED_PAGES) {
    for (const width of [360, 390, 1280]) {
      const { page, context } = await open(path, width);
      const overflow = await sidewaysOverflow(page);
      assert.ok(overflow.page <= overflow.viewport && overflow.out.length === 0, `${path}, ${width} px: ${JSON.stringify(overflow)}`);
      if (width !== 360) await page.screenshot({ path: join(SHOTS, `${shot}-${width}.png`), fullPage: false });
      await context.close();
    }
  }
});
