//! Record and finding recognition in one report (`parse_report` with the default
//! conventions): any text gives a report or located diagnostics, every location is
//! inside the file, and every finding's evidence and anchor point at what exists.
#![no_main]

use std::path::Path;
use std::sync::LazyLock;

use casebook::config::SiteConfig;
use casebook::model::Slug;
use casebook::parse::parse_report;
use casebook::recognise::Conventions;
use libfuzzer_sys::fuzz_target;

static CONVENTIONS: LazyLock<Conventions> = LazyLock::new(|| Conventions::new(&SiteConfig::default()).unwrap());
static SLUG: LazyLock<Slug> = LazyLock::new(|| Slug::parse("r").unwrap());

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (report, diagnostics) = parse_report(Path::new("r.md"), "content/s/r/r.md", &SLUG, text, &CONVENTIONS);
    // `lines()` ignores a final newline; a location may sit just past the last line.
    let lines = text.split('\n').count() as u32;
    for d in &diagnostics {
        assert!(d.location.line <= lines.max(1), "{d} is past the end ({lines} lines)");
    }
    if let Some(report) = report {
        for declaration in &report.declarations {
            assert!(declaration.id.as_str().len() <= casebook::recognise::MAX_ID_LEN);
            if let Some(body) = &declaration.body {
                assert!(report.markdown.get(body.clone()).is_some(), "body {body:?} is not a slice of the report");
            }
        }
        for finding in &report.findings {
            assert!(finding.location.line <= lines.max(1), "a finding is past the end");
            assert!(
                finding.evidence_range().end <= report.citations.len(),
                "evidence {:?} past the citations",
                finding.evidence
            );
            let anchored =
                report.row_anchors.values().chain(report.block_anchors.values()).any(|a| *a == finding.anchor);
            assert!(anchored, "the anchor {} of a finding is on the page", finding.anchor);
        }
    }
});
