//! One scan of a search document for both indexes: each word of its text is looked up
//! once, in a memo that knows its stem (for tantivy) and its term (for the browser index).
//! Scanning the text once per index, and counting each index's terms in a map of its own,
//! was most of what the indexes added to a build.
//!
//! Both indexes find their words and compounds in the runs of [`super::next_run`]:
//!
//! - tantivy ([`TantivyText`]): the stems of the words but stop words, as its `en_stem`
//!   analyzer makes them (a test in `tantivy_index.rs` checks that they are the tokens of
//!   the analyzer queries use), the inflected words and the compounds;
//! - the browser index ([`BrowserTerms`]): each distinct term of the text, title, paths
//!   and ID with where it occurs, by its number in the site's [`Vocabulary`] (so that
//!   the browser index finds a term's postings without looking its text up again). A
//!   term is a word lower-cased as `toLowerCase` does it,
//!   or a compound (`files_modified`, `session.py`, `MEM-OBJ-raw`) lower-cased, with its
//!   tails (`seed/rappel.py` of `plugin/exia_seed/rappel.py`); words of
//!   [`STOP_WORDS`] and terms over [`MAX_TERM_BYTES`] are left out. `search.js` tokenises
//!   queries the same way.
//!
//! Neither index gets the text that is another document's too ([`SearchDoc::twins`]): it
//! is not scanned.

use std::borrow::Cow;
use std::cell::RefCell;
use std::hash::BuildHasher;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use rustc_hash::FxBuildHasher;

use super::{is_joiner, next_run, DocType, SearchDoc};

/// Longer words and compounds are not indexed (hashes, base64, minified code).
pub(super) const MAX_TERM_BYTES: usize = 64;
/// Words too common to be worth a posting; `search.js` drops them from queries too.
pub(super) const STOP_WORDS: [&str; 27] = [
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in", "is", "it", "its", "of", "on",
    "or", "that", "the", "this", "to", "was", "were", "will", "with",
];
/// The English stemmer of `body` (tantivy's `en_stem` runs the same algorithm on queries).
pub(super) static ENGLISH: std::sync::LazyLock<rust_stemmers::Stemmer> =
    std::sync::LazyLock::new(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English));

/// Where a term occurs in one document.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Occurrences {
    /// Times in the text.
    pub body: u32,
    /// The whole record ID.
    pub id: bool,
    /// A word of the record ID.
    pub id_part: bool,
    /// In the title (record ID and label, or report and heading).
    pub title: bool,
    /// In a quoted or cited path.
    pub path: bool,
}

/// A document's text as tantivy takes it (see `tantivy_index.rs`).
#[derive(Debug, Default, PartialEq)]
pub struct TantivyText {
    /// For `body`: the stems of its words, one per position, separated by spaces; a word
    /// left out (a stop word, or 40 bytes or more) is an empty one, keeping its position.
    pub(super) stems: String,
    /// For `exact`: its inflected words (those whose stem differs), as written.
    pub(super) inflected: String,
    /// For `ident`: its compounds (identifiers and paths), as written, but those of
    /// digits only ([`names_something`]).
    pub(super) compounds: String,
}

/// A document's terms as the browser index takes them (see `browser.rs`).
#[derive(Debug, Default)]
pub struct BrowserTerms {
    /// Each distinct term, in no particular order.
    pub(super) terms: Vec<DocTerm>,
    /// The number of terms in the text (its length, for BM25).
    pub(super) length: u32,
}

/// A term of a document, and where it occurs there.
#[derive(Debug, Clone, Copy)]
pub(super) struct DocTerm {
    /// The term's number in the [`Vocabulary`].
    pub term: u32,
    pub occurrences: Occurrences,
}

/// Every browser term of a site, each numbered once, by whichever analysing thread met
/// it first: the numbers differ from one build to the next, so nothing written depends
/// on them (the browser index writes its terms in byte order). A thread asks only for
/// the terms its memo has not met.
pub struct Vocabulary {
    /// Which vocabulary this is: a thread's memo holds the numbers of one only (the dev
    /// server's threads analyse one build after another).
    id: u64,
    terms: Mutex<Terms>,
}

