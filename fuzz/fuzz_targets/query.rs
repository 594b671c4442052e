//! A search query, as `casebook search`, the dev server's `/api/search` and the offline
//! index take it, against the real tantivy index of a small built site: any text is
//! answered or refused as a query error, in bounded time and stack (tantivy's grammar is
//! exponential in nested parentheses, and recursive), and every hit's highlights lie on
//! its snippet's character boundaries.
#![no_main]

mod common;

use std::sync::LazyLock;

use casebook::pipeline::{self, BuildOptions};
use casebook::search::{Request, SearchError, Searcher};
use libfuzzer_sys::fuzz_target;

struct Index {
    _site: common::Site,
    searcher: Searcher,
}

static INDEX: LazyLock<Index> = LazyLock::new(|| {
    common::one_worker();
    let site = common::site();
    let mut options = BuildOptions::new(&site.root);
    options.output = site.root.join("public");
    options.search_index = true;
    let outcome = pipeline::build(&options).expect("the small site builds");
    assert!(outcome.written, "the small site builds: {:?}", outcome.diagnostics);
    let searcher = Searcher::open(&options.output).expect("the built site has an index");
    Index { _site: site, searcher }
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    // A second line, if any, filters by status, as a facet of the search page does.
    let (query, status) = match text.split_once('\n') {
        Some((query, status)) => (query, Some(status.to_string())),
        None => (text, None),
    };
    let request = Request { query: query.to_string(), status, limit: 20, ..Request::default() };
    match INDEX.searcher.search(&request) {
        Ok(results) => {
            assert!(results.results.len() <= 20);
            for hit in &results.results {
                for &(start, end) in &hit.highlights {
                    assert!(hit.snippet.get(start..end).is_some(), "highlight {start}..{end} of {:?}", hit.snippet);
                }
            }
        }
        Err(SearchError::Query(message)) => assert!(!message.is_empty()),
        Err(other) => panic!("a query reached the index as an error of the index: {other}"),
    }
});
