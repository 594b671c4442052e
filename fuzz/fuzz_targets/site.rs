//! The whole path on one report: a small site in a temporary folder whose one report is
//! the input, run through `pipeline::check` (discover → parse → resolve → render →
//! post-process → publish; everything but writing the output and the search indexes).
//! The input is written as bytes, so reading (UTF-8, BOM, line endings, size) is
//! fuzzed too.
#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use casebook::pipeline::{self, BuildOptions};
use libfuzzer_sys::fuzz_target;

const SYSTEM_YAML: &str = "name: Fuzz\nrepository: https://example.org/fuzz\n";
const RUN_YAML: &str = "\
revision: 5954a07d464feeaf6c311a9fa5ca2e54200a6794
date: 2026-08-20
sources:
  - id: SRC-1
    title: Host package
    repository: https://example.org/fuzz
    path: src
  - id: SRC-2
    title: Design notes
unpublished:
  - name: evidence packet
    ids: [\"CMP-*\", \"CLM-*\"]
";
/// A second report that declares and cites, so the fuzzed one has records to refer to.
const OTHER_REPORT: &str = "\
# Other

| ID | Producer | Status |
|---|---|---|
| OBJ-01 Summary | host (CMP-12) | implemented |

### MEM-OBJ-raw raw history

Status: wired

See OBJ-01 (SRC-1 session.py:3-4).
";

struct Site {
    _dir: tempfile::TempDir,
    root: PathBuf,
    report: PathBuf,
}

static SITE: LazyLock<Site> = LazyLock::new(|| {
    // One worker: the machine is shared, and a finding should not depend on scheduling.
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let root = dir.path().to_path_buf();
    let run = root.join("content/fuzz/run-1");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(root.join("content/fuzz/system.yaml"), SYSTEM_YAML).unwrap();
    std::fs::write(run.join("run.yaml"), RUN_YAML).unwrap();
    std::fs::write(run.join("other.md"), OTHER_REPORT).unwrap();
    Site { report: run.join("report.md"), root, _dir: dir }
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
