// Bytes the browser fetches to show the first results of a query on the search page of
// a built site, measured in Chromium over HTTP (uncompressed, as a plain static server
// sends them): the page with its assets, then the query up to the moment its results are
// shown (the index's term chunks and document groups), then what follows to count the
// facets within the results (the facet data). Each figure is also given gzip-compressed,
// as a host that compresses text (Netlify does) sends it.
//
//   node benches/browser_payload.mjs SITE_DIR [QUERY]
// (run from the repository root after `npm ci --prefix .ci`).
import { serve, launch } from "../.ci/browser/harness.mjs";
import { resolve, join } from "node:path";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const site = resolve(process.argv[2] ?? "public");
const query = process.argv[3] ?? "session summary";
const server = await serve(site, {});
const browser = await launch();
const page = await browser.newPage();
const fetched = [];
page.on("requestfinished", async (request) => {
  const sizes = await request.sizes();
  let path = decodeURIComponent(new URL(request.url()).pathname);
  if (path.endsWith("/")) path += "index.html";
  const gzip = gzipSync(readFileSync(join(site, path)), { level: 6 }).length;
  fetched.push({ url: request.url(), bytes: sizes.responseBodySize + sizes.responseHeadersSize, gzip });
});
await page.goto(`${server.url}/search/`);
await page.waitForSelector("#search[data-ready]");
await page.waitForLoadState("networkidle");
const sum = (files, key = "bytes") => files.reduce((n, f) => n + f[key], 0);
const pageBytes = sum(fetched);
const pageGzip = sum(fetched, "gzip");
const before = fetched.length;
await page.fill("#search-input", query);
await page.waitForSelector("#search-results li");
await page.waitForLoadState("networkidle");
await page.waitForTimeout(500);
// Filter data is fetched only after the results are shown (to count facets within them).
const after = fetched.slice(before);
const isFacets = (f) => f.url.endsWith("/facets.json.gz");
const queryFiles = after.filter((f) => !isFacets(f));
const queryBytes = sum(queryFiles);
const countBytes = sum(after.filter(isFacets));
const results = await page.locator("#search-results li").count();
console.log(JSON.stringify({
  query,
  results,
  page_requests: before,
  page_kib: +(pageBytes / 1024).toFixed(1),
  query_requests: queryFiles.length,
  query_kib: +(queryBytes / 1024).toFixed(1),
  first_results_kib: +((pageBytes + queryBytes) / 1024).toFixed(1),
  first_results_gzip_kib: +((pageGzip + sum(queryFiles, "gzip")) / 1024).toFixed(1),
  then_facet_counts_kib: +(countBytes / 1024).toFixed(1),
}));
await browser.close();
server.close();
