//! Sections named by a label (`### Step 4: The trajectory buffer`, `## Exhibit 3 —
//! Runner loop`) and the labels a record's text names (`Step 4.`, `see Exhibit 3`): a
//! walkthrough or a memo may keep a record's evidence in such a section and tie it to the
//! record only by naming it.

use std::sync::LazyLock;

use regex::Regex;

/// A heading that leads with a word and a number or letter, then a separator or nothing.
static HEADING_LABEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*([A-Z][A-Za-z]{2,})\s+([0-9]{1,3}[a-z]?|[A-Z])(?:\s*[:.—–\-)|·]|\s*$)").unwrap());

/// A word and a number or letter anywhere in prose.
static NAMED_LABEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b([A-Za-z][A-Za-z]{2,})\s+([0-9]{1,3}[a-z]?|[A-Z])\b").unwrap());

/// The label a heading leads with, normalised (`step 4`), if it leads with one.
pub fn section_label(heading: &str) -> Option<String> {
    let captures = HEADING_LABEL.captures(heading)?;
    Some(normalised(&captures[1], &captures[2]))
}

/// What follows the label a heading leads with and its separator (`Observation 1 — The
/// shared turn loop` → `The shared turn loop`), when it leads with one.
pub(super) fn after_section_label(heading: &str) -> Option<&str> {
    let found = HEADING_LABEL.find(heading)?;
    Some(heading[found.end()..].trim_start())
}

/// Every word-and-number pair `text` names, normalised, in order: the caller keeps those
/// that are labels of sections.
pub fn named_labels(text: &str) -> impl Iterator<Item = String> + '_ {
    NAMED_LABEL.captures_iter(text).map(|c| normalised(&c[1], &c[2]))
}

fn normalised(word: &str, number: &str) -> String {
    format!("{} {}", word.to_lowercase(), number.to_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heading_leading_with_a_word_and_a_number_has_a_label() {
        assert_eq!(section_label("Step 4: The trajectory buffer").as_deref(), Some("step 4"));
        assert_eq!(section_label("Exhibit 12 — Runner loop").as_deref(), Some("exhibit 12"));
        assert_eq!(section_label("Appendix B").as_deref(), Some("appendix b"));
        assert_eq!(section_label("Step 4").as_deref(), Some("step 4"));
        assert_eq!(section_label("Steps 4 to 6 in brief"), None, "a word and a number inside a title");
        assert_eq!(section_label("Before you start"), None);
        assert_eq!(section_label("Python 3 support"), None, "no separator after the number");
        assert_eq!(after_section_label("Observation 1 — The shared turn loop"), Some("The shared turn loop"));
        assert_eq!(after_section_label("Claim 4: Default boundedness"), Some("Default boundedness"));
    }

    #[test]
    fn prose_names_labels_in_any_case() {
        let named: Vec<String> = named_labels("Kind: dict. Step 4. See exhibit 3, then Step 10a.").collect();
        assert_eq!(named, ["step 4", "exhibit 3", "step 10a"]);
    }
}
