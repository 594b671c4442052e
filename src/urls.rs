//! The one mapping from model objects to output paths and site-absolute URLs.
//!
//! URLs are written root-relative (`/fractal/…/`); `postprocess` prefixes the base path,
//! so a site can be served under any sub-path. A record's URL depends only on its system,
//! run and ID, never on heading text, so links to it survive edits of the prose.

use crate::model::{RecordId, RecordPages, Slug, StatusPages};

/// The home page.
pub fn home() -> String {
    "/".to_string()
}

/// A system's page.
pub fn system(system: &Slug) -> String {
    format!("/{system}/")
}

/// A run's page.
pub fn run(system: &Slug, run: &Slug) -> String {
    format!("/{system}/{run}/")
}

/// A report's page.
pub fn report(system: &Slug, run: &Slug, report: &Slug) -> String {
    format!("/{system}/{run}/{report}/")
}

/// A record's address, whatever the layout of record pages: its own page, or the redirect
/// to its place on its run's page of records. What the manifest and the anchor contract
/// keep.
pub fn record(system: &Slug, run: &Slug, id: &RecordId) -> String {
    format!("/{system}/{run}/records/{}", record_file(id))
}

/// The output file of a record's own page: `output_path(&record(…))`, made in one string
/// (a large site lists hundreds of thousands of them on every build).
pub fn record_output_path(system: &Slug, run: &Slug, id: &RecordId) -> std::path::PathBuf {
    let (system, run) = (system.as_str(), run.as_str());
    let mut path = String::with_capacity(system.len() + run.len() + id.as_str().len() + 16);
    for part in [system, "/", run, "/records/"] {
        path.push_str(part);
    }
    if id.is_own_slug() {
        path.push_str(id.as_str());
    } else {
        path.push_str(&id.slug());
    }
    path.push_str(".html");
    path.into()
}

/// Where a record is shown: its own page, or its place on its run's page of records
/// (`records.html#<ID>.html`, the anchor named by the file it would have had, so the
/// redirect from that file is one rule for the whole site).
pub fn record_shown(pages: RecordPages, system: &Slug, run: &Slug, id: &RecordId) -> String {
    format!("/{system}/{run}/{}", record_below_run(pages, id))
}

/// A record's place as a link from another record of its run: relative, as the record
/// graph writes every node twice.
pub fn sibling_record(pages: RecordPages, id: &RecordId) -> String {
    match pages {
        RecordPages::Separate => record_file(id),
        RecordPages::PerRun => format!("#{}", record_file(id)),
    }
}

/// A record's place as a link from its run's page.
pub fn record_below_run(pages: RecordPages, id: &RecordId) -> String {
    match pages {
        RecordPages::Separate => format!("records/{}", record_file(id)),
        RecordPages::PerRun => format!("records.html#{}", record_file(id)),
    }
}

/// The page of a run's records, when they share one: beside the folder of their own
/// addresses, not in it, so that the redirect of every address in that folder can never
/// lead to itself on a host that applies redirects before files.
pub fn run_records(system: &Slug, run: &Slug) -> String {
    format!("/{system}/{run}/records.html")
}

/// The file a record's own page has (`OBJ-03.html`), which also names its anchor on its
/// run's page of records.
pub fn record_file(id: &RecordId) -> String {
    format!("{}.html", id.slug())
}

/// The search page browsing the records of one kind in one system (its facets, by the
/// values the search page shows: the system's name and the kind's code).
pub fn search_filtered(system_name: &str, kind: &str) -> String {
    use percent_encoding::{utf8_percent_encode, NON_ALPHANUMERIC};
    format!(
        "{}?system={}&kind={}",
        search(),
        utf8_percent_encode(system_name, NON_ALPHANUMERIC),
        utf8_percent_encode(kind, NON_ALPHANUMERIC)
    )
}

/// The page listing records and findings by status.
pub fn statuses() -> String {
    "/statuses/".to_string()
}

/// The page of one status.
pub fn status(name: &str) -> String {
    format!("/statuses/{}/", crate::recognise::slugify(name))
}

/// The page of what changed from run `from` to run `to` of a system.
pub fn changes(system: &Slug, from: &Slug, to: &Slug) -> String {
    format!("/{system}/changes/{from}/{to}/")
}

/// A system's records with status `name`: the address of its own page, which with
/// `status_pages: per-system` a redirect keeps.
pub fn system_status(system: &Slug, name: &str) -> String {
    format!("/{system}/statuses/{}/", crate::recognise::slugify(name))
}

