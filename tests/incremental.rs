//! Incremental rebuilds are exactly right: random sequences of edits (a status changed, a
//! record renamed or deleted, a reference added, a report added or deleted, a template
//! or a system's name changed, a file saved unchanged, a broken save then fixed) are
//! applied to a generated site, and after each one the rebuilt output folder must be
//! byte for byte what a clean build of the same sources writes. So must a warm build
//! (`casebook build` with its cache, in another output folder) after each edit.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use casebook::pipeline::{self, BuildOptions, Rebuilder};
use proptest::prelude::*;

const STATUSES: [&str; 4] = ["absent", "claimed", "implemented", "wired"];

#[derive(Debug, Clone)]
struct Record {
    number: u32,
    label: String,
    status: usize,
    /// Numbers of records of the same run this one refers to.
    references: Vec<u32>,
}

#[derive(Debug, Clone)]
struct Report {
    slug: String,
    records: Vec<Record>,
}

#[derive(Debug, Clone)]
struct Run {
    slug: String,
    reports: Vec<Report>,
}

#[derive(Debug, Clone)]
struct System {
    slug: String,
    name: String,
    runs: Vec<Run>,
}

/// The sources of a small site, as a model the edits change.
#[derive(Debug, Clone)]
struct Site {
    systems: Vec<System>,
    next_number: u32,
    /// A template override in the site's theme, when set.
    template_marker: Option<u32>,
    /// A report saved with an unknown status (the build must fail and write nothing).
    broken: bool,
    /// `record_pages: per-run`: each run's records on one page.
    per_run: bool,
    /// `status_pages: per-system` and the search index in files of 4 documents.
    fewer_files: bool,
    /// A static `robots.txt`, in the place of the one casebook makes.
    static_robots: bool,
    /// A static page in the place of a report's page.
    static_page: bool,
}

impl Site {
    fn new() -> Self {
        let mut site = Site {
            systems: Vec::new(),
            next_number: 1,
            template_marker: None,
            broken: false,
            per_run: false,
            fewer_files: false,
            static_robots: false,
            static_page: false,
        };
        for (slug, name) in [("alpha", "Alpha"), ("beta", "Beta")] {
            let mut runs = Vec::new();
            // Runs in three groups of the search indexes (`index::begins_group`): a rebuild keeps
            // the tantivy segments of the groups it did not touch.
            for run in ["r1", "r5"] {
                let reports = (1..=2).map(|r| site.new_report(&format!("report-{r}"), 3)).collect();
                runs.push(Run { slug: run.to_string(), reports });
            }
            site.systems.push(System { slug: slug.into(), name: name.into(), runs });
        }
        site
    }

    fn new_report(&mut self, slug: &str, records: u32) -> Report {
        let first = self.next_number;
        self.next_number += records;
        let records = (first..first + records)
            .map(|n| Record {
                number: n,
                label: format!("record {n}"),
                status: (n as usize) % STATUSES.len(),
                references: vec![],
            })
            .collect();
        Report { slug: slug.into(), records }
    }

    fn runs_mut(&mut self) -> Vec<&mut Run> {
        self.systems.iter_mut().flat_map(|s| s.runs.iter_mut()).collect()
    }

    /// Every file of the site, by path relative to the root.
    fn files(&self, record_template: &str) -> BTreeMap<PathBuf, String> {
        let mut files = BTreeMap::new();
        files.insert(
            "content/casebook.yaml".into(),
            format!(
                "title: Incremental\nids:\n  grammars:\n    - '(?P<kind>[A-Z]{{2,5}})-(?P<number>[0-9]+)'\n  kinds:\n    OBJ: operative object\n{}{}",
                if self.per_run { "record_pages: per-run\n" } else { "" },
                if self.fewer_files { "status_pages: per-system\nsearch:\n  documents_per_file: 4\n" } else { "" }
            ),
        );
        if let Some(marker) = self.template_marker {
            files.insert(
                "themes/default/templates/record-body.html".into(),
                record_template.replace("</article>", &format!("<p>marker {marker}</p></article>")),
            );
        }
        files.insert("static/notes.txt".into(), "A static file.\n".into());
        if self.static_page {
            files.insert("static/alpha/r1/report-1/index.html".into(), "<!doctype html><title>Static</title>\n".into());
        }
        if self.static_robots {
            files.insert("static/robots.txt".into(), "User-agent: *\nDisallow: /\n".into());
        }
        for system in &self.systems {
            files.insert(format!("content/{}/system.yaml", system.slug).into(), format!("name: {}\n", system.name));
            for run in &system.runs {
                let dir = format!("content/{}/{}", system.slug, run.slug);
                files.insert(
                    format!("{dir}/run.yaml").into(),
                    "revision: 0123456789abcdef0123456789abcdef01234567\nsources:\n  - id: SRC-1\n    title: The repository\n".to_string(),
                );
                for (i, report) in run.reports.iter().enumerate() {
                    let mut text = format!("---\ntitle: Report {}\norder: {}\n---\n\n## Records\n\n| ID | Label | Status |\n|---|---|---|\n", report.slug, i + 1);
                    for record in &report.records {
                        let status = if self.broken && i == 0 { "bogus" } else { STATUSES[record.status] };
                        text.push_str(&format!("| OBJ-{} | {} | {} |\n", record.number, record.label, status));
                    }
                    text.push_str("\n## Notes\n\n");
                    for record in &report.records {
                        for target in &record.references {
                            text.push_str(&format!(
                                "On OBJ-{} the evidence is that OBJ-{target} holds.\n\n",
                                record.number
                            ));
                        }
                    }
                    text.push_str("Nothing else.\n");
                    files.insert(format!("{dir}/{}.md", report.slug).into(), text);
                }
            }
        }
        files
    }
}

