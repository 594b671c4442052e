//! The bundled analyses (content/), built through the library: every record the seeds
//! declare has a page, every reference links or is listed as unpublished with its
//! location, every quote is highlighted with its path, and builds are byte-identical.

mod common;

use common::{bundled, files_below};

const FRACTAL_RUN: &str = "/fractal/aas-2026-08-20-fractal-01/";
const EXIA_RUN: &str = "/exia-seed/c7497ac/";
const SYNTHESIS_RUN: &str = "/fractal/6a226e7/";

/// Records declared in ../shared/seeds/000 (Fractal, memory / context, run 1): the §1
/// inventory rows, the §3 route rows, the §5 BAP rows and the §7 requests. Read from the
/// seed, not from casebook's output.
const DECLARED_IN_000: [&str; 28] = [
    "OBJ-02", "OBJ-03", "OBJ-04", "OBJ-05", "OBJ-06", "OBJ-07", "OBJ-08", "OBJ-09", "OBJ-11", "OBJ-12", "OBJ-13",
    "OBJ-17", "RTE-06", "RTE-07", "RTE-08", "RTE-09", "RTE-11", "RTE-19", "BAP-02", "BAP-03", "BAP-04", "BAP-05",
    "BAP-06", "NEW-1", "NEW-2", "NEW-3", "NEW-4", "NEW-5",
];

/// Records declared by headings in ../shared/seeds/001 (EXIA SEED memory report).
const DECLARED_IN_001: [&str; 10] = [
    "MEM-CMP-memoire",
    "MEM-OBJ-raw",
    "MEM-OBJ-registre",
    "MEM-OBJ-page-facts",
    "MEM-OBJ-page-metadata",
    "MEM-OBJ-summary",
    "MEM-OBJ-keywords",
    "MEM-OBJ-thesaurus",
    "MEM-OBJ-graphe",
    "MEM-OBJ-journals",
];

/// Records ../shared/seeds/003 (Fractal synthesis, run 2) refers to; it declares none.
const REFERENCED_IN_003: [&str; 25] = [
    "EPI-CLM-context-rot",
    "EPI-CLM-readable-trace",
    "EPI-RTE-contract-tests",
    "EPI-RTE-event-projection",
    "EPI-RTE-summary-render",
    "MEM-OBJ-session-history",
    "MEM-OBJ-session-summary",
    "MEM-OBJ-turn-usage",
    "MEM-RTE-checkpoint-update",
    "MEM-RTE-session-context",
    "MEM-RTE-session-reload",
    "RT-BAP-workspace-guidance",
    "RT-CLM-hook-accounting",
    "RT-CLM-result-contract",
    "RT-CMP-main-lm",
    "RT-CMP-sub-lm",
    "RT-OBJ-edit-workspace",
    "RT-OBJ-session-state",
    "RT-RTE-budget-exhaustion",
    "RT-RTE-config-change",
    "RT-RTE-direct-agent",
    "RT-RTE-headless-turn",
    "RT-RTE-interactive-interrupt",
    "RT-RTE-package-release",
    "WF-RTE-audit-repair",
];

fn record_url(run: &str, id: &str) -> String {
    format!("{run}records/{id}.html")
}

#[test]
fn every_declared_record_has_a_published_page() {
    let built = bundled();
    for (run, ids) in [(FRACTAL_RUN, &DECLARED_IN_000[..]), (EXIA_RUN, &DECLARED_IN_001[..])] {
        for id in ids {
            let page = built.page(&record_url(run, id));
            assert!(
                page.contains(&format!("<span class=\"rec-id\">{id}</span>")),
                "{id}: page does not name the record"
            );
            assert!(page.contains("Declared in"), "{id}: page does not say where it is declared");
            assert!(!page.contains("Not published in this site"), "{id} is declared but shown as unpublished");
        }
    }
}

