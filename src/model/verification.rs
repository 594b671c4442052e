//! What `casebook verify` found of each quote and citation, read against its source at the
//! frozen revision.

use std::collections::BTreeMap;

use super::{LineRange, Slug};

/// The verdict on a quote.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum QuoteVerdict {
    /// Found at the cited lines, or, with no lines cited, found (first) at `lines`.
    Verified {
        /// Where it is.
        lines: LineRange,
    },
    /// Found, but not at the cited lines.
    Elsewhere {
        /// Where it is (its first occurrence).
        lines: LineRange,
    },
    /// The file holds no such passage.
    NotFound {
        /// The lines most like it, when any share a word with it.
        closest: Option<LineRange>,
        /// How alike they are, per mille.
        alike: u16,
    },
    /// The quoted file is not in the source at the revision.
    MissingFile,
    /// It could not be checked (why).
    NotVerified {
        /// Why not: no repository given, a source without one, …
        why: String,
    },
}

/// The verdict on a citation.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "verdict", rename_all = "kebab-case")]
pub enum CitationVerdict {
    /// The path is there, of the kind cited, and the lines are within it.
    Verified,
    /// The path is not in the source at the revision.
    MissingPath,
    /// Cited lines end past the file's end.
    PastEnd {
        /// How many lines the file has.
        file_lines: u32,
    },
    /// Cited as a folder, but a file; or cited with lines, but a folder.
    WrongKind,
    /// A citation of the source as a whole (`SRC-8`): nothing to check but that it was
    /// read; not counted.
    WholeSource,
    /// It could not be checked (a section of a document, a source not on this machine).
    NotVerified {
        /// Why not.
        why: String,
    },
}

/// The verdicts of one run: per report, per quote and per citation, in the report's order.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunVerification {
    /// `quotes[r][q]`: quote `q` of report `r`.
    pub quotes: Vec<Vec<QuoteVerdict>>,
    /// `citations[r][c]`: citation `c` of report `r`.
    pub citations: Vec<Vec<CitationVerdict>>,
    /// The revision each source was read at (`SRC-1` → its commit), for those read.
    pub revisions: BTreeMap<String, String>,
}

/// How many quotes and citations got each verdict.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VerificationCounts {
    /// Quotes found at their lines.
    pub quotes_verified: usize,
    /// Quotes found at other lines.
    pub quotes_elsewhere: usize,
    /// Quotes not found.
    pub quotes_not_found: usize,
    /// Quotes of a file that is not there.
    pub quotes_missing_file: usize,
    /// Quotes that could not be checked.
    pub quotes_not_verified: usize,
    /// Citations whose path, kind and lines are right.
    pub citations_verified: usize,
    /// Citations of a path that is not there.
    pub citations_missing_path: usize,
    /// Citations of lines past a file's end.
    pub citations_past_end: usize,
    /// Citations of a folder as a file, or the other way round.
    pub citations_wrong_kind: usize,
    /// Citations that could not be checked.
    pub citations_not_verified: usize,
}

impl VerificationCounts {
    /// Adds the verdicts of `run`.
    pub fn add(&mut self, run: &RunVerification) {
        for verdict in run.quotes.iter().flatten() {
            *match verdict {
                QuoteVerdict::Verified { .. } => &mut self.quotes_verified,
                QuoteVerdict::Elsewhere { .. } => &mut self.quotes_elsewhere,
                QuoteVerdict::NotFound { .. } => &mut self.quotes_not_found,
                QuoteVerdict::MissingFile => &mut self.quotes_missing_file,
                QuoteVerdict::NotVerified { .. } => &mut self.quotes_not_verified,
            } += 1;
        }
        for verdict in run.citations.iter().flatten() {
            *match verdict {
                CitationVerdict::Verified => &mut self.citations_verified,
                CitationVerdict::MissingPath => &mut self.citations_missing_path,
                CitationVerdict::PastEnd { .. } => &mut self.citations_past_end,
                CitationVerdict::WrongKind => &mut self.citations_wrong_kind,
                CitationVerdict::NotVerified { .. } => &mut self.citations_not_verified,
                CitationVerdict::WholeSource => continue,
            } += 1;
        }
    }

    /// The quotes' verdicts in words: `2 of 6 verified (1 at other lines, 2 not found)`.
    pub fn quotes_phrase(&self) -> String {
        phrase(
            self.quotes(),
            self.quotes_verified,
            &[
                (self.quotes_elsewhere, "at other lines"),
                (self.quotes_not_found, "not found"),
                (self.quotes_missing_file, "of a missing file"),
                (self.quotes_not_verified, "not verifiable"),
            ],
        )
    }

    /// The citations' verdicts in words.
    pub fn citations_phrase(&self) -> String {
        phrase(
            self.citations(),
            self.citations_verified,
            &[
                (self.citations_missing_path, "to a missing path"),
                (self.citations_past_end, "past the file's end"),
                (self.citations_wrong_kind, "of a folder as a file or a file as a folder"),
                (self.citations_not_verified, "not verifiable"),
            ],
        )
    }

    /// Quotes in all.
    pub fn quotes(&self) -> usize {
        self.quotes_verified
            + self.quotes_elsewhere
            + self.quotes_not_found
            + self.quotes_missing_file
            + self.quotes_not_verified
    }

    /// Citations in all.
    pub fn citations(&self) -> usize {
        self.citations_verified
            + self.citations_missing_path
            + self.citations_past_end
            + self.citations_wrong_kind
            + self.citations_not_verified
    }
}

/// `verified of all verified (n what, …)`, the verdicts that did not occur left out.
fn phrase(all: usize, verified: usize, others: &[(usize, &str)]) -> String {
    let others: Vec<String> = others.iter().filter(|(n, _)| *n > 0).map(|(n, what)| format!("{n} {what}")).collect();
    let others = if others.is_empty() { String::new() } else { format!(" ({})", others.join(", ")) };
    format!("{verified} of {all} verified{others}")
}

/// The verdicts of every run that was verified, by system and run.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Verification {
    /// By system slug, then run slug.
    pub runs: BTreeMap<(Slug, Slug), RunVerification>,
}

impl Verification {
    /// The counts of every run.
    pub fn counts(&self) -> VerificationCounts {
        let mut counts = VerificationCounts::default();
        for run in self.runs.values() {
            counts.add(run);
        }
        counts
    }
}