/// Where a system's records with status `name` are shown: their own page, or with
/// `status_pages: per-system` their place on the system's one page of statuses, at the
/// anchor named by the folder their own page would have (`statuses.html#implemented/`).
pub fn system_status_shown(pages: StatusPages, system: &Slug, name: &str) -> String {
    match pages {
        StatusPages::Separate => system_status(system, name),
        StatusPages::PerSystem => format!("{}#{}/", system_statuses(system), crate::recognise::slugify(name)),
    }
}

/// The page of a system's statuses, when they share one: beside the folder of their own
/// addresses, not in it (as a run's page of records).
pub fn system_statuses(system: &Slug) -> String {
    format!("/{system}/statuses.html")
}

/// The search page.
pub fn search() -> String {
    "/search/".to_string()
}

/// A file of the theme's assets.
pub fn asset(name: &str) -> String {
    format!("/assets/{name}")
}

/// The output file of a page URL: `/a/b/` → `a/b/index.html`.
pub fn output_path(url: &str) -> std::path::PathBuf {
    let trimmed = url.trim_start_matches('/');
    if trimmed.is_empty() || trimmed.ends_with('/') {
        std::path::PathBuf::from(format!("{trimmed}index.html"))
    } else {
        std::path::PathBuf::from(trimmed)
    }
}

/// A link to `path` (and lines) in a repository at a revision, for the forges whose URL
/// scheme is known (GitHub, GitLab, Codeberg/Gitea). `None` for other hosts. A folder
/// (`src/sandbox/`, or a glob `src/fractal/**`, linked as its folder) gets the forge's
/// tree view; lines of a file the forge renders (Markdown, reStructuredText, AsciiDoc,
/// notebooks) are shown in its source view, where line anchors work.
pub fn repository_file(repository: &str, revision: &str, path: &str, lines: Option<(u32, u32)>) -> Option<String> {
    let base = repository.trim_end_matches('/').trim_end_matches(".git");
    let base = if base.starts_with("http://") || base.starts_with("https://") {
        base.to_string()
    } else {
        format!("https://{base}")
    };
    let host = base.split('/').nth(2)?;
    let path = path.trim_start_matches("./").trim_start_matches('/');
    let (path, folder) = match path.find('*') {
        Some(glob) => (path[..glob].trim_end_matches('/'), true),
        // The repository's root (`""`) is a folder too.
        None => (path.trim_end_matches('/'), path.is_empty() || path.ends_with('/')),
    };
    let lines = lines.filter(|_| !folder);
    let source_view = lines.is_some() && is_rendered_by_forges(path);
    let range = |joiner: &str| {
        lines.map(|(a, b)| if a == b { format!("#L{a}") } else { format!("#L{a}-{joiner}{b}") }).unwrap_or_default()
    };
    let (view, query, fragment) = match host {
        "github.com" => (if folder { "tree" } else { "blob" }, "?plain=1", range("L")),
        "gitlab.com" => (if folder { "-/tree" } else { "-/blob" }, "?plain=1", range("")),
        "codeberg.org" => ("src/commit", "?display=source", range("L")),
        _ => return None,
    };
    let query = if source_view { query } else { "" };
    Some(format!("{base}/{view}/{revision}/{path}{query}{fragment}"))
}

/// The anchor a forge gives a heading of a rendered document (GitHub's and GitLab's
/// rule): lower case; letters, marks, numbers, `-` and connectors (`_`) kept, spaces to
/// `-`, anything else dropped.
/// `Customizing handoffs via the `handoff()` function` → `customizing-handoffs-via-the-handoff-function`;
/// `🗂️ Source register` → `️-source-register` (the emoji's variation selector is a mark).
pub fn heading_anchor(heading: &str) -> String {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    let kept = |c: char| {
        c == '-'
            || matches!(
                get_general_category(c),
                G::UppercaseLetter
                    | G::LowercaseLetter
                    | G::TitlecaseLetter
                    | G::ModifierLetter
                    | G::OtherLetter
                    | G::NonspacingMark
                    | G::SpacingMark
                    | G::EnclosingMark
                    | G::DecimalNumber
                    | G::LetterNumber
                    | G::OtherNumber
                    | G::ConnectorPunctuation
            )
    };
    heading
        .chars()
        .flat_map(char::to_lowercase)
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if kept(c) => Some(c),
            _ => None,
        })
        .collect()
}

