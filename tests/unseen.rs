//! An analysis in conventions the bundled ones do not use (`tests/sites/unseen/`): its own
//! kinds of record, colon-and-list citations, a findings table whose rows have no ID, a
//! table of dimensions, status sentences and keys, a synonym of a status, and prose that
//! only looks like findings. Every record, finding and citation it states is listed here
//! by hand, and the site must publish exactly those.

mod common;

use std::sync::OnceLock;

use casebook::manifest::Manifest;
use common::{build_site, repo, Built};

fn unseen() -> &'static Built {
    static BUILT: OnceLock<Built> = OnceLock::new();
    BUILT.get_or_init(|| {
        let built = build_site(&repo().join("tests/sites/unseen"), |_| {});
        let errors: Vec<String> =
            built.outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
        assert!(errors.is_empty(), "the fixture has errors:\n{}", errors.join("\n\n"));
        built
    })
}

fn manifest() -> Manifest {
    Manifest::read(&unseen().out().join("records.json")).unwrap()
}

const RUN: &str = "/quill/2026-11-02/";

#[test]
fn every_record_is_published_with_a_title_of_more_than_its_id() {
    let manifest = manifest();
    let records: Vec<(&str, Option<&str>, Option<&str>)> =
        manifest.records.iter().map(|r| (r.id.as_str(), r.label.as_deref(), r.derived_label.as_deref())).collect();
    assert_eq!(
        records,
        [
            ("CAP-1", Some("Diff reading"), None),
            ("CAP-2", None, Some("Posts review comments on the pull request, one per finding.")),
            ("CAP-3", Some("Merge on green"), None),
        ]
    );
    let page = unseen().page(&format!("{RUN}records/CAP-2.html"));
    assert!(page.contains("<span class=\"label derived\""), "a derived title is shown as derived");
    assert!(page.contains("<title>CAP-2 — Posts review comments"), "and titles the page");
}

#[test]
fn every_finding_is_published_as_the_analysis_states_it() {
    let manifest = manifest();
    let findings: Vec<(&str, &str, &str, Option<&str>, &str)> = manifest
        .findings
        .iter()
        .map(|f| (f.subject.as_str(), f.dimension.as_str(), f.status.as_str(), f.qualifier.as_deref(), f.form.as_str()))
        .collect();
    assert_eq!(
        findings,
        [
            ("CAP-1", "", "wired", Some("default run path"), "status-key"),
            ("CAP-2", "Comment posting", "implemented", None, "status-key"),
            ("CAP-2", "Approval", "absent", None, "status-key"),
            ("Retry on API failure", "", "implemented", None, "status-column"),
            ("Rate limiting", "", "absent", None, "status-column"),
            ("Secret redaction", "", "claimed", None, "status-column"),
            // `not inspected` is a synonym of `uninspected` in this site's casebook.yaml.
            ("Audit log", "", "uninspected", None, "status-column"),
            ("CAP-1", "Reachable by default", "wired", None, "dimension-column"),
            ("CAP-1", "Exercised in a test", "observed", None, "dimension-column"),
            ("CAP-2", "Reachable by default", "implemented", None, "dimension-column"),
            ("CAP-2", "Exercised in a test", "uninspected", None, "dimension-column"),
            ("CAP-3", "Reachable by default", "absent", None, "dimension-column"),
            ("CAP-3", "Exercised in a test", "inapplicable", None, "dimension-column"),
            ("Self-modification", "", "absent", None, "key-value"),
            ("Memory", "", "inapplicable", Some("Quill keeps no state between runs"), "status-key"),
            ("the plugin system", "", "uninspected", None, "status-key"),
            ("Overall", "", "implemented", None, "status-key"),
            ("Overall", "", "absent", None, "status-key"),
        ]
    );
    // Each is placed: its anchor is on the report page.
    let report = unseen().page(&format!("{RUN}capabilities/"));
    for f in &manifest.findings {
        assert!(report.contains(&format!("id=\"{}\"", f.at.anchor)), "the anchor of {} is on the page", f.subject);
    }
    // Evidence written with a finding is its evidence: the row's citation.
    let retry = manifest.findings.iter().find(|f| f.subject == "Retry on API failure").unwrap();
    assert!(retry.statement.starts_with("implemented — three attempts"), "{}", retry.statement);
}

