// Bytes the browser fetches to show the first results of a query on the search page of
// a built site, measured in Chromium over HTTP (uncompressed, as a plain static server
// sends them): the page with its assets, then the query up to the moment its results are
// shown (Pagefind's index chunks and result fragments), then what follows to count the
// facets within the results (Pagefind's filter data).
//
//   node benches/browser_payload.mjs SITE_DIR [QUERY]
// (run from the repository root after `npm ci --prefix .ci`).
import { serve, launch } from "../.ci/browser/harness.mjs";
import { resolve } from "node:path";

const site = resolve(process.argv[2] ?? "public");
const query = process.argv[3] ?? "session summary";
const server = await serve(site, {});
const browser = await launch();
const page = await browser.newPage();
const fetched = [];
page.on("requestfinished", async (request) => {
  const sizes = await request.sizes();
  fetched.push({ url: request.url(), bytes: sizes.responseBodySize + sizes.responseHeadersSize });
});
await page.goto(`${server.url}/search/`);
await page.waitForSelector("#search[data-ready]");
await page.waitForLoadState("networkidle");
const pageBytes = fetched.reduce((n, f) => n + f.bytes, 0);
const before = fetched.length;
await page.fill("#search-input", query);
await page.waitForSelector("#search-results li");
await page.waitForLoadState("networkidle");
await page.waitForTimeout(500);
// Filter data is fetched only after the results are shown (to count facets within them).
const after = fetched.slice(before);
const isFilter = (f) => f.url.includes("/pagefind/filter/");
const queryFiles = after.filter((f) => !isFilter(f));
const queryBytes = queryFiles.reduce((n, f) => n + f.bytes, 0);
const countBytes = after.filter(isFilter).reduce((n, f) => n + f.bytes, 0);
const results = await page.locator("#search-results li").count();
console.log(JSON.stringify({
  query,
  results,
  page_requests: before,
  page_kib: +(pageBytes / 1024).toFixed(1),
  query_requests: queryFiles.length,
  query_kib: +(queryBytes / 1024).toFixed(1),
  first_results_kib: +((pageBytes + queryBytes) / 1024).toFixed(1),
  then_facet_counts_kib: +(countBytes / 1024).toFixed(1),
}));
await browser.close();
server.close();