/// Files a forge shows rendered rather than as lines of text by default.
fn is_rendered_by_forges(path: &str) -> bool {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    matches!(
        extension.as_str(),
        "md" | "markdown" | "mdown" | "rst" | "adoc" | "asciidoc" | "ipynb" | "org" | "textile"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_s_anchor_is_the_forge_s() {
        assert_eq!(
            heading_anchor("Customizing handoffs via the `handoff()` function"),
            "customizing-handoffs-via-the-handoff-function"
        );
        assert_eq!(heading_anchor("6. Entity Matching Store Setup"), "6-entity-matching-store-setup");
        assert_eq!(heading_anchor("Threat model & trust boundaries"), "threat-model--trust-boundaries");
        assert_eq!(heading_anchor("Swarm (experimental, educational)"), "swarm-experimental-educational");
        assert_eq!(heading_anchor("🗂️ Source register"), "\u{fe0f}-source-register");
        assert_eq!(heading_anchor("2.1 Résumé"), "21-résumé");
    }

    #[test]
    fn a_record_keeps_its_address_in_either_layout() {
        let (system, run, id) = (Slug::parse("lab").unwrap(), Slug::parse("r1").unwrap(), RecordId::new("OBJ-03"));
        assert_eq!(record(&system, &run, &id), "/lab/r1/records/OBJ-03.html");
        assert_eq!(record_shown(RecordPages::Separate, &system, &run, &id), "/lab/r1/records/OBJ-03.html");
        assert_eq!(record_shown(RecordPages::PerRun, &system, &run, &id), "/lab/r1/records.html#OBJ-03.html");
        assert_eq!(sibling_record(RecordPages::PerRun, &id), "#OBJ-03.html");
        assert_eq!(record_below_run(RecordPages::Separate, &id), "records/OBJ-03.html");
        assert_eq!(output_path(&run_records(&system, &run)), std::path::PathBuf::from("lab/r1/records.html"));
        for id in ["OBJ-03", "MEM-OBJ-raw", "OBJ:1", ".x", "../y"].map(RecordId::new) {
            assert_eq!(record_output_path(&system, &run, &id), output_path(&record(&system, &run, &id)), "{id}");
        }
    }

    #[test]
    fn a_systems_status_keeps_its_address_in_either_layout() {
        let system = Slug::parse("lab").unwrap();
        assert_eq!(system_status(&system, "Partly wired"), "/lab/statuses/partly-wired/");
        assert_eq!(system_status_shown(StatusPages::Separate, &system, "Partly wired"), "/lab/statuses/partly-wired/");
        assert_eq!(
            system_status_shown(StatusPages::PerSystem, &system, "Partly wired"),
            "/lab/statuses.html#partly-wired/"
        );
        assert_eq!(output_path(&system_statuses(&system)), std::path::PathBuf::from("lab/statuses.html"));
    }

    #[test]
    fn output_paths() {
        assert_eq!(output_path("/"), std::path::PathBuf::from("index.html"));
        assert_eq!(output_path("/a/b/"), std::path::PathBuf::from("a/b/index.html"));
        assert_eq!(output_path("/assets/style.css"), std::path::PathBuf::from("assets/style.css"));
    }

    #[test]
    fn github_links_pin_the_revision_and_lines() {
        assert_eq!(
            repository_file(
                "https://github.com/Trampoline-AI/fractal",
                "5954a07",
                "src/fractal/session.py",
                Some((368, 390))
            )
            .as_deref(),
            Some("https://github.com/Trampoline-AI/fractal/blob/5954a07/src/fractal/session.py#L368-L390")
        );
        assert_eq!(
            repository_file("github.com/o/r.git", "abc", "a.py", None).as_deref(),
            Some("https://github.com/o/r/blob/abc/a.py")
        );
        assert_eq!(repository_file("https://example.org/o/r", "abc", "a.py", None), None);
    }

    #[test]
    fn rendered_files_link_their_source_view_and_folders_their_tree() {
        let github = "https://github.com/o/r";
        assert_eq!(
            repository_file(github, "abc", "docs/session.md", Some((20, 29))).as_deref(),
            Some("https://github.com/o/r/blob/abc/docs/session.md?plain=1#L20-L29")
        );
        assert_eq!(
            repository_file(github, "abc", "docs/session.md", None).as_deref(),
            Some("https://github.com/o/r/blob/abc/docs/session.md")
        );
        assert_eq!(
            repository_file("https://gitlab.com/o/r", "abc", "README.md", Some((3, 3))).as_deref(),
            Some("https://gitlab.com/o/r/-/blob/abc/README.md?plain=1#L3")
        );
        assert_eq!(
            repository_file("https://codeberg.org/o/r", "abc", "a.rst", Some((1, 2))).as_deref(),
            Some("https://codeberg.org/o/r/src/commit/abc/a.rst?display=source#L1-L2")
        );
        assert_eq!(repository_file(github, "abc", "", None).as_deref(), Some("https://github.com/o/r/tree/abc/"));
        assert_eq!(
            repository_file(github, "abc", "src/sandbox/", None).as_deref(),
            Some("https://github.com/o/r/tree/abc/src/sandbox")
        );
        assert_eq!(
            repository_file(github, "abc", "src/fractal/**", None).as_deref(),
            Some("https://github.com/o/r/tree/abc/src/fractal")
        );
    }
}
