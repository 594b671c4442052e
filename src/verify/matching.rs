//! Where a quoted passage is in a file's text. Exports of an analysis change its quotes
//! in known ways, and only those are forgiven: indentation, runs of spaces and tabs,
//! line breaks (a passage flattened onto one line, or one line broken in two), and
//! Markdown's `\_`-style escapes. In strict mode a quote's lines must be the file's
//! lines exactly, but for trailing whitespace.

use crate::model::LineRange;

/// How a quote is compared with a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Matching {
    /// Forgiving what exports are known to change.
    #[default]
    Tolerant,
    /// The quote's lines are the file's, but for trailing whitespace.
    Strict,
}

/// Where a quote was found, or the passage most like it.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// Every place the quote occurs, in order (at least one).
    At(Vec<LineRange>),
    /// Not found; the lines most like it and how alike they are (0–1000, per mille), when
    /// the file has lines at all.
    Nowhere(Option<(LineRange, u16)>),
}

/// A file's text, ready to be searched for quotes: its lines, and its tolerant form (all
/// whitespace runs one space) with the offset each line starts at in that form.
pub struct Searchable<'a> {
    lines: Vec<&'a str>,
    tolerant: String,
    /// For each line, the offset of its first character in `tolerant`.
    line_starts: Vec<usize>,
}

impl<'a> Searchable<'a> {
    /// `text`, split into lines.
    pub fn new(text: &'a str) -> Self {
        let lines: Vec<&str> = text.lines().collect();
        let mut tolerant = String::with_capacity(text.len());
        let mut line_starts = Vec::with_capacity(lines.len());
        for line in &lines {
            let words: Vec<&str> = line.split_whitespace().collect();
            if !words.is_empty() && !tolerant.is_empty() {
                tolerant.push(' ');
            }
            line_starts.push(tolerant.len());
            tolerant.push_str(&words.join(" "));
        }
        Searchable { lines, tolerant, line_starts }
    }

    /// How many lines the file has.
    pub fn line_count(&self) -> usize {
        self.lines.len()
    }

    /// Where `quote` is in the file.
    pub fn find(&self, quote: &str, matching: Matching) -> Found {
        let at = match matching {
            Matching::Tolerant => self.find_tolerant(quote),
            Matching::Strict => self.find_strict(quote),
        };
        if at.is_empty() {
            Found::Nowhere(self.closest(quote))
        } else {
            Found::At(at)
        }
    }

    /// The quote as written, else with Markdown's escapes undone (source code may hold a
    /// `\_` of its own).
    fn find_tolerant(&self, quote: &str) -> Vec<LineRange> {
        let spaced = quote.split_whitespace().collect::<Vec<_>>().join(" ");
        let found = self.find_text(&spaced);
        let unescaped = unescaped(&spaced);
        if found.is_empty() && unescaped != spaced {
            return self.find_text(&unescaped);
        }
        found
    }

    fn find_text(&self, wanted: &str) -> Vec<LineRange> {
        if wanted.is_empty() {
            return Vec::new();
        }
        let mut found = Vec::new();
        let mut from = 0;
        while let Some(i) = self.tolerant[from..].find(wanted) {
            let start = from + i;
            let end = start + wanted.len();
            // A match must start and end at word boundaries of the file's text.
            let starts_word = start == 0 || self.tolerant.as_bytes()[start - 1] == b' ';
            let ends_word = end == self.tolerant.len() || self.tolerant.as_bytes()[end] == b' ';
            if starts_word && ends_word {
                found.push(LineRange { start: self.line_of(start), end: self.line_of(end - 1) });
            }
            from = start + wanted.chars().next().map_or(1, char::len_utf8);
        }
        found
    }

    /// The 1-based line holding offset `at` of the tolerant text.
    fn line_of(&self, at: usize) -> u32 {
        self.line_starts.partition_point(|&start| start <= at).max(1) as u32
    }

    fn find_strict(&self, quote: &str) -> Vec<LineRange> {
        let wanted: Vec<&str> = quote.lines().map(str::trim_end).collect();
        if wanted.is_empty() || self.lines.len() < wanted.len() {
            return Vec::new();
        }
        (0..=self.lines.len() - wanted.len())
            .filter(|&i| wanted.iter().enumerate().all(|(k, w)| self.lines[i + k].trim_end() == *w))
            .map(|i| LineRange { start: i as u32 + 1, end: (i + wanted.len()) as u32 })
            .collect()
    }

    /// The run of lines most like `quote` (as many lines as it has), by edit distance of
    /// their tolerant forms; the first of equals.
    fn closest(&self, quote: &str) -> Option<(LineRange, u16)> {
        let wanted = tolerant(quote);
        let height = quote.lines().filter(|l| !l.trim().is_empty()).count().max(1);
        if self.lines.is_empty() || wanted.is_empty() {
            return None;
        }
        let height = height.min(self.lines.len());
        // Windows sharing no word with the quote are not compared at all: on a large file
        // most are unlike it, and the edit distance is quadratic.
        let words: std::collections::HashSet<&str> = wanted.split(' ').collect();
        let mut best: Option<(LineRange, u16)> = None;
        for start in 0..=self.lines.len() - height {
            let window: Vec<&str> =
                self.lines[start..start + height].iter().flat_map(|l| l.split_whitespace()).collect();
            if !window.iter().any(|w| words.contains(unescaped(w).as_str())) {
                continue;
            }
            let text = window.join(" ");
            let alike = (strsim::normalized_levenshtein(&wanted, &text) * 1000.0).round() as u16;
            if best.is_none_or(|(_, b)| alike > b) {
                best = Some((LineRange { start: start as u32 + 1, end: (start + height) as u32 }, alike));
            }
        }
        best
    }

