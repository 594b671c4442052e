//! Warm query latency of `casebook search`: opens a built site's tantivy index once, then
//! runs a fixed query set many times and prints p50 and p99 in milliseconds. Whole-process
//! latency (start-up included) is measured by benches/run.sh with hyperfine.
//!
//! `cargo bench --bench search_latency -- SITE_DIR [ROUNDS]`

use std::time::Instant;

use casebook::search::{Request, Searcher};

/// Queries shaped like the ones readers type: words, an ID, identifiers, a phrase,
/// filters.
const QUERIES: [(&str, Option<&str>, Option<&str>); 10] = [
    ("session summary", None, None),
    ("20 turns", None, None),
    ("consolidation budget", None, None),
    ("files_modified", None, None),
    ("\"evicted with its history turn\"", None, None),
    ("cache invalidation", Some("OBJ"), None),
    ("retrieval", None, Some("implemented")),
    ("runtime hook events", None, None),
    ("plugin path", None, None),
    ("MEM-OBJ-raw", None, None),
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let site = args.first().map(String::as_str).unwrap_or("public");
    let rounds: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(50);
    let searcher = Searcher::open(std::path::Path::new(site)).unwrap_or_else(|e| panic!("{e}"));
    let request = |(query, kind, status): (&str, Option<&str>, Option<&str>)| Request {
        query: query.to_string(),
        kind: kind.map(str::to_string),
        status: status.map(str::to_string),
        limit: 10,
        ..Request::default()
    };
    // Warm the page cache and the searcher.
    for q in QUERIES {
        searcher.search(&request(q)).expect("the query runs");
    }
    let mut times: Vec<f64> = Vec::with_capacity(rounds * QUERIES.len());
    let mut hits = 0;
    for _ in 0..rounds {
        for q in QUERIES {
            let started = Instant::now();
            let results = searcher.search(&request(q)).expect("the query runs");
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            hits += results.results.len();
        }
    }
    times.sort_by(|a, b| a.total_cmp(b));
    let percentile = |p: f64| times[((times.len() as f64 - 1.0) * p).round() as usize];
    println!(
        "search_latency: {} queries ({} rounds of {}), {} results; p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        times.len(),
        rounds,
        QUERIES.len(),
        hits,
        percentile(0.5),
        percentile(0.99),
        times[times.len() - 1]
    );
}
