//! `status_pages: per-system` (the bundled content, so asked): each system's records and
//! findings by status share one page, every link to a system's list of a status leads to
//! its place there, the lists are those a page per status shows, and each status's own
//! address is kept (by a redirect, and by the 404 page where a host has none).

mod common;

use std::path::Path;

use common::{build_site, bundled, copy_tree, files_below, hrefs, pages_below, repo, Built};

const STATUSES: &str = "/fractal/statuses.html";

/// The bundled content with `status_pages: per-system`, built once.
fn built() -> &'static Built {
    static BUILT: std::sync::OnceLock<(tempfile::TempDir, Built)> = std::sync::OnceLock::new();
    &BUILT
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            copy_tree(&repo().join("content"), &dir.path().join("content"));
            let config = dir.path().join("content/casebook.yaml");
            let yaml = std::fs::read_to_string(&config).unwrap() + "\nstatus_pages: per-system\n";
            std::fs::write(&config, yaml).unwrap();
            let built = build_site(dir.path(), |_| {});
            let errors: Vec<String> =
                built.outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
            assert!(errors.is_empty(), "{}", errors.join("\n"));
            (dir, built)
        })
        .1
}

/// The statuses a system has a page of when each has its own (`<system>/statuses/<slug>/`).
fn own_status_pages(built: &Built, system: &str) -> Vec<String> {
    let mut slugs: Vec<String> = files_below(&built.out())
        .iter()
        .filter_map(|f| f.to_str()?.strip_prefix(&format!("{system}/statuses/"))?.strip_suffix("/index.html"))
        .map(str::to_string)
        .collect();
    slugs.sort();
    slugs
}

/// The rows of every table of `html`, each as written.
fn rows(html: &str) -> Vec<&str> {
    html.split("<tr>").skip(1).map(|rest| &rest[..rest.find("</tr>").unwrap()]).filter(|r| r.contains("<td>")).collect()
}

#[test]
fn a_system_has_one_page_of_its_statuses_listing_what_a_page_per_status_lists() {
    let (separate, per_system) = (bundled(), built());
    let statuses = own_status_pages(separate, "fractal");
    assert!(statuses.len() >= 3, "the bundled site's Fractal has several statuses: {statuses:?}");
    assert_eq!(own_status_pages(per_system, "fractal"), Vec::<String>::new(), "no page per status");
    let page = per_system.page(STATUSES);
    assert_eq!(page.matches("<h1>").count(), 1);
    let mut sections = Vec::new();
    for slug in &statuses {
        let start = page.find(&format!("<section class=\"status-section\" id=\"{slug}/\"")).unwrap_or_else(|| {
            panic!("a section for {slug}:\n{page}");
        });
        let end = start + page[start..].find("</section>").unwrap();
        sections.push(start);
        let section = &page[start..end];
        let own = separate.page(&format!("/fractal/statuses/{slug}/"));
        let (own_rows, section_rows) = (rows(&own), rows(section));
        assert!(!own_rows.is_empty(), "{slug}: its own page lists something");
        assert_eq!(section_rows, own_rows, "{slug}: the same records and findings, in the same order");
    }
    // In the vocabulary's order (casebook.yaml's), as the system's page lists them.
    let config: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(repo().join("content/casebook.yaml")).unwrap()).unwrap();
    let vocabulary: Vec<String> = config["statuses"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|s| casebook::recognise::slugify(s["name"].as_str().unwrap()))
        .filter(|slug| statuses.contains(slug))
        .collect();
    let mut in_page: Vec<(usize, &String)> = sections.iter().copied().zip(&statuses).collect();
    in_page.sort();
    assert_eq!(in_page.into_iter().map(|(_, slug)| slug.clone()).collect::<Vec<_>>(), vocabulary);
    assert!(page.contains("<a href=\"#implemented/\">"), "a table of contents leads to each section");
}

#[test]
fn every_link_to_a_systems_status_leads_to_its_place_on_the_page_of_statuses() {
    let built = built();
    let out = built.out();
    let mut places = 0;
    for (url, html) in pages_below(&out) {
        for link in hrefs(&html) {
            let (path, fragment) = link.split_once('#').unwrap_or((link, ""));
            let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
            assert!(
                !(parts.len() == 3 && parts[1] == "statuses"),
                "{url} links {link}, a status's own page, which this layout does not write"
            );
            if path.ends_with("/statuses.html") && !path.starts_with("/statuses") {
                let target = out.join(casebook::urls::output_path(path));
                let page =
                    std::fs::read_to_string(&target).unwrap_or_else(|_| panic!("{url} links {link}: no such page"));
                assert!(fragment.ends_with('/') && page.contains(&format!("id=\"{fragment}\"")), "{url} links {link}");
                places += 1;
            }
        }
    }
    assert!(places > 10, "{places} links to places on pages of statuses");
    let system = built.page("/fractal/");
    assert!(system.contains(&format!("href=\"{STATUSES}#implemented/\"")), "{system}");
    let status = built.page("/statuses/implemented/");
    assert!(status.contains(&format!("href=\"{STATUSES}#implemented/\"")), "{status}");
}

#[test]
fn a_statuss_own_address_is_kept_by_one_redirect_and_by_the_404_page() {
    let built = built();
    let redirects = std::fs::read_to_string(built.out().join("_redirects")).unwrap();
    let rules: Vec<&str> = redirects.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(rules, ["/:system/statuses/:status/ /:system/statuses.html#:status/ 301"]);
    let not_found = std::fs::read_to_string(built.out().join("404.html")).unwrap();
    let tag = not_found.split("<script ").nth(1).map(|s| &s[..s.find('>').unwrap()]).expect("a script");
    assert!(tag.contains("data-statuses") && !tag.contains("data-records"), "{tag}");
    let script = tag.split("src=\"").nth(1).map(|s| &s[..s.find('"').unwrap()]).unwrap();
    let moved = std::fs::read_to_string(built.out().join(script.trim_start_matches('/'))).unwrap();
    assert!(moved.contains("statuses.html#"), "{moved}");

    // A page per status: no rule, no script.
    let separate = bundled();
    assert!(
        !separate.out().join("_redirects").exists()
            || !std::fs::read_to_string(separate.out().join("_redirects")).unwrap().contains("statuses")
    );
    assert!(!std::fs::read_to_string(separate.out().join("404.html")).unwrap().contains("<script"));
    assert!(Path::new(&separate.out().join("fractal/statuses/implemented/index.html")).is_file());
}
