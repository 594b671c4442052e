//! Search over the bundled analyses: relevance (each query, from reading the seeds, must
//! find its record in the top 3), exact IDs first, filters, counts equal to the model's,
//! the JSON schema, and clear errors.

mod common;

use std::process::Command;

use casebook::manifest::Manifest;
use casebook::search::{Request, Searcher};
use common::bundled;

fn searcher() -> Searcher {
    Searcher::open(&bundled().out()).expect("the build wrote an index")
}

fn top(query: &str, n: usize) -> Vec<String> {
    let request = Request { query: query.into(), limit: n, ..Request::default() };
    let results = searcher().search(&request).unwrap_or_else(|e| panic!("{query}: {e}"));
    results
        .results
        .iter()
        .map(|h| h.id.clone().or_else(|| h.section.clone()).unwrap_or_else(|| h.title.clone()))
        .collect()
}

/// Queries a reader of the seeds would type, and the record (or section) that must be
/// among the first three results; the browser test reads the same file.
fn relevance() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(common::repo().join("tests/relevance.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let queries = json["queries"].as_array().unwrap();
    assert!(queries.len() >= 15, "at least 15 relevance queries");
    queries
        .iter()
        .map(|q| (q["query"].as_str().unwrap().to_string(), q["expected"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn each_query_finds_its_record_in_the_top_three() {
    let mut misses = Vec::new();
    for (query, expected) in relevance() {
        let found = top(&query, 3);
        if !found.contains(&expected) {
            misses.push(format!("`{query}` → {found:?}, expected {expected}"));
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

#[test]
fn an_exact_id_ranks_that_record_first() {
    for id in ["MEM-OBJ-raw", "OBJ-03", "MEM-CMP-memoire", "NEW-3", "RTE-19", "mem-obj-graphe"] {
        let first = top(id, 1);
        assert_eq!(first[0].to_lowercase(), id.to_lowercase(), "{id}");
    }
    // By its parts too.
    assert!(top("raw", 3).iter().any(|r| r == "MEM-OBJ-raw"));
}

#[test]
fn filters_keep_only_matching_records() {
    let request = Request {
        query: "session".into(),
        kind: Some("OBJ".into()),
        status: Some("implemented".into()),
        limit: 50,
        ..Request::default()
    };
    let results = searcher().search(&request).unwrap();
    assert!(!results.results.is_empty());
    for hit in &results.results {
        assert_eq!((hit.doc_type.as_str(), hit.kind.as_deref()), ("record", Some("OBJ")), "{hit:?}");
        assert!(hit.statuses.iter().any(|s| s == "implemented"), "{hit:?}");
    }
    let exia =
        Request { query: "consolidation".into(), system: Some("exia-seed".into()), limit: 50, ..Request::default() };
    assert!(searcher().search(&exia).unwrap().results.iter().all(|h| h.system == "exia-seed"));
}

#[test]
fn counts_equal_the_model() {
    let manifest = Manifest::read(&bundled().out().join("records.json")).unwrap();
    let published: Vec<_> = manifest.records.iter().filter(|r| r.published).collect();
    let count = |request: Request| searcher().search(&Request { limit: 1, ..request }).unwrap().total;
    let records = || Request { doc_type: Some("record".into()), ..Request::default() };
    assert_eq!(count(records()), published.len());
    for kind in ["OBJ", "RTE", "BAP", "NEW", "CMP"] {
        let expected = published.iter().filter(|r| r.kind == kind).count();
        assert_eq!(count(Request { kind: Some(kind.into()), ..records() }), expected, "kind {kind}");
    }
    for system in ["fractal", "exia-seed"] {
        let expected = published.iter().filter(|r| r.system == system).count();
        assert_eq!(count(Request { system: Some(system.into()), ..records() }), expected, "system {system}");
    }
    let implemented = published.iter().filter(|r| r.statuses.iter().any(|s| s.value == "implemented")).count();
    assert_eq!(count(Request { status: Some("implemented".into()), ..records() }), implemented);
}

#[test]
fn status_pages_and_search_count_the_same_records_and_subjects() {
    let count = |status: &str, doc_type: &str| {
        let request =
            Request { status: Some(status.into()), doc_type: Some(doc_type.into()), limit: 1, ..Request::default() };
        searcher().search(&request).unwrap().total
    };
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let mut subjects = 0;
    for status in ["absent", "inapplicable", "uninspected", "claimed", "implemented", "wired"] {
        let page = bundled().page(&format!("/statuses/{status}/"));
        let (records, named) = (count(status, "record"), count(status, "finding"));
        let said = format!(
            "Across all systems: {} and {} without a record.",
            plural(records, "record"),
            plural(named, "subject")
        );
        assert!(page.contains(&said), "/statuses/{status}/ says “{said}”");
        subjects += named;
    }
    assert!(subjects >= 20, "the bundled Fractal run has findings without a record: {subjects}");
}

fn casebook(args: &[&str]) -> std::process::Output {
    let site = bundled().out();
    let mut command = Command::new(env!("CARGO_BIN_EXE_casebook"));
    command.arg("search").args(args).arg("--index").arg(&site);
    command.output().unwrap()
}

#[test]
fn json_output_follows_the_documented_schema() {
    let output = casebook(&["--json", "20 turns"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["schema"], "casebook.search/1");
    assert_eq!(json["query"], "20 turns");
    assert!(json["total"].as_u64().unwrap() >= 3);
    let results = json["results"].as_array().unwrap();
    assert!(results.iter().take(3).any(|r| r["id"] == "OBJ-04"), "OBJ-04 in the top 3");
    let doc = std::fs::read_to_string(common::repo().join("docs/search.md")).unwrap();
    for (i, result) in results.iter().enumerate() {
        assert_eq!(result["rank"], i + 1);
        for key in result.as_object().unwrap().keys() {
            assert!(doc.contains(&format!("`{key}`")), "docs/search.md does not document `{key}`");
        }
        let snippet = result["snippet"].as_str().unwrap();
        for range in result["highlights"].as_array().unwrap() {
            let (start, end) = (range[0].as_u64().unwrap() as usize, range[1].as_u64().unwrap() as usize);
            assert!(start < end && snippet.is_char_boundary(start) && snippet.get(start..end).is_some());
        }
    }
}

#[test]
fn human_output_names_rank_id_label_system_and_url() {
    let output = casebook(&["MEM-OBJ-raw"]);
    let text = String::from_utf8_lossy(&output.stdout);
    let first: Vec<&str> = text.lines().take(3).collect();
    assert_eq!(first[0], " 1. MEM-OBJ-raw  Raw conversation batches", "{text}");
    assert!(first[1].contains("EXIA SEED / c7497ac · record · /exia-seed/c7497ac/records/MEM-OBJ-raw.html"), "{text}");
    assert!(first[2].contains("[Raw]"), "matched words are marked: {text}");
    let filtered = casebook(&["--kind", "OBJ", "--status", "implemented", "session"]);
    assert!(filtered.status.success());
    assert!(String::from_utf8_lossy(&filtered.stdout).contains(" 1. OBJ-"));
}

#[test]
fn searching_writes_nothing_into_the_site() {
    let index = bundled().out().join("search/tantivy");
    let before = common::files_below(&index);
    let output = casebook(&["session"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    searcher().search(&Request { query: "turns".into(), limit: 3, ..Request::default() }).unwrap();
    // tantivy's own directory leaves its lock file, `.tantivy-meta.lock`, behind.
    assert_eq!(common::files_below(&index), before);
    assert!(before.iter().all(|f| !f.to_string_lossy().starts_with(".tantivy")), "{before:?}");
}

#[test]
fn a_malformed_query_is_a_clear_error() {
    // `Y:*` and `title:*` (does the field exist?) fail only as tantivy runs them (a
    // fuzzer's find): they are the query's fault, not a broken index.
    for query in ["nosuchfield:x", "label:(unclosed", "Y:*", "title:*"] {
        let output = casebook(&[query]);
        assert_eq!(output.status.code(), Some(2), "{query}");
        let err = String::from_utf8_lossy(&output.stderr);
        assert!(err.contains("cannot understand the query") && !err.contains("panicked"), "{query}: {err}");
    }
    let missing =
        Command::new(env!("CARGO_BIN_EXE_casebook")).args(["search", "x", "--index", "/nonexistent"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no search index in /nonexistent"));
}

#[test]
fn field_queries_and_phrases_work() {
    assert_eq!(top("id:OBJ-06", 5)[0], "OBJ-06");
    assert!(top("kind:OBJ AND status:implemented AND trace", 5).iter().all(|r| r.starts_with("OBJ-")));
    assert!(top("\"evicted with its history turn\"", 3).iter().any(|r| r == "OBJ-05"));
    // Each document keeps its report's type (front matter `type:`): in the bundled
    // analyses, the memory reports and the synthesis are the reports of those names.
    for report_type in ["memory", "synthesis"] {
        let request = Request { query: format!("report_type:{report_type}"), limit: 1000, ..Request::default() };
        let found = searcher().search(&request).unwrap();
        assert!(found.total > 0 && found.total == found.results.len(), "{report_type}: {}", found.total);
        assert!(found.results.iter().all(|h| h.report.as_deref() == Some(report_type)), "{report_type}");
    }
    assert!(top("path:plugin/exia_seed/graphe.py", 5).iter().any(|r| r == "MEM-OBJ-graphe"));
    // `exact` and `ident` keep no positions: phrases of several of their tokens (a quoted
    // phrase, a compound the default tokenizer splits, two compounds) go to the other fields.
    top("\"plugin/exia_seed/graphe.py aretes.json\"", 5); // `top` panics if the query is refused
    assert!(!top("graphe.py", 5).is_empty());
    assert!(top("files_modified persisted", 5).iter().any(|r| r.starts_with("OBJ-") || r.starts_with("MEM-")));
}

#[test]
fn a_phrase_asked_of_a_field_without_positions_is_a_clear_error() {
    let output = casebook(&["exact:\"evicted history\""]);
    assert_eq!(output.status.code(), Some(2));
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("cannot understand the query") && err.contains("positions"), "{err}");
}

/// An annotation of a published record is on the record's page, and found there; one of
/// a record no report declares has only its section, and is found as the section.
#[test]
fn an_annotation_is_found_once_on_its_record_or_else_as_its_section() {
    let dir = tempfile::tempdir().unwrap();
    common::copy_tree(&common::repo().join("tests/sites/readme"), dir.path());
    let report = dir.path().join("content/fractal/aas-2026-08-20-fractal-01/memory.md");
    let mut text = std::fs::read_to_string(&report).unwrap();
    text.push_str("\n### On OBJ-03\n\nThe summary is rebuilt by the quillwort pass.\n\n### On CMP-12\n\nNothing declares the marshmallow store.\n");
    std::fs::write(&report, text).unwrap();
    let built = common::build_site(dir.path(), |_| {});
    assert!(built.outcome.written, "{:?}", built.outcome.diagnostics);
    let searcher = Searcher::open(&built.out()).unwrap();
    let found = |query: &str| -> Vec<(String, Option<String>, Option<String>)> {
        let results = searcher.search(&Request { query: query.into(), limit: 10, ..Request::default() }).unwrap();
        results.results.into_iter().map(|h| (h.doc_type, h.id, h.section)).collect()
    };
    assert_eq!(found("quillwort"), [("record".to_string(), Some("OBJ-03".to_string()), None)]);
    assert_eq!(found("marshmallow"), [("section".to_string(), None, Some("On CMP-12".to_string()))]);
}

/// A limit is found as itself, at its own anchor on its report page, and not again as the
/// section that holds it; every limit of the model is a document.
#[test]
fn a_limit_is_found_at_its_own_anchor_and_not_as_its_section_too() {
    let results = searcher()
        .search(&Request { query: "accumulation substrate".into(), limit: 10, ..Request::default() })
        .unwrap();
    let first = &results.results[0];
    assert_eq!((first.doc_type.as_str(), first.label.as_deref()), ("limit", Some("L8")), "{results:#?}");
    assert_eq!(first.url, "/fractal/aas-2026-08-20-fractal-01/memory/#L8");
    assert!(bundled().page("/fractal/aas-2026-08-20-fractal-01/memory/").contains("id=\"L8\""), "the anchor exists");
    let sections: Vec<&str> =
        results.results.iter().filter(|h| h.doc_type == "section").map(|h| h.snippet.as_str()).collect();
    assert!(
        sections.iter().all(|snippet| !snippet.contains("substrate")),
        "no section repeats the limit's words: {sections:#?}"
    );
    let limits =
        searcher().search(&Request { doc_type: Some("limit".into()), limit: 1, ..Request::default() }).unwrap().total;
    assert_eq!(limits, 27, "every limit the build recognised (its summary says 27)");
}
