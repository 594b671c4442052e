//! Statuses stated by a sentence of prose: `User scoping is *absent* at the interface
//! level.` A status word after `is`/`are`/`remains` ends a short subject, which names the
//! dimension (`user scoping`), or the whole subject when it is a pronoun (`It is *wired*`).
//! Only the shape is read here; the report scanner keeps such a sentence only where the
//! author set the status word apart (emphasised), as one marks a term of a vocabulary.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::statuses::{concludes, parenthesised, sentence_start_before, CLAUSE_WORDS, NEGATIONS};
use super::{Stated, StatusWords};

/// A status stated with a copula.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CopulaStatus {
    /// The subject's words, without a leading article (`input bound`); empty for a
    /// pronoun, which names the whole subject.
    pub dimension: String,
    /// The sentence, from its start to the end of the status word, in bytes of the text.
    pub sentence: Range<usize>,
    /// The status and where its word is.
    pub stated: Stated,
}

/// The longest subject, in words.
const MAX_SUBJECT_WORDS: usize = 8;
/// Words that open a sentence before its subject (`But the bound is *absent*`).
const OPENERS: [&str; 7] = ["but", "and", "so", "yet", "however", "still", "also"];
/// Articles and determiners before the subject's words.
const ARTICLES: [&str; 6] = ["the", "a", "an", "its", "their", "our"];
/// Subjects that are the record itself.
const PRONOUNS: [&str; 4] = ["it", "this", "that", "they"];

/// Every status of `text` stated as `<subject> is <status>`, in order.
pub fn copula_statuses(words: &StatusWords, text: &str) -> Vec<CopulaStatus> {
    static COPULA: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"\b(?:is|are|was|were|remains|remain|stays|stay)\s+").unwrap());
    let mut out = Vec::new();
    for copula in COPULA.find_iter(text) {
        let rest = &text[copula.end()..];
        let rest = rest.trim_start_matches(['*', '_']);
        let at = text.len() - rest.len();
        let Some((name, len)) = words.at_start(rest) else { continue };
        let after = rest[len..].trim_start_matches(['*', '_']);
        if !concludes(after) {
            continue;
        }
        let start = sentence_start_before(text, copula.start());
        let Some(dimension) = subject_dimension(&text[start..copula.start()]) else { continue };
        out.push(CopulaStatus {
            dimension,
            sentence: start..at + len,
            stated: Stated {
                status: name.to_string(),
                qualifier: parenthesised(after),
                lead: None,
                range: at..at + len,
            },
        });
    }
    out
}

/// The dimension a subject names (empty for a pronoun), or none when it is no short name
/// (a clause, a negation, a list).
fn subject_dimension(subject: &str) -> Option<String> {
    let subject = subject.trim();
    if subject.is_empty() || subject.contains([',', ';', ':', '(', ')', '"']) {
        return None;
    }
    let mut words: Vec<&str> = subject.split_whitespace().collect();
    let lower = |w: &str| w.to_lowercase();
    while words.first().is_some_and(|w| OPENERS.contains(&lower(w).as_str())) {
        words.remove(0);
    }
    if words.len() == 1 && PRONOUNS.contains(&lower(words[0]).as_str()) {
        return Some(String::new());
    }
    if words.first().is_some_and(|w| ARTICLES.contains(&lower(w).as_str())) {
        words.remove(0);
    }
    let clause = words.iter().any(|w| {
        let w = lower(w);
        CLAUSE_WORDS.contains(&w.as_str()) || NEGATIONS.contains(&w.as_str()) || PRONOUNS.contains(&w.as_str())
    });
    if words.is_empty() || words.len() > MAX_SUBJECT_WORDS || clause {
        return None;
    }
    Some(words.join(" "))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn read(text: &str) -> Vec<(String, String, Option<String>)> {
        let words =
            StatusWords::new(["absent", "implemented", "uninspected", "wired"].map(String::from), &BTreeMap::new());
        copula_statuses(&words, text).into_iter().map(|c| (c.dimension, c.stated.status, c.stated.qualifier)).collect()
    }

    #[test]
    fn a_short_subject_and_a_copula_before_a_status() {
        let s = |d: &str, st: &str| (d.to_string(), st.to_string(), None);
        assert_eq!(read("User scoping is *absent* at the interface level."), [s("User scoping", "absent")]);
        assert_eq!(read("The input bound is *implemented* but not applied."), [s("input bound", "implemented")]);
        assert_eq!(
            read("Whether concrete back-ends scope the call is *uninspected* (L3)."),
            [("Whether concrete back-ends scope the call".into(), "uninspected".into(), Some("L3".into()))]
        );
        assert_eq!(read("It is wired."), [s("", "wired")]);
        assert_eq!(
            read("But a bound on injected memories is absent from the agent path."),
            [s("bound on injected memories", "absent")]
        );
    }

    #[test]
    fn clauses_negations_and_long_subjects_state_nothing() {
        assert!(read("The hook that is not absent is wired, mostly.").is_empty());
        assert!(read("Whatever the model does is not absent.").is_empty());
        assert!(read("When the cache is cold, the index is absent behaviour.").is_empty());
        assert!(read("The path, the cache and the bound are absent.").is_empty());
        assert!(read("One two three four five six seven eight nine is absent.").is_empty());
        assert!(read("The store is absent-minded.").is_empty());
    }
}
