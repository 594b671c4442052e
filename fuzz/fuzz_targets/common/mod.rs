//! The small site the whole-path targets start from: one system, one run with two
//! reports (`report.md`, which a target may overwrite, and `other.md`, which declares and
//! cites so that the first has records to refer to), in a temporary folder kept for the
//! process's life.

use std::path::PathBuf;

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
const OTHER_REPORT: &str = "\
# Other

| ID | Producer | Status |
|---|---|---|
| OBJ-01 Summary | host (CMP-12) | implemented |

### MEM-OBJ-raw raw history

Status: wired

See OBJ-01 (SRC-1 session.py:3-4).
";
const REPORT: &str = "\
# Memory of the fuzz system

## Findings

### OBJ-02 Compacted history

The summary replaces the oldest turns (SRC-1 session.py:10-12); see OBJ-01.

- Written by: wired
- Read back: claimed (the design notes say so, SRC-2 §\"Memory\")

```python
def compact(history):
    return summarise(history[:-4]) + history[-4:]
```

## Limits

- L1: the summarising prompt was not read; whether OBJ-02 keeps names is open.
";

pub struct Site {
    _dir: tempfile::TempDir,
    /// The site root (holding `content/`).
    pub root: PathBuf,
    /// `report.md`, which a target may overwrite.
    pub report: PathBuf,
}

/// Writes the site, in memory where the machine has a RAM disk.
pub fn site() -> Site {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let root = dir.path().to_path_buf();
    let run = root.join("content/fuzz/run-1");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(root.join("content/fuzz/system.yaml"), SYSTEM_YAML).unwrap();
    std::fs::write(run.join("run.yaml"), RUN_YAML).unwrap();
    std::fs::write(run.join("other.md"), OTHER_REPORT).unwrap();
    std::fs::write(run.join("report.md"), REPORT).unwrap();
    Site { report: run.join("report.md"), root, _dir: dir }
}

/// One worker: the machine is shared, and a finding should not depend on scheduling.
pub fn one_worker() {
    let _ = rayon::ThreadPoolBuilder::new().num_threads(1).build_global();
}
