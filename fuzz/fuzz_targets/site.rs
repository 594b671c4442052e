//! The whole path on one report: a small site in a temporary folder whose one report is
//! the input, run through `pipeline::check` (discover → parse → resolve → render →
//! post-process → publish; everything but writing the output and the search indexes).
//! The input is written as bytes, so reading (UTF-8, BOM, line endings, size) is
//! fuzzed too.
#![no_main]

mod common;

use std::sync::LazyLock;

use casebook::pipeline::{self, BuildOptions};
use libfuzzer_sys::fuzz_target;

static SITE: LazyLock<common::Site> = LazyLock::new(|| {
    common::one_worker();
    common::site()
});

fuzz_target!(|data: &[u8]| {
    let site = &*SITE;
    std::fs::write(&site.report, data).unwrap();
    let options = BuildOptions::new(&site.root);
    let outcome = pipeline::check(&options).expect("the built-in theme renders any content");
    for d in &outcome.diagnostics {
        assert!(d.location.line >= 1, "{d} has no line");
    }
});
