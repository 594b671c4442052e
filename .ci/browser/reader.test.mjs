// Every page type as a reader meets it, in real Chromium over real HTTP with the site's
// Content-Security-Policy: axe-core finds no WCAG 2.2 AA violation, in the light and the
// dark colour scheme; at 360 px and at 1280 px nothing but a table's own scroll box
// overflows the page sideways; and each page is screenshotted at 390 and 1280 px into
// CASEBOOK_SCREENSHOTS (default target/screenshots/), which the workflows keep as an
// artifact so that a reviewer sees what changed.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { repo, servedSite, sidewaysOverflow, wcagViolations, watchedPage } from "./harness.mjs";

const BASE = "/";
const RUN = "fractal/aas-2026-08-20-fractal-01";
/** One page of each type, by name. */
const PAGES = {
  home: "",
  system: "fractal/",
  run: `${RUN}/`,
  report: `${RUN}/memory/`,
  record: `${RUN}/records/OBJ-04.html`,
  "unpublished-record": `${RUN}/records/CLM-03.html`,
  // A run and a record that draw the record graph.
  "graph-run": "exia-seed/c7497ac/",
  "graph-record": "exia-seed/c7497ac/records/MEM-OBJ-summary.html",
  statuses: "statuses/",
  status: "statuses/implemented/",
  "system-status": "fractal/statuses/absent/",
  search: "search/?q=session",
  changes: "fractal/changes/aas-2026-08-20-fractal-01/6a226e7/",
  "not-found": "no/such/page/",
};
const SHOTS = process.env.CASEBOOK_SCREENSHOTS ?? join(repo, "target/screenshots");
let served, server, browser;
const problems = [];

before(async () => {
  served = await servedSite(BASE);
  ({ server, browser } = served);
  mkdirSync(SHOTS, { recursive: true });
});

after(async () => {
  await served?.close();
  assert.deepEqual(problems, [], "no script error and no CSP violation on any page");
});

/** Opens a page at a width, in a colour scheme; the search page once it has results. */
async function open(name, width, colorScheme = "light") {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme });
  // The 404 page's own status is the one error Chromium reports for it.
  const seen = [];
  const page = await watchedPage(context, name === "not-found" ? seen : problems);
  page.on("close", () => problems.push(...seen.filter((m) => !m.includes("status of 404"))));
  const response = await page.goto(`${server.url}${BASE}${PAGES[name]}`);
  assert.equal(response.status(), name === "not-found" ? 404 : 200, name);
  if (name === "search") await page.waitForSelector("#search-results a.result-link");
  return { page, context };
}

for (const name of Object.keys(PAGES)) {
  test(`${name}: no WCAG 2.2 AA violation, light and dark`, async () => {
    for (const scheme of ["light", "dark"]) {
      const { page, context } = await open(name, 1280, scheme);
      const violations = await wcagViolations(page);
      assert.equal(violations.length, 0, `${name} (${scheme}):\n${violations.join("\n")}`);
      await context.close();
    }
  });

  test(`${name}: nothing overflows sideways at 360 and 1280 px; screenshots`, async () => {
    for (const width of [360, 390, 1280]) {
      const { page, context } = await open(name, width);
      const overflow = await sidewaysOverflow(page);
      assert.ok(
        overflow.page <= overflow.viewport && overflow.out.length === 0,
        `${name} at ${width} px: the page is ${overflow.page} px wide in a ${overflow.viewport} px viewport; outside: ${overflow.out.join(", ")}`,
      );
      if (width !== 360) await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: true });
      await context.close();
    }
  });
}
