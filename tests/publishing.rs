//! Publishing: the record manifest, `casebook diff`, the anchor contract with redirects,
//! sitemap, robots, feeds, the 404 page, `casebook init`.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use casebook::manifest::Manifest;
use common::{bundled, copy_tree, repo};

const FRACTAL_REPORT: &str = "content/fractal/aas-2026-08-20-fractal-01/memory.md";

fn casebook(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_casebook")).args(args).current_dir(dir).output().expect("the binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A copy of the bundled site with OBJ-12's status changed and the NEW-3 row removed.
fn edited_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("content"), &dir.path().join("content"));
    let path = dir.path().join(FRACTAL_REPORT);
    let source = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = source.lines().map(str::to_string).collect();
    let obj12 = lines.iter().position(|l| l.starts_with("| OBJ-12 ")).unwrap();
    assert!(lines[obj12].ends_with("| implemented |"));
    lines[obj12] = lines[obj12].replace("| implemented |", "| absent |");
    lines.retain(|l| !l.starts_with("| NEW-3 |"));
    // A finding without a record: the operation Consolidation, concluded absent.
    let consolidation = lines.iter().position(|l| l.starts_with("| Consolidation | absent for OBJ-03.")).unwrap();
    lines[consolidation] =
        lines[consolidation].replace("| Consolidation | absent for", "| Consolidation | implemented for");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    dir
}

#[test]
fn the_manifest_lists_every_record_with_a_documented_schema() {
    let built = bundled();
    let manifest = Manifest::read(&built.out().join("records.json")).unwrap();
    let published: Vec<_> = manifest.records.iter().filter(|r| r.published).collect();
    assert_eq!(published.len(), 38);
    let raw = manifest.records.iter().find(|r| r.id == "MEM-OBJ-raw").unwrap();
    assert_eq!((raw.system.as_str(), raw.run.as_str(), raw.kind.as_str()), ("exia-seed", "c7497ac", "OBJ"));
    assert_eq!(raw.label.as_deref(), Some("Raw conversation batches"));
    assert_eq!(raw.declared[0].file, "content/exia-seed/c7497ac/memory.md");
    assert_eq!(raw.hash.len(), 64);
    assert!(built.exists(&format!("/{}", raw.path)));
    let unpublished = manifest.records.iter().find(|r| r.id == "RT-RTE-memory-delivery").unwrap();
    assert_eq!((unpublished.published, unpublished.unpublished_in.as_deref()), (false, Some("runtime report")));
    // `records.jsonl` (the records again, a line each) is no longer written.
    assert!(!built.out().join("records.jsonl").exists());
    // The files hold the manifest of the site, the one `casebook diff` makes from the
    // content.
    let (made, _) = casebook::pipeline::manifest_of(&repo(), Some(&manifest.base_url));
    assert_eq!(manifest, made.unwrap());

    // The site's records.json: a header, then a line per run naming its file.
    let site = std::fs::read_to_string(built.out().join("records.json")).unwrap();
    let site_value: serde_json::Value = serde_json::from_str(&site).unwrap();
    let runs = site_value["runs"].as_array().unwrap();
    assert_eq!(site.lines().count(), 1 + runs.len() + 1, "one run a line");
    assert_eq!(site_value["schema"], "casebook.records/2");
    let mut records = 0;
    let doc = std::fs::read_to_string(repo().join("docs/manifest.md")).unwrap();
    for run in runs {
        // Each run's file: a header, each record and finding a line of its own, compact.
        let file = run["path"].as_str().unwrap();
        assert_eq!(file, format!("{}/{}/records.json", run["system"].as_str().unwrap(), run["run"].as_str().unwrap()));
        let json = std::fs::read_to_string(built.out().join(file)).unwrap();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["schema"], "casebook.run-records/2");
        let (run_records, run_findings) = (value["records"].as_array().unwrap(), value["findings"].as_array().unwrap());
        assert_eq!(
            (run["records"].as_u64().unwrap() as usize, run["findings"].as_u64().unwrap() as usize),
            (run_records.len(), run_findings.len())
        );
        let lines: Vec<&str> = json.lines().collect();
        let items = lines.iter().filter(|l| l.starts_with("{\"system\"")).count();
        assert_eq!(items, run_records.len() + run_findings.len(), "{file}: one item a line");
        assert!(lines.len() - items <= 3, "{file}: the header, the arrays' ends");
        for (line, record) in lines[1..=run_records.len()].iter().zip(&manifest.records[records..]) {
            assert_eq!(
                &serde_json::from_str::<casebook::manifest::RecordEntry>(line.trim_end_matches(',')).unwrap(),
                record
            );
        }
        records += run_records.len();
        assert!(!json.contains("\n\n"), "{file} is compact");
        // Every JSON key of a run's file, its records and findings is documented.
        let keys = value.as_object().unwrap().keys();
        let record_keys = run_records.iter().flat_map(|r| r.as_object().unwrap().keys());
        let finding_keys =
            run_findings.iter().flat_map(|f| f.as_object().unwrap().keys().chain(f["at"].as_object().unwrap().keys()));
        for key in keys.chain(record_keys).chain(finding_keys) {
            assert!(doc.contains(&format!("`{key}`")), "docs/manifest.md does not document `{key}`");
        }
    }
    assert_eq!(records, manifest.records.len());
    for key in site_value.as_object().unwrap().keys().chain(runs[0].as_object().unwrap().keys()) {
        assert!(doc.contains(&format!("`{key}`")), "docs/manifest.md does not document `{key}` of records.json");
    }
}