#[test]
fn labels_parts_and_statuses_come_from_the_source() {
    let built = bundled();
    let raw = built.page(&record_url(EXIA_RUN, "MEM-OBJ-raw"));
    assert!(raw.contains("<span class=\"label\">Raw conversation batches</span>"));
    let obj06 = built.page(&record_url(FRACTAL_RUN, "OBJ-06"));
    assert!(obj06.contains("TurnUsage"));
    assert!(obj06.contains("part: token/cost/duration/iteration counters") && obj06.contains("part: context_tokens"));
    assert!(obj06.contains("status-implemented"));
    // OBJ-02 is declared in §1 and appears again as a row of §4: one page, two entries.
    let obj02 = built.page(&record_url(FRACTAL_RUN, "OBJ-02"));
    assert!(obj02.contains("Declared in") && obj02.contains("Also in"));
    assert!(obj02.contains("(a) Context presence"));
}

#[test]
fn records_referenced_but_unpublished_have_a_page_and_are_listed_on_their_run() {
    let built = bundled();
    let run_page = built.page(SYNTHESIS_RUN);
    for id in REFERENCED_IN_003 {
        let page = built.page(&record_url(SYNTHESIS_RUN, id));
        assert!(page.contains("Not published in this site"), "{id}: no unpublished notice");
        assert!(page.contains("Referenced by"), "{id}: no backlinks");
        assert!(
            run_page.contains(&format!("href=\"{}\">{id}</a>", record_url(SYNTHESIS_RUN, id))),
            "{id} missing from the run's unresolved references"
        );
    }
    // The location of the first reference is shown with file and line.
    assert!(run_page.contains("content/fractal/6a226e7/synthesis.md:"));
    let summary = built.outcome.summary.as_ref().unwrap();
    assert!(summary.unpublished >= REFERENCED_IN_003.len());
}

