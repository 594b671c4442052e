//! Trailer blocks: lines of `Key: value` set off by indentation, as a mailing list's
//! review writes them under a patch (`    Status: persisted: wired`, `    Reviewed-by: …`,
//! `    Not reviewed: L1 …`). CommonMark reads four spaces of indentation as a code
//! block, so what they state would be shown as code and read as nothing.
//! [`trailers_as_items`] writes each such line as a list item instead (`  - Status: …`:
//! four bytes for four), keeping every byte offset, line and column, so the trailers are
//! read as any list of `key: value` items is.

use std::sync::LazyLock;

use regex::Regex;

use super::learned::in_fence;

/// A trailer line, indented as a code block: a key of one to four words starting with a
/// capital (`Status`, `Reviewed-by`, `Not reviewed`), a colon, a value.
static TRAILER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ {4}[A-Z][A-Za-z0-9]*(?:[- ][A-Za-z0-9]+){0,3}: +\S").unwrap());

/// `markdown` with each indented block of trailers written as list items; none when it
/// has no such block. A block is one when every line of it is a trailer, a blank line is
/// before it, and the paragraph before does not end with a colon (which introduces a
/// quote: `From config.py, lines 3-5:`).
pub(super) fn trailers_as_items(markdown: &str) -> Option<String> {
    if !markdown.contains("\n    ") {
        return None;
    }
    let lines: Vec<&str> = markdown.split_inclusive('\n').collect();
    let mut items = vec![false; lines.len()];
    let mut fence = None;
    let mut at = 0;
    while at < lines.len() {
        let body = lines[at].trim_end_matches(['\n', '\r']);
        let fenced = in_fence(body.trim_start(), &mut fence);
        let starts_block = !fenced && TRAILER.is_match(body) && at > 0 && lines[at - 1].trim().is_empty();
        if !starts_block {
            at += 1;
            continue;
        }
        let end = (at..lines.len()).find(|i| lines[*i].trim().is_empty()).unwrap_or(lines.len());
        let every_line = lines[at..end].iter().all(|l| TRAILER.is_match(l));
        let introduced =
            lines[..at].iter().rev().find(|l| !l.trim().is_empty()).is_some_and(|l| l.trim_end().ends_with(':'));
        if every_line && !introduced {
            items[at..end].iter_mut().for_each(|item| *item = true);
        }
        at = end;
    }
    if !items.contains(&true) {
        return None;
    }
    let mut out = String::with_capacity(markdown.len());
    for (line, item) in lines.iter().zip(items) {
        if item {
            out.push_str("  - ");
            out.push_str(&line[4..]);
        } else {
            out.push_str(line);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indented_trailers_become_items_of_the_same_length() {
        let md = "Prose.\n\n    Status: persisted: wired\n    Reviewed-by: khoj-review; see also K-MEM-02\n\nMore.\n";
        let plain = trailers_as_items(md).unwrap();
        assert_eq!(plain.len(), md.len());
        assert!(plain.contains("\n  - Status: persisted: wired\n  - Reviewed-by: khoj-review"));
        assert!(plain.ends_with("\nMore.\n"));
    }

    #[test]
    fn code_stays_code() {
        // A line of the block that is no trailer.
        assert_eq!(trailers_as_items("Prose.\n\n    Status: wired\n    x = compute()\n"), None);
        // Introduced as a quote.
        assert_eq!(trailers_as_items("From a.yaml, lines 3-4:\n\n    Name: cache\n    Size: 10\n"), None);
        // Inside a fence.
        assert_eq!(trailers_as_items("```\n\n    Status: wired\n```\n"), None);
        // A lower-case key is YAML, not a trailer.
        assert_eq!(trailers_as_items("Prose.\n\n    status: wired\n"), None);
    }
}
