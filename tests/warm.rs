//! The build cache (`casebook build --cache`): a build after an edit renders only what
//! changed, takes every unchanged file from the output it replaces as a hard link, and
//! writes exactly what a build without a cache writes. (tests/incremental.rs checks the
//! last after random edits.)

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use casebook::pipeline::{self, BuildOptions};

/// The bundled site, copied so that a test may edit it.
fn site_copy(dir: &Path) -> PathBuf {
    let root = dir.join("site");
    common::copy_tree(&common::repo().join("content"), &root.join("content"));
    root
}

/// A copy of the bundled site with a warm output (and its cache) and a cold one.
struct Case {
    dir: tempfile::TempDir,
    root: PathBuf,
    out: PathBuf,
    cold: PathBuf,
    cache: PathBuf,
}

impl Case {
    fn new() -> Case {
        let dir = tempfile::tempdir().unwrap();
        let root = site_copy(dir.path());
        let (out, cold, cache) = (dir.path().join("out"), dir.path().join("cold"), dir.path().join("cache"));
        Case { dir, root, out, cold, cache }
    }

    /// A build into `out` with the cache.
    fn warm(&self) -> pipeline::Outcome {
        build(&self.root, &self.out, Some(&self.cache))
    }

    /// A build from nothing into `cold`, which must hold what `out` holds.
    fn assert_cold_build_same(&self, when: &str) {
        build(&self.root, &self.cold, None);
        assert_same_bytes(&self.out, &self.cold, when);
    }
}

fn build(root: &Path, output: &Path, cache: Option<&Path>) -> pipeline::Outcome {
    let mut options = BuildOptions::new(root);
    options.output = output.to_path_buf();
    options.cache = cache.map(Path::to_path_buf);
    let outcome = pipeline::build(&options).unwrap();
    let errors: Vec<String> = outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    assert!(outcome.written, "{errors:?}");
    outcome
}

/// Every file below `dir` with its inode.
fn inodes(dir: &Path) -> BTreeMap<PathBuf, u64> {
    common::files_below(dir).into_iter().map(|p| (p.clone(), std::fs::metadata(dir.join(&p)).unwrap().ino())).collect()
}

fn assert_same_bytes(a: &Path, b: &Path, when: &str) {
    let (files_a, files_b) = (common::files_below(a), common::files_below(b));
    assert_eq!(files_a, files_b, "{when}: the two outputs list different files");
    for file in files_a {
        assert!(
            std::fs::read(a.join(&file)).unwrap() == std::fs::read(b.join(&file)).unwrap(),
            "{when}: {file:?} differs"
        );
    }
}

/// The first report of a run of the bundled site (other than `run`), by path in content/.
fn a_report_of(root: &Path, system: &str) -> PathBuf {
    let mut reports: Vec<PathBuf> = walkdir::WalkDir::new(root.join("content").join(system))
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    reports.sort();
    reports.remove(0)
}

/// Edits a report: `sentence` as a paragraph before its first section.
fn add_sentence(report: &Path, sentence: &str) {
    let text = std::fs::read_to_string(report).unwrap();
    std::fs::write(report, text.replacen("\n## ", &format!("\n{sentence}\n\n## "), 1)).unwrap();
}

