//! Record recognition in one report (`parse_report` with the default ID grammars): any
//! text gives a report or located diagnostics, and every location is inside the file.
#![no_main]

use std::path::Path;
use std::sync::LazyLock;

use casebook::config::IdConfig;
use casebook::parse::parse_report;
use casebook::recognise::IdScheme;
use libfuzzer_sys::fuzz_target;

static SCHEME: LazyLock<IdScheme> = LazyLock::new(|| IdScheme::new(&IdConfig::default()).unwrap());

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (report, diagnostics) = parse_report(Path::new("r.md"), "content/s/r/r.md", "r", text, &SCHEME);
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
    }
});
