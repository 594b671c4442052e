//! Numbered references, as an article keeps them: markers `[3]` (or `<sup>[3]</sup>`) in
//! the text, and a numbered list under a heading such as `## References` whose items
//! name the source, file and lines. What an item cites belongs to the record whose text
//! first marks it, as a footnote's does.

use super::Scanner;
use crate::model::Owner;

/// Words of a heading over a list of numbered references, lower-case.
const HEADINGS: [&str; 15] = [
    "references",
    "notes",
    "sources",
    "bibliography",
    "endnotes",
    "works cited",
    "citations",
    "références",
    "referencias",
    "notas",
    "quellen",
    "literatur",
    "anmerkungen",
    "参考",
    "注释",
];

/// The most digits of a reference's number.
const MAX_DIGITS: usize = 3;

/// The label under which the owner of the text that marks reference `number` is kept
/// (beside footnotes' labels, which cannot start with `[`).
fn label(number: u64) -> String {
    format!("[{number}]")
}

/// True when a heading's title names a list of references.
fn is_references_heading(title: &str) -> bool {
    let title = title.trim().to_lowercase();
    let words = title.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ' ');
    HEADINGS.iter().any(|h| {
        words == *h || words.starts_with(&format!("{h} ")) || (h.chars().all(|c| !c.is_ascii()) && words.contains(h))
    })
}

/// The numbers of the reference markers in `text`: `[3]`, not `x[3]` or a link's `[3](…)`.
pub(super) fn markers(text: &str) -> Vec<u64> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    for (open, _) in text.match_indices('[') {
        let digits = text[open + 1..].bytes().take_while(u8::is_ascii_digit).count();
        let close = open + 1 + digits;
        let after_word = open > 0 && (bytes[open - 1].is_ascii_alphanumeric() || bytes[open - 1] == b'_');
        if (1..=MAX_DIGITS).contains(&digits)
            && bytes.get(close) == Some(&b']')
            && !after_word
            && bytes.get(close + 1) != Some(&b'(')
        {
            out.extend(text[open + 1..close].parse::<u64>().ok());
        }
    }
    out
}

impl Scanner<'_> {
    /// A heading of `level` opens a section: one of numbered references when its title
    /// says so and it declares no record.
    pub(super) fn enter_references(&mut self, level: u8, title: &str, declares: bool) {
        if self.references_section.is_some_and(|open| open >= level) {
            self.references_section = None;
        }
        if !declares && is_references_heading(title) {
            self.references_section = Some(level);
        }
    }

    /// The numbered list of references ends.
    pub(super) fn references_end(&mut self) {
        self.flush_inline();
        self.next_reference = None;
    }

    /// Remembers who marks each reference in `text` first.
    pub(super) fn reference_markers(&mut self, text: &str, owner: Option<Owner>) {
        for number in markers(text) {
            self.footnote_refs.entry(label(number)).or_insert(owner);
        }
    }

    /// An item of the numbered list of references opens: its citations are the record's
    /// that marks it. An item no text marks (a numbered list of notes under a record)
    /// keeps the owner of where it is written.
    pub(super) fn reference_item(&mut self) {
        let Some(number) = self.next_reference else { return };
        self.next_reference = Some(number + 1);
        if let Some(owner) = self.footnote_refs.get(&label(number)).copied() {
            self.footnote_owner = Some(owner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_bracketed_numbers_standing_alone() {
        assert_eq!(markers("the results\".[1] The code[^2] and [12] and [3, 4]"), [1, 12]);
        assert!(markers("x[1] and [2](https://e.x) and [1234] and [a]").is_empty());
        assert!(is_references_heading("References"));
        assert!(is_references_heading("7. Notes and sources"));
        assert!(is_references_heading("参考资料"));
        assert!(!is_references_heading("Cross-references between records"));
    }
}
