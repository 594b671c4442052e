// The 404 page's one script, on a site whose records share their run's page
// (`record_pages: per-run`, `data-records`) or whose statuses share their system's page
// (`status_pages: per-system`, `data-statuses`): where a host applies no redirects
// (GitHub Pages, a plain file server), a record's own address, `…/records/ID.html`,
// leads to its place on its run's page, `…/records.html#ID.html`, and a system's status's
// own address, `…/statuses/STATUS/`, to its place on its system's page,
// `…/statuses.html#STATUS/`. Only the path is read, and the new address is on the same
// origin whatever the path holds.
(function () {
  "use strict";
  var script = document.currentScript;
  var path = window.location.pathname;
  var record = script && script.hasAttribute("data-records") && /^(\/.*\/records)\/([^\/]+\.html)$/.exec(path);
  var status = script && script.hasAttribute("data-statuses") && /^(\/.*\/statuses)\/([^\/]+)\/?$/.exec(path);
  var found = record || status;
  if (found) {
    window.location.replace(window.location.origin + found[1] + ".html#" + found[2] + (record ? "" : "/"));
  }
})();
