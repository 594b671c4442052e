//! Statuses in text: where an analysis states a conclusion with a word of its vocabulary.
//!
//! A value states a status when it *starts* with one (`absent`, `implemented (listing)`,
//! `implemented — concatenated into …`, `uninspected, and …`), or, where the reading
//! allows it, when its first clause *ends* with one after a short lead phrase
//! (`retention implemented, garbage collection absent`). Later clauses of the same
//! sentence that read the same way add statuses (`absent at the turn level; implemented
//! only within one turn`). A status word anywhere else in a sentence is prose: `the packet
//! forbids causally supported conclusions` states nothing.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::is_boundary_before;
use super::words::{STATUS_NOUNS, WHOLE_SUBJECT};

/// The words of a site's status vocabulary, with their synonyms, matched without regard
/// to case as whole words.
#[derive(Debug, Clone)]
pub struct StatusWords {
    /// Each written form, lower-case, with the index of its status in `names`; longest
    /// first, so `causally supported` wins over a shorter form it starts with.
    forms: Vec<(String, usize)>,
    /// The statuses, as the vocabulary names them.
    names: Vec<String>,
    /// The first word of every form, lower-case: most words are none of them.
    first_words: HashSet<String>,
}

/// How a value is read: what a key or column says is a status (`Status: …`, a `Status`
/// column) may state one in any words; anywhere else a status must read as a
/// conclusion, followed only by punctuation, a qualifier or a connecting word
/// (`implemented for the host handoff`, not `observed behaviour`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// A key or column says the value is a status.
    Explicit,
    /// A cell of a column whose cells state statuses: a lead phrase may come first
    /// (`wiring implemented`).
    Column,
    /// The value of a `Key: value`: it must start with the status (`Cause: the user
    /// observed` states nothing).
    KeyValue,
}

/// One status a value states.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stated {
    /// The status, as the vocabulary names it.
    pub status: String,
    /// The text in parentheses right after it (`listing` in `implemented (listing)`).
    pub qualifier: Option<String>,
    /// The phrase before it, when it ends its clause (`garbage collection` in
    /// `garbage collection absent`).
    pub lead: Option<String>,
    /// Where the status word is written, in bytes of the value.
    pub range: Range<usize>,
}

/// Words that may follow a status that concludes: `implemented for …`, `absent at …`.
const CONNECTORS: [&str; 52] = [
    "about",
    "across",
    "after",
    "again",
    "already",
    "also",
    "although",
    "and",
    "as",
    "at",
    "because",
    "before",
    "beyond",
    "both",
    "but",
    "by",
    "either",
    "elsewhere",
    "even",
    "except",
    "for",
    "from",
    "here",
    "if",
    "in",
    "inside",
    "into",
    "not",
    "now",
    "on",
    "once",
    "only",
    "or",
    "outside",
    "over",
    "per",
    "since",
    "so",
    "still",
    "then",
    "there",
    "though",
    "through",
    "throughout",
    "to",
    "under",
    "unless",
    "until",
    "up",
    "via",
    "when",
    "where",
];
/// More words that may follow a status (`implemented within`, `absent without`).
const MORE_CONNECTORS: [&str; 6] = ["while", "whenever", "with", "within", "without", "yet"];
/// Words that undo a status in a lead: `nothing observed` does not state `observed`.
pub(super) const NEGATIONS: [&str; 10] =
    ["not", "no", "nothing", "never", "neither", "nor", "none", "without", "hardly", "cannot"];
/// Words that open a clause of a sentence, never a name.
const SENTENCE_OPENERS: [&str; 14] = [
    "moreover",
    "whether",
    "which",
    "that",
    "who",
    "what",
    "how",
    "however",
    "thus",
    "hence",
    "therefore",
    "it",
    "this",
    "these",
];
/// Words a lead may end with that are not part of what it names (`handling is uninspected`).
const COPULAS: [&str; 9] = ["is", "are", "was", "were", "be", "been", "remains", "remain", "stays"];
/// The longest lead phrase, in words.
const MAX_LEAD_WORDS: usize = 6;

impl StatusWords {
    /// The vocabulary `names` (in order) with `synonyms` (written form → status name;
    /// a synonym of a name that is not in `names` is left out).
    pub fn new(names: impl IntoIterator<Item = String>, synonyms: &BTreeMap<String, String>) -> Self {
        let names: Vec<String> = names.into_iter().collect();
        let forms: Vec<(String, usize)> = names.iter().enumerate().map(|(i, n)| (n.to_lowercase(), i)).collect();
        StatusWords::of_forms(forms, names, synonyms)
    }