#[test]
fn an_edit_renders_its_run_again_and_links_every_other_page_from_the_previous_output() {
    let case = Case::new();
    let (root, out) = (&case.root, &case.out);
    case.warm();
    let before = inodes(out);

    // Nothing changed: every generated file is the previous one, linked; the search
    // indexes and the manifest are not even made.
    let unchanged = case.warm();
    let indexed = |outcome: &pipeline::Outcome| outcome.timings.iter().any(|(stage, _)| stage.contains("tantivy"));
    assert!(!indexed(&unchanged), "{:?}", unchanged.timings);
    case.assert_cold_build_same("nothing changed");
    let after = inodes(out);
    let made_again: Vec<&PathBuf> =
        after.iter().filter(|(p, ino)| before.get(*p) != Some(ino)).map(|(p, _)| p).collect();
    // The marker file is written by every build; nothing else.
    assert_eq!(made_again, [Path::new(".casebook")], "files made again though nothing changed");

    // One report of exia-seed edited: its run's pages are made again, fractal's are not.
    let report = a_report_of(root, "exia-seed");
    add_sentence(&report, "A sentence added by the test.");
    assert!(indexed(&case.warm()), "an edit did not make the search indexes again");
    case.assert_cold_build_same("after an edit");
    let edited = inodes(out);
    let relinked =
        |prefix: &str| edited.iter().filter(|(p, _)| p.starts_with(prefix)).all(|(p, ino)| after.get(p) == Some(ino));
    assert!(relinked("fractal"), "a page of the system not edited was made again");
    // Its runs' manifest files too (the site's lists each run's, and is made again).
    let fractal_manifest = Path::new("fractal/aas-2026-08-20-fractal-01/records.json");
    assert_eq!(edited.get(fractal_manifest), after.get(fractal_manifest));
    assert!(edited.contains_key(fractal_manifest));
    let run = report.parent().unwrap().file_name().unwrap();
    let report_page = Path::new("exia-seed").join(run).join(report.file_stem().unwrap()).join("index.html");
    assert_ne!(edited.get(&report_page), after.get(&report_page), "the edited report's page was not made again");
    assert!(
        std::fs::read_to_string(out.join(&report_page)).unwrap().contains("A sentence added by the test."),
        "the edited report's page does not show the edit"
    );
}

#[test]
fn an_edit_makes_the_search_index_segments_of_its_group_of_runs_and_links_the_others() {
    let case = Case::new();
    let (root, out) = (&case.root, &case.out);
    // A system whose run begins a group of its own (`index::begins_group`): the bundled
    // runs make one group, lab/r1 another.
    let bundled_runs = [("exia-seed", "c7497ac"), ("fractal", "6a226e7"), ("fractal", "aas-2026-08-20-fractal-01")];
    assert!(bundled_runs.iter().skip(1).all(|(system, run)| !casebook::index::begins_group(system, run)));
    assert!(casebook::index::begins_group("lab", "r1"));
    common::copy_tree(&root.join("content/fractal/aas-2026-08-20-fractal-01"), &root.join("content/lab/r1"));
    std::fs::write(root.join("content/lab/system.yaml"), "name: Lab\n").unwrap();
    case.warm();
    let segments = |inodes: &BTreeMap<PathBuf, u64>| -> BTreeMap<PathBuf, u64> {
        inodes.iter().filter(|(p, _)| p.starts_with("search/tantivy")).map(|(p, i)| (p.clone(), *i)).collect()
    };
    let before = segments(&inodes(out));
    assert_eq!(before.len(), 2 * 6 + 1, "two segments and meta.json: {before:?}");

    add_sentence(&a_report_of(root, "lab"), "A sentence added by the test.");
    case.warm();
    case.assert_cold_build_same("after an edit of lab/r1");
    let after = segments(&inodes(out));
    let linked: Vec<&PathBuf> = after.iter().filter(|(p, i)| before.get(*p) == Some(i)).map(|(p, _)| p).collect();
    assert_eq!(linked.len(), 6, "the bundled runs' segment is linked, lab's made again: {after:?}");
}

