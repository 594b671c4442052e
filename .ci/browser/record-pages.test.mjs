// A site built with `record_pages: per-run` (one page of records per run), served as a
// host without redirects serves it (its own 404 page for a missing file): a record's own
// address still leads to the record, on its run's page of records; that page passes
// axe-core's WCAG 2.2 AA checks in both colour schemes, nothing overflows sideways at
// 360 and 1280 px, and it is screenshotted at 390 and 1280 px.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, appendFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repo, servedSite, sidewaysOverflow, wcagViolations, watchedPage } from "./harness.mjs";

const BASE = "/";
const RUN = "fractal/aas-2026-08-20-fractal-01";
const SHOTS = process.env.CASEBOOK_SCREENSHOTS ?? join(repo, "target/screenshots");
let served, server, browser;
const problems = [];

before(async () => {
  // The bundled site, its configuration asking for one page of records per run.
  const root = mkdtempSync(join(tmpdir(), "casebook-per-run-"));
  process.on("exit", () => rmSync(root, { recursive: true, force: true }));
  for (const folder of ["content", "themes", "static"]) {
    if (existsSync(join(repo, folder))) cpSync(join(repo, folder), join(root, folder), { recursive: true });
  }
  appendFileSync(join(root, "content/casebook.yaml"), "\nrecord_pages: per-run\n");
  served = await servedSite(BASE, root);
  ({ server, browser } = served);
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