    /// The words of `forms` and of `more` (written form → status name; one of a name not
    /// in `names` is left out), longest first, each form once (the first given wins).
    fn of_forms<'m>(
        mut forms: Vec<(String, usize)>,
        names: Vec<String>,
        more: impl IntoIterator<Item = (&'m String, &'m String)>,
    ) -> Self {
        for (written, name) in more {
            if let Some(i) = names.iter().position(|n| n == name) {
                forms.push((written.to_lowercase(), i));
            }
        }
        forms.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        forms.dedup_by(|a, b| a.0 == b.0);
        let first_words = forms.iter().filter_map(|(f, _)| f.split_whitespace().next()).map(str::to_string).collect();
        StatusWords { forms, names, first_words }
    }

    /// These words with the `learned` ones (written form → status name), which a run's
    /// reports define for themselves ([`super::legend_synonyms`]).
    pub fn with_learned(&self, learned: &[(String, String)]) -> StatusWords {
        // A legend gives one form of a word that Romance languages inflect for gender and
        // number (`messo a disposizione`, then `messi a disposizione` of two engines):
        // the term's first word, ending in `o` or `a`, in its other endings too.
        let inflected: Vec<(String, String)> = learned
            .iter()
            .flat_map(|(term, name)| inflections(term).into_iter().map(move |t| (t, name.clone())))
            .filter(|(t, _)| !learned.iter().any(|(w, _)| w == t))
            .collect();
        let forms = learned.iter().chain(&inflected).map(|(w, n)| (w, n));
        StatusWords::of_forms(self.forms.clone(), self.names.clone(), forms)
    }

    /// The statuses, as the vocabulary names them.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The status written at the very start of `text`, as a whole word: its name and the
    /// length in bytes of the written form.
    pub fn at_start(&self, text: &str) -> Option<(&str, usize)> {
        // Most values start with no status: tell from their first word, lower-cased
        // without an allocation when it is short and ASCII.
        let word_len = match text.find(|c: char| !c.is_alphanumeric()) {
            // A legend's mark (`✅`, `🟡`) is a form of its own, up to the next space.
            Some(0) => text.find(char::is_whitespace).unwrap_or(text.len()),
            found => found.unwrap_or(text.len()),
        };
        let word = &text[..word_len];
        let mut buffer = [0u8; 32];
        let known = if word.is_ascii() && word.len() <= buffer.len() {
            buffer[..word.len()].copy_from_slice(word.as_bytes());
            buffer[..word.len()].make_ascii_lowercase();
            let lower = std::str::from_utf8(&buffer[..word.len()]).expect("ASCII");
            self.first_words.contains(lower)
        } else {
            self.first_words.contains(&word.to_lowercase())
        };
        if !known {
            return None;
        }
        self.forms.iter().find_map(|(form, i)| {
            let written = text.get(..form.len())?;
            (written.to_lowercase() == *form && ends_word(text, form.len()))
                .then(|| (self.names[*i].as_str(), form.len()))
        })
    }

    /// The status written at the very end of `text`, as a whole word: its name and
    /// where the written form starts.
    pub fn at_end(&self, text: &str) -> Option<(&str, usize)> {
        self.forms.iter().find_map(|(form, i)| {
            let start = text.len().checked_sub(form.len())?;
            let written = text.get(start..)?;
            let starts_word = text[..start].chars().next_back().is_none_or(|c| c.is_whitespace());
            (starts_word && written.to_lowercase() == *form).then(|| (self.names[*i].as_str(), start))
        })
    }

    /// True when `text` holds a word of the vocabulary anywhere, as a whole word.
    pub fn mentions_any(&self, text: &str) -> bool {
        let lower = text.to_lowercase();
        self.forms.iter().any(|(form, _)| {
            lower.match_indices(form.as_str()).any(|(at, _)| {
                let before = lower[..at].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
                before && ends_word(&lower, at + form.len())
            })
        })
    }

    /// The status a word that is none of them most likely meant (at most two edits
    /// away): `implmented` → `implemented`.
    pub fn near_miss(&self, word: &str) -> Option<&str> {
        let word = word.trim().to_lowercase();
        let len = word.chars().count();
        self.names
            .iter()
            .map(|n| (n.to_lowercase(), n))
            // No fewer edits than the lengths differ by: most values are sentences, far
            // longer than any status, and a table of them asks this once a row.
            .filter(|(name, _)| name.chars().count().abs_diff(len) <= 2)
            .map(|(name, n)| (strsim::damerau_levenshtein(&word, &name), n))
            .filter(|(d, _)| *d <= 2)
            .min()
            .map(|(_, n)| n.as_str())
    }
}

fn ends_word(text: &str, at: usize) -> bool {
    text[at..].chars().next().is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '-' && next_is_word(text, at)))
}

fn next_is_word(text: &str, at: usize) -> bool {
    text[at..].chars().nth(1).is_some_and(char::is_alphanumeric)
}

/// True for values that say nothing on purpose: empty, a dash, `n/a`.
pub fn is_placeholder(text: &str) -> bool {
    let text = text.trim();
    // The longest placeholder is four bytes: most cells are longer, and never lower-cased.
    text.len() <= 4 && ["", "-", "—", "–", "n/a", "na", "none", "?"].iter().any(|p| text.eq_ignore_ascii_case(p))
}

/// The statuses `value` states, read as `reading` says (see the module's summary).
pub fn stated(words: &StatusWords, value: &str, reading: Reading) -> Vec<Stated> {
    // `● wired`, `– inapplicable`, `✎ claimed`: a legend's symbol before the status word
    // (unless the symbol is itself the status, as a legend of marks makes it: `✅ only in
    // all mode`).
    let marker = status_marker_len(value);
    let marker = match words.at_start(value.trim_start()) {
        Some(_) if words.at_start(&value[marker..]).is_none() => 0,
        _ => marker,
    };
    if marker > 0 {
        let mut out = stated(words, &value[marker..], reading);
        for found in &mut out {
            found.range = found.range.start + marker..found.range.end + marker;
        }
        return out;
    }
    // Most values state no status: their first clause neither starts with one nor (where a
    // lead is allowed) ends with one. Tell that before reading the whole value.
    let first = value.trim_start();
    let clause_end = first.find([',', ';', '.', '(', '—', '–']).unwrap_or(first.len());
    let clause_end = first[..clause_end].find(" / ").unwrap_or(clause_end);
    let clause = first[..clause_end].trim_end();
    let lead_allowed = reading != Reading::KeyValue;
    if words.at_start(first).is_none() && !(lead_allowed && words.at_end(clause).is_some()) {
        return Vec::new();
    }
    let sentence = &value[..first_sentence_end(value)];
    let mut out = Vec::new();
    for (i, clause) in clauses(sentence).into_iter().enumerate() {
        let found = clause_status(
            words,
            sentence,
            clause,
            i == 0 && reading == Reading::Explicit,
            reading != Reading::KeyValue,
        );
        match found {
            Some(stated) => out.push(stated),
            // A value that does not state a status in its first clause states none.
            None if i == 0 => return out,
            None => {}
        }
    }
    out
}

/// The length of a symbol (and its spaces) that leads a value before a word: `● `, `– `,
/// `✎ `, `? `. Brackets, quotes and Markdown's own marks are no such symbol.
fn status_marker_len(value: &str) -> usize {
    let text = value.trim_start();
    let lead = value.len() - text.len();
    let Some(first) = text.chars().next() else { return 0 };
    let symbol = !first.is_alphanumeric() && !"([{\"'`*_~<&#|\\".contains(first);
    // The symbol with what joins it (`🎛️`: a variation selector after the emoji).
    let symbol_len: usize =
        text.chars().take_while(|c| !c.is_alphanumeric() && !c.is_whitespace()).take(3).map(char::len_utf8).sum();
    let after = &text[symbol_len..];
    let spaced = after.starts_with(' ') && after.trim_start().starts_with(char::is_alphabetic);
    if symbol && spaced {
        lead + symbol_len + (after.len() - after.trim_start().len())
    } else {
        0
    }
}