#[test]
fn runs_whose_files_did_not_change_are_taken_from_the_cache_with_their_diagnostics() {
    let case = Case::new();
    let first = case.warm();
    let runs = case.cache.join("out.runs");
    let kept = |dir: &Path| -> usize { std::fs::read_dir(dir).unwrap().count() };
    assert_eq!(kept(&runs), 3, "a parsed run per run of the site");
    // What a build says of the content is the same, taken from the cache or parsed; a
    // run taken from the cache is not written again (only runs parsed now are).
    let times = |dir: &Path| -> Vec<std::time::SystemTime> {
        let mut times: Vec<_> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().metadata().unwrap().modified().unwrap()).collect();
        times.sort();
        times
    };
    let before = times(&runs);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let again = case.warm();
    assert_eq!(times(&runs), before, "no run was parsed again");
    let messages = |o: &pipeline::Outcome| o.diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>();
    assert_eq!(messages(&again), messages(&first));
    assert!(!messages(&first).is_empty(), "the bundled site has warnings");
    // A cached run is what the build takes: spoilt, it is refused (its digests do not
    // read back), and the run is parsed again.
    for entry in std::fs::read_dir(&runs).unwrap() {
        std::fs::write(entry.unwrap().path(), b"spoilt").unwrap();
    }
    let spoilt = case.warm();
    assert_eq!(messages(&spoilt), messages(&first));
    for entry in std::fs::read_dir(&runs).unwrap() {
        assert_ne!(std::fs::read(entry.unwrap().path()).unwrap(), b"spoilt", "parsed again, and kept");
    }
    case.assert_cold_build_same("after the parsed runs were spoilt");
    // A run gone from the site: its file goes too.
    std::fs::remove_dir_all(case.root.join("content/fractal/6a226e7")).unwrap();
    case.warm();
    assert_eq!(kept(&runs), 2);
    case.assert_cold_build_same("after a run was removed");
}

#[test]
fn a_file_changed_in_the_output_by_hand_is_made_again() {
    let case = Case::new();
    let out = &case.out;
    case.warm();
    // Same length, so only the modification time and inode can tell.
    let page = out.join("fractal/index.html");
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::remove_file(&page).unwrap();
    std::fs::write(&page, text.replacen("<title>", "<title>X", 1).replacen("</title>", "/title>", 1)).unwrap();
    // A run's manifest changed: made again, though no content did.
    let manifest = out.join("fractal/aas-2026-08-20-fractal-01/records.json");
    let lines = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, lines.replacen("\"records\"", "\"recorde\"", 1)).unwrap();
    let home = out.join("index.html");
    let home_text = std::fs::read_to_string(&home).unwrap();
    std::fs::write(&home, home_text.replacen("<title>", "<title>Y", 1).replacen("</title>", "/title>", 1)).unwrap();
    case.warm();
    case.assert_cold_build_same("after hand edits of the output");
}

#[test]
fn a_kept_browser_index_changed_on_disk_is_not_used() {
    let case = Case::new();
    case.warm();
    let kept = std::fs::read_dir(&case.cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "browser"))
        .expect("the cache keeps the browser index");
    // A byte changed in the middle (a term's text), then the length kept as it was.
    let mut bytes = std::fs::read(&kept).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] = bytes[middle].wrapping_add(1);
    std::fs::write(&kept, &bytes).unwrap();
    add_sentence(&a_report_of(&case.root, "fractal"), "A sentence added by the test.");
    case.warm();
    case.assert_cold_build_same("after the kept browser index was changed");
}

#[test]
fn a_new_configuration_or_base_url_makes_every_page_again() {
    let case = Case::new();
    let (root, out, cache) = (&case.root, &case.out, &case.cache);
    case.warm();
    let config = root.join("content/casebook.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replacen("title: ", "title: Renamed ", 1)).unwrap();
    case.warm();
    case.assert_cold_build_same("after a new title");

    let mut options = BuildOptions::new(root);
    options.output = out.clone();
    options.cache = Some(cache.clone());
    options.base_url = Some("/pr-7/".into());
    assert!(pipeline::build(&options).unwrap().written);
    options.output = case.cold.clone();
    options.cache = None;
    assert!(pipeline::build(&options).unwrap().written);
    assert_same_bytes(out, &case.cold, "under another base URL");
}

#[test]
fn the_command_line_keeps_its_cache_beside_the_output_ignored_by_git_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let root = site_copy(dir.path());
    let run = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_casebook"))
            .args(["build", "--root"])
            .arg(&root)
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    run(&["--no-cache"]);
    assert!(!root.join(".casebook-cache").exists(), "--no-cache wrote a cache");
    run(&[]);
    let ignore = std::fs::read_to_string(root.join(".casebook-cache/.gitignore")).unwrap();
    assert!(ignore.lines().any(|line| line == "*"), "{ignore}");
    assert!(root.join(".casebook-cache/public.state").is_file());

    // A cache that cannot be written: the site is built, with a warning that says so.
    let blocked = dir.path().join("blocked");
    std::fs::write(&blocked, "a file, not a folder").unwrap();
    let stderr = run(&["--cache", blocked.join("cache").to_str().unwrap()]);
    assert!(stderr.contains("warning[cache-not-written]"), "{stderr}");
    assert!(root.join("public/index.html").is_file());
}

