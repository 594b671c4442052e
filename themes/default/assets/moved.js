// The 404 page's one script, on a site whose records share their run's page
// (`record_pages: per-run`): where a host applies no redirects (GitHub Pages, a plain
// file server), a record's own address, `…/records/ID.html`, leads to its place on that
// page, `…/records.html#ID.html`. Only the path is read, and the new address is on the
// same origin whatever the path holds.
(function () {
  "use strict";
  var found = /^(\/.*\/records)\/([^\/]+\.html)$/.exec(window.location.pathname);
  if (found) {
    window.location.replace(window.location.origin + found[1] + ".html#" + found[2]);
  }
})();