/// The status of one clause (`range` of `text`), read loosely when `loose` (the first
/// clause of an explicit value), a lead phrase allowed when `lead_allowed`.
fn clause_status(
    words: &StatusWords,
    text: &str,
    range: Range<usize>,
    loose: bool,
    lead_allowed: bool,
) -> Option<Stated> {
    let clause = &text[range.clone()];
    let lead_space = clause.len() - clause.trim_start().len();
    let clause = clause.trim();
    let at = range.start + lead_space;
    if let Some((name, len)) = words.at_start(clause) {
        let rest = &clause[len..];
        // A legend's mark (`✅ only in all mode`) is no word of a sentence: what follows it
        // is its note.
        let mark = !clause.starts_with(char::is_alphanumeric);
        if loose || concludes(rest) || mark {
            let note = rest.trim();
            return Some(Stated {
                status: name.to_string(),
                qualifier: parenthesised(rest).or_else(|| (mark && !note.is_empty()).then(|| note.to_string())),
                lead: None,
                range: at..at + len,
            });
        }
        return None;
    }
    if !lead_allowed {
        return None;
    }
    // `garbage collection absent`, `handling is uninspected (CMP-12)`.
    let (body, qualifier) = match clause.strip_suffix(')').and_then(|c| c.rfind(" (").map(|i| (i, c))) {
        Some((open, c)) => (c[..open].trim_end(), Some(c[open + 2..].trim().to_string())),
        None => (clause.trim_end_matches(['.', '!']), None),
    };
    let (name, start) = words.at_end(body)?;
    let mut lead: Vec<&str> = body[..start].split_whitespace().collect();
    if lead.is_empty() || lead.len() > MAX_LEAD_WORDS + 1 {
        return None;
    }
    if lead.iter().any(|w| NEGATIONS.contains(&w.to_lowercase().as_str()) || w.to_lowercase().ends_with("n't")) {
        return None;
    }
    // A lead that opens with a connecting word goes on a sentence (`or truncated is
    // uninspected`); a name does not.
    let opener = lead[0].to_lowercase();
    if CONNECTORS.contains(&opener.as_str())
        || MORE_CONNECTORS.contains(&opener.as_str())
        || SENTENCE_OPENERS.contains(&opener.as_str())
    {
        return None;
    }
    if lead.last().is_some_and(|w| COPULAS.contains(&w.to_lowercase().as_str())) {
        lead.pop();
    }
    if lead.is_empty() || lead.len() > MAX_LEAD_WORDS || lead.iter().any(|w| w.ends_with([':', ';'])) {
        return None;
    }
    Some(Stated {
        status: name.to_string(),
        qualifier: qualifier.filter(|q| !q.is_empty()),
        lead: Some(lead.join(" ")),
        range: at + start..at + start + (body.len() - start),
    })
}

/// True when what follows a status lets it conclude: nothing, punctuation, a
/// parenthesis or dash, or a connecting word (any adverb in `-ly` among them).
pub(super) fn concludes(rest: &str) -> bool {
    let Some(first) = rest.chars().next() else { return true };
    if !first.is_whitespace() {
        return !first.is_alphanumeric();
    }
    let rest = rest.trim_start();
    let Some(next) = rest.chars().next() else { return true };
    if !next.is_alphanumeric() {
        return true;
    }
    let word: String =
        rest.chars().take_while(|c| c.is_alphanumeric() || *c == '\'').flat_map(char::to_lowercase).collect();
    CONNECTORS.contains(&word.as_str()) || MORE_CONNECTORS.contains(&word.as_str()) || word.ends_with("ly")
}

/// The text in parentheses at the start of `rest`, if any.
pub(super) fn parenthesised(rest: &str) -> Option<String> {
    let inner = rest.trim_start().strip_prefix('(')?;
    let mut depth = 1;
    for (i, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    let q = inner[..i].trim();
                    return (!q.is_empty()).then(|| q.to_string());
                }
            }
            _ => {}
        }
    }
    None
}

/// The other endings of a term's first word that ends in `o` or `a` (of four letters or
/// more): `collegato` → `collegata`, `collegati`, `collegate`, `collegatos`,
/// `collegatas`.
fn inflections(term: &str) -> Vec<String> {
    let (first, rest) = term.split_once(' ').map_or((term, ""), |(f, r)| (f, r));
    let Some(stem) = first.strip_suffix(['o', 'a']).filter(|stem| stem.chars().count() >= 3) else {
        return Vec::new();
    };
    let joined =
        |ending: &str| if rest.is_empty() { format!("{stem}{ending}") } else { format!("{stem}{ending} {rest}") };
    ["o", "a", "i", "e", "os", "as"].iter().map(|e| joined(e)).filter(|t| t != term).collect()
}

/// Where the first sentence of `text` ends (its terminator included), or its length.
pub fn first_sentence_end(text: &str) -> usize {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '.' | '!' | '?' if depth <= 0 => {
                let after = i + 1;
                if after == text.len() || is_boundary_before(text, after, text.len()) {
                    return after;
                }
            }
            _ => {}
        }
    }
    text.len()
}

/// The clauses of a sentence: split at ` / `, `;`, `,`, and spaced dashes, outside
/// parentheses.
fn clauses(sentence: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = sentence.as_bytes();
    let mut i = 0;
    while i < sentence.len() {
        let c = sentence[i..].chars().next().unwrap();
        let width = c.len_utf8();
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ';' | ',' if depth <= 0 => {
                out.push(start..i);
                start = i + 1;
            }
            '/' | '—' | '–'
                if depth <= 0 && i > 0 && bytes[i - 1] == b' ' && sentence[i + width..].starts_with(' ') =>
            {
                out.push(start..i - 1);
                start = i + width + 1;
                i = start;
                continue;
            }
            // `claimed (help text) and implemented (parsing)`: a qualifier closes a
            // clause that a conjunction joins to the next.
            ' ' if depth <= 0 && sentence[..i].ends_with(')') => {
                let rest = &sentence[i + 1..];
                if let Some(conjunction) = ["and ", "et ", "und ", "y "].iter().find(|w| rest.starts_with(**w)) {
                    out.push(start..i);
                    start = i + 1 + conjunction.len();
                    i = start;
                    continue;
                }
            }
            _ => {}
        }
        i += width;
    }
    out.push(start..sentence.len());
    out.retain(|r| r.start <= r.end);
    out
}

/// A key that says a status follows: `Status: …`, `Operation status: …`,
/// `Status of "compression": …`, `Status within this run: …`, `Promotion path finding: …`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusKey {
    /// Where the key starts (the start of its sentence), in bytes of the text.
    pub start: usize,
    /// Where the value starts, after the colon and spaces.
    pub value_start: usize,
    /// Where the value's sentence ends.
    pub value_end: usize,
    /// What the key names: the dimension before `status` (`Operation`), or the subject
    /// after `Status of`; `None` for a plain `Status:`.
    pub names: Option<String>,
    /// True for `Status of X`: `X` is what the status is about.
    pub of: bool,
}

/// Prepositions after `Status` that scope it without naming anything (`Status within
/// this run: …`).
const SCOPES: [&str; 5] = ["within", "in", "at", "under", "during"];
/// Words that name nothing before `status`: `The status: …` is a plain status.
const DETERMINERS: [&str; 7] = ["the", "this", "its", "their", "our", "his", "her"];