#[test]
fn an_output_restored_from_a_ci_cache_is_reused_by_its_bytes() {
    let case = Case::new();
    let (root, out) = (&case.root, &case.out);
    case.warm();
    // What actions/cache does: the files come back with new inodes and times.
    let saved = case.dir.path().join("saved");
    std::fs::rename(out, &saved).unwrap();
    common::copy_tree(&saved, out);
    std::fs::remove_dir_all(&saved).unwrap();
    let restored = inodes(out);
    let report = a_report_of(root, "exia-seed");
    add_sentence(&report, "Another sentence.");
    case.warm();
    case.assert_cold_build_same("after a restore and an edit");
    let now = inodes(out);
    let fractal: Vec<&PathBuf> = now.keys().filter(|p| p.starts_with("fractal")).collect();
    assert!(!fractal.is_empty());
    for path in fractal {
        assert_eq!(now.get(path), restored.get(path), "{path:?} was made again, not linked from the restored output");
    }
}

#[test]
fn a_static_file_in_place_of_a_page_wins_in_every_warm_build() {
    let case = Case::new();
    let (root, out) = (&case.root, &case.out);
    std::fs::create_dir_all(root.join("static/fractal")).unwrap();
    std::fs::write(root.join("static/fractal/index.html"), "<!doctype html><title>static</title>\n").unwrap();
    std::fs::write(root.join("static/robots.txt"), "User-agent: *\n").unwrap();
    case.warm();
    case.warm();
    case.assert_cold_build_same("with static files in place of generated ones");
    // The static file goes: the generated page comes back.
    std::fs::remove_file(root.join("static/fractal/index.html")).unwrap();
    case.warm();
    case.assert_cold_build_same("once the static page is gone");
    assert!(std::fs::read_to_string(out.join("fractal/index.html")).unwrap().contains("Fractal"));
}

#[test]
fn the_dev_servers_first_build_starts_from_the_cache_and_its_rebuilds_stay_exact() {
    let case = Case::new();
    let (root, out) = (&case.root, &case.out);
    case.warm();
    let before = inodes(out);
    let mut options = BuildOptions::new(root);
    options.output = out.clone();
    options.cache = Some(case.cache.clone());
    let mut rebuilder = pipeline::Rebuilder::new(options.clone());
    assert!(rebuilder.rebuild(&[], &mut |_| {}).unwrap().written);
    case.assert_cold_build_same("the dev server's first build");
    let first = inodes(out);
    let made_again: Vec<&PathBuf> =
        first.iter().filter(|(p, ino)| before.get(*p) != Some(ino)).map(|(p, _)| p).collect();
    assert_eq!(made_again, [Path::new(".casebook")], "the dev server's first build made files again");

    // Its rebuilds go on as without a cache.
    let report = a_report_of(root, "fractal");
    add_sentence(&report, "A sentence saved while serving.");
    let outcome = rebuilder.rebuild(std::slice::from_ref(&report), &mut |_| {}).unwrap();
    assert!(outcome.written && outcome.changed.is_some(), "not a rebuild in place");
    case.assert_cold_build_same("after a rebuild");

    // A server started again takes the output its predecessor left.
    let mut again = pipeline::Rebuilder::new(options);
    assert!(again.rebuild(&[], &mut |_| {}).unwrap().written);
    case.assert_cold_build_same("a second server's first build");
}
