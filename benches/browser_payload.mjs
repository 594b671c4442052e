// Bytes the browser fetches to show the first results of a query on the search page of
// a built site, measured in Chromium over HTTP: the page with its assets, and then the
// query (Pagefind's WebAssembly, index chunks, filter data and result fragments).
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
const queryFiles = fetched.slice(before);
const queryBytes = queryFiles.reduce((n, f) => n + f.bytes, 0);
const results = await page.locator("#search-results li").count();
console.log(JSON.stringify({
  query,
  results,
  page_requests: before,
  page_kib: +(pageBytes / 1024).toFixed(1),
  query_requests: queryFiles.length,
  query_kib: +(queryBytes / 1024).toFixed(1),
  total_kib: +((pageBytes + queryBytes) / 1024).toFixed(1),
}));
await browser.close();
server.close();
