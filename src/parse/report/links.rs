//! A report's Markdown links to places of the content (`memory.md#writes`, `#writes`,
//! `../other-run/report.md`): read as the file and anchor they name, resolved against the
//! report's own folder as a forge resolves them, so `links` can check them and the pages
//! lead where the author meant.

use crate::model::{LineCol, LocalLink};

/// The place `written` names, as a link of the report at `source_path`; none for a link
/// off the site (a scheme, `//host`), a site-absolute one (`/about/`), or one naming
/// nothing (`?q`, ``). An Obsidian link (`wiki`) names a note without its `.md`
/// (`[[synthesis]]`, `[[synthesis#Open questions]]`).
pub(super) fn local_link(written: &str, source_path: &str, at: LineCol, wiki: bool) -> Option<LocalLink> {
    let dest = written.trim();
    if dest.is_empty() || dest.starts_with('/') || has_scheme(dest) {
        return None;
    }
    let (path, fragment) = match dest.split_once('#') {
        Some((path, fragment)) => (path, Some(decoded(fragment)).filter(|f| !f.is_empty())),
        None => (dest, None),
    };
    let path = path.split_once('?').map_or(path, |(path, _)| path);
    let file = match path {
        "" => None,
        path => {
            let folder = source_path.rsplit_once('/').map_or("", |(folder, _)| folder);
            let named = path.rsplit('/').next().unwrap_or(path);
            let path = if wiki && !named.contains('.') { format!("{path}.md") } else { path.to_string() };
            Some(joined(folder, &decoded(&path)))
        }
    };
    if file.is_none() && fragment.is_none() {
        return None;
    }
    Some(LocalLink { written: written.to_string(), file, fragment, at })
}

/// True when `dest` opens with a URL scheme (`https:`, `mailto:`, `javascript:`).
fn has_scheme(dest: &str) -> bool {
    let Some((scheme, _)) = dest.split_once(':') else { return false };
    scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn decoded(text: &str) -> String {
    percent_encoding::percent_decode_str(text).decode_utf8_lossy().into_owned()
}

/// `folder/path` with `.` and `..` taken away, `/`-separated; a path that climbs above
/// the root keeps its leading `..`, so it names no file of the site.
fn joined(folder: &str, path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in folder.split('/').chain(path.split('/')) {
        match part {
            "" | "." => {}
            ".." if parts.last().is_some_and(|last| *last != "..") => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: LineCol = LineCol { line: 3, col: 5 };
    const REPORT: &str = "content/agent/first/memory.md";

    fn link(written: &str) -> Option<(Option<String>, Option<String>)> {
        local_link(written, REPORT, AT, false).map(|l| (l.file, l.fragment))
    }

    #[test]
    fn a_link_to_a_sibling_report_and_its_heading_names_both() {
        assert_eq!(
            link("synthesis.md#open-questions"),
            Some((Some("content/agent/first/synthesis.md".into()), Some("open-questions".into())))
        );
        assert_eq!(link("./synthesis.md"), Some((Some("content/agent/first/synthesis.md".into()), None)));
    }

    #[test]
    fn a_fragment_alone_names_a_heading_of_the_report_itself() {
        assert_eq!(link("#writes"), Some((None, Some("writes".into()))));
        assert_eq!(link("#%E7%8A%B6%E6%80%81"), Some((None, Some("状态".into()))));
    }

    #[test]
    fn a_path_is_resolved_against_the_report_s_folder() {
        assert_eq!(link("../second/memory.md"), Some((Some("content/agent/second/memory.md".into()), None)));
        assert_eq!(link("../../../../x.md"), Some((Some("../x.md".into()), None)));
        assert_eq!(link("notes%20on%20it.md?plain=1"), Some((Some("content/agent/first/notes on it.md".into()), None)));
    }

    #[test]
    fn an_obsidian_link_names_a_note_without_its_extension() {
        let wiki = |written: &str| local_link(written, REPORT, AT, true).map(|l| (l.file, l.fragment));
        assert_eq!(wiki("synthesis"), Some((Some("content/agent/first/synthesis.md".into()), None)));
        assert_eq!(wiki("#Open questions"), Some((None, Some("Open questions".into()))));
        assert_eq!(wiki("notes.md"), Some((Some("content/agent/first/notes.md".into()), None)));
    }

    #[test]
    fn links_off_the_site_and_site_absolute_ones_are_not_local() {
        for off in ["https://example.com/a.md", "mailto:a@b.c", "javascript:alert(1)", "/about/", "//host/x", "", "?q"]
        {
            assert_eq!(link(off), None, "{off}");
        }
    }
}