impl Default for Vocabulary {
    fn default() -> Self {
        static MADE: AtomicU64 = AtomicU64::new(1);
        Vocabulary { id: MADE.fetch_add(1, Ordering::Relaxed), terms: Mutex::default() }
    }
}

/// The text of every term of a [`Vocabulary`], by number.
#[derive(Default)]
pub(super) struct Terms {
    /// The text of every term, one after another.
    text: String,
    /// Where each term's text ends in `text` (it starts where the one before ends): a
    /// large site has millions of terms.
    ends: Vec<u32>,
    /// Term numbers, by the hash of their text.
    table: hashbrown::HashTable<u32>,
}

impl Terms {
    /// The text of term `n`.
    pub(super) fn get(&self, n: u32) -> &str {
        span(&self.text, &self.ends, n)
    }
}

/// The text of term `n`, of a [`Terms`]' `text` and `ends`.
fn span<'a>(text: &'a str, ends: &[u32], n: u32) -> &'a str {
    let start = n.checked_sub(1).map_or(0, |before| ends[before as usize]);
    &text[start as usize..ends[n as usize] as usize]
}

/// The least a vocabulary's text grows by, in bytes.
const TEXT_GROWTH_MIN: usize = 64 * 1024;

impl Vocabulary {
    /// The number of `term`, whose hash is `hash` ([`FxBuildHasher`]).
    fn number(&self, hash: u64, term: &str) -> u32 {
        let mut terms = self.terms.lock().expect("no thread panicked holding the vocabulary");
        if let Some(&n) = terms.table.find(hash, |&n| terms.get(n) == term) {
            return n;
        }
        let Terms { text, ends, table } = &mut *terms;
        let n = u32::try_from(ends.len()).expect("fewer than 4 billion terms");
        if text.capacity() - text.len() < term.len() {
            // Grown by an eighth, not doubled: a large site's terms are tens of megabytes,
            // held until the index is written, and doubling leaves up to half unused.
            text.reserve_exact((text.len() / 8).max(term.len()).max(TEXT_GROWTH_MIN));
        }
        text.push_str(term);
        ends.push(u32::try_from(text.len()).expect("terms' text under 4 GB"));
        table.insert_unique(hash, n, |&n| FxBuildHasher.hash_one(span(text, ends, n)));
        n
    }

    /// The text of term `n`.
    pub(super) fn text_of(&self, n: u32) -> String {
        self.terms.lock().expect("no thread panicked holding the vocabulary").get(n).to_string()
    }

    /// Every term's text, held while the guard lives (no term is added meanwhile).
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Terms> {
        self.terms.lock().expect("no thread panicked holding the vocabulary")
    }

    /// Every term's text, while no term is being added.
    pub(super) fn texts(&mut self) -> &Terms {
        self.terms.get_mut().expect("no thread panicked holding the vocabulary")
    }

    /// Every term's text, by number.
    #[cfg(test)]
    pub(super) fn all_texts(&mut self) -> Vec<String> {
        let terms = self.texts();
        (0..terms.ends.len() as u32).map(|n| terms.get(n).to_string()).collect()
    }

    /// The number of terms.
    pub(super) fn len(&self) -> usize {
        self.terms.lock().expect("no thread panicked holding the vocabulary").ends.len()
    }

    /// A vocabulary whose terms are `texts`, numbered in order.
    #[cfg(test)]
    pub(super) fn of_texts(texts: &[String]) -> Vocabulary {
        let vocabulary = Vocabulary::default();
        for text in texts {
            vocabulary.number(FxBuildHasher.hash_one(text.as_str()), text);
        }
        vocabulary
    }
}

/// Written as the list of every term's text, by number (the build cache keeps it), each
/// read out of the vocabulary's text: a large site has millions of terms.
impl serde::Serialize for Terms {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq((0..self.ends.len() as u32).map(|n| self.get(n)))
    }
}