#[derive(Debug, Clone)]
enum Edit {
    Status(usize),
    Rename(usize),
    Delete(usize),
    Reference(usize, usize),
    AddReport(usize),
    DeleteReport(usize),
    Template,
    /// Switches between a page per record and a page of records per run.
    Layout,
    /// Switches between a page per status of a system and one page per system, with the
    /// search index in files of 16 documents or of 4.
    FewerFiles,
    /// Puts a static file over a generated one, or takes it away.
    StaticRobots,
    /// Puts a static page over a report's page, or takes it away.
    StaticPage,
    SystemName(usize),
    Touch(usize),
    BreakThenFix,
    /// Puts the sources back as they were before the previous edit.
    Undo,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Status),
        any::<usize>().prop_map(Edit::Rename),
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::Reference(a, b)),
        any::<usize>().prop_map(Edit::AddReport),
        any::<usize>().prop_map(Edit::DeleteReport),
        Just(Edit::Template),
        Just(Edit::Layout),
        Just(Edit::FewerFiles),
        Just(Edit::StaticRobots),
        Just(Edit::StaticPage),
        any::<usize>().prop_map(Edit::SystemName),
        any::<usize>().prop_map(Edit::Touch),
        Just(Edit::BreakThenFix),
        Just(Edit::Undo),
    ]
}

/// Applies an edit to the model (`Touch` and `BreakThenFix` act on the files instead).
fn apply(site: &mut Site, edit: &Edit) {
    match *edit {
        Edit::Status(i) | Edit::Rename(i) | Edit::Delete(i) => {
            let next = site.next_number;
            let mut runs = site.runs_mut();
            let count = runs.len();
            let run = &mut runs[i % count];
            let records: Vec<(usize, usize)> = run
                .reports
                .iter()
                .enumerate()
                .flat_map(|(r, rep)| (0..rep.records.len()).map(move |k| (r, k)))
                .collect();
            if records.is_empty() {
                return;
            }
            let (r, k) = records[(i / 7) % records.len()];
            let old = run.reports[r].records[k].number;
            match edit {
                Edit::Status(_) => {
                    let record = &mut run.reports[r].records[k];
                    record.status = (record.status + 1) % STATUSES.len();
                }
                Edit::Rename(_) => {
                    for record in run.reports.iter_mut().flat_map(|rep| rep.records.iter_mut()) {
                        if record.number == old {
                            record.number = next;
                        }
                        for target in &mut record.references {
                            if *target == old {
                                *target = next;
                            }
                        }
                    }
                    site.next_number += 1;
                }
                _ => {
                    run.reports[r].records.remove(k);
                    for record in run.reports.iter_mut().flat_map(|rep| rep.records.iter_mut()) {
                        record.references.retain(|t| *t != old);
                    }
                }
            }
        }
        Edit::Reference(i, j) => {
            let mut runs = site.runs_mut();
            let count = runs.len();
            let run = &mut runs[i % count];
            let numbers: Vec<u32> = run.reports.iter().flat_map(|rep| rep.records.iter().map(|r| r.number)).collect();
            if numbers.len() < 2 {
                return;
            }
            let target = numbers[j % numbers.len()];
            let from = numbers[(j / 3 + 1) % numbers.len()];
            if let Some(record) =
                run.reports.iter_mut().flat_map(|rep| rep.records.iter_mut()).find(|r| r.number == from)
            {
                if !record.references.contains(&target) {
                    record.references.push(target);
                }
            }
        }
        Edit::AddReport(i) => {
            let slug = format!("report-{}", site.next_number);
            let report = site.new_report(&slug, 2);
            let mut runs = site.runs_mut();
            let count = runs.len();
            runs[i % count].reports.push(report);
        }
        Edit::DeleteReport(i) => {
            let mut runs = site.runs_mut();
            let count = runs.len();
            let run = &mut runs[i % count];
            if run.reports.len() < 2 {
                return;
            }
            let removed = run.reports.remove((i / 5) % run.reports.len());
            let gone: Vec<u32> = removed.records.iter().map(|r| r.number).collect();
            for record in run.reports.iter_mut().flat_map(|rep| rep.records.iter_mut()) {
                record.references.retain(|t| !gone.contains(t));
            }
        }
        Edit::Template => {
            site.template_marker = match site.template_marker {
                Some(n) if n % 2 == 1 => None,
                Some(n) => Some(n + 1),
                None => Some(site.next_number),
            };
        }
        Edit::Layout => site.per_run = !site.per_run,
        Edit::FewerFiles => site.fewer_files = !site.fewer_files,
        Edit::StaticRobots => site.static_robots = !site.static_robots,
        Edit::StaticPage => site.static_page = !site.static_page,
        Edit::SystemName(i) => {
            let system = &mut site.systems[i % 2];
            system.name = format!("{} {}", system.name.split(' ').next().unwrap_or("System"), i % 97);
        }
        Edit::Touch(_) | Edit::BreakThenFix | Edit::Undo => {}
    }
}