/// `words` as alternatives of a regular expression.
fn nouns_pattern(words: &[&str]) -> String {
    words.iter().map(|w| regex::escape(w)).collect::<Vec<_>>().join("|")
}

/// Every status key that starts a sentence of `text`, in order.
pub fn status_keys(text: &str) -> Vec<StatusKey> {
    // `Status — overall: wired; …`: a status noun alone, then a dash, leads the text;
    // or a stop, in a numbered clause's run-in (`4.1.2 Determination. wired.`).
    static DASHED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(&format!(
            r"^\s*(?:(?:[0-9]+\.)*[0-9]+\.?\s+)?(?:(?i:{})\s+[—–-]|(?:Status|Finding|Conclusion|Verdict|Determination|Dictamen|Veredicto)\.)\s+",
            nouns_pattern(STATUS_NOUNS)
        ))
        .unwrap()
    });
    let dashed = DASHED.find(text);
    if !text.contains(':') && dashed.is_none() {
        return Vec::new();
    }
    // Most text holds none of the nouns: tell without lower-casing it.
    static NOUNS: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(&format!("(?i){}|dimension", nouns_pattern(STATUS_NOUNS))).unwrap());
    if !NOUNS.is_match(text) {
        return Vec::new();
    }
    // ASCII lower-casing keeps every byte offset.
    let lower = text.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut searched = 0;
    if let Some(lead) = dashed {
        let start = text.len() - text.trim_start().len();
        let value_start = lead.end();
        let value_end = value_start + first_sentence_end(&text[value_start..]);
        out.push(StatusKey { start, value_start, value_end, names: None, of: false });
        searched = value_end;
    }
    while let Some(found) = text[searched..].find(':') {
        let colon = searched + found;
        searched = colon + 1;
        if !text[colon + 1..].starts_with([' ', '\t']) {
            continue;
        }
        let start = key_start_before(text, colon);
        // `status :: wired`: a double colon joins a key to its value as one does.
        let key_end = if text[..colon].ends_with(':') { colon - 1 } else { colon };
        let key = lower[start..key_end].trim();
        let starts_name = key.chars().next().is_some_and(|c| c.is_alphanumeric() || "(\"“'".contains(c));
        // `Status (runs on resume): absent`: the dimension in parentheses may be long.
        let limit = if dimension_in_parentheses(key).is_some() { 24 } else { 9 };
        if !starts_name || key.len() > 200 || key.split_whitespace().count() > limit {
            continue;
        }
        let Some((names, of)) = key_names(key, &text[start..key_end]) else { continue };
        let value_start = colon + 1 + (text[colon + 1..].len() - text[colon + 1..].trim_start().len());
        let value_end = value_start + first_sentence_end(&text[value_start..]);
        out.push(StatusKey { start, value_start, value_end, names, of });
        searched = value_end.max(searched);
    }
    out
}

/// The sentences of a record's paragraph that are a short key and a status standing
/// alone (`… both end in the same call. Offered to the model: afforded (to the manager).`):
/// the key names the dimension though it has no status noun. The status must stand alone
/// (then a stop, a bracket or the end), so that `The result: absent from the logs` is prose.
pub fn bare_status_keys(words: &StatusWords, text: &str) -> Vec<StatusKey> {
    let mut out = Vec::new();
    // Chinese and Japanese set a full-width colon, with no space after it (`書き込み：接続済み`).
    let colons = text.match_indices(": ").chain(text.match_indices('：')).map(|(at, colon)| (at, colon.len()));
    let mut colons: Vec<(usize, usize)> = colons.collect();
    colons.sort_unstable();
    for (colon, colon_len) in colons {
        let mut start = key_start_before(text, colon);
        // `fact → episodes:: wired`: a Dataview field's double colon makes any short
        // line's words a key, whatever their case and signs; after a sentence, in lower
        // case too (`… (cf. LTM). capacity :: claimed`).
        let dataview = text[..colon].ends_with(':') && !text[..colon - 1].ends_with(':');
        if dataview {
            start = text[start..colon].rfind(". ").map_or(start, |at| start + at + 2);
        }
        let key_end = if dataview { colon - 1 } else { colon };
        let key = text[start..key_end].trim();
        let key_words: Vec<&str> = key.split_whitespace().collect();
        // A key opens with a capital, or with a letter of a script without case (`書`).
        let opens_key = |c: char| c.is_uppercase() || (c.is_alphabetic() && !c.is_lowercase() && !c.is_ascii());
        let signs_allowed = |c: char| {
            if dataview {
                c != ':'
            } else {
                c.is_alphanumeric() || " -'・（）／`_\"“”«»".contains(c)
            }
        };
        // A key may be a quotation (`"Swarm of agents": claimed`).
        let unquoted = key.trim_start_matches(['"', '“', '«']);
        // A key that opens the text (a line of fields on its own) may be longer than one
        // after a sentence.
        let opens_text = text[..start].trim().is_empty();
        let most_words = if dataview || opens_text { 8 } else { 6 };
        let shaped = (dataview || unquoted.starts_with(opens_key))
            && (1..=most_words).contains(&key_words.len())
            && key.chars().all(signs_allowed)
            && !key_words.iter().any(|w| {
                let w = w.to_lowercase();
                // (`by` names an agent after a participle: `Written by: wired`.)
                (CLAUSE_WORDS.contains(&w.as_str()) && w != "by")
                    || ["that", "which", "when", "if", "because"].contains(&w.as_str())
            });
        if !shaped {
            continue;
        }
        let value_start =
            colon + colon_len + (text[colon + colon_len..].len() - text[colon + colon_len..].trim_start().len());
        let Some((_, len)) = words.at_start(&text[value_start..]) else { continue };
        let after = text[value_start + len..].trim_start();
        if !(after.is_empty() || after.starts_with(['(', '.', ';', ',', '（', '。', '；', '，', '、'])) {
            continue;
        }
        let value_end = value_start + first_sentence_end(&text[value_start..]);
        out.push(StatusKey { start, value_start, value_end, names: Some(key.to_string()), of: false });
    }
    out
}

/// A clause of a plain status key's value that states its own dimension's status:
/// `overall: wired`, `dimension "naming": wired`, `Submodule restriction: wired (…)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DimensionClause {
    /// The dimension's words in the value, empty for none (`overall`, or a first clause
    /// that is a bare status).
    pub dimension: Range<usize>,
    /// Where the clause's status starts, and where the clause ends.
    pub value: Range<usize>,
}

/// Words that, as the whole of a status's key or column, name the status a threat or a
/// control has as a whole: `Mitigation status: absent` on a threat.
const STATUS_OF_WHOLE: [&str; 3] = ["mitigation", "control", "remediation"];