#[test]
fn the_manifest_holds_every_finding_with_where_it_is_written() {
    let built = bundled();
    let manifest = Manifest::read(&built.out().join("records.json")).unwrap();
    assert_eq!(manifest.findings_schema.as_deref(), Some("casebook.findings/1"));
    let find = |subject: &str, dimension: &str| {
        manifest
            .findings
            .iter()
            .filter(|f| f.subject == subject && f.dimension == dimension && f.run == "aas-2026-08-20-fractal-01")
            .collect::<Vec<_>>()
    };
    // A row of §2.3 without an ID: a finding about what its first cell names.
    let consolidation = find("Consolidation", "");
    assert_eq!(consolidation.len(), 1);
    let c = consolidation[0];
    assert_eq!((c.status.as_str(), c.record.as_deref(), c.form.as_str()), ("absent", None, "status-column"));
    assert!(c.statement.starts_with("absent for OBJ-03."), "{}", c.statement);
    assert_eq!((c.at.file.as_str(), c.at.line, c.at.anchor.as_str()), (FRACTAL_REPORT, 68, "consolidation"));
    assert!(c.url.ends_with("/fractal/aas-2026-08-20-fractal-01/memory/#consolidation"), "{}", c.url);
    // A cell of §4 whose column names a dimension, in OBJ-02's row.
    let activation = find("OBJ-02", "(c) Activation");
    assert_eq!(activation.len(), 1);
    assert_eq!((activation[0].status.as_str(), activation[0].record.as_deref()), ("uninspected", Some("OBJ-02")));
    assert_eq!(activation[0].form, "dimension-column");
    // A compound value is two findings on one dimension.
    let index: Vec<(&str, Option<&str>)> =
        find("Index maintenance", "").iter().map(|f| (f.status.as_str(), f.qualifier.as_deref())).collect();
    assert_eq!(index, [("implemented", Some("listing")), ("absent", Some("content index"))]);
    // A status sentence names its own subject.
    let compression = find("\"compression\" as a semantic operation", "");
    assert_eq!((compression.len(), compression[0].form.as_str()), (1, "status-key"));
    // The record's statuses are its findings.
    let obj02 = manifest.records.iter().find(|r| r.id == "OBJ-02" && r.run == "aas-2026-08-20-fractal-01").unwrap();
    let statuses: Vec<(&str, &str)> = obj02.statuses.iter().map(|s| (s.dimension.as_str(), s.value.as_str())).collect();
    assert_eq!(
        statuses,
        [
            ("", "implemented"),
            ("(a) Context presence", "implemented"),
            ("(b) Deployed wiring", "implemented"),
            ("(c) Activation", "uninspected"),
            ("(d) Causal effect", "uninspected")
        ]
    );
}

