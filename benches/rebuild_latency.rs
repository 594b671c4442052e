//! The dev server's rebuild latency after a one-report edit: builds a site once through
//! `pipeline::Rebuilder` (as `casebook serve` does), then, round after round, changes one
//! sentence of one report and rebuilds, timing (a) until the edited report's pages are
//! written (its page and its records': when `casebook serve` reloads them in the
//! browser), (b) until all the pages of its run are, and (c) the whole rebuild, search
//! indexes and manifest included. Prints the median and the 90th percentile of each.
//!
//! With `SECOND_SAVE_MS=N`, then, round after round, saves in quick succession: a second
//! save comes N ms into a rebuild, which stops at its next check (as `casebook serve` has
//! it); timed: from the second save until the first rebuild stopped, and until the
//! report's pages are written by the rebuild that follows.
//!
//! `cargo bench --bench rebuild_latency -- SITE_ROOT OUTPUT_DIR [ROUNDS]`
//! (SITE_ROOT is a corpus from benches/gen_corpus.py: its `casebook/` folder.)

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use casebook::pipeline::{BuildOptions, Rebuilder};

// The allocator `casebook serve` runs with (src/main.rs): the rebuild's figures are the
// server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn percentile(times: &mut [Duration], p: f64) -> f64 {
    times.sort();
    let i = ((times.len() as f64 - 1.0) * p).round() as usize;
    times[i].as_secs_f64() * 1000.0
}

fn first_report(root: &Path) -> PathBuf {
    let mut reports: Vec<PathBuf> = walkdir::WalkDir::new(root.join("content"))
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    reports.sort();
    reports.into_iter().next().expect("the site has a report")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let root = PathBuf::from(args.first().expect("SITE_ROOT"));
    let output = PathBuf::from(args.get(1).expect("OUTPUT_DIR"));
    let rounds: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(20);
    let mut options = BuildOptions::new(&root);
    options.output = output;
    let mut rebuilder = Rebuilder::new(options);
    let started = Instant::now();
    let first = rebuilder.rebuild(&[], &mut |_| {}).expect("the first build runs");
    assert!(first.written, "the first build wrote the site");
    println!("rebuild_latency: first (full) build {:.2} s", started.elapsed().as_secs_f64());

    let report = first_report(&root);
    let original = std::fs::read_to_string(&report).expect("the report reads");
    let (mut to_pages, mut to_run, mut to_done) = (Vec::new(), Vec::new(), Vec::new());
    let mut stages = Vec::new();
    for round in 0..rounds {
        let edited = format!("{original}\nA sentence added by the benchmark, round {round}.\n");
        std::fs::write(&report, edited).expect("the report is writable");
        let started = Instant::now();
        // The first call: the edited report's pages; the last: all its run's pages.
        let (mut first, mut last) = (None, None);
        let outcome = rebuilder
            .rebuild(std::slice::from_ref(&report), &mut |_| {
                first.get_or_insert(started.elapsed());
                last = Some(started.elapsed());
            })
            .expect("the rebuild runs");
        to_done.push(started.elapsed());
        assert!(outcome.written, "the rebuild wrote");
        to_pages.push(first.expect("the pages were written"));
        to_run.push(last.expect("the pages were written"));
        stages = outcome.timings;
    }
    if let Some(delay) = std::env::var("SECOND_SAVE_MS").ok().and_then(|ms| ms.parse().ok()).map(Duration::from_millis)
    {
        let (mut to_second_pages, mut stopped_after) = (Vec::new(), Vec::new());
        for round in 0..rounds {
            std::fs::write(&report, format!("{original}\nA first save, round {round}.\n"))
                .expect("the report is writable");
            let second_save: Mutex<Option<Instant>> = Mutex::new(None);
            let superseded = || second_save.lock().expect("no panic holding the lock").is_some();
            let outcome = std::thread::scope(|scope| {
                // The second save, at `delay`, whatever the rebuild is doing.
                scope.spawn(|| {
                    std::thread::sleep(delay);
                    std::fs::write(&report, format!("{original}\nA second save, round {round}.\n"))
                        .expect("the report is writable");
                    *second_save.lock().expect("no panic holding the lock") = Some(Instant::now());
                });
                rebuilder
                    .rebuild_unless_superseded(std::slice::from_ref(&report), &mut |_| {}, &superseded)
                    .expect("the rebuild runs")
            });
            let saved = second_save.into_inner().expect("no panic holding the lock");
            let stopped = Instant::now();
            let Some(saved) = saved.filter(|_| outcome.superseded) else {
                println!("rebuild_latency: round {round}: the rebuild was done before {} ms", delay.as_millis());
                continue;
            };
            stopped_after.push(stopped - saved);
            let mut first = None;
            rebuilder
                .rebuild(std::slice::from_ref(&report), &mut |_| {
                    first.get_or_insert(saved.elapsed());
                })
                .expect("the rebuild runs");
            to_second_pages.push(first.expect("the pages were written"));
        }
        if !to_second_pages.is_empty() {
            println!(
                "rebuild_latency: {} second saves {} ms into a rebuild: the first rebuild stopped p50 {:.0} ms after it; its pages written p50 {:.0} ms p90 {:.0} ms after it",
                to_second_pages.len(),
                delay.as_millis(),
                percentile(&mut stopped_after, 0.5),
                percentile(&mut to_second_pages, 0.5),
                percentile(&mut to_second_pages, 0.9),
            );
        }
    }
    std::fs::write(&report, original).expect("the report is restored");
    let stages: Vec<String> =
        stages.iter().map(|(name, time)| format!("{} {:.0} ms", name.trim(), time.as_secs_f64() * 1000.0)).collect();
    println!("rebuild_latency: stages of the last rebuild: {}", stages.join(" · "));
    println!(
        "rebuild_latency: {rounds} one-report edits: pages written p50 {:.0} ms p90 {:.0} ms; whole rebuild p50 {:.0} ms p90 {:.0} ms; all of the run's pages p50 {:.0} ms p90 {:.0} ms",
        percentile(&mut to_pages, 0.5),
        percentile(&mut to_pages, 0.9),
        percentile(&mut to_done, 0.5),
        percentile(&mut to_done, 0.9),
        percentile(&mut to_run, 0.5),
        percentile(&mut to_run, 0.9),
    );
}