/// True when a dimension's words name the whole subject (`overall`, `(overall)`,
/// `Status (overall)`, `Mitigation`).
pub fn names_whole_subject(dimension: &str) -> bool {
    let words = dimension.trim().trim_matches(|c: char| !c.is_alphanumeric());
    let lower = words.to_lowercase();
    let whole = !words.is_empty() && WHOLE_SUBJECT.iter().chain(&STATUS_OF_WHOLE).any(|w| lower == *w);
    // `Status (overall)`: a status noun scoped to the whole.
    whole
        || dimension_in_parentheses(dimension)
            .is_some_and(|inner| inner != dimension.trim() && names_whole_subject(inner))
}

/// The clauses of a plain status key's value (`Status: overall: wired; at build: absent
/// (…)`, `Status: on import: wired. Submodules: wired.`) when it states a status per
/// dimension: clauses are separated by `;` or a sentence's end outside parentheses, each
/// `dimension: status…` (the dimension may be quoted, or led by the word `dimension`),
/// the first possibly a bare status. Empty unless some clause names a dimension; the
/// clauses end at the first one that is neither.
pub fn dimension_clauses(words: &StatusWords, value: &str) -> Vec<DimensionClause> {
    static NAMED: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"^(?i:dimension\s+)?(?:"(?P<q>[^"]{1,80})"|“(?P<c>[^”]{1,80})”|(?P<w>[^:;—–→·]{1,80}?))(?::\s+|\s+[—–→]\s+)"#)
            .unwrap()
    });
    if !value.contains([':', '—', '–', '→']) {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut named_any = false;
    for (i, range) in key_value_clauses(value).into_iter().enumerate() {
        let clause = &value[range.clone()];
        let lead = clause.len() - clause.trim_start().len();
        let at = range.start + lead;
        let clause = clause.trim();
        let named = NAMED.captures(clause).and_then(|c| {
            let name = c.name("q").or(c.name("c")).or(c.name("w")).unwrap();
            let rest = c.get(0).unwrap().end();
            words.at_start(&clause[rest..]).map(|_| (at + name.start()..at + name.end(), at + rest))
        });
        match named {
            Some((name, status_at)) => {
                named_any = true;
                let whole = WHOLE_SUBJECT.iter().any(|w| value[name.clone()].trim().eq_ignore_ascii_case(w));
                let dimension = if whole { name.start..name.start } else { name };
                out.push(DimensionClause { dimension, value: status_at..range.end });
            }
            None if i == 0 && words.at_start(clause).is_some() => {
                out.push(DimensionClause { dimension: at..at, value: at..range.end })
            }
            None => break,
        }
    }
    if !named_any {
        return Vec::new();
    }
    out
}

/// A value cut at `;` and at sentence ends, outside parentheses and quotes.
fn key_value_clauses(value: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let (mut depth, mut quoted, mut start) = (0i32, false, 0);
    for (i, c) in value.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            '"' => quoted = !quoted,
            // `read back → wired · bounded → absent`: a middle dot between spaces ends one.
            '·' if depth <= 0
                && !quoted
                && value[..i].ends_with(' ')
                && value[i + '·'.len_utf8()..].starts_with(' ') =>
            {
                out.push(start..i);
                start = i + '·'.len_utf8();
            }
            ';' | '.' if depth <= 0 && !quoted => {
                let after = i + 1;
                if c == ';' || after == value.len() || is_boundary_before(value, after, value.len()) {
                    out.push(start..i);
                    start = after;
                }
            }
            _ => {}
        }
    }
    if !value[start..].trim().is_empty() {
        out.push(start..value.len());
    }
    out
}

/// Words that make what comes before `status` a clause, not a name (`The cache is keyed
/// by status: …`).
pub(super) const CLAUSE_WORDS: [&str; 19] = [
    "is", "are", "was", "were", "be", "by", "has", "have", "had", "does", "do", "did", "can", "will", "would",
    "should", "may", "might", "must",
];

/// What a lower-case key names, if it is a status key (`written` is the key as written,
/// whose case is kept).
fn key_names(key: &str, written: &str) -> Option<(Option<String>, bool)> {
    let written = written.trim();
    if let Some(inner) = dimension_in_parentheses(written) {
        return Some((Some(inner.to_string()), false));
    }
    let words: Vec<&str> = key.split_whitespace().collect();
    // `Dimension "fallback when no handoff": wired`: a key that names its dimension.
    if words.len() >= 2 && words[0] == "dimension" {
        let named = written.split_once(char::is_whitespace).map_or("", |(_, rest)| rest.trim());
        let named = named.trim_matches(['"', '“', '”', '\'', '`']).trim();
        return (!named.is_empty()).then(|| (Some(named.to_string()), false));
    }
    let noun = |w: &str| STATUS_NOUNS.contains(&w.trim_matches(|c: char| !c.is_alphanumeric()));
    if words.len() == 1 && noun(words[0]) {
        return Some((None, false));
    }
    let after_noun = || written.split_once(char::is_whitespace).map_or("", |(_, rest)| rest.trim());
    // `Dictamen «escrito por»: wired`, `Status "read back": absent`: the noun, then the
    // dimension in quotation marks.
    if noun(words[0]) && words.len() >= 2 {
        let quoted = after_noun();
        let pairs = [('«', '»'), ('"', '"'), ('“', '”'), ('„', '“'), ('‹', '›')];
        if let Some(inner) = pairs.iter().find_map(|(open, close)| {
            quoted
                .strip_prefix(*open)?
                .strip_suffix(*close)
                .map(|inner| inner.trim_matches(|c: char| c == '\u{a0}' || c == ' '))
        }) {
            return (!inner.is_empty()).then(|| (Some(inner.to_string()), false));
        }
    }
    // `Statut d'ensemble : wired`: the noun, then words that name the whole subject.
    if noun(words[0]) && names_whole_subject(after_noun()) {
        return Some((None, false));
    }
    // `Status, envd version gate: implemented`: the noun, a comma, then the dimension.
    if words.len() >= 2 && words[0].ends_with(',') && noun(words[0]) {
        let named = after_noun();
        return Some((Some(named.to_string()), false));
    }
    // `Verdict · written by: wired`, `Status — read back: absent`: the noun, a separator,
    // then the dimension.
    if noun(words[0]) && words.len() >= 3 && ["·", "•", "—", "–", "-", "|", "/"].contains(&words[1]) {
        let named = after_noun().split_once(char::is_whitespace).map_or("", |(_, rest)| rest.trim());
        return (!named.is_empty()).then(|| (Some(named.to_string()), false));
    }
    if noun(words[0]) && words.len() >= 3 && ["of", "for", "on"].contains(&words[1]) {
        let after: Vec<&str> = written.split_whitespace().skip(2).collect();
        return Some((Some(after.join(" ")).filter(|n| !n.is_empty()), true));
    }
    if noun(words[0]) && words.len() >= 2 && SCOPES.contains(&words[1]) {
        return Some((None, false));
    }
    if words.len() >= 2 && noun(words[words.len() - 1]) {
        let before: Vec<&str> = written.split_whitespace().collect();
        let named = before[..before.len() - 1].join(" ");
        if words.len() == 2 && DETERMINERS.contains(&words[0]) {
            return Some((None, false));
        }

        if words[..words.len() - 1].iter().any(|w| CLAUSE_WORDS.contains(w)) {
            return None;
        }
        return Some((Some(named), false));
    }
    None
}

