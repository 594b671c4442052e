import { buildSite, serve, launch, netlifyPolicy } from "./browser/harness.mjs";
const { output } = buildSite("/");
const server = await serve(output, { "Content-Security-Policy": netlifyPolicy() });
const browser = await launch();
const pages = process.argv.slice(2);
for (const [width, scheme] of [[1280, "light"], [390, "dark"]]) {
  const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme: scheme });
  const page = await context.newPage();
  page.on("console", (m) => console.log("console:", m.text()));
  for (const p of pages) {
    const [path, selector] = p.split("#");
    await page.goto(server.url + path);
    const el = selector ? await page.$("#" + selector) ?? await page.$("." + selector) : null;
    if (el) await el.scrollIntoViewIfNeeded();
    const name = `/tmp/shot-${path.replace(/[^a-z0-9]+/gi, "_")}-${width}.png`;
    if (el) { const box = await el.boundingBox(); await page.screenshot({ path: name, clip: { x: 0, y: Math.max(0, box.y - 40), width, height: 900 } }); }
    else await page.screenshot({ path: name, fullPage: false });
    console.log(name);
  }
  await context.close();
}
await browser.close();
server.close();