    /// The text of `lines` of the file.
    pub fn text_of(&self, lines: LineRange) -> String {
        let start = (lines.start as usize).saturating_sub(1).min(self.lines.len());
        let end = (lines.end as usize).min(self.lines.len());
        self.lines[start..end].join("\n")
    }
}

/// `text` with every whitespace run one space, trimmed, and Markdown escapes of
/// punctuation (`\_`, `\*`) undone.
fn tolerant(text: &str) -> String {
    unescaped(&text.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// `\_` → `_`, and the same for every ASCII punctuation character Markdown escapes.
fn unescaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(|n| n.is_ascii_punctuation()) {
            continue;
        }
        out.push(c);
    }
    out
}

/// True when `found` is at the `cited` lines: within the span from the first cited line
/// to the last, give or take one line at either end. (A quote a line longer than its
/// range, or an excerpt of a longer range, is at its lines; one shifted by two lines or
/// more is elsewhere, as an analyst who checks it would say.)
pub fn at_cited(found: LineRange, cited: &[LineRange]) -> bool {
    match (cited.iter().map(|r| r.start).min(), cited.iter().map(|r| r.end).max()) {
        (Some(start), Some(end)) => found.start + 1 >= start && found.end <= end + 1,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "def trim(turns):\n    # keep the last twenty\n    turns = turns[-20:]\n    return turns\n\n\ndef __init__(self):\n    self.turns = []\n    return None\n";

    fn lines(start: u32, end: u32) -> LineRange {
        LineRange { start, end }
    }

    #[test]
    fn a_quote_is_found_at_its_lines_whatever_its_indentation() {
        let file = Searchable::new(FILE);
        assert_eq!(file.find("turns = turns[-20:]\nreturn turns", Matching::Tolerant), Found::At(vec![lines(3, 4)]));
        assert_eq!(file.find("  turns  =  turns[-20:]", Matching::Tolerant), Found::At(vec![lines(3, 3)]));
    }

    #[test]
    fn a_flattened_or_escaped_quote_is_found() {
        let file = Searchable::new(FILE);
        // Two lines on one, as an export flattens them.
        assert_eq!(file.find("turns = turns[-20:] return turns", Matching::Tolerant), Found::At(vec![lines(3, 4)]));
        assert_eq!(file.find("def \\_\\_init\\_\\_(self):", Matching::Tolerant), Found::At(vec![lines(7, 7)]));
        let escaping = Searchable::new("pattern = r'a\\_b'\n");
        assert_eq!(
            escaping.find("pattern = r'a\\_b'", Matching::Tolerant),
            Found::At(vec![lines(1, 1)]),
            "an escape of the source's own"
        );
        // But strict matching wants the lines as they are.
        assert!(matches!(file.find("turns = turns[-20:] return turns", Matching::Strict), Found::Nowhere(_)));
        assert_eq!(
            file.find("    turns = turns[-20:]\n    return turns", Matching::Strict),
            Found::At(vec![lines(3, 4)])
        );
    }

    #[test]
    fn every_occurrence_is_given_and_words_are_not_cut() {
        let file = Searchable::new(FILE);
        assert_eq!(file.find("return", Matching::Tolerant), Found::At(vec![lines(4, 4), lines(9, 9)]));
        // `urns` is inside a word; it is not a quote of it.
        assert!(matches!(file.find("urns = turns[-20:]", Matching::Tolerant), Found::Nowhere(_)));
    }

    #[test]
    fn a_quote_not_found_has_the_lines_most_like_it() {
        let file = Searchable::new(FILE);
        match file.find("turns = turns[-30:]", Matching::Tolerant) {
            Found::Nowhere(Some((at, alike))) => {
                assert_eq!(at, lines(3, 3));
                assert!((900..1000).contains(&alike), "{alike}");
                assert_eq!(file.text_of(at), "    turns = turns[-20:]");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(file.find("nothing like it", Matching::Tolerant), Found::Nowhere(None));
        assert_eq!(Searchable::new("").find("x", Matching::Tolerant), Found::Nowhere(None));
    }

    #[test]
    fn found_lines_are_at_the_cited_ones_when_they_share_a_line() {
        assert!(at_cited(lines(3, 4), &[lines(1, 10)]));
        assert!(at_cited(lines(3, 3), &[lines(3, 3)]));
        assert!(at_cited(lines(268, 273), &[lines(268, 272)]), "a quote a line longer than its range");
        assert!(at_cited(lines(3, 4), &[lines(4, 9)]));
        assert!(!at_cited(lines(3, 4), &[lines(5, 9)]));
        assert!(at_cited(lines(190, 192), &[lines(188, 188), lines(200, 200)]), "from the first to the last range");
        assert!(!at_cited(lines(3, 3), &[]));
        assert!(at_cited(lines(101, 104), &[lines(102, 105)]), "a line off: as analysts count");
        assert!(!at_cited(lines(100, 103), &[lines(102, 105)]), "two lines off: elsewhere");
        assert!(!at_cited(lines(956, 959), &[lines(953, 956)]), "three lines off: elsewhere");
    }
}