#[test]
fn each_record_page_shows_its_findings_and_every_citation_of_its_text() {
    let built = unseen();
    let cap1 = built.page(&format!("{RUN}records/CAP-1.html"));
    let findings = &cap1[cap1.find("<section class=\"findings\">").unwrap()..];
    let findings = &findings[..findings.find("</section>").unwrap()];
    for (dimension, status) in [("—", "wired"), ("Reachable by default", "wired"), ("Exercised in a test", "observed")]
    {
        assert!(findings.contains(&format!("<td>{dimension}</td>")), "CAP-1 shows its {dimension} finding");
        assert!(findings.contains(&format!(">{status}</a>")), "CAP-1 shows {status}");
    }
    assert!(findings.contains("Reached by a default run."), "a status's meaning is shown in words");
    // `SRC-1: a, b; c` is three citations of SRC-1, each range a link, and never a field.
    let evidence = |page: &str| -> String {
        let at = page.find("<section class=\"evidence\">").expect("an evidence section");
        page[at..at + page[at..].find("</section>").unwrap()].to_string()
    };
    let blob = "https://github.com/example/quill/blob/9f8e7d6c5b4a39281706f5e4d3c2b1a098765432";
    let cap1_evidence = evidence(&cap1);
    for link in [
        format!("{blob}/src/tools/git.rs#L40-L88"),
        format!("{blob}/src/tools/git.rs#L120"),
        format!("{blob}/src/tools/review.rs"),
    ] {
        assert!(cap1_evidence.contains(&format!("href=\"{link}\"")), "CAP-1 lists {link}:\n{cap1_evidence}");
    }
    assert!(!cap1.contains("<dt>SRC-1</dt>"), "a citation is no field");
    let cap2 = built.page(&format!("{RUN}records/CAP-2.html"));
    let cap2_evidence = evidence(&cap2);
    for link in [
        format!("{blob}/src/tools/review.rs#L10-L30"),
        format!("{blob}/src/tools/review.rs#L45"),
        format!("{blob}/src/tools/review.rs#L51-L60"),
        // Written `comment\_body.rs`, and after `and`.
        format!("{blob}/src/tools/comment_body.rs"),
        // The quote.
        format!("{blob}/src/tools/review.rs#L12"),
        // A code span that is a citation, with an en dash in its range.
        format!("{blob}/src/tools/format.rs#L3-L9"),
        // A list going on after a parenthesis.
        format!("{blob}/src/agent/loop.rs"),
        format!("{blob}/src/agent/state.rs"),
    ] {
        assert!(cap2_evidence.contains(&format!("href=\"{link}\"")), "CAP-2 lists {link}:\n{cap2_evidence}");
    }
    // The report links the code span as parse read it.
    let report = built.page(&format!("{RUN}capabilities/"));
    assert!(report.contains(&format!("<a class=\"cite external\" href=\"{blob}/src/tools/format.rs#L3-L9\" rel=\"noopener noreferrer\"><code>src/tools/format.rs:3–9</code></a>")));
    // A quote whose first line names its place, over a gutter of line numbers: a figure
    // like a `--- path` quote, its code without the gutter, its path linked to the lines.
    let link = report.find(&format!("href=\"{blob}/src/tools/review.rs#L45-L46\"")).expect("the quote's place, linked");
    let figure = &report[report[..link].rfind("<figure class=\"quote\">").expect("in a quote's figure")..link];
    assert!(!figure.contains("</figure>"), "the link is the figure's own: {figure}");
    assert!(figure.contains("Ok"), "its code: {figure}");
    assert!(!report.contains("45 |") && !report.contains("// SRC-1 src/tools/review.rs"), "no gutter, no place line");
    // `Distinct from CAP-2: …` is a sentence with a reference, not a field.
    assert!(cap2.contains("Distinct from <mark>CAP-2</mark>: it reads the diff and never writes."), "a backlink");
}

#[test]
fn findings_without_a_record_are_on_the_run_and_status_pages() {
    let built = unseen();
    let run = built.page(RUN);
    let section = &run[run.find("id=\"findings\"").unwrap()..run.find("id=\"unresolved\"").unwrap()];
    for subject in
        ["Retry on API failure", "Rate limiting", "Secret redaction", "Audit log", "Self-modification", "Overall"]
    {
        assert!(section.contains(subject), "the run page lists {subject}");
    }
    let absent = built.page("/statuses/absent/");
    assert!(absent.contains("Across all systems: 2 records and 3 subjects without a record."), "{absent}");
    for subject in ["Rate limiting", "Self-modification", "Overall"] {
        assert!(absent.contains(&format!(">{subject}</a>")), "/statuses/absent/ names {subject}");
    }
    assert!(!absent.contains(">Retry on API failure</a>"), "an implemented operation is not absent");
}

#[test]
fn what_only_looks_like_a_convention_is_prose_and_noted() {
    let built = unseen();
    let report = built.page(&format!("{RUN}capabilities/"));
    let near = &report[report.find("Words that only look like statuses").unwrap()..];
    let near = &near[..near.find("<h2").unwrap()];
    assert!(!near.contains("finding-anchor"), "no finding is read from prose that uses status words:\n{near}");
    // What casebook did not understand is one note, and derived titles are noted too.
    let notes: Vec<String> = built
        .outcome
        .diagnostics
        .iter()
        .filter(|d| d.severity == casebook::model::Severity::Note)
        .map(|d| format!("{}:{} {}", d.location.line, d.location.col, d.code))
        .collect();
    assert_eq!(notes, ["21:5 derived-title", "75:7 not-understood"]);
    assert_eq!(built.outcome.summary.as_ref().unwrap().not_understood, 1);
    // The limitations table numbers its rows: they are anchored by their handles.
    assert!(report.contains("id=\"L1\"") && report.contains("id=\"L2\""));
}