/// Writes the site's files under `root`: changed and new files, and removes the files
/// gone. Returns the paths written or removed (what the watcher would report).
fn save(
    root: &Path,
    before: &BTreeMap<PathBuf, String>,
    after: &BTreeMap<PathBuf, String>,
    touch: Option<usize>,
) -> Vec<PathBuf> {
    let mut changed = Vec::new();
    for (path, text) in after {
        if before.get(path) != Some(text) {
            let target = root.join(path);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::write(&target, text).unwrap();
            changed.push(target);
        }
    }
    for path in before.keys().filter(|p| !after.contains_key(*p)) {
        let target = root.join(path);
        std::fs::remove_file(&target).unwrap();
        changed.push(target);
    }
    if let Some(i) = touch {
        let reports: Vec<&PathBuf> = after.keys().filter(|p| p.extension().is_some_and(|e| e == "md")).collect();
        let target = root.join(reports[i % reports.len()]);
        std::fs::write(&target, &after[reports[i % reports.len()]]).unwrap();
        changed.push(target);
    }
    changed
}

/// Every file below `dir` with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    common::files_below(dir).into_iter().map(|p| (p.clone(), std::fs::read(dir.join(&p)).unwrap())).collect()
}

fn assert_same_tree(incremental: &Path, clean: &Path, step: &str) {
    let (a, b) = (tree(incremental), tree(clean));
    let only_a: Vec<_> = a.keys().filter(|k| !b.contains_key(*k)).collect();
    let only_b: Vec<_> = b.keys().filter(|k| !a.contains_key(*k)).collect();
    let differ: Vec<_> = a.iter().filter(|(k, v)| b.get(*k).is_some_and(|w| w != *v)).map(|(k, _)| k).collect();
    assert!(
        only_a.is_empty() && only_b.is_empty() && differ.is_empty(),
        "after {step}: only in the rebuilt output {only_a:?}; only in the clean build {only_b:?}; different {differ:?}"
    );
}

/// `site`'s files saved below `root`, and a rebuilder that built them once into
/// `root/public`.
fn built_once(root: &Path, site: &Site, record_template: &str) -> (BTreeMap<PathBuf, String>, Rebuilder) {
    let files = site.files(record_template);
    save(root, &BTreeMap::new(), &files, None);
    let mut options = BuildOptions::new(root);
    options.output = root.join("public");
    let mut rebuilder = Rebuilder::new(options);
    let first = rebuilder.rebuild(&[], &mut |_| {}).unwrap();
    assert!(first.written, "{:?}", first.diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>());
    (files, rebuilder)
}

fn clean_build(root: &Path, output: &Path) -> bool {
    let _ = std::fs::remove_dir_all(output);
    let mut options = BuildOptions::new(root);
    options.output = output.to_path_buf();
    let outcome = pipeline::build(&options).unwrap();
    outcome.written
}

