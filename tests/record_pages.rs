//! `record_pages: per-run` (tests/sites/per-run): each run's records share one page,
//! every link leads to a record's place there, and a record's own address is kept (by a
//! redirect, and by the 404 page where a host has none) and by the anchor contract.

mod common;

use std::path::Path;

use casebook::model::Code;
use common::{build_site, copy_tree, files_below, hrefs, pages_below, repo, Built};

const RECORDS: &str = "/lab/r1/records.html";

fn per_run_site() -> std::path::PathBuf {
    repo().join("tests/sites/per-run")
}

fn built() -> &'static Built {
    static BUILT: std::sync::OnceLock<Built> = std::sync::OnceLock::new();
    BUILT.get_or_init(|| {
        let built = build_site(&per_run_site(), |_| {});
        let errors: Vec<String> =
            built.outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
        assert!(errors.is_empty(), "{}", errors.join("\n"));
        built
    })
}

/// The same content with a page per record (the configuration's one line taken out).
fn separate_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&per_run_site().join("content"), &dir.path().join("content"));
    let config = dir.path().join("content/casebook.yaml");
    let text = std::fs::read_to_string(&config).unwrap().replace("record_pages: per-run\n", "");
    std::fs::write(&config, text).unwrap();
    dir
}

#[test]
fn a_run_has_one_page_of_its_records_and_none_per_record() {
    let built = built();
    let files = files_below(&built.out());
    let own_pages: Vec<_> = files
        .iter()
        .filter(|f| f.to_str().unwrap().starts_with("lab/r1/records") && f.extension().is_some_and(|e| e == "html"))
        .collect();
    assert_eq!(own_pages, [Path::new("lab/r1/records.html")], "no page per record");
    let page = built.page(RECORDS);
    let at = |id: &str| {
        page.find(&format!("<article class=\"record\" id=\"{id}.html\">")).unwrap_or_else(|| panic!("{id}:\n{page}"))
    };
    // Published records in reading order (memory's, then synthesis'), then the unpublished.
    assert!(at("OBJ-01") < at("OBJ-02") && at("OBJ-02") < at("OBJ-05") && at("OBJ-05") < at("CMP-03"));
    assert_eq!(page.matches("<h1>").count(), 1, "one title for the page; each record's is below it");
    assert_eq!(page.matches("<h2><span class=\"rec-id\">").count(), 4);
    assert!(page.contains("its 3 records on one page, in reading order, then the 1 referred to"), "{page}");
    assert!(!page.contains("class=\"record-nav\""), "no previous/next links between records on one page");
    // Each picture of a record's links has ids of its own.
    assert!(page.contains("id=\"g-record-OBJ-02-title\"") && page.contains("id=\"g-record-OBJ-05-title\""));
}

