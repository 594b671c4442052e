// casebook serve's client, added to pages only by the dev server (never written to the
// output). It follows /__casebook/events: after a good build it reloads the page, after
// a failed one it shows the build's errors over the page. Diagnostics quote the content,
// which is untrusted: they are inserted as text only. Styles are set through the CSSOM,
// which the site's Content-Security-Policy (style-src 'self') allows.
(() => {
  // The build this page came from; without it, the first build the stream reports.
  const given = document.currentScript?.dataset.generation;
  let served = given === undefined ? null : Number(given);
  const OVERLAY = "casebook-overlay";

  function element(tag, text, style) {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    Object.assign(node.style, style ?? {});
    return node;
  }

  function hide() {
    document.getElementById(OVERLAY)?.remove();
  }

  function show(status) {
    hide();
    const overlay = element("div", undefined, {
      position: "fixed", inset: "0", zIndex: "2147483647", overflow: "auto", padding: "2rem",
      background: "rgba(20, 20, 20, 0.97)", color: "#f5f5f5", font: "14px/1.45 ui-monospace, monospace",
    });
    overlay.id = OVERLAY;
    overlay.setAttribute("role", "alertdialog");
    overlay.setAttribute("aria-label", "casebook build failed");
    const errors = status.errors === 1 ? "1 error" : `${status.errors} errors`;
    overlay.append(element("h2", `casebook: the build failed (${errors}); this page is from the last good build`,
      { color: "#ff7b72", font: "bold 16px ui-monospace, monospace", margin: "0 0 1rem" }));
    const list = element("ol", undefined, { margin: "0", padding: "0 0 0 1.5rem" });
    for (const d of status.diagnostics) {
      const item = element("li", undefined, { marginBottom: "1rem" });
      item.className = "casebook-diagnostic";
      if (d.file) item.dataset.file = d.file;
      if (d.line) item.dataset.line = String(d.line);
      item.append(element("pre", d.text, { whiteSpace: "pre-wrap", margin: "0" }));
      list.append(item);
    }
    overlay.append(list);
    overlay.append(element("p", "Fix the source and save: the page reloads by itself.", { color: "#aaa" }));
    document.body.append(overlay);
  }

  const events = new EventSource("/__casebook/events");
  events.addEventListener("status", (event) => {
    const status = JSON.parse(event.data);
    served ??= status.generation;
    if (!status.ok) {
      show(status);
    } else if (status.generation !== served) {
      // A rebuild names the pages it changed; a full build changes every page.
      const decoded = (path) => { try { return decodeURI(path); } catch { return path; } };
      const here = decoded(location.pathname);
      if (status.changed === null || status.changed.some((url) => url === here || url === location.pathname)) {
        location.reload();
      } else {
        served = status.generation;
        hide();
      }
    } else {
      hide();
    }
  });
})();
