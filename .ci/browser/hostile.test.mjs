// The hostile fixture (tests/sites/hostile/) in real Chromium: every page of the built
// site is loaded over HTTP with the site's Content-Security-Policy, and none of the
// payloads it carries (scripts, event handlers, javascript: and data: URLs) runs, and
// no page raises a CSP violation or a script error.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { servedSite, wcagViolations, watchedPage, repo } from "./harness.mjs";

let served, site, server, browser;

function htmlFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return htmlFiles(path);
    return name.endsWith(".html") ? [path] : [];
  });
}

before(async () => {
  served = await servedSite("/", join(repo, "tests/sites/hostile"), (built) => built.root);
  ({ site, server, browser } = served);
});

after(async () => {
  await served?.close();
});

test("no payload runs on any page, and no page breaks the CSP", async () => {
  const context = await browser.newContext();
  const pages = htmlFiles(site.output).sort();
  assert.ok(pages.length > 10);
  for (const file of pages) {
    const problems = [];
    const page = await watchedPage(context, problems);
    const url = `${server.url}/${relative(site.output, file).replace(/index\.html$/, "")}`;
    await page.goto(url);
    await page.waitForLoadState("networkidle");
    // Hover over the first elements of the page, in case a handler slipped through
    // (tests/hostile.rs checks every element of every page for handlers statically).
    for (const element of (await page.locator("main span, main b, main td, main div").all()).slice(0, 12)) {
      await element.hover({ timeout: 300 }).catch(() => {});
    }
    assert.equal(await page.evaluate(() => window.__pwned), undefined, `${url}: a payload ran`);
    assert.deepEqual(problems, [], `${url}: script errors or CSP violations`);
    await page.close();
  }
  await context.close();
});

test("axe-core finds no WCAG 2.2 AA violation on any page, light and dark", async () => {
  const failures = [];
  for (const colorScheme of ["light", "dark"]) {
    const context = await browser.newContext({ colorScheme });
    for (const file of htmlFiles(site.output).sort()) {
      const page = await context.newPage();
      const path = `/${relative(site.output, file).replace(/index\.html$/, "")}`;
      await page.goto(`${server.url}${path}`);
      for (const violation of await wcagViolations(page)) failures.push(`${path} (${colorScheme}) ${violation}`);
      await page.close();
    }
    await context.close();
  }
  assert.deepEqual(failures, []);
});