/// Read from the list [`Terms`] writes, each term numbered as it is read: no list of
/// strings is held beside the vocabulary.
impl<'de> serde::Deserialize<'de> for Vocabulary {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{DeserializeSeed, Error, SeqAccess, Visitor};
        use std::fmt;
        struct Texts;
        struct Numbered<'v>(&'v Vocabulary);
        impl<'de> Visitor<'de> for Texts {
            type Value = Vocabulary;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of terms")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vocabulary, A::Error> {
                let vocabulary = Vocabulary::default();
                while seq.next_element_seed(Numbered(&vocabulary))?.is_some() {}
                Ok(vocabulary)
            }
        }
        impl<'de> DeserializeSeed<'de> for Numbered<'_> {
            type Value = ();
            fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
                d.deserialize_str(self)
            }
        }
        impl<'de> Visitor<'de> for Numbered<'_> {
            type Value = ();
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a term")
            }
            fn visit_str<E: Error>(self, term: &str) -> Result<(), E> {
                self.0.number(FxBuildHasher.hash_one(term), term);
                Ok(())
            }
        }
        d.deserialize_seq(Texts)
    }
}

/// Words and terms a memo keeps at most (a few megabytes); past them it starts again.
const MEMO_WORDS: usize = 100_000;

thread_local! {
    // One per thread: no lock, and the memo stays warm from one batch of documents to the next.
    static ANALYSER: RefCell<Analyser> = RefCell::default();
}

/// Analyses `d` for both indexes (for tantivy only if it is a report: the browser index
/// has its sections instead), numbering its browser terms in `vocabulary`.
pub fn analyse(d: &SearchDoc, vocabulary: &Vocabulary) -> (TantivyText, Option<BrowserTerms>) {
    ANALYSER.with_borrow_mut(|analyser| analyser.analyse(d, vocabulary))
}

/// What the memo knows of a word, as written.
struct Word {
    /// Its stem (empty when `body` leaves the word out: a stop word, or 40 bytes or more).
    stem: Box<str>,
    /// Whether the stem differs from the word lower-cased.
    inflected: bool,
    /// Its browser term (see [`Analyser::slots`]), if it is one.
    term: Option<u32>,
    /// The last document whose `exact` got the word: it is given once per document.
    given: u64,
}

/// What the memo knows of a compound, as written.
struct Compound {
    /// Its browser terms (itself and its tails; none over [`MAX_TERM_BYTES`]): each
    /// one's slot.
    terms: Box<[u32]>,
    /// The last document whose `ident` got it: it is given once per document.
    given: u64,
}

/// A browser term met by this thread.
struct Slot {
    text: Box<str>,
    hash: u64,
    /// Its number in the [`Vocabulary`].
    number: u32,
    /// The document it was last met in ([`Analyser::doc`]), and its place in that
    /// document's terms.
    doc: u64,
    at: u32,
}

/// Where a term is in a document.
#[derive(Clone, Copy)]
enum Place<'a> {
    Body,
    Title,
    Path,
    /// In the record ID, given lower-cased.
    Id(&'a str),
}

#[derive(Default)]
struct Analyser {
    /// Words as written.
    words: hashbrown::HashMap<Box<str>, Word, FxBuildHasher>,
    /// Compounds as written.
    compounds: hashbrown::HashMap<Box<str>, Compound, FxBuildHasher>,
    /// Browser terms, by the number the memo gives them.
    slots: Vec<Slot>,
    /// Slot numbers by their term's hash.
    table: hashbrown::HashTable<u32>,
    /// Documents analysed by this thread: the number of the one being analysed.
    doc: u64,
    /// The [`Vocabulary`] whose numbers `slots` holds.
    vocabulary: u64,
}

/// A document being analysed: what it has given so far.
struct Found {
    tantivy: TantivyText,
    /// Whether a word was given to `tantivy.stems` (the next one needs a space first).
    stemmed: bool,
    /// The browser terms met in the document.
    terms: Vec<DocTerm>,
    length: u32,
}

