//! What the search indexes cost, apart from the pages: loads a site (discover, parse,
//! resolve), then makes its search documents (one run after the other), analyses their
//! text (on one fresh thread: a cold memo, as in a build), and makes its tantivy index and
//! its browser index (all documents at once) one after the other, several rounds, and
//! prints the best wall and CPU time of each, with the bytes each index would write.
//! Nothing is written: files are counted and dropped.
//!
//! `cargo bench --bench index_build -- SITE_ROOT [ROUNDS]`
//! (SITE_ROOT is a corpus from benches/gen_corpus.py: its `casebook/` folder.)
//!
//! A full build makes the indexes alongside the pages on every core, so their share of a
//! build's wall time is measured by building with and without them (`benches/run.sh`);
//! this bench says which part of them to work on.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use casebook::index::{self, IndexError};
use casebook::output::OutputFile;

// The allocator of the `casebook` binary, so that the figures are the build's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// User and system CPU time of the whole process so far (all threads), from /proc.
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("Linux /proc");
    // Fields after the command name (which is in parentheses and may hold spaces).
    let after = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    // utime and stime are fields 14 and 15 of the line: 12 and 13 after the name.
    let ticks: u64 = fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    Duration::from_millis(ticks * 10)
}

/// Runs `f`, returning its wall and CPU time.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration, Duration) {
    let (cpu, wall) = (process_cpu(), Instant::now());
    let value = f();
    (value, wall.elapsed(), process_cpu().saturating_sub(cpu))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let root = PathBuf::from(args.first().expect("SITE_ROOT"));
    let rounds: usize = args.get(1).and_then(|r| r.parse().ok()).unwrap_or(3);
    let (site, _) = casebook::pipeline::resolved_site(&root).0.expect("the site parses");

    let runs: Vec<_> = site.systems.iter().flat_map(|s| s.runs.iter().map(move |r| (s, r))).collect();
    let mut best: [(Duration, Duration); 4] = [(Duration::MAX, Duration::MAX); 4];
    let mut sizes = [0usize; 2];
    for _ in 0..rounds {
        let (per_run, wall, cpu) = timed(|| {
            runs.iter()
                .map(|(system, run)| {
                    index::run_documents(system, run, site.record_pages)
                        .into_iter()
                        .map(std::sync::Arc::new)
                        .collect::<Vec<_>>()
                })
                .collect::<Vec<_>>()
        });
        let docs: Vec<_> = per_run.iter().flatten().cloned().collect();
        best[0] = (best[0].0.min(wall), best[0].1.min(cpu));
        // The browser index numbers the terms it is given in its own vocabulary.
        let mut browser = index::BrowserIndex::default();
        let ((texts, terms), wall, cpu) = timed(|| {
            std::thread::scope(|s| {
                s.spawn(|| docs.iter().map(|d| index::analyse(d, browser.vocabulary())).unzip::<_, _, Vec<_>, Vec<_>>())
                    .join()
                    .expect("analysed")
            })
        });
        best[1] = (best[1].0.min(wall), best[1].1.min(cpu));
        let (mut texts, mut terms) = (Some(texts), Some(terms));
        // `INDEX_BUILD_ONLY=tantivy` or `browser`: time that index alone (for a profiler).
        let only = std::env::var("INDEX_BUILD_ONLY").ok();
        for which in 0..2 {
            if only.as_deref().is_some_and(|o| o != ["tantivy", "browser"][which]) {
                continue;
            }
            let bytes = AtomicUsize::new(0);
            let count = |file: OutputFile| -> Result<(), IndexError> {
                bytes.fetch_add(file.bytes.len(), Ordering::Relaxed);
                Ok(())
            };
            let (result, wall, cpu) = timed(|| -> Result<(), IndexError> {
                if which == 0 {
                    let mut tantivy = index::TantivyIndex::new("/")?;
                    tantivy.add(&docs, texts.take().expect("once"), &count)?;
                    tantivy.finish(&count)
                } else {
                    let mut terms = terms.take().expect("once").into_iter();
                    let mut keys = Vec::with_capacity(runs.len());
                    for ((system, run), docs) in runs.iter().zip(&per_run) {
                        let key = format!("{}/{}", system.slug, run.slug);
                        let run_terms: Vec<_> = terms.by_ref().take(docs.len()).collect();
                        browser.add_run(&key, None, docs, run_terms, &count)?;
                        keys.push(key);
                    }
                    browser.arrange(&keys);
                    browser.finish(&count).map(|_| ())
                }
            });
            result.expect("the index is made");
            best[which + 2] = (best[which + 2].0.min(wall), best[which + 2].1.min(cpu));
            sizes[which] = bytes.into_inner();
        }
    }
    println!("best of {rounds} rounds (wall, CPU of all threads):");
    for (name, (wall, cpu)) in ["search documents", "text analysis", "tantivy index", "browser index"]
        .iter()
        .zip(best)
        .filter(|(_, t)| t.0 != Duration::MAX)
    {
        println!("  {name:<17} {:>7.3} s wall {:>7.3} s CPU", wall.as_secs_f64(), cpu.as_secs_f64());
    }
    println!("  tantivy index {:.1} MB, browser index {:.1} MB", sizes[0] as f64 / 1e6, sizes[1] as f64 / 1e6);
}