/// `html` without the elements named `tag` (and their content).
fn without(html: &str, tag: &str) -> String {
    let (open, close) = (format!("<{tag}"), format!("</{tag}>"));
    let mut out = String::new();
    let mut rest = html;
    while let Some(at) = rest.find(&open) {
        out.push_str(&rest[..at]);
        let end = rest[at..].find(&close).map(|e| at + e + close.len()).unwrap_or(rest.len());
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The text of `html`, tags (and so attributes) removed.
fn strip_tags(html: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

#[test]
fn every_reference_in_every_report_is_a_link() {
    let built = bundled();
    let scheme = casebook::recognise::IdScheme::new(&casebook::config::IdConfig::default()).unwrap();
    for (run, report) in [(FRACTAL_RUN, "memory"), (EXIA_RUN, "memory"), (SYNTHESIS_RUN, "synthesis")] {
        let page = built.page(&format!("{run}{report}/"));
        let prose = &page[page.find("<div class=\"prose\">").unwrap()..];
        assert!(!prose.contains("rec unknown"), "{run}{report}: an ID did not resolve");
        // Take away links and code: no record ID may be left in the text.
        let text = strip_tags(&without(&without(prose, "a"), "pre"));
        let left: Vec<&str> = scheme.find_ids(&text).into_iter().map(|m| &text[m.range]).collect();
        assert!(left.is_empty(), "{run}{report}: IDs not linked: {left:?}");
    }
    // Links point at pages that exist.
    let fractal = built.page(&format!("{FRACTAL_RUN}memory/"));
    let mut internal = 0;
    for href in fractal.split("href=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]) {
        if href.starts_with('/') {
            let path = href.split('#').next().unwrap();
            assert!(built.exists(path), "broken internal link {href}");
            internal += 1;
        }
    }
    assert!(internal > 150, "only {internal} internal links");
}

#[test]
fn backlinks_show_the_citing_sentence() {
    let built = bundled();
    let page = built.page(&record_url(EXIA_RUN, "MEM-OBJ-raw"));
    assert!(
        page.contains("Memory-specific lineage: <mark>MEM-OBJ-raw</mark> is the raw source, not derived knowledge.")
    );
    assert!(page.contains("annotation on RT-RTE-conversation-ingest"));
}

#[test]
fn every_quote_is_highlighted_with_its_path() {
    let built = bundled();
    let html = built.page(&format!("{EXIA_RUN}memory/"));
    let figures: Vec<&str> =
        html.split("<figure class=\"quote\">").skip(1).map(|s| &s[..s.find("</figure>").unwrap()]).collect();
    // ../shared/seeds/001 quotes 17 snippets, each followed by `--- path`.
    assert_eq!(figures.len(), 17);
    for figure in figures {
        assert!(figure.contains("data-lang=\"python\""), "{figure}");
        // Highlighted: keywords (`k`), strings (`s`) or names get a token class each.
        let code = &figure[..figure.find("</code>").unwrap()];
        assert!(code.contains("<span class=\""), "not highlighted: {figure}");
        assert!(figure.contains("<span class=\"quote-path\">plugin/exia_seed/"), "no path: {figure}");
        assert!(figure.contains("@ c7497ac"), "no revision: {figure}");
    }
    // Quotes are also on their record's page.
    let graphe = built.page(&record_url(EXIA_RUN, "MEM-OBJ-graphe"));
    assert!(graphe.contains("PREUVES_LISTEES"));
}

#[test]
fn citations_link_to_the_file_at_the_frozen_revision() {
    let built = bundled();
    let html = built.page(&format!("{FRACTAL_RUN}memory/"));
    assert!(html.contains("href=\"https://github.com/Trampoline-AI/fractal/blob/5954a07d464feeaf6c311a9fa5ca2e54200a6794/src/fractal/session.py#L368-L390\""));
    // A source without a repository is shown, not linked.
    assert!(html.contains("<span class=\"cite\">SRC-3 docs/session-management.md:26-28</span>"));
    // Each range of a multi-range citation is a link of its own.
    let blob =
        "https://github.com/Trampoline-AI/fractal/blob/5954a07d464feeaf6c311a9fa5ca2e54200a6794/src/fractal/session.py";
    let link = |range: &str, text: &str| {
        format!("<a class=\"cite external\" href=\"{blob}#L{range}\" rel=\"noopener noreferrer\">{text}</a>")
    };
    let expected = [
        link("188", "session.py:188"),
        link("200", "200"),
        link("218", "218"),
        link("262", "262"),
        link("278-L279", "278-279"),
    ]
    .join(", ");
    assert!(
        html.contains(&expected),
        "the five ranges of session.py:188, 200, 218, 262, 278-279 are linked one by one"
    );
}

#[test]
fn every_citation_in_a_record_s_text_is_listed_under_its_evidence() {
    let built = bundled();
    // The paths of MEM-OBJ-raw's body: one of them written `\_\_init\_\_.py`.
    let page = built.page("/exia-seed/c7497ac/records/MEM-OBJ-raw.html");
    let evidence = &page[page.find("<section class=\"evidence\">").expect("an evidence section")..];
    let evidence = &evidence[..evidence.find("</section>").unwrap()];
    for path in ["plugin/exia_seed/ingestion.py", "plugin/exia_seed/__init__.py"] {
        assert!(evidence.contains(path), "{path} is under Evidence: {evidence}");
    }
    // NEW-1's row cites three files of SRC-1, each range linked.
    let page = built.page(&format!("{FRACTAL_RUN}records/NEW-1.html"));
    let evidence = &page[page.find("<section class=\"evidence\">").expect("an evidence section")..];
    for range in ["#L89\"", "#L216-L219\"", "#L233-L234\"", "#L317-L318\"", "#L239\"", "#L257\""] {
        assert!(evidence.contains(range), "NEW-1's evidence links {range}");
    }
}

#[test]
fn the_run_page_has_the_register_matrix_and_reports() {
    let built = bundled();
    let page = built.page(FRACTAL_RUN);
    for needle in [
        "id=\"src-1\"",
        "predict-rlm 0.7.0",
        "Records by kind and status",
        "operative object",
        "Memory / context report",
    ] {
        assert!(page.contains(needle), "run page lacks {needle}");
    }
    let home = built.page("/");
    assert!(home.contains("Fractal") && home.contains("EXIA SEED"));
    // A status across the site: a count per system, each leading to that system's list.
    let status = built.page("/statuses/implemented/");
    assert!(
        status.contains(r#"<a href="/fractal/statuses/implemented/">Fractal</a></td><td class="num">12</td>"#),
        "{status}"
    );
    assert!(!status.contains("OBJ-03"), "the site-wide page lists systems, not records");
    let listed = built.page("/fractal/statuses/implemented/");
    assert!(listed.contains("OBJ-03") && !listed.contains("MEM-OBJ-raw"));
    assert!(
        built.page("/fractal/").contains(r#"href="/fractal/statuses/implemented/""#),
        "the system page links its statuses"
    );
    assert!(!built.exists("/exia-seed/statuses/implemented/"), "no page for a status no record of the system carries");
}

#[test]
fn builds_are_byte_identical_whatever_the_thread_count() {
    let first = bundled();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let second = pool.install(|| common::build_site(&common::repo(), |_| {}));
    let (a, b) = (first.out(), second.out());
    assert_eq!(files_below(&a), files_below(&b));
    for file in files_below(&a) {
        assert!(
            std::fs::read(a.join(&file)).unwrap() == std::fs::read(b.join(&file)).unwrap(),
            "{} differs",
            file.display()
        );
    }
}

#[test]
fn a_sub_path_base_url_keeps_every_internal_link_inside_the_site() {
    let built = common::build_site(&common::repo(), |o| o.base_url = Some("https://example.org/preview/pr-12/".into()));
    let out = built.out();
    let mut checked = 0;
    for file in files_below(&out).into_iter().filter(|f| f.extension().is_some_and(|e| e == "html")) {
        let html = std::fs::read_to_string(out.join(&file)).unwrap();
        for attr in ["href=\"", "src=\"", "action=\"", "data-bundle=\""] {
            for value in html.split(attr).skip(1).map(|s| &s[..s.find('"').unwrap()]) {
                if value.starts_with("http") || value.starts_with('#') || value.starts_with("mailto:") {
                    continue;
                }
                let path = value.split(['#', '?']).next().unwrap();
                let target = if path.starts_with('/') {
                    let inside = path
                        .strip_prefix("/preview/pr-12/")
                        .unwrap_or_else(|| panic!("{}: {value} ignores the base path", file.display()));
                    out.join(inside)
                } else {
                    // A relative link resolves from the page's folder, and may not climb
                    // out of the site.
                    let folder = format!("/{}/", file.parent().unwrap().display()).replace("//", "/");
                    let resolved = common::resolve(&folder, path);
                    let climbs = file.parent().unwrap().components().count() < path.matches("../").count();
                    assert!(!climbs, "{}: {value} climbs out of the site", file.display());
                    out.join(resolved.trim_start_matches('/'))
                };
                // A page folder has its index.html; the browser search index folder its meta.json.
                let index = if attr.starts_with("data-bundle") { "meta.json" } else { "index.html" };
                let target = if path.ends_with('/') { target.join(index) } else { target };
                assert!(target.is_file(), "{}: {value} does not resolve", file.display());
                checked += 1;
            }
        }
    }
    assert!(checked > 1000, "only {checked} links checked");
}

#[test]
fn the_absent_operations_of_fractal_are_on_the_status_pages() {
    let built = bundled();
    let absent = built.page("/statuses/absent/");
    let fractal = built.page("/fractal/statuses/absent/");
    // §2.3 of the memory report: a table with a Status column whose rows have no ID.
    for operation in [
        "Consolidation",
        "Deduplication",
        "Evolution / revision of a retained record",
        "Synthesis",
        "Invalidation (semantic)",
        "Decay",
        "Promotion",
    ] {
        assert!(absent.contains(&format!(">{operation}</a>")), "/statuses/absent/ names {operation}");
        assert!(fractal.contains(&format!("<td>{operation}</td>")), "Fractal's absent page lists {operation}");
    }
    assert!(!absent.contains(">Invalidation (structural)</a>"), "Invalidation (structural) is implemented");
    let implemented = built.page("/fractal/statuses/implemented/");
    assert!(implemented.contains("<td>Invalidation (structural)</td>"));
}

#[test]
fn a_record_page_shows_every_dimension_of_its_findings_with_meanings() {
    let page = bundled().page(&format!("{FRACTAL_RUN}records/OBJ-02.html"));
    let findings = &page[page.find("<section class=\"findings\">").expect("a findings section")..];
    let findings = &findings[..findings.find("</section>").unwrap()];
    let rows: Vec<&str> = findings.split("<tr>").skip(2).collect();
    let dimension_status = |row: &str| {
        let dimension = row.split("<td>").nth(1).unwrap().split("</td>").next().unwrap().to_string();
        let status = row.split("class=\"status status-").nth(1).unwrap().split('"').next().unwrap().to_string();
        (dimension, status)
    };
    let shown: Vec<(String, String)> = rows.iter().map(|r| dimension_status(r)).collect();
    let expected = [
        ("—", "implemented"),
        ("(a) Context presence", "implemented"),
        ("(b) Deployed wiring", "implemented"),
        ("(c) Activation", "uninspected"),
        ("(d) Causal effect", "uninspected"),
    ];
    assert_eq!(shown, expected.map(|(d, s)| (d.to_string(), s.to_string())));
    assert!(findings.contains("Not examined in this run; no conclusion either way."), "meanings are in words");
    assert!(
        findings.contains("href=\"/fractal/aas-2026-08-20-fractal-01/memory/#OBJ-02--2\""),
        "each finding links to its place"
    );
}

#[test]
fn every_fractal_record_is_titled_by_more_than_its_id() {
    let built = bundled();
    let manifest = casebook::manifest::Manifest::read(&built.out().join("records.json")).unwrap();
    for r in manifest.records.iter().filter(|r| r.published) {
        assert!(r.label.is_some() || r.derived_label.is_some(), "{} has a title", r.id);
        let page = built.page(&format!("/{}", r.path));
        let title = &page[page.find("<title>").unwrap() + 7..page.find("</title>").unwrap()];
        assert!(title.len() > r.id.len() + 3, "{}'s page is titled by more than its ID: {title}", r.id);
    }
}

/// A record page says each thing once: the row's status cell is the findings block, not a
/// field again; the label is the title, not a line again; the declaration names its
/// section; and the page leads to the records before and after it in reading order.
#[test]
fn a_record_page_says_each_thing_once_and_leads_to_its_neighbours() {
    let page = bundled().page(&record_url(FRACTAL_RUN, "OBJ-04"));
    let main = &page[page.find("<main").unwrap()..];
    let fields = &main[main.find("<dl class=\"fields\">").unwrap()..];
    let fields = &fields[..fields.find("</dl>").unwrap()];
    assert!(fields.contains("<dt>Persistence</dt>"), "{fields}");
    assert!(!fields.contains("<dt>Status</dt>"), "the status cell is the findings block's: {fields}");
    assert_eq!(strip_tags(main).matches("session_history list").count(), 1, "the label once, in the title");
    assert!(main.contains("Declared in <a href=\"/fractal/aas-2026-08-20-fractal-01/memory/#OBJ-04\">§ 1. Retained operative parts inventory</a> of Memory / context report"), "{main}");
    // Reading order: OBJ-03 (line 24), OBJ-02 (25), OBJ-04 (26), OBJ-05 (27).
    let nav = &main[main.find("<nav class=\"record-nav\"").expect("previous and next")..];
    assert!(nav.contains("rel=\"prev\" href=\"/fractal/aas-2026-08-20-fractal-01/records/OBJ-02.html\""), "{nav}");
    assert!(nav.contains("rel=\"next\" href=\"/fractal/aas-2026-08-20-fractal-01/records/OBJ-05.html\""), "{nav}");
    // An unpublished record is in no reading order.
    let unpublished = bundled().page(&record_url(FRACTAL_RUN, "CLM-03"));
    assert!(!unpublished.contains("record-nav"));
}

/// What a run did not establish is on its page: each limit with its handle, what it
/// prevents, and a link to its anchor on the report page, which exists; and on the page
/// of each record it names.
#[test]
fn limits_are_listed_on_their_run_anchored_in_their_report_and_shown_on_their_records() {
    let run = bundled().page(FRACTAL_RUN);
    let start = run.find("<h2 id=\"limits\">What this run did not establish").expect("the limits section");
    let section = &run[start..];
    let section = &section[..section.find("<h2 id=\"records\">").unwrap()];
    let handles = regex::Regex::new(r#"<a class="limit-handle" href="([^"]+)">(L[0-9]+)</a>"#).unwrap();
    let found: Vec<(String, String)> =
        handles.captures_iter(section).map(|c| (c[1].to_string(), c[2].to_string())).collect();
    let names: Vec<&str> = found.iter().map(|(_, h)| h.as_str()).collect();
    assert_eq!(names, ["L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8"], "the report's own handles, in order");
    let report = bundled().page(&format!("{FRACTAL_RUN}memory/"));
    for (url, handle) in &found {
        let anchor = url.rsplit_once('#').unwrap().1;
        assert!(url.starts_with(&format!("{FRACTAL_RUN}memory/#")), "{url}");
        assert!(report.contains(&format!("id=\"{anchor}\"")), "{handle}'s anchor {anchor} is on the report page");
    }
    assert!(section.contains("Prevents every observed and causally supported status in this file."), "{section}");
    // The synthesis does not number its limits: casebook does, and says so.
    let synthesis = bundled().page(SYNTHESIS_RUN);
    assert!(synthesis.contains("<a class=\"limit-handle derived\""), "derived handles are marked");
    assert!(synthesis.contains("Evidence that would resolve it") || synthesis.contains("What would resolve it"));
    // L8 names NEW-2: NEW-2's page shows it, and why.
    let new2 = bundled().page(&record_url(FRACTAL_RUN, "NEW-2"));
    let limits = &new2[new2.find("<h2>Limits that apply</h2>").expect("NEW-2's limits")..];
    assert!(limits.contains(">L8</a>") && limits.contains("Applies because it names NEW-2"), "{limits}");
}

/// The home page puts the systems side by side, lens by lens: per status, how many records
/// and findings each has, each count leading to the system's list of that status.
#[test]
fn the_home_page_puts_systems_side_by_side_per_lens() {
    let home = bundled().page("/");
    let table = &home[home.find("<table class=\"side-by-side\">").expect("the side-by-side table")..];
    let table = &table[..table.find("</table>").unwrap()];
    let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), 3, "EXIA SEED memory, Fractal memory / context, Fractal whole system: {table}");
    let fractal_memory = rows.iter().find(|r| r.contains("memory / context")).unwrap();
    // Fractal's memory run: 12 records implemented, and 12 subjects of findings without one.
    assert!(fractal_memory.contains("<a href=\"/fractal/statuses/implemented/\" title=\"12 records, 12 findings without a record\">12 <span class=\"muted\">+ 12</span></a>"), "{fractal_memory}");
    let system_page = bundled().page("/fractal/statuses/implemented/");
    assert!(system_page.contains("OBJ-04"), "the count's list holds the records it counts");
    // The kinds table: each count leads to the search page browsing that system's kind
    // (the browser test follows them and counts the results).
    let kinds = &home[home.find("<table class=\"side-by-side kinds\">").expect("the kinds table")..];
    assert!(kinds.contains("<a href=\"/search/?system=Fractal&amp;kind=OBJ\">"), "{kinds}");
}

/// The record graph: a run's picture and a record's neighbourhood are inline SVG with a
/// title and a description, every node links to its record's page, and the table after
/// each picture lists exactly the edges drawn.
#[test]
fn the_record_graph_is_drawn_with_the_same_edges_as_its_table() {
    let built = bundled();
    for (url, centre) in
        [(EXIA_RUN.to_string(), None), (record_url(EXIA_RUN, "MEM-OBJ-summary"), Some("MEM-OBJ-summary"))]
    {
        // As written: the picture's links are relative, and so spelt.
        let page = built.page_as_written(&url);
        let svg = &page[page.find("<svg class=\"graph\"").unwrap_or_else(|| panic!("{url} draws a graph"))..];
        let svg = &svg[..svg.find("</svg>").unwrap()];
        assert!(svg.contains("<title id=\"g-") && svg.contains("<desc id=\"g-"), "{url}: {svg}");
        let table = &page[page.find("<details class=\"graph-edges\">").unwrap()..];
        let table = &table[..table.find("</details>").unwrap()];
        let rows: Vec<(String, String)> = table
            .split("<tr><td>")
            .skip(1)
            .map(|row| {
                // Each end is a link, or the page's own record in bold.
                let names: Vec<String> = row.split("</td>").take(2).map(strip_tags).collect();
                (names[0].trim().to_string(), names[1].trim().to_string())
            })
            .collect();
        assert!(!rows.is_empty(), "{url}: {table}");
        assert_eq!(svg.matches("<path class=\"edge").count(), rows.len(), "{url}: one path per row");
        for (from, to) in &rows {
            for id in [from, to] {
                // Relative: a record page links its siblings, the run page its records folder.
                let relative = if centre.is_some() { format!("{id}.html") } else { format!("records/{id}.html") };
                let href = format!("href=\"{relative}\"");
                if Some(id.as_str()) == centre {
                    assert!(!svg.contains(&href), "{url}: the page's own record is not a link");
                } else {
                    assert!(svg.contains(&href), "{url}: {id} is a linked node of the picture");
                }
                built.page(&record_url(EXIA_RUN, id));
            }
        }
        if let Some(centre) = centre {
            assert!(rows.iter().any(|(f, t)| f == centre || t == centre), "{url}: {rows:?}");
            assert_eq!(svg.matches("node centre").count(), 1);
            let references = &page[page.find("<section class=\"references\">").unwrap()..];
            let references = &references[..references.find("</section>").unwrap()];
            for id in references
                .split("class=\"rec\" href=\"")
                .skip(1)
                .map(|s| &s[s.find("\">").unwrap() + 2..s.find("</a>").unwrap()])
            {
                assert!(rows.iter().any(|(f, t)| f == centre && t == id), "{url}: the reference to {id} is drawn");
            }
        }
    }
    // Every record page has its picture with a text alternative, a record alone too.
    let out = built.out();
    let records: Vec<_> =
        files_below(&out).into_iter().filter(|f| f.components().any(|c| c.as_os_str() == "records")).collect();
    assert!(records.len() > 90, "{} record pages", records.len());
    for file in records {
        let page = std::fs::read_to_string(out.join(&file)).unwrap();
        assert!(
            page.contains("<svg class=\"graph\"") && page.contains("<desc id=\"g-record-desc\">"),
            "{}",
            file.display()
        );
    }
    let alone = built.page("/fractal/6a226e7/records/RT-RTE-headless-turn.html");
    assert!(alone.contains("links with no other record"), "{alone}");
    // The records of Fractal's second run do not name one another: no run picture,
    // rather than an empty one.
    assert!(built.page(FRACTAL_RUN).contains("<svg class=\"graph\""));
    assert!(!built.page("/fractal/6a226e7/").contains("<svg class=\"graph\""));
}
