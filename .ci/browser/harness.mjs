// Shared by the browser tests: build a site with the casebook binary, serve it over real
// HTTP (with the Content-Security-Policy that netlify.toml sends), and drive Debian's
// Chromium with playwright-core.
import { spawnSync } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, extname, normalize, sep } from "node:path";
import { chromium } from "playwright-core";

export const repo = resolve(import.meta.dirname, "../..");
export const casebook = process.env.CASEBOOK ?? join(repo, "target/debug/casebook");

/** Builds a site (the bundled one by default) into a fresh folder, under `base`
 *  (e.g. /preview/pr-12/). */
export function buildSite(base, site = repo) {
  const root = mkdtempSync(join(tmpdir(), "casebook-browser-"));
  // Removed when the test process ends, whichever way it ends.
  process.on("exit", () => rmSync(root, { recursive: true, force: true }));
  const output = join(root, ...base.split("/").filter(Boolean));
  const run = spawnSync(casebook, ["build", "--quiet", "--root", site, "--output", output, "--base-url", base], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`casebook build failed:\n${run.stderr}`);
  return { root, output };
}

/** The policy netlify.toml sends with every page. */
export function netlifyPolicy() {
  const config = readFileSync(join(repo, "netlify.toml"), "utf8");
  const line = config.split("\n").find((l) => l.trim().startsWith("Content-Security-Policy"));
  return line.split("=").slice(1).join("=").trim().replace(/^"|"$/g, "");
}

const TYPES = {
  ".html": "text/html; charset=utf-8", ".css": "text/css", ".js": "text/javascript", ".json": "application/json",
  ".svg": "image/svg+xml", ".xml": "application/xml", ".txt": "text/plain; charset=utf-8", ".wasm": "application/wasm",
};

/** Serves `root` on an ephemeral loopback port; resolves to { url, close }. With
 * `gzipEncoded`, `.gz` files go out with `Content-Encoding: gzip`, as some hosts send them. */
export function serve(root, headers, { gzipEncoded = false } = {}) {
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url, "http://x").pathname);
    let file = normalize(join(root, path));
    if (!file.startsWith(root + sep) && file !== root) { response.writeHead(403).end(); return; }
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
    if (!existsSync(file)) {
      // As Netlify does: the site's own 404 page, with its status.
      const missing = join(root, "404.html");
      if (existsSync(missing)) response.writeHead(404, { "Content-Type": TYPES[".html"], ...headers }).end(readFileSync(missing));
      else response.writeHead(404, headers).end("not found");
      return;
    }
    const encoding = gzipEncoded && file.endsWith(".gz") ? { "Content-Encoding": "gzip" } : {};
    response.writeHead(200, { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream", ...encoding, ...headers });
    response.end(readFileSync(file));
  });
  return new Promise((done) => server.listen(0, "127.0.0.1", () => {
    done({ url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() });
  }));
}

/** Debian's Chromium, headless, with the flags this machine's closed network needs. */
export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
      "--disable-component-update", "--disable-sync"],
  });
}

/** A page that records CSP violations and script errors in `problems`. */
export async function watchedPage(context, problems) {
  const page = await context.newPage();
  await page.addInitScript(() => {
    document.addEventListener("securitypolicyviolation", (e) => {
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI}`);
    });
  });
  page.on("console", (m) => { if (m.type() === "error") problems.push(m.text()); });
  page.on("pageerror", (e) => problems.push(e.message));
  return page;
}

/** Builds the site at `siteRoot` under `base`, serves `served(site)` (its output folder
 *  by default) with netlify.toml's policy, and launches Chromium; `close` stops both. */
export async function servedSite(base, siteRoot = repo, served = (site) => site.output) {
  const site = buildSite(base, siteRoot);
  const server = await serve(served(site), { "Content-Security-Policy": netlifyPolicy() });
  const browser = await launch();
  return { site, server, browser, close: async () => { await browser.close(); server.close(); } };
}

/** The WCAG 2.2 AA violations axe-core finds on `page`, each described in a line. */
export async function wcagViolations(page) {
  const { AxeBuilder } = await import("@axe-core/playwright");
  const results = await new AxeBuilder({ page })
    .withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22a", "wcag22aa"])
    .analyze();
  return results.violations.map((v) =>
    `${v.id} (${v.impact}): ${v.help}; ` + v.nodes.slice(0, 5).map((n) => `${n.target.join(" ")}: ${n.failureSummary?.split("\n").join(" ")}`).join("; "));
}

/** How wide the page is against its viewport, and what sticks out past the viewport
 *  outside a box that scrolls on its own (a wide table may scroll; the page may not). */
export async function sidewaysOverflow(page) {
  return page.evaluate(() => {
    const viewport = document.documentElement.clientWidth;
    const scrolls = (e) => {
      for (let p = e.parentElement; p; p = p.parentElement) {
        const style = getComputedStyle(p);
        if (["auto", "scroll"].includes(style.overflowX) && p.scrollWidth > p.clientWidth) return true;
      }
      return false;
    };
    const out = [...document.body.querySelectorAll("*")]
      .filter((e) => e.getBoundingClientRect().right > viewport + 1 && !scrolls(e))
      .map((e) => `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}${e.className ? "." + String(e.className).split(" ").join(".") : ""}`);
    return { page: document.documentElement.scrollWidth, viewport, out: out.slice(0, 8) };
  });
}