#[test]
fn diff_reports_exactly_a_status_change_and_a_removed_record() {
    let edited = edited_copy();
    let output = casebook(&repo(), &["diff", "--format", "json", ".", edited.path().to_str().unwrap()]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let diff: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(diff["schema"], "casebook.diff/1");
    assert_eq!(diff["added"].as_array().unwrap().len(), 0);
    let removed: Vec<&str> = diff["removed"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(removed, ["NEW-3"]);
    let transitions = diff["status_transitions"].as_array().unwrap();
    assert_eq!(transitions.len(), 1);
    assert_eq!(transitions[0]["id"], "OBJ-12");
    assert_eq!(transitions[0]["from"], serde_json::json!(["implemented"]));
    assert_eq!(transitions[0]["to"], serde_json::json!(["absent"]));
    let changed: Vec<&str> = diff["changed"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(changed, ["OBJ-12"], "only the record whose status changed");
    assert_eq!(diff["newly_dangling"].as_array().unwrap().len(), 0);
    let findings = diff["finding_changes"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!((findings[0]["subject"].as_str(), findings[0]["dimension"].as_str()), (Some("Consolidation"), Some("")));
    assert_eq!(findings[0]["from"], serde_json::json!(["absent"]));
    assert_eq!(findings[0]["to"], serde_json::json!(["implemented"]));

    // The Markdown form, for a pull request comment.
    let output = casebook(&repo(), &["diff", ".", edited.path().to_str().unwrap()]);
    let md = text(&output.stdout);
    assert!(md.contains("| 0 | 1 | 1 | 1 | 0 | 1 |"), "{md}");
    assert!(md.contains("| [Consolidation](/fractal/aas-2026-08-20-fractal-01/memory/#consolidation) |"), "{md}");
    assert!(md.contains("`implemented` | `absent`"), "{md}");
    assert!(md.contains("[`NEW-3`](/fractal/aas-2026-08-20-fractal-01/records/NEW-3.html)"), "{md}");
}

/// `diff --message-format`: each change at the line it is declared at, as JSON lines
/// (then a summary) or as GitHub workflow commands; the report then goes only to
/// `--output`.
#[test]
fn diff_messages_place_each_change_at_its_declaration() {
    let edited = edited_copy();
    // A new reference to a record the run refers to but does not publish: it dangles.
    let path = edited.path().join(FRACTAL_REPORT);
    let source = std::fs::read_to_string(&path).unwrap();
    let new2 = source.lines().position(|l| l.starts_with("| NEW-2 |")).unwrap() + 1;
    let source: Vec<String> = source
        .lines()
        .map(|l| {
            if l.starts_with("| NEW-2 |") {
                l.replacen("Hot sandbox residual state.", "Hot sandbox residual state (see CLM-03).", 1)
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(&path, source.join("\n") + "\n").unwrap();
    let report = edited.path().join("report.md");
    let output = casebook(
        &repo(),
        &[
            "diff",
            ".",
            edited.path().to_str().unwrap(),
            "--message-format",
            "json",
            "--output",
            report.to_str().unwrap(),
        ],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let lines: Vec<serde_json::Value> =
        text(&output.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let (summary, changes) = lines.split_last().unwrap();
    assert_eq!((summary["schema"].as_str(), summary["command"].as_str()), (Some("casebook.summary/1"), Some("diff")));
    // Each change as `human` would render it, its place, and its severity.
    let at = |rendered: &str| -> (String, u64, String) {
        let d = changes
            .iter()
            .find(|d| d["rendered"].as_str().unwrap().contains(rendered))
            .unwrap_or_else(|| panic!("nothing renders {rendered:?} in {changes:#?}"));
        assert_eq!(d["schema"], "casebook.diagnostic/1");
        (
            d["file"].as_str().unwrap().to_string(),
            d["line"].as_u64().unwrap(),
            d["severity"].as_str().unwrap().to_string(),
        )
    };
    let line_of = |text: &str| {
        let original = std::fs::read_to_string(repo().join(FRACTAL_REPORT)).unwrap();
        original.lines().position(|l| l.starts_with(text)).unwrap() as u64 + 1
    };
    let report_at = |line: u64, severity: &str| (FRACTAL_REPORT.to_string(), line, severity.to_string());
    assert_eq!(at("warning[record-removed]: record NEW-3 is no longer"), report_at(line_of("| NEW-3 |"), "warning"));
    assert_eq!(
        at("note[status-changed]: OBJ-12: status implemented → absent"),
        report_at(line_of("| OBJ-12 "), "note")
    );
    assert_eq!(
        at("note[record-changed]: record OBJ-12 (shipped skill texts) changed: field:Status, statuses").2,
        "note"
    );
    assert_eq!(
        at("note[finding-changed]: finding on Consolidation: status absent → implemented"),
        report_at(68, "note")
    );
    assert_eq!(at("warning[newly-dangling]: NEW-2 refers to CLM-03"), report_at(new2 as u64, "warning"));
    assert_eq!(summary["warnings"].as_u64(), Some(2));
    assert!(std::fs::read_to_string(&report).unwrap().starts_with("## What changed in the analysis"));

    // The other way round, the record is added; as workflow commands.
    let output = casebook(&repo(), &["diff", edited.path().to_str().unwrap(), ".", "--message-format", "github"]);
    let commands = text(&output.stdout);
    let json = casebook(&repo(), &["diff", edited.path().to_str().unwrap(), ".", "--message-format", "json"]);
    assert!(text(&json.stdout).contains("note[record-added]: record NEW-3 added in fractal/aas-2026-08-20-fractal-01"));
    let added = format!(
        "::notice file={FRACTAL_REPORT},line={},col=1,endColumn=2,title=casebook record-added::record NEW-3",
        line_of("| NEW-3 |")
    );
    assert!(commands.lines().any(|l| l.starts_with(&added)), "{commands}");
    assert!(commands.lines().all(|l| l.starts_with("::")), "only workflow commands on stdout: {commands}");
}

#[test]
fn diff_of_a_site_with_itself_is_empty_and_reads_built_sites_too() {
    let built = bundled();
    let output = casebook(&repo(), &["diff", built.out().to_str().unwrap(), "."]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("No record or finding was added, removed or changed."));
}

#[test]
fn a_vanished_record_fails_the_build_until_a_redirect_says_where_it_went() {
    let previous = bundled().out().join("records.json");
    let edited = edited_copy();
    let previous_arg = previous.to_str().unwrap();
    let output = casebook(edited.path(), &["build", "--root", ".", "--previous-manifest", previous_arg]);
    assert_eq!(output.status.code(), Some(1));
    let err = text(&output.stderr);
    assert!(
        err.contains("error[vanished-record]: published record NEW-3 (fractal / aas-2026-08-20-fractal-01) is gone"),
        "{err}"
    );
    let original = std::fs::read_to_string(repo().join(FRACTAL_REPORT)).unwrap();
    let line = original.lines().position(|l| l.starts_with("| NEW-3 |")).unwrap() + 1;
    assert!(err.contains(&format!("{FRACTAL_REPORT}:{line}:")), "names where it was declared:\n{err}");
    assert!(!edited.path().join("public").exists());

    std::fs::write(
        edited.path().join("content/redirects.yaml"),
        "- from: /fractal/aas-2026-08-20-fractal-01/records/NEW-3.html\n  to: /fractal/aas-2026-08-20-fractal-01/records/NEW-2.html\n",
    )
    .unwrap();
    let output = casebook(
        edited.path(),
        &["build", "--root", ".", "-q", "--previous-manifest", previous_arg, "--base-url", "/pr-7/"],
    );
    assert!(output.status.success(), "{}", text(&output.stderr));
    let redirects = std::fs::read_to_string(edited.path().join("public/_redirects")).unwrap();
    assert!(redirects.contains("/pr-7/fractal/aas-2026-08-20-fractal-01/records/NEW-3.html /pr-7/fractal/aas-2026-08-20-fractal-01/records/NEW-2.html 301"), "{redirects}");
}

#[test]
fn a_redirect_to_a_missing_page_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("content"), &dir.path().join("content"));
    std::fs::write(dir.path().join("content/redirects.yaml"), "- from: /old/\n  to: /no/such/page/\n").unwrap();
    let output = casebook(dir.path(), &["check", "--root", "."]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr)
            .contains("content/redirects.yaml:2:7: error[bad-redirect]: redirect target /no/such/page/ is not a page of this site"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn sitemap_robots_feeds_and_404_follow_an_absolute_base_url() {
    let built = common::build_site(&repo(), |o| o.base_url = Some("https://example.org/preview/pr-12/".into()));
    let out = built.out();
    let sitemap = std::fs::read_to_string(out.join("sitemap.xml")).unwrap();
    assert!(sitemap.contains("<loc>https://example.org/preview/pr-12/exia-seed/c7497ac/records/MEM-OBJ-raw.html</loc>"));
    assert!(!sitemap.contains("404"));
    let pages = common::files_below(&out).into_iter().filter(|f| f.extension().is_some_and(|e| e == "html")).count();
    assert_eq!(sitemap.matches("<loc>").count(), pages - 1, "every page but 404.html");
    let robots = std::fs::read_to_string(out.join("robots.txt")).unwrap();
    assert!(robots.contains("Sitemap: https://example.org/preview/pr-12/sitemap.xml"));
    let feed = std::fs::read_to_string(out.join("feed.xml")).unwrap();
    assert!(feed.contains("<updated>2026-08-20T00:00:00+00:00</updated>"), "dates come from content: {feed}");
    assert!(feed.contains("href=\"https://example.org/preview/pr-12/fractal/aas-2026-08-20-fractal-01/memory/\""));
    assert!(out.join("fractal/feed.xml").is_file() && out.join("exia-seed/feed.xml").is_file());
    let not_found = std::fs::read_to_string(out.join("404.html")).unwrap();
    assert!(not_found.contains("href=\"/preview/pr-12/\""), "404 links honour the base path");
    let manifest = Manifest::read(&out.join("records.json")).unwrap();
    assert!(manifest.records.iter().all(|r| r.url.starts_with("https://example.org/preview/pr-12/")));
}

#[test]
fn assets_are_fingerprinted() {
    let home = bundled().page("/");
    let href = home.split("<link rel=\"stylesheet\" href=\"").nth(1).unwrap().split('"').next().unwrap();
    let name =
        href.strip_prefix("/assets/style.").and_then(|s| s.strip_suffix(".css")).unwrap_or_else(|| panic!("{href}"));
    assert!(name.len() == 8 && name.chars().all(|c| c.is_ascii_hexdigit()), "{href}");
    assert!(bundled().exists(href));
}

#[test]
fn init_creates_a_site_that_builds_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("analyses");
    let output = casebook(dir.path(), &["init", "analyses"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("casebook serve --root analyses"), "{}", text(&output.stdout));
    // The theme stays built in, so a newer casebook's theme reaches the site.
    assert!(!site.join("themes").exists());
    let ignored = std::fs::read_to_string(site.join(".gitignore")).unwrap();
    assert!(ignored.lines().any(|l| l == "/public/") && ignored.lines().any(|l| l == "/.casebook-cache/"));
    let output = casebook(&site, &["build"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("records      2 published"), "{}", text(&output.stdout));
    assert!(site.join("public/example/first-run/records/MEM-OBJ-notes.html").is_file());
    // A second init into the same folder refuses.
    let again = casebook(dir.path(), &["init", "analyses"]);
    assert_eq!(again.status.code(), Some(2));
}

#[test]
fn init_into_a_folder_with_files_asks_for_force_and_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".gitignore"), "notes/\n").unwrap();
    let refused = casebook(dir.path(), &["init", "."]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(text(&refused.stderr).contains("is not empty (it holds .gitignore)"), "{}", text(&refused.stderr));
    assert!(!dir.path().join("content").exists(), "nothing written");
    let forced = casebook(dir.path(), &["init", ".", "--force"]);
    assert!(forced.status.success(), "{}", text(&forced.stderr));
    assert!(text(&forced.stdout).contains("kept as they were: .gitignore"), "{}", text(&forced.stdout));
    assert_eq!(std::fs::read_to_string(dir.path().join(".gitignore")).unwrap(), "notes/\n");
    assert!(dir.path().join("content/casebook.yaml").is_file());
}

#[test]
fn theme_eject_copies_the_built_in_theme_which_then_overrides_it() {
    let dir = tempfile::tempdir().unwrap();
    assert!(casebook(dir.path(), &["init", "."]).status.success());
    let ejected = casebook(dir.path(), &["theme", "eject"]);
    assert!(ejected.status.success(), "{}", text(&ejected.stderr));
    let base = dir.path().join("themes/default/templates/base.html");
    let built_in = std::fs::read_to_string(repo().join("themes/default/templates/base.html")).unwrap();
    assert_eq!(std::fs::read_to_string(&base).unwrap(), built_in);
    assert_eq!(casebook(dir.path(), &["theme", "eject"]).status.code(), Some(2), "no overwrite without --force");
    std::fs::write(&base, built_in.replace("</body>", "<p>EJECTED THEME</p></body>")).unwrap();
    assert!(casebook(dir.path(), &["build"]).status.success());
    let home = std::fs::read_to_string(dir.path().join("public/index.html")).unwrap();
    assert!(home.contains("EJECTED THEME"), "the site's copy overrides the built-in theme");
    assert!(casebook(dir.path(), &["theme", "eject", "--force"]).status.success());
    assert_eq!(std::fs::read_to_string(&base).unwrap(), built_in);
}

#[test]
fn pages_satisfy_the_content_security_policy_netlify_sends() {
    let config = std::fs::read_to_string(repo().join("netlify.toml")).unwrap();
    let csp = config
        .lines()
        .find_map(|l| l.trim().strip_prefix("Content-Security-Policy = "))
        .expect("netlify.toml sets a CSP");
    assert!(csp.contains("default-src 'none'") && csp.contains("style-src 'self'") && !csp.contains("unsafe-inline"));
    assert!(config.contains("for = \"/assets/*\"") && config.contains("immutable"));
    let out = bundled().out();
    for file in common::files_below(&out).into_iter().filter(|f| f.extension().is_some_and(|e| e == "html")) {
        let html = std::fs::read_to_string(out.join(&file)).unwrap();
        // Inline styles and scripts, and event handler attributes, are what such a policy blocks.
        assert!(!html.contains(" style=\"") && !html.contains("<style"), "{}: inline style", file.display());
        // Scripts only from the site's own files: no inline script.
        for script in html.split("<script").skip(1) {
            let tag_end = script.find('>').unwrap();
            assert!(script[..tag_end].contains(" src=\"/"), "{}: inline script", file.display());
            assert!(script[tag_end + 1..].starts_with("</script>"), "{}: script with content", file.display());
        }
        let lower = html.to_lowercase();
        for handler in [" onclick=", " onload=", " onerror=", " onmouseover="] {
            assert!(!lower.contains(handler), "{}: {handler}", file.display());
        }
        assert!(!lower.contains("href=\"javascript:"), "{}: javascript: link", file.display());
    }
}

/// Status badges take casebook.yaml's colours, else the defaults, else a palette: a
/// site's own statuses are told apart, each readable, in a stylesheet every page links.
#[test]
fn each_status_has_a_readable_colour_of_its_own_in_a_linked_stylesheet() {
    use casebook::model::color::{Rgb, MIN_CONTRAST};
    let dir = tempfile::tempdir().unwrap();
    let content = dir.path().join("content");
    std::fs::create_dir_all(content.join("s/r")).unwrap();
    std::fs::write(
        content.join("casebook.yaml"),
        "statuses:\n  - name: verified\n    meaning: Checked.\n    color: \"#000080\"\n  - name: refuted\n    meaning: Shown false.\n  - name: open\n    meaning: Not settled.\n  - name: absent\n    meaning: Not found.\n",
    )
    .unwrap();
    std::fs::write(content.join("s/system.yaml"), "name: S\n").unwrap();
    std::fs::write(content.join("s/r/run.yaml"), "revision: abc1234\n").unwrap();
    std::fs::write(
        content.join("s/r/report.md"),
        "# Report\n\n## OBJ-01 thing\n\nStatus: refuted\n\n## OBJ-02 other\n\nStatus: open\n",
    )
    .unwrap();
    let built = common::build_site(dir.path(), |_| {});
    let sheet = std::fs::read_dir(built.out().join("assets"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("statuses."))
        .expect("a statuses stylesheet");
    let css = std::fs::read_to_string(&sheet).unwrap();
    let rule =
        regex::Regex::new(r"\.status-([a-z-]+) \{ background: (#[0-9a-f]{6}); color: (#[0-9a-f]{6}); \}").unwrap();
    let colours: std::collections::BTreeMap<String, (Rgb, Rgb)> = rule
        .captures_iter(&css)
        .map(|c| (c[1].to_string(), (Rgb::parse(&c[2]).unwrap(), Rgb::parse(&c[3]).unwrap())))
        .collect();
    assert_eq!(colours.keys().collect::<Vec<_>>(), ["absent", "open", "refuted", "verified"]);
    assert_eq!(colours["verified"].0, Rgb(0, 0, 0x80), "the configured colour");
    assert_eq!(colours["absent"].0, Rgb::parse("#b42318").unwrap(), "a default status keeps its colour");
    assert_ne!(colours["refuted"].0, colours["open"].0, "a site's own statuses are told apart");
    for (name, (background, text)) in &colours {
        assert!(background.contrast(*text) >= MIN_CONTRAST, "{name}");
    }
    // Every page links it, after the theme's stylesheet; the record shows its badge.
    let name = sheet.file_name().unwrap().to_str().unwrap();
    let page = built.page("/s/r/records/OBJ-01.html");
    let (style, statuses) = (page.find("/assets/style.").unwrap(), page.find(&format!("/assets/{name}")).unwrap());
    assert!(style < statuses, "{page}");
    assert!(page.contains("status-refuted"), "{page}");
}

/// A system analysed twice gets a page of what changed from the first run to the second:
/// records in both, new and gone, status changes linked to both runs' pages, and findings
/// without a record; the system page links it.
#[test]
fn consecutive_runs_of_a_system_get_a_page_of_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let content = dir.path().join("content");
    let run = |name: &str, date: &str, report: &str| {
        let folder = content.join("lab").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("run.yaml"), format!("revision: abc1234\ndate: {date}\nlens: memory\n")).unwrap();
        std::fs::write(folder.join("report.md"), report).unwrap();
    };
    std::fs::write(content.join("casebook.yaml"), "title: T\n").ok();
    std::fs::create_dir_all(content.join("lab")).unwrap();
    std::fs::write(content.join("lab/system.yaml"), "name: Lab\n").unwrap();
    // Folder names sort the other way round: the dates give the order.
    run(
        "b-first",
        "2026-01-01",
        "# R\n\n| ID | Object | Status |\n|---|---|---|\n| OBJ-01 cache | a cache | implemented |\n| OBJ-02 log | a log | absent |\n\n| Operation | Status |\n|---|---|\n| Compaction | absent |\n",
    );
    run(
        "a-second",
        "2026-02-01",
        "# R\n\n| ID | Object | Status |\n|---|---|---|\n| OBJ-01 cache | a cache | wired |\n| OBJ-03 index | an index | claimed |\n\n| Operation | Status |\n|---|---|\n| Compaction | implemented |\n",
    );
    let built = common::build_site(dir.path(), |_| {});
    let page = built.page("/lab/changes/b-first/a-second/");
    assert!(!built.exists("/lab/changes/a-second/b-first/"), "consecutive in date order only");
    let text = page.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(text.contains("1 record in both runs (0 unchanged), 1 new, 1 gone; 1 status change"), "{text}");
    let transitions = &page[page.find("<h2 id=\"transitions\"").unwrap()..page.find("<h2 id=\"findings\"").unwrap()];
    assert!(transitions.contains("href=\"/lab/b-first/records/OBJ-01.html\">in b-first</a>"), "{transitions}");
    assert!(transitions.contains("href=\"/lab/a-second/records/OBJ-01.html\">in a-second</a>"), "{transitions}");
    let (before, after) = (transitions.find("status-implemented").unwrap(), transitions.find("status-wired").unwrap());
    assert!(before < after, "implemented before, wired after");
    let added = &page[page.find("<h2 id=\"added\"").unwrap()..page.find("<h2 id=\"removed\"").unwrap()];
    assert!(added.contains("OBJ-03") && !added.contains("OBJ-02"), "{added}");
    let removed = &page[page.find("<h2 id=\"removed\"").unwrap()..page.find("<h2 id=\"changed\"").unwrap()];
    assert!(
        removed.contains("href=\"/lab/b-first/records/OBJ-02.html\""),
        "a gone record links to where it was: {removed}"
    );
    let findings = &page[page.find("<h2 id=\"findings\"").unwrap()..page.find("<h2 id=\"added\"").unwrap()];
    assert!(
        findings.contains("Compaction")
            && findings.contains("status-absent")
            && findings.contains("status-implemented")
    );
    assert!(!page.contains("different lenses"), "the same lens");
    let system = built.page("/lab/");
    assert!(system.contains("href=\"/lab/changes/b-first/a-second/\">b-first → a-second</a>"), "{system}");
}

/// With `source_url`, each record page links the line of the report that declares it,
/// each citing sentence its line, and each report page its file; without it, none.
#[test]
fn source_url_links_pages_to_the_lines_they_were_made_from() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&repo().join("content"), &dir.path().join("content"));
    let config = dir.path().join("content/casebook.yaml");
    let yaml = std::fs::read_to_string(&config).unwrap()
        + "source_url: \"https://github.com/o/analyses/blob/main/{path}#L{line}\"\n";
    std::fs::write(&config, yaml).unwrap();
    let built = common::build_site(dir.path(), |_| {});
    assert!(built.outcome.written, "{:?}", built.outcome.diagnostics);
    let record = built.page("/fractal/aas-2026-08-20-fractal-01/records/OBJ-04.html");
    let report = std::fs::read_to_string(dir.path().join(FRACTAL_REPORT)).unwrap();
    let line = report.lines().position(|l| l.starts_with("| OBJ-04 ")).unwrap() + 1;
    let file = "content/fractal/aas-2026-08-20-fractal-01/memory.md";
    // External links are marked so (`casebook::markup::external_attributes`).
    let declared = format!("<a href=\"https://github.com/o/analyses/blob/main/{file}#L{line}\" class=\"external\" rel=\"noopener noreferrer\">{file}:{line}</a>");
    assert!(record.contains(&declared), "{declared} in {record}");
    assert!(record.matches("https://github.com/o/analyses/blob/main/").count() > 1, "the citing sentences link too");
    let report_page = built.page("/fractal/aas-2026-08-20-fractal-01/memory/");
    assert!(report_page.contains(&format!("href=\"https://github.com/o/analyses/blob/main/{file}#L1\"")));
    assert!(!common::bundled()
        .page("/fractal/aas-2026-08-20-fractal-01/records/OBJ-04.html")
        .contains("github.com/o/analyses"));
}

/// What each page's links and headings look like, read back with lol_html: every link
/// off the site (`http://`, `https://`) is marked `external` with
/// `rel="noopener noreferrer"`, no other link is, and every heading with an anchor ends
/// with its self-link. casebook writes these while rendering (a page is not parsed again
/// at the root), so a link or heading written anywhere without them fails here.
fn links_and_headings_are_marked(out: &Path, base: &str) -> usize {
    use lol_html::{element, HtmlRewriter, Settings};
    use std::cell::RefCell;
    use std::rc::Rc;
    let mut external = 0;
    for file in common::files_below(out).into_iter().filter(|f| f.extension().is_some_and(|e| e == "html")) {
        let html = std::fs::read(out.join(&file)).unwrap();
        let problems = Rc::new(RefCell::new(Vec::new()));
        let links = RefCell::new(0);
        let headings: Rc<RefCell<Vec<String>>> = Rc::default();
        let mut rewriter = HtmlRewriter::new(
            Settings {
                element_content_handlers: vec![
                    element!("a[href]", |el| {
                        let href = el.get_attribute("href").unwrap();
                        let class = el.get_attribute("class").unwrap_or_default();
                        let marked = class.split(' ').any(|c| c == "external");
                        let rel = el.get_attribute("rel");
                        if href.starts_with("http://") || href.starts_with("https://") {
                            *links.borrow_mut() += 1;
                            if !marked || rel.as_deref() != Some("noopener noreferrer") {
                                problems.borrow_mut().push(format!("unmarked external link {href}"));
                            }
                        } else if marked || rel.as_deref().is_some_and(|r| r.contains("noopener")) {
                            problems.borrow_mut().push(format!("link within the site marked external: {href}"));
                        }
                        if href.starts_with('/') && !href.starts_with("//") && !href.starts_with(base) {
                            problems.borrow_mut().push(format!("root-relative link without the base path: {href}"));
                        }
                        if class == "anchor" {
                            let id = headings.borrow_mut().pop();
                            if id.as_deref().map(|id| format!("#{id}")).as_deref() != Some(href.as_str()) {
                                problems.borrow_mut().push(format!("self-link {href} not in its heading {id:?}"));
                            }
                        }
                        Ok(())
                    }),
                    element!("h1[id], h2[id], h3[id], h4[id], h5[id], h6[id]", |el| {
                        headings.borrow_mut().push(el.get_attribute("id").unwrap());
                        let open = headings.borrow().len();
                        let problems = Rc::clone(&problems);
                        let headings = Rc::clone(&headings);
                        if let Some(handlers) = el.end_tag_handlers() {
                            let handler: lol_html::EndTagHandler<'static> = Box::new(move |_| {
                                // The self-link took this heading's id off the stack.
                                if headings.borrow().len() >= open {
                                    let id = headings.borrow_mut().pop();
                                    problems.borrow_mut().push(format!("heading {id:?} without its self-link"));
                                }
                                Ok(())
                            });
                            handlers.push(handler);
                        }
                        Ok(())
                    }),
                ],
                ..Settings::new()
            },
            |_: &[u8]| {},
        );
        rewriter.write(&html).unwrap();
        rewriter.end().unwrap();
        let problems = problems.take();
        assert!(problems.is_empty(), "{}:\n{}", file.display(), problems.join("\n"));
        external += links.into_inner();
    }
    external
}

#[test]
fn external_links_and_heading_anchors_are_written_on_every_page_at_the_root_and_below_it() {
    let root = links_and_headings_are_marked(&bundled().out(), "/");
    assert!(root > 100, "the bundled site links its sources: {root} external links");
    for site in ["tests/sites/hostile", "tests/sites/unseen"] {
        let built = common::build_site(&repo().join(site), |_| {});
        assert!(links_and_headings_are_marked(&built.out(), "/") > 0, "{site}");
    }
    // Below the root, only the base path is added.
    let below = common::build_site(&repo(), |o| o.base_url = Some("/pr-12/".into()));
    assert_eq!(links_and_headings_are_marked(&below.out(), "/pr-12/"), root);
}

/// A site of `systems` systems, each with `runs` runs of a report of one record and a
/// finding without a record (Compaction, absent).
fn site_of_systems(systems: usize, runs: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let content = dir.path().join("content");
    std::fs::create_dir_all(&content).unwrap();
    std::fs::write(content.join("casebook.yaml"), "title: Many\nids:\n  kinds:\n    OBJ: object\n    RTE: route\n")
        .unwrap();
    for s in 0..systems {
        let system = content.join(format!("sys-{s:02}"));
        for r in 0..runs {
            let run = system.join(format!("run-{r}"));
            std::fs::create_dir_all(&run).unwrap();
            std::fs::write(run.join("run.yaml"), format!("revision: abc1234\ndate: 2026-0{}-01\n", r + 1)).unwrap();
            let kind = if s % 2 == 0 { "OBJ" } else { "RTE" };
            std::fs::write(
                run.join("report.md"),
                format!(
                    "# R\n\n| ID | Label | Status |\n|---|---|---|\n| {kind}-{s}{r} | a thing | absent |\n\n\
                     | Operation | Status |\n|---|---|\n| Compaction | absent |\n"
                ),
            )
            .unwrap();
        }
        std::fs::write(system.join("system.yaml"), format!("name: System {s:02}\n")).unwrap();
    }
    dir
}

/// Past a dozen systems, the home page has a row per system (its last runs, its counts of
/// records, findings and kinds), not a section and a column each, and a status's page
/// leaves the subjects of findings without a record to each system's page of it; a dozen
/// keep theirs.
#[test]
fn a_home_page_of_many_systems_has_a_row_per_system() {
    let many = site_of_systems(13, 4);
    let built = common::build_site(many.path(), |_| {});
    let home = built.page("/");
    let table = &home[home.find("<table class=\"systems\">").expect("a table of systems")..];
    let table = &table[..table.find("</table>").unwrap()];
    assert_eq!(table.matches("<tr><th scope=\"row\">").count(), 13, "{table}");
    assert!(!home.contains("<section class=\"system\">") && !home.contains("side-by-side kinds"), "{home}");
    let row = &table[table.find("href=\"/sys-01/\"").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(row.contains("<a href=\"/sys-01/\">1 more</a>"), "the first run is on the system's page: {row}");
    for r in 1..4 {
        assert!(row.contains(&format!("href=\"/sys-01/run-{r}/\"")), "the last three runs: {row}");
    }
    assert!(!row.contains("/sys-01/run-0/"), "{row}");
    let cells: Vec<&str> = row.split("<td class=\"num").skip(1).map(|c| &c[c.find('>').unwrap() + 1..]).collect();
    assert!(cells[0].starts_with("4</td>") && cells[1].starts_with("8</td>"), "4 records, 8 findings: {cells:?}");
    assert!(cells[2].starts_with("0</td>"), "no OBJ: {cells:?}");
    assert!(cells[3].starts_with("<a href=\"/search/?") && cells[3].contains(">4</a>"), "4 RTE: {cells:?}");
    assert!(home.contains("Kinds: OBJ object · RTE route."), "{home}");
    let absent = built.page("/statuses/absent/");
    assert!(absent.contains("<a href=\"/sys-01/statuses/absent/\">System 01</a>") && !absent.contains("Compaction"));
    assert!(built.page("/sys-01/statuses/absent/").contains("Compaction"), "the system's page names it");

    let dozen = site_of_systems(12, 1);
    let built = common::build_site(dozen.path(), |_| {});
    let home = built.page("/");
    assert_eq!(home.matches("<section class=\"system\">").count(), 12);
    assert!(!home.contains("<table class=\"systems\">") && home.contains("side-by-side kinds"));
    assert_eq!(built.page("/statuses/absent/").matches("Compaction</a>").count(), 12, "named for each system");
}

/// The site's feed holds the newest `feed_entries` runs and reports (ties in ID order);
/// each system's feed all of its own.
#[test]
fn the_site_feed_holds_the_newest_entries_each_system_feed_all() {
    let site = site_of_systems(3, 4);
    let config = site.path().join("content/casebook.yaml");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}feed_entries: 5\n")).unwrap();
    let built = common::build_site(site.path(), |_| {});
    let feed = std::fs::read_to_string(built.out().join("feed.xml")).unwrap();
    let ids: Vec<&str> =
        feed.split("<entry>").skip(1).map(|e| &e[e.find("<id>").unwrap() + 4..e.find("</id>").unwrap()]).collect();
    assert_eq!(
        ids,
        [
            "urn:casebook:sys-00:run-3",
            "urn:casebook:sys-00:run-3:report",
            "urn:casebook:sys-01:run-3",
            "urn:casebook:sys-01:run-3:report",
            "urn:casebook:sys-02:run-3",
        ],
        "the newest, dated 2026-04-01: {feed}"
    );
    let system = std::fs::read_to_string(built.out().join("sys-01/feed.xml")).unwrap();
    assert_eq!(system.matches("<entry>").count(), 8, "4 runs and their reports: {system}");
}

/// A report's Markdown links to other reports and their headings lead to those pages (a
/// forge's anchor, `#21-write-agency`, to the one casebook gave the heading); a link that
/// leads nowhere is shown as written, and warned of at its place.
#[test]
fn links_between_reports_lead_to_their_pages() {
    let built = common::build_site(&repo().join("tests/diagnostics/broken-link"), |_| {});
    let memory = built.page("/lab/r1/memory/");
    assert!(memory.contains("href=\"/lab/r1/synthesis/#open-questions\""), "{memory}");
    assert!(memory.contains("href=\"/lab/r1/memory/#2-1-write-agency\">the writes above"), "{memory}");
    assert!(built.page("/lab/r1/synthesis/").contains("href=\"/lab/r1/memory/\">memory"));
    let as_written = built.page_as_written("/lab/r1/memory/");
    assert!(as_written.contains("href=\"synthesys.md\""), "a broken link is left as written");
    let broken: Vec<u32> = built
        .outcome
        .diagnostics
        .iter()
        .filter(|d| d.code == casebook::model::Code::BrokenLink)
        .map(|d| d.location.line)
        .collect();
    assert_eq!(broken, [8, 8, 9]);
}