impl Analyser {
    /// Begins a document whose terms are numbered in `vocabulary`.
    fn begin(&mut self, vocabulary: &Vocabulary) {
        if self.words.len() + self.compounds.len() >= MEMO_WORDS
            || self.slots.len() >= MEMO_WORDS
            || self.vocabulary != vocabulary.id
        {
            self.words.clear();
            self.compounds.clear();
            self.slots.clear();
            self.table.clear();
            self.vocabulary = vocabulary.id;
        }
        self.doc += 1;
    }

    fn analyse(&mut self, d: &SearchDoc, vocabulary: &Vocabulary) -> (TantivyText, Option<BrowserTerms>) {
        self.begin(vocabulary);
        let browser = d.doc_type != DocType::Report;
        // Sized once, not grown: stems are about as long as the words, and there is about
        // one distinct term per 24 bytes of text.
        let tantivy = TantivyText { stems: String::with_capacity(d.body.len()), ..TantivyText::default() };
        let terms = if browser { Vec::with_capacity(d.body.len() / 24 + 16) } else { Vec::new() };
        let mut found = Found { tantivy, stemmed: false, terms, length: 0 };
        self.body(&d.body, &d.twins, browser, vocabulary, &mut found);
        if !browser {
            return (found.tantivy, None);
        }
        self.terms(&d.title, Place::Title, vocabulary, &mut found);
        for path in &d.paths {
            self.terms(path, Place::Path, vocabulary, &mut found);
        }
        if let Some(id) = &d.id {
            self.terms(id, Place::Id(&id.to_lowercase()), vocabulary, &mut found);
        }
        (found.tantivy, Some(BrowserTerms { terms: found.terms, length: found.length }))
    }

    /// The text: its words and compounds for tantivy, and for the browser index if
    /// `browser`, but those in `twins` (ranges in order, apart, that start and end between
    /// runs: at a table row's edges), which are not scanned.
    fn body(&mut self, text: &str, twins: &[Range<usize>], browser: bool, vocabulary: &Vocabulary, found: &mut Found) {
        let mut twins = twins.iter().peekable();
        let mut from = 0;
        while let Some(run) = next_run(text, from) {
            from = run.next;
            while twins.next_if(|twin| twin.end <= run.range.start).is_some() {}
            if let Some(twin) = twins.next_if(|twin| twin.start <= run.range.start) {
                from = twin.end;
                continue;
            }
            let word = &text[run.range];
            if run.compound {
                self.compound(word, true, browser, Place::Body, vocabulary, found);
                for part in word.split(is_joiner) {
                    self.word(part, true, browser, Place::Body, vocabulary, found);
                }
            } else {
                self.word(word, true, browser, Place::Body, vocabulary, found);
            }
        }
    }

    /// The browser terms of a title, a path or an ID.
    fn terms(&mut self, text: &str, place: Place<'_>, vocabulary: &Vocabulary, found: &mut Found) {
        let mut from = 0;
        while let Some(run) = next_run(text, from) {
            from = run.next;
            let word = &text[run.range];
            if run.compound {
                self.compound(word, false, true, place, vocabulary, found);
                for part in word.split(is_joiner) {
                    self.word(part, false, true, place, vocabulary, found);
                }
            } else {
                self.word(word, false, true, place, vocabulary, found);
            }
        }
    }

    /// A word (letters and digits): its stem if `stemmed`, its term if `browser`.
    fn word(
        &mut self,
        word: &str,
        stemmed: bool,
        browser: bool,
        place: Place<'_>,
        vocabulary: &Vocabulary,
        found: &mut Found,
    ) {
        if word.is_empty() {
            return;
        }
        if stemmed {
            if found.stemmed {
                found.tantivy.stems.push(' ');
            }
            found.stemmed = true;
        }
        // Longer words are neither stemmed (a position kept empty) nor terms.
        if word.len() > MAX_TERM_BYTES {
            return;
        }
        let Analyser { words, slots, table, doc, .. } = self;
        let known = words.entry_ref(word).or_insert_with(|| learn(slots, table, vocabulary, word));
        if stemmed {
            found.tantivy.stems.push_str(&known.stem);
            if known.inflected && known.given != *doc {
                known.given = *doc;
                push_word(&mut found.tantivy.inflected, word);
            }
        }
        if let (true, Some(n)) = (browser, known.term) {
            mark(slots, *doc, n, place, found);
        }
    }