#[test]
fn every_link_of_the_site_leads_to_a_file_it_wrote() {
    let built = built();
    let out = built.out();
    let mut checked = 0;
    for (url, html) in pages_below(&out) {
        for link in hrefs(&html) {
            let (path, fragment) = link.split_once('#').unwrap_or((link, ""));
            let path = path.split('?').next().unwrap();
            if !path.starts_with('/') {
                continue;
            }
            let target = out.join(casebook::urls::output_path(path));
            assert!(target.is_file(), "{url} links {link}: no such file");
            if path.ends_with("records.html") && !fragment.is_empty() {
                let records = std::fs::read_to_string(&target).unwrap();
                assert!(records.contains(&format!("id=\"{fragment}\"")), "{url} links {link}: no such record");
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} links checked");
    let report = built.page("/lab/r1/memory/");
    assert!(report.contains(&format!("href=\"{RECORDS}#OBJ-01.html\"")), "{report}");
    let run = built.page("/lab/r1/");
    assert!(run.contains(&format!("href=\"{RECORDS}#OBJ-05.html\"")), "{run}");
    let records = built.page_as_written(RECORDS);
    assert!(records.contains("href=\"#OBJ-01.html\""), "a record links its siblings on the same page");
}

#[test]
fn a_records_own_address_is_kept_by_one_redirect_and_by_the_404_page() {
    let dir = separate_copy();
    let copy = dir.path().join("per-run");
    copy_tree(&per_run_site(), &copy);
    std::fs::write(
        copy.join("content/redirects.yaml"),
        "- from: /lab/r1/records/OBJ-09.html\n  to: /lab/r1/records/OBJ-02.html\n",
    )
    .unwrap();
    let built = build_site(&copy, |o| o.base_url = Some("/pr-7/".into()));
    assert!(!built.outcome.diagnostics.iter().any(|d| d.is_error()), "a redirect to a record's address is to a page");
    let redirects = std::fs::read_to_string(built.out().join("_redirects")).unwrap();
    let lines: Vec<&str> = redirects.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        lines,
        [
            "/pr-7/lab/r1/records/OBJ-09.html /pr-7/lab/r1/records/OBJ-02.html 301",
            "/pr-7/:system/:run/records/* /pr-7/:system/:run/records.html#:splat 301",
        ],
        "the site's own redirects first: a host applies the first rule that matches"
    );
    let not_found = std::fs::read_to_string(built.out().join("404.html")).unwrap();
    let script = not_found.split("<script src=\"").nth(1).map(|s| &s[..s.find('"').unwrap()]).expect("a script");
    assert!(script.starts_with("/pr-7/assets/moved."), "{script}");
    let moved = std::fs::read_to_string(built.out().join(script.trim_start_matches("/pr-7/"))).unwrap();
    assert!(moved.contains("records.html#"), "{moved}");

    // With a page per record: no rule, no script.
    let separate = build_site(dir.path(), |_| {});
    assert!(!separate.out().join("_redirects").exists());
    assert!(!std::fs::read_to_string(separate.out().join("404.html")).unwrap().contains("<script"));
}

#[test]
fn a_site_of_pages_per_run_has_fewer_files_and_the_same_records() {
    let dir = separate_copy();
    let separate = build_site(dir.path(), |_| {});
    let per_run = built();
    let (a, b) = (files_below(&separate.out()).len(), files_below(&per_run.out()).len());
    // Four records' pages become one page and the redirects file.
    assert_eq!(a - b, 4 - 2, "{a} files against {b}");
    let manifest = |b: &Built| {
        ["records.json", "lab/r1/records.json"].map(|file| std::fs::read_to_string(b.out().join(file)).unwrap())
    };
    assert_eq!(manifest(&separate), manifest(per_run), "records keep their addresses in the manifest");
}

#[test]
fn the_anchor_contract_holds_across_a_change_of_layout_and_catches_a_vanished_record() {
    let dir = separate_copy();
    let separate = build_site(dir.path(), |_| {});
    let previous = separate.out().join("records.json");
    let vanished = |b: &Built| b.outcome.diagnostics.iter().filter(|d| d.code == Code::VanishedRecord).count();
    let per_run = build_site(&per_run_site(), |o| o.previous_manifest = Some(previous.clone()));
    assert_eq!(vanished(&per_run), 0, "a record's address is kept by the page of its run's records");
    let back = build_site(dir.path(), |o| o.previous_manifest = Some(built().out().join("records.json")));
    assert_eq!(vanished(&back), 0);

    let edited = tempfile::tempdir().unwrap();
    copy_tree(&per_run_site(), edited.path());
    let synthesis = edited.path().join("content/lab/r1/synthesis.md");
    std::fs::write(&synthesis, "---\ntitle: Synthesis\n---\n\nNothing is declared here now.\n").unwrap();
    let gone = build_site(edited.path(), |o| o.previous_manifest = Some(built().out().join("records.json")));
    let errors: Vec<String> = gone.outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    assert_eq!(vanished(&gone), 1, "{errors:?}");
    assert!(errors[0].contains("OBJ-05"), "{errors:?}");
}

#[test]
fn search_documents_of_records_lead_to_their_place() {
    let built = built();
    let file = built.out().join("search/browser/d/lab/r1/0.json.gz");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(std::fs::File::open(file).unwrap()), &mut text)
        .unwrap();
    assert!(text.contains(&format!("\"{RECORDS}#OBJ-02.html\"")), "{text}");
    assert!(!text.contains("/records/OBJ-"), "{text}");
}