/// The dimension of a key `Status (dimension)` or `Status [dimension]`, in its words as
/// written.
fn dimension_in_parentheses(key: &str) -> Option<&str> {
    let key = key.trim();
    let open = key.find(['(', '['])?;
    let close = if key[open..].starts_with('(') { ')' } else { ']' };
    let noun = key[..open].trim().to_ascii_lowercase();
    let inner = key[open + 1..].strip_suffix(close)?.trim();
    (STATUS_NOUNS.contains(&noun.as_str()) && !inner.is_empty() && !inner.contains(['(', ')', '[', ']']))
        .then_some(inner)
}

/// Where the key whose colon is at byte `at` of `text` starts: its sentence's start, or,
/// in a line of keys and values set apart by middle dots or bars (`Labels: core ·
/// Priority: P1 · Status: wired`), the last separator after an earlier key's colon (so
/// `Verdict · read back: wired` keeps its whole key).
fn key_start_before(text: &str, at: usize) -> usize {
    let start = sentence_start_before(text, at);
    let segment = &text[start..at];
    let cut = [" · ", " • ", " | "]
        .iter()
        .filter_map(|separator| {
            segment.rmatch_indices(separator).find(|(i, _)| segment[..*i].contains(':')).map(|(i, s)| i + s.len())
        })
        .max();
    start + cut.unwrap_or(0)
}