/// A build into `output` with the cache in `cache`, as `casebook build` makes one.
fn warm_build(root: &Path, output: &Path, cache: &Path) -> pipeline::Outcome {
    let mut options = BuildOptions::new(root);
    options.output = output.to_path_buf();
    options.cache = Some(cache.to_path_buf());
    pipeline::build(&options).unwrap()
}

/// Applies each edit and rebuilds, checking the output against a clean build's. An edit
/// with `Some(k)` is rebuilt as the dev server does when a newer change waits: the k-th
/// time the rebuild asks whether it is superseded (after the changed runs' pages, after
/// the site's pages, then before each file of the search indexes: a changed run's
/// document files, its group's segment, then the term chunks, in any order), and every
/// time after, the answer is yes; the next rebuild must still leave what a clean build does.
fn check_sequence(steps: &[(Edit, Option<u8>)]) {
    check_sequence_counting(steps, &std::cell::Cell::new(0));
}

/// [`check_sequence`], telling `asked` how many times the first stopped rebuild asked.
fn check_sequence_counting(steps: &[(Edit, Option<u8>)], asked_first: &std::cell::Cell<usize>) {
    let edits: Vec<&Edit> = steps.iter().map(|(edit, _)| edit).collect();
    let record_template =
        std::fs::read_to_string(common::repo().join("themes/default/templates/record-body.html")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    let clean = dir.path().join("clean");
    let mut site = Site::new();
    let (mut files, mut rebuilder) = built_once(&root, &site, &record_template);
    assert!(clean_build(&root, &clean));
    assert_same_tree(&root.join("public"), &clean, "the first build");
    let (warm, cache) = (dir.path().join("warm"), dir.path().join("cache"));
    assert!(warm_build(&root, &warm, &cache).written);
    assert_same_tree(&warm, &clean, "the first warm build");

    let mut last_superseded = false;
    // The site before the last edit, for `Undo`.
    let mut previous: Option<Site> = None;
    for (n, (edit, stop_at)) in steps.iter().enumerate() {
        let step = format!("edit {n} ({edit:?}, stopped at check {stop_at:?}) of {steps:?}");
        if let Edit::BreakThenFix = edit {
            site.broken = true;
            let broken = site.files(&record_template);
            let changed = save(&root, &files, &broken, None);
            let before = tree(&root.join("public"));
            let outcome =
                rebuilder.rebuild(&changed, &mut |_| panic!("no page is written by a failed rebuild")).unwrap();
            assert!(outcome.has_errors() && !outcome.written, "{step}: the unknown status is an error");
            assert!(before == tree(&root.join("public")), "{step}: a failed rebuild changed the output");
            let before = tree(&warm);
            assert!(!warm_build(&root, &warm, &cache).written, "{step}: a failed warm build wrote");
            assert!(before == tree(&warm), "{step}: a failed warm build changed the output");
            site.broken = false;
            files = broken;
        }
        let before = site.clone();
        match (edit, previous.take()) {
            (Edit::Undo, Some(previous)) => site = previous,
            _ => apply(&mut site, edit),
        }
        previous = Some(before);
        let next = site.files(&record_template);
        let touch = if let Edit::Touch(i) = edit { Some(*i) } else { None };
        let changed = save(&root, &files, &next, touch);
        files = next;
        let mut pages_ready = false;
        let checks = AtomicUsize::new(0);
        let superseded = || {
            let asked = checks.fetch_add(1, Ordering::SeqCst) + 1;
            stop_at.is_some_and(|k| asked >= usize::from(k))
        };
        let outcome = rebuilder.rebuild_unless_superseded(&changed, &mut |_| pages_ready = true, &superseded).unwrap();
        let errors: Vec<String> = outcome.diagnostics.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
        assert!(outcome.written && pages_ready, "{step}: {errors:?}");
        // The rebuild asks twice, then before each index file it writes: it stops when it
        // asked k times.
        let asked = checks.load(Ordering::SeqCst);
        if stop_at.is_some() && asked_first.get() == 0 {
            asked_first.set(asked);
        }
        assert_eq!(outcome.superseded, stop_at.is_some_and(|k| asked >= usize::from(k)), "{step}");
        assert!(outcome.superseded || asked >= 2, "{step}: asked {asked} times");
        last_superseded = outcome.superseded;
        if outcome.superseded {
            continue;
        }
        assert!(clean_build(&root, &clean), "{step}: the clean build failed");
        assert_same_tree(&root.join("public"), &clean, &step);
        assert!(warm_build(&root, &warm, &cache).written, "{step}: the warm build failed");
        assert_same_tree(&warm, &clean, &format!("{step}, built warm"));
    }
    if last_superseded {
        // The change that superseded the last rebuild touched nothing more.
        let outcome = rebuilder.rebuild(&[], &mut |_| {}).unwrap();
        assert!(outcome.written && !outcome.superseded);
        assert!(clean_build(&root, &clean));
        assert_same_tree(&root.join("public"), &clean, &format!("a rebuild after the last of {edits:?}, superseded"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    #[test]
    fn a_rebuild_writes_what_a_clean_build_writes(steps in prop::collection::vec((edit(), prop::option::weighted(0.3, prop_oneof![1u8..6, 6u8..30])), 1..7)) {
        check_sequence(&steps);
    }
}

/// Every kind of edit at least once, in one fixed sequence (proptest's cases are random).
#[test]
fn every_kind_of_edit_in_turn() {
    check_sequence(&[
        (Edit::Status(3), None),
        (Edit::Touch(1), None),
        (Edit::Rename(10), Some(1)),
        (Edit::Reference(2, 5), None),
        (Edit::Template, Some(2)),
        (Edit::Layout, None),
        (Edit::FewerFiles, None),
        (Edit::AddReport(1), None),
        (Edit::Delete(4), Some(3)),
        (Edit::SystemName(1), None),
        (Edit::StaticRobots, None),
        (Edit::BreakThenFix, None),
        (Edit::StaticRobots, Some(2)),
        (Edit::StaticPage, None),
        (Edit::Status(5), None),
        (Edit::StaticPage, None),
        (Edit::DeleteReport(3), Some(5)),
        (Edit::Template, None),
        (Edit::Status(7), Some(1)),
        (Edit::Layout, Some(2)),
        (Edit::FewerFiles, Some(3)),
        // A superseded rebuild's pages, then the old bytes back: they must be written again.
        (Edit::Undo, None),
        (Edit::Rename(2), Some(2)),
        (Edit::Undo, Some(4)),
        (Edit::Undo, None),
    ]);
}

/// A rebuild stopped at each of the points it may stop at, in turn, then the next edit's
/// rebuild: each leaves what a clean build does (proptest's cases reach some points only).
#[test]
fn a_rebuild_stopped_anywhere_is_made_whole_by_the_next() {
    for k in 1u8.. {
        let asked = std::cell::Cell::new(0);
        let steps = [(Edit::AddReport(k.into()), Some(k)), (Edit::Status(usize::from(k)), None)];
        check_sequence_counting(&steps, &asked);
        if asked.get() < usize::from(k) {
            // The rebuild asked fewer times than k: every point was tried.
            assert!(k > 10, "a rebuild asks once per file of the indexes it writes: {} times", asked.get());
            break;
        }
    }
}

/// A rebuild that the anchor contract fails (a redirect to no page, found once the changed
/// pages are written) leaves the next rebuild knowing what it wrote: with the redirect
/// mended and the old text back, the output is a clean build's.
#[test]
fn a_rebuild_failed_by_the_anchor_contract_is_made_whole_by_the_next() {
    let record_template =
        std::fs::read_to_string(common::repo().join("themes/default/templates/record-body.html")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (root, clean) = (dir.path().join("site"), dir.path().join("clean"));
    let mut site = Site::new();
    let (files, mut rebuilder) = built_once(&root, &site, &record_template);

    let original = site.clone();
    apply(&mut site, &Edit::Status(0));
    let redirects = PathBuf::from("content/redirects.yaml");
    let mut broken = site.files(&record_template);
    broken.insert(redirects.clone(), "- from: /old/\n  to: /no/such/page/\n".into());
    let changed = save(&root, &files, &broken, None);
    let outcome = rebuilder.rebuild(&changed, &mut |_| {}).unwrap();
    assert!(outcome.has_errors() && !outcome.written, "the redirect to no page is an error");

    let mut mended = original.files(&record_template);
    mended.insert(redirects, "- from: /old/\n  to: /alpha/\n".into());
    let changed = save(&root, &broken, &mended, None);
    let outcome = rebuilder.rebuild(&changed, &mut |_| {}).unwrap();
    assert!(outcome.written, "{:?}", outcome.diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>());
    assert!(clean_build(&root, &clean));
    assert_same_tree(&root.join("public"), &clean, "the redirect mended and the status back");
}

/// A rebuild after a one-report edit renders only that run's pages (and the site-wide
/// ones), the edited report's first: the other runs' record pages are left as they were.
#[test]
fn a_rebuild_renders_only_what_changed() {
    let record_template = std::fs::read_to_string(common::repo().join("themes/default/templates/record.html")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    let site = Site::new();
    let (files, mut rebuilder) = built_once(&root, &site, &record_template);
    let untouched = root.join("public/beta/r5/records/OBJ-19.html");
    let edited = root.join("public/alpha/r1/records/OBJ-1.html");
    let untouched_time = std::fs::metadata(&untouched).unwrap().modified().unwrap();
    let segments_before = segment_times(&root.join("public"));
    let edited_text = std::fs::read_to_string(&edited).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut site = site;
    site.systems[0].runs[0].reports[0].records[0].label = "a new label".into();
    let next = site.files(&record_template);
    let changed = save(&root, &files, &next, None);
    let mut calls: Vec<Vec<std::path::PathBuf>> = Vec::new();
    assert!(rebuilder.rebuild(&changed, &mut |pages| calls.push(pages.to_vec())).unwrap().written);
    // The pages of the edited report (its page, its records') are announced first, for the
    // browser to reload them; then what else of its run changed (nothing more here).
    assert_eq!(calls.len(), 2, "{calls:?}");
    let first: Vec<&str> = calls[0].iter().filter_map(|p| p.to_str()).collect();
    // OBJ-2's page changes too: its link to the previous record names OBJ-1's label.
    assert_eq!(
        first,
        ["alpha/r1/records/OBJ-1.html", "alpha/r1/records/OBJ-2.html", "alpha/r1/report-1/index.html"],
        "{calls:?}"
    );
    assert!(calls[1].iter().all(|p| !calls[0].contains(p)), "{calls:?}");
    assert_eq!(
        std::fs::metadata(&untouched).unwrap().modified().unwrap(),
        untouched_time,
        "another run's page was rewritten"
    );
    let now = std::fs::read_to_string(&edited).unwrap();
    assert!(now.contains("a new label") && !edited_text.contains("a new label"));
    // The tantivy segments of the two groups without alpha/r1 are left as they were; the
    // edited group's segment is new.
    let segments_after = segment_times(&root.join("public"));
    let kept: Vec<&String> = segments_after.keys().filter(|s| segments_before.contains_key(*s)).collect();
    assert_eq!((segments_before.len(), segments_after.len(), kept.len()), (3, 3, 2), "{segments_after:?}");
    for segment in kept {
        assert_eq!(segments_before[segment], segments_after[segment], "segment {segment} was written again");
    }
}

/// The generated site's runs fall in three groups of the search indexes.
#[test]
fn the_generated_site_has_several_index_groups() {
    let site = Site::new();
    let runs: Vec<(&str, &str)> =
        site.systems.iter().flat_map(|s| s.runs.iter().map(move |r| (s.slug.as_str(), r.slug.as_str()))).collect();
    let groups = 1 + runs.iter().skip(1).filter(|(system, run)| casebook::index::begins_group(system, run)).count();
    assert_eq!(groups, 3, "the proptest should cover kept and rebuilt groups of the search indexes");
}

/// The tantivy segments of the output at `out`, by name, with the modification times of
/// their files.
fn segment_times(out: &Path) -> BTreeMap<String, Vec<std::time::SystemTime>> {
    let dir = out.join("search/tantivy");
    let mut segments: BTreeMap<String, Vec<std::time::SystemTime>> = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name != "meta" {
            segments.entry(name).or_default().push(std::fs::metadata(&path).unwrap().modified().unwrap());
        }
    }
    segments
}

/// The first build of a rebuilder (a full build, swapped in whole) goes to the end even
/// when a newer change waits.
#[test]
fn a_full_build_is_never_superseded() {
    let record_template = std::fs::read_to_string(common::repo().join("themes/default/templates/record.html")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("site");
    save(&root, &BTreeMap::new(), &Site::new().files(&record_template), None);
    let mut options = BuildOptions::new(&root);
    options.output = root.join("public");
    let outcome = Rebuilder::new(options).rebuild_unless_superseded(&[], &mut |_| {}, &|| true).unwrap();
    assert!(outcome.written && !outcome.superseded);
    let clean = dir.path().join("clean");
    assert!(clean_build(&root, &clean));
    assert_same_tree(&root.join("public"), &clean, "a full build asked to stop");
}