    /// A compound (words joined by `_ . / -`): itself as written for tantivy if
    /// `stemmed`, its terms and tails if `browser`. (Its words are given apart.)
    fn compound(
        &mut self,
        compound: &str,
        stemmed: bool,
        browser: bool,
        place: Place<'_>,
        vocabulary: &Vocabulary,
        found: &mut Found,
    ) {
        let Analyser { compounds, slots, table, doc, .. } = self;
        let known = compounds.entry_ref(compound).or_insert_with(|| learn_compound(slots, table, vocabulary, compound));
        if stemmed && known.given != *doc && names_something(compound) {
            known.given = *doc;
            push_word(&mut found.tantivy.compounds, compound);
        }
        if browser {
            for &n in &known.terms {
                mark(slots, *doc, n, place, found);
            }
        }
    }
}

/// What the memo keeps of a word it has not met.
fn learn(slots: &mut Vec<Slot>, table: &mut hashbrown::HashTable<u32>, vocabulary: &Vocabulary, word: &str) -> Word {
    // As tantivy's `LowerCaser` does it (character by character: no final sigma).
    let lowered: String =
        if word.is_ascii() { word.to_ascii_lowercase() } else { word.chars().flat_map(char::to_lowercase).collect() };
    // `en_stem` leaves out words of 40 bytes or more, and so does `exact`'s tokenizer;
    // `body` leaves out the stop words (their positions kept empty).
    let (stem, inflected) = if word.len() >= 40 || STOP_WORDS.contains(&lowered.as_str()) {
        (Box::from(""), false)
    } else {
        let stem: Box<str> = ENGLISH.stem(&lowered).into();
        let inflected = *stem != *lowered;
        (stem, inflected)
    };
    let term = lower(word);
    // The longest stop word has four letters.
    let indexed = term.len() > 4 || !STOP_WORDS.contains(&&*term);
    let term = indexed.then(|| slot(slots, table, vocabulary, &term));
    Word { stem, inflected, term, given: 0 }
}

/// What the memo keeps of a compound it has not met: its browser terms are itself and
/// its tails (so that `aretes.json` finds `graphe/aretes.json`; its heads are found by
/// prefix), if it is short enough.
fn learn_compound(
    slots: &mut Vec<Slot>,
    table: &mut hashbrown::HashTable<u32>,
    vocabulary: &Vocabulary,
    compound: &str,
) -> Compound {
    let whole = lower(compound);
    let mut terms = Vec::new();
    if compound.len() <= MAX_TERM_BYTES {
        for (at, _) in whole.match_indices(is_joiner) {
            let tail = whole[at + 1..].trim_start_matches(is_joiner);
            if tail.contains(is_joiner) {
                terms.push(slot(slots, table, vocabulary, tail));
            }
        }
        terms.push(slot(slots, table, vocabulary, &whole));
    }
    Compound { terms: terms.into(), given: 0 }
}

/// The slot of a browser term, new if the memo has not met it.
fn slot(slots: &mut Vec<Slot>, table: &mut hashbrown::HashTable<u32>, vocabulary: &Vocabulary, term: &str) -> u32 {
    let hash = FxBuildHasher.hash_one(term);
    if let Some(&n) = table.find(hash, |&n| *slots[n as usize].text == *term) {
        return n;
    }
    let n = u32::try_from(slots.len()).expect("a memo holds fewer than 4 billion terms");
    slots.push(Slot { text: term.into(), hash, number: vocabulary.number(hash, term), doc: 0, at: 0 });
    table.insert_unique(hash, n, |&n| slots[n as usize].hash);
    n
}

