// `casebook serve` in real Chromium, with the site's Content-Security-Policy: a report
// page that is open while its Markdown is edited shows the new text without a manual
// reload; a broken edit puts the build's diagnostics (file and line, as text) over the
// page; fixing it removes them and shows the fixed page.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { casebook, netlifyPolicy, launch, watchedPage, repo } from "./harness.mjs";

const REPORT = "content/exia-seed/c7497ac/memory.md";
const PAGE = "/exia-seed/c7497ac/memory/";
const SENTENCE = "Memory-specific lineage: MEM-OBJ-raw is the raw source";
const PATIENCE = 60_000;

let root, server, url, browser, context;
const problems = [];

/** Starts `casebook serve` on a free port and resolves to the URL it prints. */
function startServer(site) {
  server = spawn(casebook, ["serve", "--root", site, "--port", "0", "--quiet"], { stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((resolve, reject) => {
    let seen = "";
    const timer = setTimeout(() => reject(new Error(`casebook serve printed no address:\n${seen}`)), PATIENCE);
    server.on("exit", (code) => reject(new Error(`casebook serve exited (${code}):\n${seen}`)));
    server.stdout.setEncoding("utf8");
    server.stdout.on("data", (chunk) => {
      seen += chunk;
      const found = seen.match(/serving (http:\/\/\S+?)\/? /);
      if (found) {
        clearTimeout(timer);
        resolve(found[1]);
      }
    });
  });
}

before(async () => {
  root = mkdtempSync(join(tmpdir(), "casebook-serve-"));
  cpSync(join(repo, "content"), join(root, "content"), { recursive: true });
  url = await startServer(root);
  browser = await launch();
  context = await browser.newContext();
  // Pages get the policy netlify.toml sends, so the reload script and the overlay are
  // held to it too. Only documents are routed: the event stream is left alone.
  const policy = netlifyPolicy();
  await context.route((u) => u.pathname.endsWith("/") || u.pathname.endsWith(".html"), async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, headers: { ...response.headers(), "content-security-policy": policy } });
  });
});

after(async () => {
  await browser?.close();
  server?.kill();
  if (root) rmSync(root, { recursive: true, force: true });
  assert.deepEqual(problems, [], "no CSP violation and no script error");
});

test("an open page follows edits, shows a failed build's diagnostics, and recovers", async () => {
  const file = join(root, REPORT);
  const original = readFileSync(file, "utf8");
  assert.ok(original.includes(SENTENCE));
  const line = original.split("\n").findIndex((l) => l.includes(SENTENCE)) + 1;

  const page = await watchedPage(context, problems);
  const response = await page.goto(`${url}${PAGE}`);
  assert.ok(response.headers()["content-security-policy"].includes("script-src 'self'"), "the page is held to the site's CSP");
  await page.getByText("Memory-specific lineage:").first().waitFor();

  // An edit: the open page shows it by itself.
  const edited = original.replace(SENTENCE, "Memory-specific lineage, edited while open: MEM-OBJ-raw is the raw source");
  writeFileSync(file, edited);
  await page.getByText("edited while open").first().waitFor({ timeout: PATIENCE });

  // A broken edit: an unknown record, with markup after it that must stay text.
  const broken = edited.replace("open: MEM-OBJ-raw is", "open: MEM-OBJ-rw <b id=injected>bold?</b> is");
  writeFileSync(file, broken);
  const overlay = page.locator("#casebook-overlay");
  await overlay.waitFor({ timeout: PATIENCE });
  const text = await overlay.innerText();
  assert.ok(text.includes(`${REPORT}:${line}:`), `file and line in the overlay:\n${text}`);
  assert.ok(text.includes("unknown record MEM-OBJ-rw"), text);
  assert.ok(text.includes("error[unknown-record]"), `the code in the overlay:\n${text}`);
  assert.ok(text.includes("<b id=injected>"), `the source line is shown as text:\n${text}`);
  assert.equal(await page.locator("#injected").count(), 0, "no markup from the content is inserted");
  assert.ok(await page.getByText("edited while open").first().isVisible(), "the last good page stays under the overlay");
  if (process.env.SCREENSHOT) await page.screenshot({ path: process.env.SCREENSHOT });

  // The fix: the overlay goes, and the page is the new build.
  writeFileSync(file, edited.replace("edited while open", "fixed while open"));
  await page.getByText("fixed while open").first().waitFor({ timeout: PATIENCE });
  await overlay.waitFor({ state: "detached", timeout: PATIENCE });
  assert.equal(await page.locator("#casebook-overlay").count(), 0);
  await page.close();
});

test("an edit reloads the pages it changed and leaves the others alone", async () => {
  const file = join(root, REPORT);
  const original = readFileSync(file, "utf8");
  const edited = original.replace("Memory-specific lineage", "Memory-specific lineage (edited once more)");
  assert.notEqual(edited, original);
  const changed = await watchedPage(context, problems);
  await changed.goto(`${url}${PAGE}`);
  // A page of another system: the edit does not change it.
  const other = await watchedPage(context, problems);
  await other.goto(`${url}/fractal/6a226e7/synthesis/`);
  await other.evaluate(() => { window.loadedBeforeTheEdit = true; });
  const status = async () => (await fetch(`${url}/__casebook/status`)).json();
  const before = (await status()).generation;
  writeFileSync(file, edited);
  await changed.getByText("(edited once more)").first().waitFor({ timeout: PATIENCE });
  // Wait for the whole rebuild (search index included), then for the page to settle.
  const deadline = Date.now() + PATIENCE;
  while ((await (await fetch(`${url}/api/search?q=${encodeURIComponent('"edited once more"')}`)).json()).total < 1) {
    assert.ok(Date.now() < deadline, "the rebuild never finished");
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok((await status()).generation > before);
  await other.waitForTimeout(500);
  assert.equal(await other.evaluate(() => window.loadedBeforeTheEdit), true, "the unchanged page was not reloaded");
  await changed.close();
  await other.close();
});