/// The start of the sentence that holds byte `at` of `text`.
pub(super) fn sentence_start_before(text: &str, at: usize) -> usize {
    for (i, c) in text[..at].char_indices().rev() {
        if matches!(c, '.' | '!' | '?') && is_boundary_before(text, i + 1, at) {
            return i + 1 + (text[i + 1..at].len() - text[i + 1..at].trim_start().len());
        }
    }
    text.len() - text.trim_start().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_double_colon_joins_a_key_to_its_value() {
        let keys = status_keys("status :: wired (reached through MGXEnv)");
        assert_eq!(keys.len(), 1);
        assert_eq!((keys[0].names.as_deref(), keys[0].value_start), (None, 10));
    }

    #[test]
    fn keys_set_off_by_brackets_middle_dots_or_french_spacing() {
        let names = |text: &str| status_keys(text).into_iter().map(|k| k.names).collect::<Vec<_>>();
        assert_eq!(names("Status [timeout]: absent (only an interrupt)"), [Some("timeout".to_string())]);
        assert_eq!(names("Verdict · written by: WIRED (by every phase)"), [Some("written by".to_string())]);
        assert_eq!(names("Labels: memory, core · Assignee: @rk · Priority: P1 · Status: wired (default)"), [None]);
        assert_eq!(names("Statut d'ensemble : wired (sur les deux chemins)"), [None]);
        assert_eq!(
            names("Status, envd version gate: implemented (old templates)"),
            [Some("envd version gate".to_string())]
        );
        assert_eq!(names("Status, overall: uninspected."), [None]);
        let keys = status_keys("Labels: memory · Status: wired");
        assert_eq!(&"Labels: memory · Status: wired"[keys[0].start..keys[0].value_start], "Status: ");
    }

    #[test]
    fn an_opinion_s_determination_and_spanish_keys_with_quoted_dimensions() {
        let keys = |text: &str| {
            status_keys(text).into_iter().map(|k| (k.names, text[k.value_start..].to_string())).collect::<Vec<_>>()
        };
        assert_eq!(keys("4.1.2 Determination. wired. All of it."), [(None, "wired. All of it.".to_string())]);
        assert_eq!(keys("Determination — wired"), [(None, "wired".to_string())]);
        assert!(keys("Determination. The court held otherwise.")[0].0.is_none(), "a status belongs there: noted");
        assert!(keys("4.1 The determination. It held.").is_empty(), "only a run-in noun leads a key");
        assert_eq!(keys("Dictamen global: conectado — punto"), [(None, "conectado — punto".to_string())]);
        assert_eq!(
            keys("Dictamen «escrito por»: conectado"),
            [(Some("escrito por".to_string()), "conectado".to_string())]
        );
        assert_eq!(keys("Status \"read back\": absent"), [(Some("read back".to_string()), "absent".to_string())]);
    }

    #[test]
    fn statuses_joined_after_their_qualifiers_are_each_stated() {
        let words = StatusWords::new(["claimed", "implemented"].map(String::from), &BTreeMap::new());
        let found = stated(&words, "claimed (help text) and implemented (argument parsing)", Reading::KeyValue);
        let shown: Vec<_> = found.iter().map(|s| (s.status.as_str(), s.qualifier.as_deref())).collect();
        assert_eq!(shown, [("claimed", Some("help text")), ("implemented", Some("argument parsing"))]);
        let prose = stated(&words, "claimed by the README and implemented nowhere", Reading::KeyValue);
        assert_eq!(prose.len(), 1, "without a qualifier closing it, `and` joins no clause");
    }

    #[test]
    fn a_legend_s_term_is_read_in_its_other_endings() {
        let words = StatusWords::new(["afforded", "wired"].map(String::from), &BTreeMap::new());
        let learned = [("messo a disposizione".to_string(), "afforded".to_string()), ("bağlı".into(), "wired".into())];
        let words = words.with_learned(&learned);
        assert_eq!(words.at_start("messi a disposizione (del modello)"), Some(("afforded", 20)));
        assert_eq!(words.at_start("messe a disposizione"), Some(("afforded", 20)));
        assert_eq!(words.at_start("bağlı"), Some(("wired", "bağlı".len())));
        assert_eq!(inflections("collegato"), ["collegata", "collegati", "collegate", "collegatos", "collegatas"]);
        assert!(inflections("yok").is_empty() && inflections("bağlı").is_empty());
    }

    #[test]
    fn a_bare_key_may_name_who_does_it() {
        let words = StatusWords::new(["wired", "uninspected"].map(String::from), &BTreeMap::new());
        let text = "Overall: wired. Written by: wired (once per run). Honoured by the search backends: uninspected.";
        let names: Vec<_> = bare_status_keys(&words, text).into_iter().map(|k| k.names.unwrap()).collect();
        assert_eq!(names, ["Overall", "Written by", "Honoured by the search backends"]);
        assert!(bare_status_keys(&words, "The cache is keyed by status: wired.").is_empty());
    }

    #[test]
    fn a_bare_key_may_be_a_quotation_or_a_longer_line_of_its_own() {
        let words = StatusWords::new(["claimed", "absent"].map(String::from), &BTreeMap::new());
        let names = |text: &str| -> Vec<String> {
            bare_status_keys(&words, text).into_iter().map(|k| k.names.unwrap()).collect()
        };
        assert_eq!(names("\"Swarm of agents\": claimed"), ["\"Swarm of agents\""]);
        assert_eq!(
            names("Unknown element ids rejected at parse time: absent (logged only)"),
            ["Unknown element ids rejected at parse time"]
        );
        assert!(
            names("It was read. Unknown element ids rejected at parse time: absent.").is_empty(),
            "after a sentence"
        );
    }

    #[test]
    fn a_key_may_name_its_dimension_by_the_word() {
        let keys = status_keys("Dimension \"fallback when no handoff\": wired (the speaker continues).");
        assert_eq!(keys.iter().map(|k| k.names.as_deref()).collect::<Vec<_>>(), [Some("fallback when no handoff")]);
    }

    #[test]
    fn a_legend_s_symbol_before_a_status_is_no_part_of_it() {
        let words = StatusWords::new(["absent", "inapplicable", "wired"].map(String::from), &BTreeMap::new());
        for (value, status, at) in
            [("● wired", "wired", 4), ("– inapplicable", "inapplicable", 4), ("? absent", "absent", 2)]
        {
            let found = stated(&words, value, Reading::Explicit);
            assert_eq!(found.iter().map(|s| (s.status.as_str(), s.range.start)).collect::<Vec<_>>(), [(status, at)]);
        }
        assert!(stated(&words, "- x wired", Reading::KeyValue).is_empty());
    }

    #[test]
    fn dimensions_and_statuses_joined_by_arrows_and_set_apart_by_middle_dots() {
        let words = StatusWords::new(["absent", "wired"].map(String::from), &BTreeMap::new());
        let value = "written by → wired · bounded → absent (no cap)";
        let clauses: Vec<(&str, &str)> = dimension_clauses(&words, value)
            .into_iter()
            .map(|c| (&value[c.dimension], value[c.value].trim()))
            .collect();
        assert_eq!(clauses, [("written by", "wired"), ("bounded", "absent (no cap)")]);
    }

    #[test]
    fn a_dataview_field_s_key_may_be_any_short_words() {
        let words = StatusWords::new(["absent", "wired"].map(String::from), &BTreeMap::new());
        let keys = |text: &str| -> Vec<String> {
            bare_status_keys(&words, text).into_iter().map(|k| k.names.unwrap()).collect()
        };
        assert_eq!(keys("fact → episodes:: wired (uuid list)"), ["fact → episodes"]);
        assert_eq!(keys("valid_at / invalid_at:: absent"), ["valid_at / invalid_at"]);
        assert!(keys("fact → episodes: wired").is_empty(), "one colon: a key of words, with a capital");
        assert!(super::super::starts_with_key("time fields:: wired (x)"));
    }

    #[test]
    fn a_short_key_and_a_status_standing_alone_state_a_finding_mid_paragraph() {
        let words = StatusWords::new(["absent", "afforded", "wired"].map(String::from), &BTreeMap::new());
        let text = "Both end in one call. Offered to the model: afforded (to the manager). \
                    The result: absent from the logs. It is called: wired, they say. Note that x: wired.";
        let keys: Vec<_> = bare_status_keys(&words, text).into_iter().map(|k| k.names.unwrap()).collect();
        assert_eq!(keys, ["Offered to the model"], "a status in a phrase, a clause and a long key are prose");
    }

    #[test]
    fn a_status_key_may_name_its_dimension_in_parentheses() {
        let keys = status_keys("Status (runs for agents reached by handoff): absent");
        assert_eq!(keys.len(), 1);
        assert_eq!(keys[0].names.as_deref(), Some("runs for agents reached by handoff"));
        assert!(!keys[0].of);
        assert_eq!(
            dimension_in_parentheses("Finding (re-runs when a run is resumed)"),
            Some("re-runs when a run is resumed")
        );
        assert_eq!(dimension_in_parentheses("Status"), None);
        assert_eq!(dimension_in_parentheses("The cache (a map)"), None);
    }

    fn words() -> StatusWords {
        let names = [
            "absent",
            "inapplicable",
            "uninspected",
            "claimed",
            "implemented",
            "wired",
            "observed",
            "causally supported",
        ];
        StatusWords::new(
            names.iter().map(|n| n.to_string()),
            &BTreeMap::from([("not inspected".into(), "uninspected".into())]),
        )
    }

    #[test]
    fn a_plain_status_key_may_state_a_status_per_dimension() {
        let read = |value: &str| -> Vec<(String, String)> {
            dimension_clauses(&words(), value)
                .into_iter()
                .map(|c| (value[c.dimension].to_string(), value[c.value].trim().to_string()))
                .collect()
        };
        let pair = |d: &str, v: &str| (d.to_string(), v.to_string());
        assert_eq!(
            read("overall: wired; structural validation at build: absent (disabled by `x=False`)."),
            [pair("", "wired"), pair("structural validation at build", "absent (disabled by `x=False`)")]
        );
        assert_eq!(read("overall: wired."), [pair("", "wired")], "the whole subject's status, said so");
        assert_eq!(
            read("wired; dimension \"prefix handling\": absent (first key wins)"),
            [pair("", "wired"), pair("prefix handling", "absent (first key wins)")]
        );
        assert_eq!(
            read("on import: wired. Submodule restriction: wired. Wildcard *: claimed (to the operator)."),
            [
                pair("on import", "wired"),
                pair("Submodule restriction", "wired"),
                pair("Wildcard *", "claimed (to the operator)")
            ]
        );
        assert_eq!(read("wired (only when asked)."), [], "a bare status names no dimension");
        assert_eq!(
            read("registration — wired (all ten); narrowing the list — claimed by the docs."),
            [pair("registration", "wired (all ten)"), pair("narrowing the list", "claimed by the docs")],
            "a dash between dimension and status"
        );
        assert_eq!(read("wired — reached on every turn."), [], "a dash after a bare status qualifies it");
        assert_eq!(
            read("\"no auto run\" guarantee — claimed (by the docs); precedence check — implemented"),
            [pair("\"no auto run\" guarantee", "claimed (by the docs)"), pair("precedence check", "implemented")]
        );
        assert_eq!(read("wired. The note: it holds."), [], "prose after the status");
        assert_eq!(
            status_keys("Overall status: wired (always)")[0].names.as_deref(),
            Some("Overall"),
            "outside a record it names the subject; in one, make_finding reads it as the whole record's"
        );
        let keys = status_keys("Status — overall: wired; at build: absent.");
        assert_eq!((keys.len(), keys[0].value_start), (1, "Status — ".len()));
    }

    fn read(value: &str, reading: Reading) -> Vec<(String, Option<String>, Option<String>)> {
        stated(&words(), value, reading).into_iter().map(|s| (s.status, s.qualifier, s.lead)).collect()
    }

    fn s(status: &str) -> (String, Option<String>, Option<String>) {
        (status.to_string(), None, None)
    }

    #[test]
    fn a_value_that_starts_with_a_status() {
        assert_eq!(read("implemented", Reading::Explicit), [s("implemented")]);
        assert_eq!(read("Implemented.", Reading::Column), [s("implemented")]);
        assert_eq!(read("implemented — concatenated into the signature", Reading::Column), [s("implemented")]);
        assert_eq!(read("uninspected, and structurally weaker than for OBJ-02", Reading::Column), [s("uninspected")]);
        assert_eq!(read("causally supported by a comparison", Reading::Column), [s("causally supported")]);
        assert_eq!(read("not inspected", Reading::Explicit), [s("uninspected")]);
        assert_eq!(
            read("absent. Nothing generates new content; implemented elsewhere.", Reading::Column),
            [s("absent")]
        );
    }

    #[test]
    fn compound_values_and_qualifiers() {
        assert_eq!(
            read("implemented (listing) / absent (content index)", Reading::Explicit),
            [
                ("implemented".into(), Some("listing".into()), None),
                ("absent".into(), Some("content index".into()), None)
            ]
        );
        assert_eq!(
            read("absent at the turn level; implemented only within one turn's event lists", Reading::Explicit),
            [s("absent"), s("implemented")]
        );
        assert_eq!(
            read("absent; handling is uninspected (CMP-12)", Reading::Column),
            [s("absent"), ("uninspected".into(), Some("CMP-12".into()), Some("handling".into()))]
        );
    }

    #[test]
    fn a_lead_phrase_then_a_status() {
        assert_eq!(
            read("retention implemented, garbage collection absent.", Reading::Explicit),
            [
                ("implemented".into(), None, Some("retention".into())),
                ("absent".into(), None, Some("garbage collection".into()))
            ]
        );
        assert_eq!(
            read("enforcement over retained material absent.", Reading::Explicit),
            [("absent".into(), None, Some("enforcement over retained material".into()))]
        );
        assert_eq!(
            read("wiring implemented; the alternative is discarded", Reading::Column),
            [("implemented".into(), None, Some("wiring".into()))]
        );
    }

    #[test]
    fn status_words_that_state_nothing() {
        // A status word used as an adjective, negated, or in the middle of a sentence.
        assert!(read("observed behaviour differs", Reading::Column).is_empty());
        assert!(read("nothing observed", Reading::Explicit).is_empty());
        assert!(read("not implemented", Reading::Explicit).is_empty());
        assert!(read("the packet forbids causally supported in this run", Reading::Explicit).is_empty());
        assert!(read("retained state, not read-back.", Reading::Explicit).is_empty());
        assert!(read("implementedly", Reading::Explicit).is_empty());
        assert!(read("implemented-ish", Reading::Explicit).is_empty());
        // A later clause counts only when the first states a status.
        assert!(read("host; absent", Reading::Column).is_empty());
        // A long lead is a sentence, not a name.
        assert!(read("whether the provider receives the docstring verbatim is uninspected", Reading::Column).is_empty());
        assert_eq!(
            read(
                "absent; moreover whether the variable is ever materialized, previewed, or truncated is uninspected",
                Reading::Column
            ),
            [s("absent")]
        );
    }

    #[test]
    fn explicit_values_may_go_on_in_any_words() {
        assert_eq!(read("implemented approach", Reading::Explicit), [s("implemented")]);
        assert!(read("implemented approach", Reading::Column).is_empty());
    }

    #[test]
    fn typos_are_near_misses() {
        assert_eq!(words().near_miss("implmented"), Some("implemented"));
        assert_eq!(words().near_miss("open"), None);
    }

    fn keys(text: &str) -> Vec<(Option<String>, bool, String)> {
        status_keys(text).into_iter().map(|k| (k.names, k.of, text[k.value_start..k.value_end].to_string())).collect()
    }

    #[test]
    fn a_russian_status_noun_and_its_whole_subject() {
        // The words before the noun name the subject; in a record, they name its whole.
        assert_eq!(keys("общий статус: подключено."), [(Some("общий".into()), false, "подключено.".into())]);
        assert!(names_whole_subject("Общий") && names_whole_subject("в целом"));
        assert!(names_whole_subject("Status (overall)") && !names_whole_subject("Status (on import)"));
    }

    #[test]
    fn status_keys_start_sentences() {
        assert_eq!(keys("Status: implemented"), [(None, false, "implemented".into())]);
        assert_eq!(keys("- operation conclusion status: uninspected"), []);
        assert_eq!(
            keys("operation conclusion status: uninspected"),
            [(Some("operation conclusion".into()), false, "uninspected".into())]
        );
        assert_eq!(
            keys("It reads back. Status: implemented (the wiring), and more. Status of \"compression\" as a semantic operation: absent. Status of \"field projection\": implemented."),
            [
                (None, false, "implemented (the wiring), and more.".into()),
                (Some("\"compression\" as a semantic operation".into()), true, "absent.".into()),
                (Some("\"field projection\"".into()), true, "implemented.".into()),
            ]
        );
        assert_eq!(
            keys("Promotion path finding: absent. Across the layer"),
            [(Some("Promotion path".into()), false, "absent.".into())]
        );
        assert_eq!(
            keys("Substrate: container. Status within this run: uninspected (CMP-13/SRC-8)."),
            [(None, false, "uninspected (CMP-13/SRC-8).".into())]
        );
    }

    #[test]
    fn keys_that_only_mention_a_status() {
        assert!(keys("Status vocabulary available in this run: absent, inapplicable.").is_empty());
        assert!(keys("The cache is keyed by status: the turn id, then the time.").is_empty());
        assert!(
            keys("Exit status: 0 for ordinary return").len() == 1,
            "a key ending in status is read; its value states none"
        );
        assert!(stated(&words(), "0 for ordinary return", Reading::Explicit).is_empty());
    }
}