/// Notes that slot `n`'s term is at `place` in document `doc`.
fn mark(slots: &mut [Slot], doc: u64, n: u32, place: Place<'_>, found: &mut Found) {
    let slot = &mut slots[n as usize];
    if slot.doc != doc {
        slot.doc = doc;
        slot.at = u32::try_from(found.terms.len()).expect("fewer than 4 billion terms in a document");
        found.terms.push(DocTerm { term: slot.number, occurrences: Occurrences::default() });
    }
    let occurrences = &mut found.terms[slot.at as usize].occurrences;
    match place {
        Place::Body => {
            found.length = found.length.saturating_add(1);
            occurrences.body += 1;
        }
        Place::Title => occurrences.title = true,
        Place::Path => occurrences.path = true,
        Place::Id(whole) if *slot.text == *whole => occurrences.id = true,
        Place::Id(_) => occurrences.id_part = true,
    }
}

/// Whether a compound holds a letter: an identifier or a path. One of digits only (a
/// line range `368-390`, a date, a version) is found as the phrase of its numbers in
/// `body`; `ident` would give each its own term (a tantivy index has one per citation's
/// lines) to rank nothing the phrase does not.
fn names_something(compound: &str) -> bool {
    compound.bytes().any(|b| b.is_ascii_alphabetic() || !b.is_ascii())
}

fn push_word(out: &mut String, word: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(word);
}

/// `text` lower-cased as `to_lowercase` (and JavaScript's `toLowerCase`) does, borrowed
/// when that changes nothing (most words).
fn lower(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        if text.bytes().any(|b| b.is_ascii_uppercase()) {
            Cow::Owned(text.to_ascii_lowercase())
        } else {
            Cow::Borrowed(text)
        }
    } else {
        // Not only upper-case letters change: title-case ones (`ǅ`) do too.
        let lowered = text.to_lowercase();
        if lowered == text {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(lowered)
        }
    }
}

/// `text`'s [`TantivyText`], without `twins` (this thread's memo, as [`analyse`]).
#[cfg(test)]
pub(super) fn tantivy_text(text: &str, twins: &[Range<usize>]) -> TantivyText {
    thread_local! {
        static VOCABULARY: Vocabulary = Vocabulary::default();
    }
    VOCABULARY.with(|vocabulary| {
        ANALYSER.with_borrow_mut(|analyser| {
            analyser.begin(vocabulary);
            let mut found = Found { tantivy: TantivyText::default(), stemmed: false, terms: Vec::new(), length: 0 };
            analyser.body(text, twins, false, vocabulary, &mut found);
            found.tantivy
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(doc_type: DocType, title: &str, body: &str) -> SearchDoc {
        SearchDoc {
            doc_type,
            system: "sys".into(),
            system_name: "System".into(),
            run: "run".into(),
            revision: "abc".into(),
            report: None,
            id: None,
            kind: None,
            family: None,
            statuses: Vec::new(),
            label: None,
            title: title.into(),
            body: body.into(),
            twins: Vec::new(),
            paths: Vec::new(),
            path: "/x.html".into(),
        }
    }

    /// The browser terms of `d`, sorted, with where they occur.
    fn terms(d: &SearchDoc) -> Vec<(String, Occurrences)> {
        let vocabulary = Vocabulary::default();
        let (_, terms) = analyse(d, &vocabulary);
        let mut terms: Vec<(String, Occurrences)> = terms
            .expect("not a report")
            .terms
            .into_iter()
            .map(|t| (vocabulary.text_of(t.term), t.occurrences))
            .collect();
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        terms
    }

    fn body(text: &str) -> Vec<(String, u32)> {
        terms(&doc(DocType::Section, "", text)).into_iter().map(|(t, o)| (t, o.body)).collect()
    }

    #[test]
    fn a_term_keeps_its_number_and_its_text_among_many() {
        let texts: Vec<String> = ["tool", "turns", "t", "tool", "naïve", "turn"].map(String::from).to_vec();
        let mut vocabulary = Vocabulary::of_texts(&texts);
        assert_eq!(vocabulary.len(), 5, "a term said twice is one");
        assert_eq!(vocabulary.all_texts(), ["tool", "turns", "t", "naïve", "turn"]);
        let hash = |t: &str| FxBuildHasher.hash_one(t);
        assert_eq!(vocabulary.number(hash("turn"), "turn"), 4);
        assert_eq!(vocabulary.number(hash("tool"), "tool"), 0);
        assert_eq!(vocabulary.number(hash("tools"), "tools"), 5);
        assert_eq!(vocabulary.text_of(3), "naïve");
    }

    #[test]
    fn words_and_compounds_with_their_tails() {
        let found = body(
            "See MEM-OBJ-raw in session.py, the files_modified field. Ünïcode x/ plugin/exia_seed/rappel.py session",
        );
        let names: Vec<&str> = found.iter().map(|t| t.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "exia",
                "exia_seed/rappel.py",
                "field",
                "files",
                "files_modified",
                "mem",
                "mem-obj-raw",
                "modified",
                "obj",
                "obj-raw",
                "plugin",
                "plugin/exia_seed/rappel.py",
                "py",
                "rappel",
                "rappel.py",
                "raw",
                "see",
                "seed",
                "seed/rappel.py",
                "session",
                "session.py",
                "x",
                "ünïcode",
            ]
        );
        let count = |term: &str| found.iter().find(|t| t.0 == term).map(|t| t.1);
        assert_eq!(
            (count("session"), count("py"), count("the"), count("in")),
            (Some(2), Some(2), None, None),
            "stop words are left out"
        );
        // A term is counted once per occurrence: words, compounds and tails all count.
        let d = doc(DocType::Section, "", "See MEM-OBJ-raw in session.py");
        assert_eq!(analyse(&d, &Vocabulary::default()).1.unwrap().length, 1 + 5 + 3);
    }

    #[test]
    fn terms_are_lower_cased_as_to_lowercase_does() {
        for word in ["plain", "MiXed", "ǅemal", "ΣΑΣ", "İstanbul", "ß", "éte"] {
            assert_eq!(lower(word), word.to_lowercase(), "{word}");
            assert_eq!(body(word), [(word.to_lowercase(), 1)], "{word}");
        }
        assert!(matches!(lower("plain"), Cow::Borrowed(_)) && matches!(lower("ünïcode"), Cow::Borrowed(_)));
        assert!(matches!(lower("ǅemal"), Cow::Owned(_)), "a title-case letter changes");
        assert_eq!(body("plain Plain"), [("plain".to_string(), 2)]);
    }

    #[test]
    fn long_terms_are_skipped() {
        let long = "a".repeat(MAX_TERM_BYTES + 1);
        assert_eq!(
            body(&format!("{long} ok {long}/x.py")),
            [("ok".to_string(), 1), ("py".to_string(), 1), ("x".to_string(), 1)]
        );
    }

    #[test]
    fn titles_paths_and_ids_are_places() {
        let mut d = doc(DocType::Record, "OBJ-04 — retained turns", "kept 20 turns");
        d.id = Some("OBJ-04".into());
        d.paths = vec!["src/Session.py".into()];
        let found = terms(&d);
        let at =
            |term: &str| found.iter().find(|t| t.0 == term).map(|t| t.1).unwrap_or_else(|| panic!("{term}: {found:?}"));
        assert_eq!(at("obj-04"), Occurrences { title: true, id: true, ..Occurrences::default() });
        assert_eq!(at("04"), Occurrences { title: true, id_part: true, ..Occurrences::default() });
        assert_eq!(at("turns"), Occurrences { body: 1, title: true, ..Occurrences::default() });
        assert_eq!(at("session.py"), Occurrences { path: true, ..Occurrences::default() });
        assert_eq!(at("src/session.py"), Occurrences { path: true, ..Occurrences::default() });
        assert!(!found.iter().any(|t| t.0 == "Session.py"), "terms are lower-cased");
    }

    #[test]
    fn a_report_has_no_browser_terms() {
        let d = doc(DocType::Report, "Report", "Retained turns");
        let (text, terms) = analyse(&d, &Vocabulary::default());
        assert!(terms.is_none());
        assert_eq!(text.stems, "retain turn");
    }

    #[test]
    fn twins_give_no_terms() {
        let text = "kept words | twin row words |\nmore kept | second twin |\nend";
        let twin = text.find("twin").unwrap()..text.find("more").unwrap();
        let second = text.find("second").unwrap()..text.find("end").unwrap();
        let twins = [twin.clone(), second];
        assert_eq!(tantivy_text(text, &twins).stems, "kept word more kept end");
        assert_eq!(tantivy_text(text, std::slice::from_ref(&(0..text.len()))), TantivyText::default());
        let mut d = doc(DocType::Section, "", text);
        d.twins = twins.to_vec();
        let names: Vec<String> = terms(&d).into_iter().map(|t| t.0).collect();
        assert_eq!(names, ["end", "kept", "more", "words"], "nor in the search page's index");
        let (_, found) = analyse(&d, &Vocabulary::default());
        assert_eq!(found.unwrap().length, 5, "twins are not the section's length either");
    }

    #[test]
    fn inflected_words_and_compounds_are_kept_as_written() {
        let analysed = tantivy_text("The session retained 20 Turns in files_modified; see session.py.", &[]);
        assert_eq!(analysed.inflected, "retained Turns files modified");
        assert_eq!(analysed.compounds, "files_modified session.py");
        assert_eq!(
            analysed.stems, " session retain 20 turn  file modifi see session py",
            "stop words leave their places empty"
        );
        // Each inflected word and compound once per document, as first written.
        assert_eq!(
            tantivy_text("lines 368-390 of v1.2, 2026-02-24 and ü.1", &[]).compounds,
            "v1.2 ü.1",
            "digits only: no identifier"
        );
        let analysed = tantivy_text("retained Retained retained a.b a.b A.b", &[]);
        assert_eq!((analysed.inflected.as_str(), analysed.compounds.as_str()), ("retained Retained", "a.b A.b"));
        assert_eq!(tantivy_text("retained a.b", &[]).inflected, "retained", "once per document, not once per thread");
    }

    #[test]
    fn a_full_memo_starts_again_between_documents() {
        let vocabulary = Vocabulary::default();
        let d = doc(DocType::Section, "", "retained Retained");
        analyse(&d, &vocabulary);
        ANALYSER.with_borrow_mut(|analyser| {
            for n in 0..MEMO_WORDS {
                slot(&mut analyser.slots, &mut analyser.table, &vocabulary, &format!("t{n}"));
            }
        });
        let (_, terms) = analyse(&d, &vocabulary);
        let terms = terms.unwrap().terms;
        assert_eq!(
            (terms.len(), vocabulary.text_of(terms[0].term).as_str(), terms[0].occurrences.body),
            (1, "retained", 2)
        );
        ANALYSER.with_borrow(|analyser| assert!(analyser.slots.len() < 10, "{}", analyser.slots.len()));
    }

    #[test]
    fn a_memo_holds_the_numbers_of_one_vocabulary() {
        let d = doc(DocType::Section, "", "retained turns");
        let first = Vocabulary::default();
        analyse(&doc(DocType::Section, "", "other words first"), &first);
        let (_, in_first) = analyse(&d, &first);
        // A new build's vocabulary numbers its terms from 0: the memo must not give the old numbers.
        let second = Vocabulary::default();
        let (_, in_second) = analyse(&d, &second);
        let texts = |terms: Option<BrowserTerms>, vocabulary: &Vocabulary| {
            let mut texts: Vec<String> = terms.unwrap().terms.iter().map(|t| vocabulary.text_of(t.term)).collect();
            texts.sort();
            texts
        };
        assert_eq!(texts(in_first, &first), ["retained", "turns"]);
        assert_eq!(texts(in_second, &second), ["retained", "turns"]);
    }
}
