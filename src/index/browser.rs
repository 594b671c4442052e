//! The static search index of the search page (`search/browser/`), read by
//! `themes/default/assets/search.js` from any static host, with no server and no
//! WebAssembly.
//!
//! Why not Pagefind: fed one document per record and per section, its library API's
//! time and memory grew with the square of the document count (measured in
//! `docs/performance.md`). This index is built in one pass over the documents, in time and
//! memory linear in their text, and a query fetches only what it shows.
//!
//! Files (the format is `casebook.browser-search/3`, described in `docs/search.md`):
//!
//! - `meta.json`: the document count, the first term of each term chunk, each run's first
//!   document number, and the facet totals shown before any query;
//! - `t/<first term in hex>.txt.gz`: term chunks, terms in byte order, one line each: the
//!   term, a tab, and its postings (a letter `A`–`Z` for the document's score level,
//!   then the distance from the previous document's number in base 36);
//! - `d/<system>/<run>/N.json.gz`: a run's documents in groups of `documents_per_file`
//!   (16 unless casebook.yaml says otherwise, [`SearchFiles`]): URL, title, where it is,
//!   and the start of its text for snippets;
//! - `facets.json.gz`: each document's system, kind and statuses, run-length encoded in
//!   document order, for counts within results and for filtering.
//!
//! The `.gz` files are gzipped here, as Pagefind does its own: two thirds of the index's
//! bytes go, on the host's disk and in a deploy, and a host that compresses on the fly
//! gains little on them. The page inflates them itself (and takes them as they are when a
//! host sent them with `Content-Encoding: gzip` and the browser already did).
//!
//! **Made by parts.** The index is held as each run's part (its documents' terms,
//! lengths and facets), and every file is a function of the site's content alone: a run's
//! documents are numbered from a multiple of `documents_per_file` (a run that gains or
//! loses a document moves no other run's numbers unless it crosses one); the BM25 levels
//! use the average length rounded to a step of an eighth of an octave; a term chunk ends
//! where a term's hash says (the likelier the longer its line), so a changed term changes
//! its own chunk and no other. The dev server keeps the index between rebuilds
//! ([`BrowserIndex::take_part`]): a rebuild analyses the runs that changed and writes the
//! chunks that hold a term they changed.
//!
//! Tokenising (in [`super::analysis`]) is shared with the browser and must stay identical
//! to `search.js`: words are runs of letters and digits, lower-cased; compounds are runs
//! of letters, digits and `_ . / -` that hold a joiner, without joiners at either end
//! (`files_modified`, `session.py`, `MEM-OBJ-raw`); a few English function words are left
//! out.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use serde::{Deserialize, Serialize};

use super::analysis::{BrowserTerms, Occurrences, Terms, Vocabulary, STOP_WORDS};
use super::{DocType, SearchDoc};
use crate::model::SearchFiles;
use crate::output::{OutputFile, BROWSER_DIR};

/// The format name in `meta.json`; `search.js` refuses any other.
const FORMAT: &str = "casebook.browser-search/3";
/// Term chunks made at once (in parallel), then written: memory holds these only.
const CHUNKS_PER_BATCH: usize = 64;
/// No chunk grows past this many times the average size, but by a term whose line is
/// longer alone.
const MAX_CHUNK_FACTOR: usize = 4;
/// Characters of a document's text kept for snippets.
const SNIPPET_SOURCE_CHARS: usize = 1000;

/// The browser index of a site, as its runs' parts, and what it wrote last (kept by the
/// dev server from one rebuild to the next). A build adds the parts of the runs whose
/// documents changed ([`BrowserIndex::add_run`]), says which runs the site has now, in
/// order ([`BrowserIndex::arrange`]), and writes what changed ([`BrowserIndex::finish`]).
#[derive(Default)]
pub struct BrowserIndex {
    /// How the index is split into files: the size of document files (a run's documents
    /// are numbered from a multiple of it) and the average size of term chunks (a term
    /// begins a chunk with the probability of its line's share of it, [`begins_chunk`]).
    layout: SearchFiles,
    /// Every term of the parts, numbered (a term keeps its number while the index lives).
    vocabulary: Vocabulary,
    /// The runs' parts, by slot.
    slots: Vec<Option<RunPart>>,
    /// Slot by run key (`system/run`).
    by_key: HashMap<String, usize>,
    /// The runs of the site, in order, by slot.
    order: Vec<usize>,
    /// By term number: the slots whose part has the term.
    term_runs: TermRuns,
    /// Terms whose postings changed since the last `finish`.
    dirty: rustc_hash::FxHashSet<u32>,
    /// Terms that got their first posting since the last `finish`.
    new_terms: Vec<u32>,
    /// Terms that lost their last posting since the last `finish`.
    gone_terms: Vec<u32>,
    /// Every term with postings, in byte order, with what says where chunks begin (as of
    /// the last `finish`): held in that order so that finding the chunks reads no term's
    /// text.
    sorted: Vec<SortedTerm>,
    /// What the last `finish` wrote: each chunk's first term and its number of terms, the
    /// average length the levels were made with, and each slot's first document.
    written: Option<Written>,
}

/// The browser index as the build cache keeps it: every field but the vocabulary's
/// lookup table (made again from its terms) and what is pending between two `finish`es.
#[derive(Serialize)]
struct Saving<'a> {
    layout: SearchFiles,
    terms: &'a Terms,
    slots: &'a [Option<RunPart>],
    #[serde(serialize_with = "borrowed_in_key_order")]
    by_key: &'a HashMap<String, usize>,
    order: &'a [usize],
    term_runs: &'a TermRuns,
    sorted: &'a [SortedTerm],
    written: &'a Option<Written>,
}

/// Writes a map in its keys' order, so that the same index makes the same file for the
/// build cache (a map's own order is its hasher's and its history's).
fn in_key_order<M, K, V, S>(map: &M, serializer: S) -> Result<S::Ok, S::Error>
where
    for<'m> &'m M: IntoIterator<Item = (&'m K, &'m V)>,
    K: Ord + Serialize,
    V: Serialize,
    S: serde::Serializer,
{
    let mut pairs: Vec<(&K, &V)> = map.into_iter().collect();
    pairs.sort_unstable_by(|a, b| a.0.cmp(b.0));
    serializer.collect_map(pairs)
}

/// [`in_key_order`] for a field that borrows its map.
fn borrowed_in_key_order<M, K, V, S>(map: &&M, serializer: S) -> Result<S::Ok, S::Error>
where
    for<'m> &'m M: IntoIterator<Item = (&'m K, &'m V)>,
    K: Ord + Serialize,
    V: Serialize,
    S: serde::Serializer,
{
    in_key_order(*map, serializer)
}

/// [`Saving`], read back.
#[derive(Deserialize)]
struct Saved {
    layout: SearchFiles,
    terms: Vocabulary,
    slots: Vec<Option<RunPart>>,
    by_key: HashMap<String, usize>,
    order: Vec<usize>,
    term_runs: TermRuns,
    sorted: Vec<SortedTerm>,
    written: Option<Written>,
}

impl BrowserIndex {
    /// An empty index split into files as `layout` says.
    pub fn new(layout: SearchFiles) -> Self {
        BrowserIndex { layout, ..BrowserIndex::default() }
    }

    /// How the index is split into files.
    pub fn layout(&self) -> SearchFiles {
        self.layout
    }

    /// Writes the index (after a `finish`: nothing is pending) for a build in another
    /// process to update: the build cache keeps it.
    pub fn save(&mut self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        debug_assert!(
            self.dirty.is_empty() && self.new_terms.is_empty() && self.gone_terms.is_empty(),
            "saved after a finish"
        );
        let saving = Saving {
            layout: self.layout,
            terms: self.vocabulary.texts(),
            slots: &self.slots,
            by_key: &self.by_key,
            order: &self.order,
            term_runs: &self.term_runs,
            sorted: &self.sorted,
            written: &self.written,
        };
        bincode::serialize_into(out, &saving).map_err(std::io::Error::other)
    }

    /// An index [`BrowserIndex::save`] wrote, or `None` when `input` (of `len` bytes)
    /// does not hold one. Every length read is bounded by `len`: a damaged file, or one
    /// another version of casebook wrote, is not read as a length to allocate.
    pub fn load(input: &mut dyn std::io::Read, len: u64) -> Option<BrowserIndex> {
        use bincode::Options;
        // The options of `bincode::serialize_into`, which `save` writes with.
        let options = bincode::DefaultOptions::new().with_fixint_encoding().allow_trailing_bytes().with_limit(len);
        let saved: Saved = options.deserialize_from(input).ok()?;
        let index = BrowserIndex {
            layout: saved.layout,
            vocabulary: saved.terms,
            slots: saved.slots,
            by_key: saved.by_key,
            order: saved.order,
            term_runs: saved.term_runs,
            sorted: saved.sorted,
            written: saved.written,
            ..BrowserIndex::default()
        };
        index.is_whole().then_some(index)
    }

    /// Whether every slot, key and term the index names is there (a file another version
    /// of casebook wrote, or a damaged one, is not taken).
    fn is_whole(&self) -> bool {
        let slot_ok = |slot: usize| self.slots.get(slot).is_some_and(Option::is_some);
        let terms = self.vocabulary_len();
        self.order.iter().all(|&s| slot_ok(s))
            && self.by_key.values().all(|&s| slot_ok(s))
            && self.sorted.iter().all(|t| (t.term as usize) < terms)
            && self.term_runs.len() <= terms
            && self.term_runs.all_slots().all(|s| slot_ok(s as usize))
            && self.written.as_ref().is_none_or(|w| w.chunks.iter().all(|&(t, _)| (t as usize) < terms))
    }

    fn vocabulary_len(&self) -> usize {
        self.vocabulary.len()
    }

    /// Every file the index wrote and takes as written when it is updated: its term chunks,
    /// the facets and its runs' document files (not `meta.json`, written every time).
    pub fn files(&self) -> Vec<PathBuf> {
        let Some(written) = &self.written else { return Vec::new() };
        let mut files: Vec<PathBuf> = written
            .chunks
            .iter()
            .map(|&(t, _)| {
                let text = self.vocabulary.text_of(t);
                PathBuf::from(BROWSER_DIR).join(format!("t/{}.txt.gz", hex::encode(text)))
            })
            .collect();
        files.push(PathBuf::from(BROWSER_DIR).join(FACETS_FILE));
        files.extend(self.slots.iter().flatten().flat_map(|part| part.files.iter().cloned()));
        files
    }
}

impl std::fmt::Debug for BrowserIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrowserIndex").field("runs", &self.order.len()).field("terms", &self.sorted.len()).finish()
    }
}

/// By term number, the slots whose part has the term. Most terms are in one run only (a
/// site's names are its systems' own): each term's first slot is held apart, and a list
/// made only for the terms of several runs, since a large site has millions of terms.
#[derive(Default, Serialize, Deserialize)]
struct TermRuns {
    /// Each term's first slot ([`NO_RUN`]: none).
    first: Vec<u32>,
    /// The other slots of the terms in more than one run.
    #[serde(serialize_with = "in_key_order")]
    more: rustc_hash::FxHashMap<u32, smallvec::SmallVec<[u32; 2]>>,
}

/// A term in no run.
const NO_RUN: u32 = u32::MAX;

impl TermRuns {
    /// How many term numbers it covers (the highest with a run so far, plus one).
    fn len(&self) -> usize {
        self.first.len()
    }

    /// True when a run has `term`.
    fn has(&self, term: u32) -> bool {
        self.first.get(term as usize).is_some_and(|&slot| slot != NO_RUN)
    }

    /// The slots that have `term`.
    fn slots(&self, term: u32) -> impl Iterator<Item = u32> + '_ {
        let first = self.first.get(term as usize).copied().filter(|&slot| slot != NO_RUN);
        first.into_iter().chain(self.more.get(&term).into_iter().flatten().copied())
    }

    /// Every slot of every term.
    fn all_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.first.iter().copied().filter(|&slot| slot != NO_RUN).chain(self.more.values().flatten().copied())
    }

    /// `slot` has `term` now; true when no slot had it before.
    fn add(&mut self, term: u32, slot: u32) -> bool {
        let at = term as usize;
        if at >= self.first.len() {
            self.first.resize(at + 1, NO_RUN);
        }
        if self.first[at] == NO_RUN {
            self.first[at] = slot;
            return true;
        }
        self.more.entry(term).or_default().push(slot);
        false
    }

    /// `slot` no longer has `term`; true when no slot has it now.
    fn remove(&mut self, term: u32, slot: u32) -> bool {
        let Some(first) = self.first.get_mut(term as usize) else { return false };
        let more = self.more.get_mut(&term);
        match more {
            Some(more) if *first == slot => *first = more.remove(0),
            Some(more) => more.retain(|s| *s != slot),
            None if *first == slot => *first = NO_RUN,
            None => {}
        }
        if self.more.get(&term).is_some_and(|more| more.is_empty()) {
            self.more.remove(&term);
        }
        !self.has(term)
    }
}

/// A term of the sorted list: its number, the length of its line as last written (0: not
/// yet), and its mark, which with that length says whether it begins a chunk
/// ([`begins_chunk`]).
#[derive(Clone, Copy, Serialize, Deserialize)]
struct SortedTerm {
    term: u32,
    line_len: u32,
    mark: u32,
}

/// What a `finish` wrote, which the next one compares with.
#[derive(Serialize, Deserialize)]
struct Written {
    chunks: Vec<(u32, u32)>,
    average: f64,
    #[serde(serialize_with = "in_key_order")]
    starts: HashMap<usize, u32>,
    /// What the facets were made from ([`BrowserIndex::facets_made_from`]), and their
    /// totals (`meta.json` gives them).
    facets: u64,
    totals: Totals,
}

/// Each facet's values and how many documents have each.
type Totals = BTreeMap<String, BTreeMap<String, usize>>;

/// The facets' file, in the index's folder.
const FACETS_FILE: &str = "facets.json.gz";

/// A run's documents, as the index holds them.
#[derive(Serialize, Deserialize)]
struct RunPart {
    /// `system/run`: the folder of its document files.
    key: String,
    /// What its documents were made from (see `super::Tokens`), when known.
    token: Option<u128>,
    /// Each document's length in terms, for BM25's normalisation.
    lengths: Vec<u32>,
    /// Each document's facet values.
    facets: RunFacets,
    /// Its terms, sorted, each with where its postings start in `postings`.
    terms: Vec<(u32, u32)>,
    /// Postings, by term ([`Postings`]): a third of the bytes of a `u32` each, which
    /// matters since the index holds every run's until it writes the term chunks.
    postings: Vec<u8>,
    /// Its document files.
    files: Vec<PathBuf>,
}

impl RunPart {
    /// The postings of `term` in this run (none if it lacks it).
    fn postings_of(&self, term: u32) -> Postings<'_> {
        let bytes = match self.terms.binary_search_by_key(&term, |&(t, _)| t) {
            Ok(i) => {
                let start = self.terms[i].1 as usize;
                let end = self.terms.get(i + 1).map_or(self.postings.len(), |&(_, s)| s as usize);
                &self.postings[start..end]
            }
            Err(_) => &[],
        };
        Postings { bytes, number: 0 }
    }
}

/// A term's postings in a run, in the order of the documents' numbers: each the
/// difference from the previous number (from 0 for the first) as a LEB128 varint, then
/// the document's occurrences packed in a byte. The same postings are the same bytes.
struct Postings<'a> {
    bytes: &'a [u8],
    number: u32,
}

impl Postings<'_> {
    /// Appends the posting of document `number` (after `previous`, the term's last).
    fn push(out: &mut Vec<u8>, previous: Option<u32>, number: u32, occurrences: u8) {
        let mut gap = number - previous.unwrap_or(0);
        while gap >= 0x80 {
            out.push((gap & 0x7f) as u8 | 0x80);
            gap >>= 7;
        }
        out.push(gap as u8);
        out.push(occurrences);
    }
}

impl Iterator for Postings<'_> {
    /// The document's number in the run and its packed occurrences.
    type Item = (u32, u8);

    fn next(&mut self) -> Option<(u32, u8)> {
        let mut gap = 0u32;
        let mut shift = 0;
        loop {
            let (&byte, rest) = self.bytes.split_first()?;
            self.bytes = rest;
            gap |= u32::from(byte & 0x7f) << shift;
            shift += 7;
            if byte < 0x80 {
                break;
            }
        }
        let (&occurrences, rest) = self.bytes.split_first().expect("a posting ends with its occurrences");
        self.bytes = rest;
        self.number += gap;
        Some((self.number, occurrences))
    }
}

/// A run's documents' facet values (their system, their kind, for records, and their
/// statuses): each distinct value held once, each document's as numbers into them.
#[derive(Serialize, Deserialize, Default)]
struct RunFacets {
    /// The values, systems, kinds and statuses alike, each once.
    names: Vec<Box<str>>,
    /// Each distinct set of statuses, as numbers into `names`.
    sets: Vec<Box<[u32]>>,
    /// Each document's system, kind ([`NO_KIND`]: none) and set of statuses, by number.
    docs: Vec<[u32; 3]>,
}

impl BrowserIndex {
    /// The vocabulary documents are analysed with for this index.
    pub fn vocabulary(&self) -> &Vocabulary {
        &self.vocabulary
    }

    /// True when the index holds `key`'s documents as made from `token`.
    pub fn has_run(&self, key: &str, token: Option<u128>) -> bool {
        token.is_some() && self.by_key.get(key).is_some_and(|&slot| self.part(slot).token == token)
    }

    /// The same parts, each run's token given anew by `token` (`system`, `run`): the dev
    /// server's first build, made with the build cache's tokens, is kept for rebuilds
    /// that tell runs by their versions.
    pub fn retoken(&mut self, token: &dyn Fn(&str, &str) -> Option<u128>) {
        for part in self.slots.iter_mut().flatten() {
            part.token = part.key.split_once('/').and_then(|(system, run)| token(system, run));
        }
    }

    fn part(&self, slot: usize) -> &RunPart {
        self.slots[slot].as_ref().expect("a slot in use holds a part")
    }

    /// Sets the documents of the run `key` (`docs`, with their `terms` from
    /// [`super::analyse`]; `None` for reports, whose sections stand for them), made from
    /// `token`, handing its document files to `emit`.
    pub fn add_run<E>(
        &mut self,
        key: &str,
        token: Option<u128>,
        docs: &[Arc<SearchDoc>],
        terms: Vec<Option<BrowserTerms>>,
        emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
    ) -> Result<(), E> {
        let shown: Vec<&SearchDoc> = docs.iter().map(|d| &**d).filter(|d| d.doc_type != DocType::Report).collect();
        let mut by_term: Vec<(u32, u32, u8)> = Vec::new();
        let mut lengths = Vec::with_capacity(shown.len());
        for (number, BrowserTerms { terms, length }) in terms.into_iter().flatten().enumerate() {
            let number = u32::try_from(number).expect("fewer than 4 billion documents in a run");
            lengths.push(length);
            by_term.extend(terms.into_iter().map(|t| (t.term, number, t.occurrences.packed())));
        }
        by_term.sort_unstable();
        let mut part = RunPart {
            key: key.to_string(),
            token,
            lengths,
            facets: RunFacets::of(&shown),
            terms: Vec::new(),
            postings: Vec::with_capacity(by_term.len() * 2),
            files: Vec::new(),
        };
        let mut previous = None;
        for (term, number, occurrences) in by_term {
            if part.terms.last().is_none_or(|&(t, _)| t != term) {
                let start = u32::try_from(part.postings.len()).expect("fewer than 4 GiB of postings in a run");
                part.terms.push((term, start));
                previous = None;
            }
            Postings::push(&mut part.postings, previous, number, occurrences);
            previous = Some(number);
        }
        // Kept until the term chunks are written, every run's: no room to spare.
        part.terms.shrink_to_fit();
        part.postings.shrink_to_fit();
        let mut text = String::with_capacity(SNIPPET_SOURCE_CHARS + 8);
        for (k, group) in shown.chunks(self.layout.documents_per_file as usize).enumerate() {
            let mut bytes = Vec::with_capacity(group.len() * (SNIPPET_SOURCE_CHARS + 256));
            bytes.push(b'[');
            for (i, d) in group.iter().enumerate() {
                if i > 0 {
                    bytes.push(b',');
                }
                serde_json::to_writer(&mut bytes, &ShownDoc::of(d, &mut text)).expect("documents serialise");
            }
            bytes.push(b']');
            let file = gzipped(format!("d/{key}/{k}.json.gz"), &bytes);
            part.files.push(file.path.clone());
            emit(file)?;
        }
        self.put(part);
        Ok(())
    }

    /// Takes `part` in the place of the run's part, if any. A term whose postings in the
    /// run differ (a document more or less, other occurrences, a document of another
    /// length) changes; the others keep their lines.
    fn put(&mut self, part: RunPart) {
        let (slot, old) = match self.by_key.get(&part.key) {
            Some(&slot) => (slot, self.slots[slot].take()),
            None => {
                let slot = self.slots.iter().position(Option::is_none).unwrap_or_else(|| {
                    self.slots.push(None);
                    self.slots.len() - 1
                });
                self.by_key.insert(part.key.clone(), slot);
                (slot, None)
            }
        };
        let number = u32::try_from(slot).expect("fewer than 4 billion runs");
        let old_terms = old.as_ref().map_or(&[][..], |old| &old.terms[..]);
        let (mut i, mut j) = (0, 0);
        loop {
            let (old_term, new_term) = (old_terms.get(i).map(|&(t, _)| t), part.terms.get(j).map(|&(t, _)| t));
            let order = match (old_term, new_term) {
                (Some(o), Some(n)) => o.cmp(&n),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => break,
            };
            match order {
                std::cmp::Ordering::Less => {
                    // Gone from the run.
                    let gone = old_terms[i].0;
                    self.remove_term_run(gone, number);
                    i += 1;
                }
                std::cmp::Ordering::Greater => {
                    self.add_term_run(part.terms[j].0, number);
                    j += 1;
                }
                std::cmp::Ordering::Equal => {
                    let (t, old) = (part.terms[j].0, old.as_ref().expect("an old term is of an old part"));
                    let (mut before, now) = (old.postings_of(t), part.postings_of(t));
                    let length = |p: &RunPart, number: u32| p.lengths[number as usize];
                    if before.bytes != now.bytes || before.any(|(n, _)| length(old, n) != length(&part, n)) {
                        self.changed(t);
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        self.slots[slot] = Some(part);
    }

    /// `term`'s line changes. Not tracked before the first `finish`, which writes every
    /// term: a large site has millions.
    fn changed(&mut self, term: u32) {
        if self.written.is_some() {
            self.dirty.insert(term);
        }
    }

    /// `slot` has `term` now.
    fn add_term_run(&mut self, term: u32, slot: u32) {
        if self.term_runs.add(term, slot) {
            self.new_terms.push(term);
        }
        self.changed(term);
    }

    /// `slot` no longer has `term`.
    fn remove_term_run(&mut self, term: u32, slot: u32) {
        if self.term_runs.remove(term, slot) {
            self.gone_terms.push(term);
        }
        self.changed(term);
    }

    /// Takes the part in `slot` out of the terms' lists (they change).
    fn forget(&mut self, slot: usize) {
        let Some(part) = self.slots[slot].take() else { return };
        let number = u32::try_from(slot).expect("fewer than 4 billion runs");
        for &(term, _) in &part.terms {
            self.remove_term_run(term, number);
        }
    }

    /// The runs of the site, in order (`system/run`): their parts were added now or by an
    /// earlier build; the parts of runs no longer in the site go.
    pub fn arrange(&mut self, keys: &[String]) {
        self.order = keys.iter().map(|key| self.by_key[key]).collect();
        let gone: Vec<(String, usize)> =
            self.by_key.iter().filter(|(key, _)| !keys.contains(key)).map(|(key, &slot)| (key.clone(), slot)).collect();
        for (key, slot) in gone {
            self.forget(slot);
            self.by_key.remove(&key);
        }
    }
}

/// Times in the text counted in postings at most (the level hardly grows beyond).
const MAX_BODY_COUNT: u32 = 15;

impl Occurrences {
    /// One byte: the times in the text (at most [`MAX_BODY_COUNT`]) and the four places.
    fn packed(self) -> u8 {
        let body = self.body.min(MAX_BODY_COUNT) as u8;
        body | u8::from(self.id) << 4
            | u8::from(self.id_part) << 5
            | u8::from(self.title) << 6
            | u8::from(self.path) << 7
    }

    fn unpacked(byte: u8) -> Self {
        Occurrences {
            body: u32::from(byte & 0x0f),
            id: byte & 0x10 != 0,
            id_part: byte & 0x20 != 0,
            title: byte & 0x40 != 0,
            path: byte & 0x80 != 0,
        }
    }

    /// The document's score for the term, as a level from 1 to 26: BM25's term-frequency
    /// part for the text (k1 = 1.2, b = 0.75), plus a bonus per field, so that a whole ID
    /// outranks any text that mentions it, and a title word most text.
    fn level(self, body_len: f64, average_len: f64) -> u8 {
        let tf = f64::from(self.body);
        let norm = 1.2 * (0.25 + 0.75 * body_len / average_len);
        let mut score = if tf > 0.0 { tf * 2.2 / (tf + norm) } else { 0.0 };
        score += 4.0 * f64::from(u8::from(self.id));
        score += f64::from(u8::from(self.id_part));
        score += 1.5 * f64::from(u8::from(self.title));
        score += f64::from(u8::from(self.path));
        1 + (score * 2.5).round().min(25.0) as u8
    }
}

impl BrowserIndex {
    /// Writes what changed since the last `finish` (everything, the first time): the term
    /// chunks that hold a term whose postings changed, the facets if they changed, and
    /// `meta.json`. Gives the files of the previous output it keeps as they are.
    pub fn finish<E: Send>(&mut self, emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync)) -> Result<Vec<PathBuf>, E> {
        let numbering = self.numbering();
        let all_dirty =
            self.written.as_ref().is_none_or(|w| w.average != numbering.average || w.starts != numbering.starts);
        self.sort_terms();
        // The places of the terms whose lines change (`None`: every term's).
        let fresh = (!all_dirty).then(|| self.fresh());
        // The length of each changed term's line: where a chunk begins depends on it. The
        // lines are made when their chunks are written: a large site's lines together are
        // hundreds of megabytes.
        let lengths: Vec<u32> = {
            let texts = self.vocabulary.lock();
            let lines = Lines { index: self, numbering: &numbering };
            let length = |term: u32| u32::try_from(lines.len(term, texts.get(term).len())).expect("a line under 4 GB");
            match &fresh {
                None => self.sorted.par_iter().map(|s| length(s.term)).collect(),
                Some(fresh) => fresh.par_iter().map(|&at| length(self.sorted[at].term)).collect(),
            }
        };
        match &fresh {
            None => self.sorted.iter_mut().zip(lengths).for_each(|(s, len)| s.line_len = len),
            Some(fresh) => fresh.iter().zip(lengths).for_each(|(&at, len)| self.sorted[at].line_len = len),
        }
        let chunks = self.chunks(fresh.as_deref());
        let texts = self.vocabulary.lock();
        let before: rustc_hash::FxHashSet<(u32, u32)> =
            self.written.as_ref().map(|w| w.chunks.iter().copied().collect()).unwrap_or_default();
        let name = |first: u32| format!("t/{}.txt.gz", hex::encode(texts.get(first)));
        let (write, keep): (Vec<&Chunk>, Vec<&Chunk>) =
            chunks.iter().partition(|chunk| chunk.changed || !before.contains(&(chunk.first, chunk.count)));
        let mut kept: Vec<PathBuf> =
            keep.iter().map(|chunk| PathBuf::from(BROWSER_DIR).join(name(chunk.first))).collect();
        // The chunks to write (those with a changed term, or new), a batch at a time, each
        // batch made in parallel. A rebuild may stop between files (a newer change waits):
        // the changed terms stay changed until the end, so their chunks are written then.
        let lines = Lines { index: self, numbering: &numbering };
        for batch in write.chunks(CHUNKS_PER_BATCH) {
            let made: Vec<OutputFile> = batch
                .par_iter()
                .map(|chunk| {
                    let mut text = String::with_capacity(self.layout.term_file_bytes() + 1024);
                    for sorted in &self.sorted[chunk.at..chunk.at + chunk.count as usize] {
                        lines.write(sorted.term, texts.get(sorted.term), &mut text);
                    }
                    gzipped(name(chunk.first), text.as_bytes())
                })
                .collect();
            made.into_iter().try_for_each(emit)?;
        }
        let term_chunks: Vec<String> = chunks.iter().map(|c| texts.get(c.first).to_string()).collect();
        drop(texts);
        // The facets, unless what they are made from is as it was.
        let facets = self.facets_made_from(&numbering);
        // What was written stays until all is: a rebuild stopped before (a newer change
        // waits) leaves the next one what the output holds.
        let totals = match self.written.as_ref().filter(|w| w.facets == facets) {
            Some(written) => {
                kept.push(PathBuf::from(BROWSER_DIR).join(FACETS_FILE));
                written.totals.clone()
            }
            None => {
                let made = self.facets(&numbering);
                emit(gzipped(FACETS_FILE.to_string(), &serde_json::to_vec(&made).expect("facets serialise")))?;
                made.totals()
            }
        };
        self.emit_meta(&numbering, term_chunks, &totals, emit)?;
        self.dirty.clear();
        let chunks = chunks.iter().map(|c| (c.first, c.count)).collect();
        self.written = Some(Written { chunks, average: numbering.average, starts: numbering.starts, facets, totals });
        Ok(kept)
    }

    /// The places in `sorted` of the terms whose lines change, in order.
    fn fresh(&self) -> Vec<usize> {
        let texts = self.vocabulary.lock();
        let mut fresh: Vec<usize> = self
            .dirty
            .iter()
            .filter_map(|&term| self.sorted.binary_search_by(|s| texts.get(s.term).cmp(texts.get(term))).ok())
            .collect();
        fresh.sort_unstable();
        fresh
    }

    /// The term chunks, where their terms' marks and lines' lengths say ([`begins_chunk`]);
    /// `fresh` are the places of the terms whose lines changed (`None`: every term's).
    fn chunks(&self, fresh: Option<&[usize]>) -> Vec<Chunk> {
        let mut chunks: Vec<Chunk> = Vec::new();
        let average = self.layout.term_file_bytes();
        let (mut size, mut previous_len) = (0usize, 0usize);
        let mut fresh = fresh.map(|fresh| fresh.iter().peekable());
        for (at, sorted) in self.sorted.iter().enumerate() {
            let changed = fresh.as_mut().is_none_or(|fresh| fresh.next_if_eq(&&at).is_some());
            let len = sorted.line_len as usize;
            let begins = chunks.is_empty()
                || previous_len >= average
                || size + len > MAX_CHUNK_FACTOR * average
                || begins_chunk(sorted.mark, len, average);
            if begins {
                chunks.push(Chunk { first: sorted.term, at, count: 0, changed: false });
                size = 0;
            }
            let chunk = chunks.last_mut().expect("a chunk begun");
            chunk.count += 1;
            chunk.changed |= changed;
            size += len;
            previous_len = len;
        }
        chunks
    }

    /// `meta.json`.
    fn emit_meta<E>(
        &self,
        numbering: &Numbering,
        term_chunks: Vec<String>,
        totals: &Totals,
        emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
    ) -> Result<(), E> {
        let runs: Vec<(&str, u32, usize)> = self
            .order
            .iter()
            .map(|&slot| (self.part(slot).key.as_str(), numbering.starts[&slot], self.part(slot).lengths.len()))
            .collect();
        let meta = Meta {
            format: FORMAT,
            documents: numbering.documents,
            numbered: numbering.numbered,
            docs_per_chunk: self.layout.documents_per_file,
            term_chunks,
            runs,
            stop_words: &STOP_WORDS,
            totals,
        };
        emit(file("meta.json".to_string(), serde_json::to_vec(&meta).expect("meta serialises")))
    }

    /// A hash of what the facets file is made from: the numbers given, and each run's
    /// first number and its documents' facet values, in order.
    fn facets_made_from(&self, numbering: &Numbering) -> u64 {
        let mut bytes: Vec<u8> = Vec::new();
        let number = |bytes: &mut Vec<u8>, n: usize| bytes.extend_from_slice(&(n as u64).to_le_bytes());
        let mut hasher = xxhash_rust::xxh3::Xxh3::new();
        number(&mut bytes, numbering.numbered as usize);
        for &slot in &self.order {
            let facets = &self.part(slot).facets;
            number(&mut bytes, numbering.starts[&slot] as usize);
            number(&mut bytes, facets.names.len());
            for name in &facets.names {
                number(&mut bytes, name.len());
                bytes.extend_from_slice(name.as_bytes());
            }
            number(&mut bytes, facets.sets.len());
            for set in &facets.sets {
                number(&mut bytes, set.len());
                bytes.extend(set.iter().flat_map(|v| v.to_le_bytes()));
            }
            number(&mut bytes, facets.docs.len());
            bytes.extend(facets.docs.iter().flatten().flat_map(|v| v.to_le_bytes()));
            hasher.update(&bytes);
            bytes.clear();
        }
        hasher.digest()
    }

    /// Each run's first document number (a multiple of `documents_per_file`), the numbers
    /// given, the documents and the average length the levels are made with.
    fn numbering(&self) -> Numbering {
        let mut starts = HashMap::with_capacity(self.order.len());
        let per_file = self.layout.documents_per_file;
        let (mut next, mut documents, mut total) = (0u32, 0usize, 0f64);
        for &slot in &self.order {
            let part = self.part(slot);
            starts.insert(slot, next);
            let docs = u32::try_from(part.lengths.len()).expect("fewer than 4 billion documents");
            next += docs.div_ceil(per_file) * per_file;
            documents += part.lengths.len();
            total += part.lengths.iter().map(|&n| f64::from(n)).sum::<f64>();
        }
        let mut places = vec![(u32::MAX, u32::MAX); self.slots.len()];
        for (i, &slot) in self.order.iter().enumerate() {
            places[slot] = (u32::try_from(i).expect("fewer than 4 billion runs"), starts[&slot]);
        }
        Numbering { starts, places, numbered: next, documents, average: rounded_average(total, documents) }
    }

    /// Every term with postings, in byte order: the new ones put in their places, the
    /// ones that lost their last posting taken out. Only those terms' texts are read.
    fn sort_terms(&mut self) {
        let term_runs = &self.term_runs;
        let mut new = std::mem::take(&mut self.new_terms);
        new.retain(|&t| term_runs.has(t));
        new.sort_unstable();
        new.dedup();
        let mut gone = std::mem::take(&mut self.gone_terms);
        gone.retain(|&t| !term_runs.has(t));
        gone.sort_unstable();
        gone.dedup();
        let texts = self.vocabulary.texts();
        let old = &self.sorted;
        let place = |term: u32| old.binary_search_by(|s| texts.get(s.term).cmp(texts.get(term)));
        // The new terms in byte order (a term met anew while still in the list stays where
        // it is), then where each goes and where each gone one was.
        let mut added: Vec<SortedTerm> = new
            .par_iter()
            .filter(|&&term| old.is_empty() || place(term).is_err())
            .map(|&term| SortedTerm { term, line_len: 0, mark: mark(texts.get(term)) })
            .collect();
        added.par_sort_unstable_by(|x, y| texts.get(x.term).cmp(texts.get(y.term)));
        if old.is_empty() {
            self.sorted = added;
            return;
        }
        let mut removed: Vec<usize> = gone.iter().filter_map(|&term| place(term).ok()).collect();
        removed.sort_unstable();
        if added.is_empty() && removed.is_empty() {
            return;
        }
        let mut merged = Vec::with_capacity(old.len() + added.len() - removed.len());
        let places: Vec<usize> = added.iter().map(|s| place(s.term).expect_err("a term not in the list")).collect();
        let (mut added, mut removed) = (places.into_iter().zip(added).peekable(), removed.into_iter().peekable());
        let mut from = 0;
        loop {
            match (removed.peek().copied(), added.peek().map(|&(at, _)| at)) {
                (None, None) => break,
                // A term is put before the one at its place is taken out.
                (Some(at), next) if next.is_none_or(|next| at < next) => {
                    merged.extend_from_slice(&old[from..at]);
                    from = at + 1;
                    removed.next();
                }
                (_, _) => {
                    let (at, term) = added.next().expect("a term to add");
                    merged.extend_from_slice(&old[from..at]);
                    from = at;
                    merged.push(term);
                }
            }
        }
        merged.extend_from_slice(&old[from..]);
        self.sorted = merged;
    }

    /// Every document's facet values, in number order (the numbers between runs none).
    fn facets(&self, numbering: &Numbering) -> Facets {
        let mut values = FacetValues::default();
        for &slot in &self.order {
            values.pad_to(numbering.starts[&slot]);
            let facets = &self.part(slot).facets;
            for &doc in &facets.docs {
                values.add(facets, doc);
            }
        }
        values.pad_to(numbering.numbered);
        values.finish()
    }

    /// The document files of the runs whose parts were not added by this build (an
    /// earlier build wrote them): the output holds them as this build would write them.
    pub fn kept_document_files(&self, added_now: &rustc_hash::FxHashSet<String>) -> Vec<PathBuf> {
        self.order
            .iter()
            .map(|&slot| self.part(slot))
            .filter(|part| !added_now.contains(&part.key))
            .flat_map(|part| part.files.iter().cloned())
            .collect()
    }
}

/// A term chunk: its first term, where its terms are in `sorted` and how many, and
/// whether a term's postings changed.
struct Chunk {
    first: u32,
    at: usize,
    count: u32,
    changed: bool,
}

/// How the documents are numbered in one build.
struct Numbering {
    /// Each run's first number, by slot.
    starts: HashMap<usize, u32>,
    /// By slot: each run's place in the site and first number (`u32::MAX`: none).
    places: Vec<(u32, u32)>,
    /// The numbers given.
    numbered: u32,
    documents: usize,
    average: f64,
}

/// Writes terms' lines, for one build's numbering.
struct Lines<'a> {
    index: &'a BrowserIndex,
    numbering: &'a Numbering,
}

impl Lines<'_> {
    /// The line of `term` (`text`) in its chunk: the term, a tab, its postings in the
    /// order of the documents' numbers, and a newline.
    fn write(&self, term: u32, text: &str, out: &mut String) {
        out.push_str(text);
        out.push('\t');
        self.each_posting(term, |part, number, packed, gap| {
            let occurrences = Occurrences::unpacked(packed);
            let level = occurrences.level(f64::from(part.lengths[number as usize]), self.numbering.average);
            out.push(char::from(b'A' + (level - 1)));
            push_base36(gap, out);
        });
        out.push('\n');
    }

    /// The length of the line [`Lines::write`] writes for `term` (whose text is `text_len`
    /// bytes), without making it: where chunks begin depends on every line's length.
    fn len(&self, term: u32, text_len: usize) -> usize {
        // The text, a tab, each posting's level letter and gap, a newline.
        let mut len = text_len + 2;
        self.each_posting(term, |_, _, _, gap| len += 1 + base36_len(gap));
        len
    }

    /// Each posting of `term` in the order of the documents' numbers: its run's part, its
    /// document's number in the run, its occurrences packed, and the gap from the previous
    /// posting's document (from 0 for the first).
    fn each_posting(&self, term: u32, mut posting: impl FnMut(&RunPart, u32, u8, u32)) {
        let places = &self.numbering.places;
        let mut slots: smallvec::SmallVec<[usize; 8]> = self.index.term_runs.slots(term).map(|s| s as usize).collect();
        slots.sort_unstable_by_key(|&slot| places[slot].0);
        let mut last = 0u32;
        for slot in slots {
            let part = self.index.part(slot);
            let start = places[slot].1;
            for (number, packed) in part.postings_of(term) {
                let doc = start + number;
                posting(part, number, packed, doc - last);
                last = doc;
            }
        }
    }
}

/// The average length the levels are made with: the documents' average rounded to a
/// step of an eighth of an octave (about 9 %), so that an edit seldom changes it (and
/// with it, every level).
fn rounded_average(total: f64, documents: usize) -> f64 {
    let average = (total / documents.max(1) as f64).max(1.0);
    (2f64).powf((average.log2() * 8.0).round() / 8.0)
}

/// The mark of `term`: the top half of its hash.
fn mark(term: &str) -> u32 {
    (xxhash_rust::xxh3::xxh3_64(term.as_bytes()) >> 32) as u32
}

/// Whether a term of `mark` ([`mark`]) whose line is `len` bytes begins a term chunk: when
/// its mark is below the line's share of `average` bytes, so that chunks are about that
/// size and where one begins depends on that term alone.
fn begins_chunk(mark: u32, len: usize, average: usize) -> bool {
    (f64::from(mark) / f64::from(u32::MAX)) < len as f64 / average as f64
}

fn file(name: String, bytes: Vec<u8>) -> OutputFile {
    OutputFile { path: PathBuf::from(BROWSER_DIR).join(name), bytes }
}

/// The file `name` holding `bytes` gzipped: at the fastest level (the next levels save
/// a tenth more for three times the time), with no name and no time in the header, so
/// the same bytes give the same file.
fn gzipped(name: String, bytes: &[u8]) -> OutputFile {
    let mut encoder =
        flate2::GzBuilder::new().mtime(0).write(Vec::with_capacity(bytes.len() / 3 + 64), flate2::Compression::fast());
    encoder.write_all(bytes).expect("writing to memory cannot fail");
    file(name, encoder.finish().expect("writing to memory cannot fail"))
}

/// The number of digits [`push_base36`] writes for `n`.
fn base36_len(mut n: u32) -> usize {
    let mut digits = 1;
    while n >= 36 {
        n /= 36;
        digits += 1;
    }
    digits
}

fn push_base36(mut n: u32, out: &mut String) {
    let mut digits = [0u8; 7];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize];
        n /= 36;
        if n == 0 {
            break;
        }
    }
    out.push_str(std::str::from_utf8(&digits[i..]).expect("ASCII"));
}

#[derive(Serialize)]
struct Meta<'a> {
    format: &'static str,
    /// Documents (for BM25's idf).
    documents: usize,
    /// Document numbers given: each run's begin at a multiple of `docs_per_chunk`.
    numbered: u32,
    docs_per_chunk: u32,
    term_chunks: Vec<String>,
    /// Each run's key (`system/run`: its document files' folder), first number and
    /// documents, in order.
    runs: Vec<(&'a str, u32, usize)>,
    stop_words: &'a [&'a str],
    totals: &'a Totals,
}

/// What a result shows: `[url, title, where, text]`.
#[derive(Serialize)]
struct ShownDoc<'a>(&'a str, &'a str, Place<'a>, &'a str);

/// Where a document is: `system · run · type`.
struct Place<'a>(&'a SearchDoc);

impl Serialize for Place<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let d = self.0;
        serializer.collect_str(&format_args!("{} · {} · {}", d.system_name, d.run, d.doc_type.as_str()))
    }
}

impl<'a> ShownDoc<'a> {
    /// `d` as a result shows it, the start of its own text (without its twins) gathered
    /// in `text`.
    fn of(d: &'a SearchDoc, text: &'a mut String) -> Self {
        text.clear();
        for word in super::own_parts(&d.body, &d.twins).flat_map(str::split_whitespace) {
            if text.len() + word.len() > SNIPPET_SOURCE_CHARS {
                break;
            }
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(word);
        }
        ShownDoc(&d.path, &d.title, Place(d), text)
    }
}

/// The facet values of the documents added so far: each value, and each set of statuses,
/// numbered as first seen.
#[derive(Default)]
struct FacetValues {
    systems: Interner,
    kinds: Interner,
    statuses: Interner,
    /// Sets of statuses (numbers in `statuses`), the empty set first.
    status_sets: Vec<Vec<usize>>,
    /// Each document's system, kind ([`NO_KIND`]: none) and set of statuses, by number.
    docs: Vec<(u32, u32, u32)>,
    /// The last document's system, by name and number: documents come run by run, so
    /// most have the one before's.
    last_system: Option<(Box<str>, u32)>,
    /// The set of statuses being numbered (kept to spare an allocation a document).
    set: Vec<usize>,
}

/// A document without a kind (not a record).
const NO_KIND: u32 = u32::MAX;
/// A number between runs, which no document has.
const NO_SYSTEM: u32 = u32::MAX;

impl RunFacets {
    fn of<'a>(docs: &[&'a SearchDoc]) -> Self {
        let mut facets = RunFacets::default();
        let mut names: Vec<Box<str>> = Vec::new();
        let mut numbers: FxHashMap<&'a str, u32> = FxHashMap::default();
        let mut number = |name: &'a str| -> u32 {
            *numbers.entry(name).or_insert_with(|| {
                names.push(name.into());
                u32::try_from(names.len() - 1).expect("fewer than 4 billion values")
            })
        };
        let mut set = Vec::new();
        for d in docs {
            let system = number(&d.system_name);
            let kind = d.kind.as_deref().map_or(NO_KIND, &mut number);
            set.clear();
            set.extend(d.statuses.iter().map(|s| number(s)));
            // A run has a few sets: a search through them is quicker than hashing.
            let set = match facets.sets.iter().position(|s| **s == *set) {
                Some(n) => n,
                None => {
                    facets.sets.push(set.as_slice().into());
                    facets.sets.len() - 1
                }
            };
            facets.docs.push([system, kind, u32::try_from(set).expect("fewer than 4 billion sets")]);
        }
        facets.names = names;
        facets
    }
}

#[derive(Default)]
struct Interner {
    numbers: FxHashMap<String, usize>,
    names: Vec<String>,
}

impl Interner {
    fn number(&mut self, name: &str) -> usize {
        if let Some(&n) = self.numbers.get(name) {
            return n;
        }
        self.names.push(name.to_string());
        self.numbers.insert(name.to_string(), self.names.len() - 1);
        self.names.len() - 1
    }

    /// The names in byte order, and each number's place among them.
    fn sorted(self) -> (Vec<String>, Vec<usize>) {
        let mut order: Vec<usize> = (0..self.names.len()).collect();
        order.sort_by(|&a, &b| self.names[a].cmp(&self.names[b]));
        let mut place = vec![0; order.len()];
        for (i, &n) in order.iter().enumerate() {
            place[n] = i;
        }
        let mut names = self.names;
        let sorted = order.iter().map(|&n| std::mem::take(&mut names[n])).collect();
        (sorted, place)
    }
}

impl FacetValues {
    /// Adds the document `[system, kind, statuses]` of a run whose values are `facets`.
    fn add(&mut self, facets: &RunFacets, [system, kind, statuses]: [u32; 3]) {
        let number = |n: usize| u32::try_from(n).expect("fewer than 4 billion values");
        let name = |n: u32| &*facets.names[n as usize];
        let system = match &self.last_system {
            Some((last, n)) if **last == *name(system) => *n,
            _ => {
                let n = number(self.systems.number(name(system)));
                self.last_system = Some((name(system).into(), n));
                n
            }
        };
        let kind = if kind == NO_KIND { NO_KIND } else { number(self.kinds.number(name(kind))) };
        self.set.clear();
        for &value in &facets.sets[statuses as usize] {
            let n = self.statuses.number(name(value));
            self.set.push(n);
        }
        if self.status_sets.is_empty() {
            self.status_sets.push(Vec::new());
        }
        // A site has a few dozen sets: a search through them is quicker than hashing.
        let set = match self.status_sets.iter().position(|s| *s == self.set) {
            Some(n) => n,
            None => {
                self.status_sets.push(self.set.clone());
                self.status_sets.len() - 1
            }
        };
        self.docs.push((system, kind, number(set)));
    }

    /// Numbers up to `number` that no document has (between runs): no values.
    fn pad_to(&mut self, number: u32) {
        if self.status_sets.is_empty() {
            self.status_sets.push(Vec::new());
        }
        while self.docs.len() < number as usize {
            self.docs.push((NO_SYSTEM, NO_KIND, 0));
        }
    }

    fn finish(self) -> Facets {
        let (systems, system_place) = self.systems.sorted();
        let (kinds, kind_place) = self.kinds.sorted();
        let (statuses, status_place) = self.statuses.sorted();
        let status_sets: Vec<Vec<usize>> =
            self.status_sets.into_iter().map(|set| set.into_iter().map(|v| status_place[v]).collect()).collect();
        let (mut system_counts, mut kind_counts, mut status_counts) =
            (vec![0; systems.len()], vec![0; kinds.len()], vec![0; statuses.len()]);
        let (mut system, mut kind, mut status) = (Vec::new(), Vec::new(), Vec::new());
        for (s, k, set) in self.docs {
            if s == NO_SYSTEM {
                push_run(&mut system, -1);
                push_run(&mut kind, -1);
                push_run(&mut status, 0);
                continue;
            }
            let s = system_place[s as usize];
            system_counts[s] += 1;
            push_run(&mut system, s as i64);
            let k = (k != NO_KIND).then(|| kind_place[k as usize]);
            if let Some(k) = k {
                kind_counts[k] += 1;
            }
            push_run(&mut kind, k.map_or(-1, |k| k as i64));
            for &v in &status_sets[set as usize] {
                status_counts[v] += 1;
            }
            push_run(&mut status, i64::from(set));
        }
        let counts = BTreeMap::from([("system", system_counts), ("kind", kind_counts), ("status", status_counts)]);
        let status_sets = if status_sets.is_empty() { vec![Vec::new()] } else { status_sets };
        let values = BTreeMap::from([("system", systems), ("kind", kinds), ("status", statuses)]);
        Facets { values, system, kind, status, status_sets, counts }
    }
}

/// Each document's facet values by number, run-length encoded as `[value, count, …]` in
/// document order (`-1`: none; a number no document has is `-1`, `-1` and the empty set).
/// Statuses are sets, numbered in `status_sets`.
#[derive(Serialize)]
struct Facets {
    values: BTreeMap<&'static str, Vec<String>>,
    system: Vec<i64>,
    kind: Vec<i64>,
    status: Vec<i64>,
    status_sets: Vec<Vec<usize>>,
    #[serde(skip)]
    counts: BTreeMap<&'static str, Vec<usize>>,
}

impl Facets {
    fn totals(&self) -> Totals {
        self.values
            .iter()
            .map(|(facet, values)| {
                (facet.to_string(), values.iter().cloned().zip(self.counts[facet].iter().copied()).collect())
            })
            .collect()
    }
}

fn push_run(runs: &mut Vec<i64>, value: i64) {
    match runs.len() {
        n if n >= 2 && runs[n - 2] == value => runs[n - 1] += 1,
        _ => runs.extend([value, 1]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part of `docs` documents of `length` terms, where term 0 has `postings`
    /// (document number, occurrences).
    fn part(key: &str, docs: usize, length: u32, postings: &[(u32, Occurrences)]) -> RunPart {
        let facets =
            RunFacets { names: vec![Box::from("Lab")], sets: vec![Box::new([])], docs: vec![[0, NO_KIND, 0]; docs] };
        RunPart {
            key: key.into(),
            token: Some(1),
            lengths: vec![length; docs],
            facets,
            terms: vec![(0, 0)],
            postings: {
                let mut bytes = Vec::new();
                let mut previous = None;
                for &(doc, o) in postings {
                    Postings::push(&mut bytes, previous, doc, o.packed());
                    previous = Some(doc);
                }
                bytes
            },
            files: Vec::new(),
        }
    }

    #[test]
    fn a_line_is_levels_and_gaps_across_runs_numbered_from_multiples_of_sixteen() {
        let none = Occurrences::default();
        let all = Occurrences { body: 40, id: true, id_part: true, title: true, path: true };
        let once = Occurrences { body: 1, ..none };
        let mut index = BrowserIndex::default();
        // Run a: documents 0 and 5 (of 17: the next run begins at 32); run b: its 4th.
        index.put(part("lab/a", 17, 10, &[(0, none), (5, all)]));
        index.put(part("lab/b", 4, 10, &[(3, once)]));
        index.arrange(&["lab/a".to_string(), "lab/b".to_string()]);
        let numbering = index.numbering();
        assert_eq!((numbering.documents, numbering.numbered), (21, 48));
        assert_eq!(numbering.average, rounded_average(210.0, 21));
        let mut line = String::new();
        let lines = Lines { index: &index, numbering: &numbering };
        lines.write(0, "term", &mut line);
        assert_eq!(lines.len(0, "term".len()), line.len(), "the length told without the line");
        let letter = |o: Occurrences| char::from(b'A' + o.level(10.0, numbering.average) - 1);
        // Gaps: 0, 5, then 35 − 5 = 30 (`u` in base 36).
        assert_eq!(line, format!("term\t{}0{}5{}u\n", letter(none), letter(all), letter(once)));
        assert_eq!(letter(none), 'A');
        assert_eq!(line.chars().nth(7), Some('Y'), "every place, and the text 15 times (counted at most): {line}");
    }

    #[test]
    fn a_lines_length_is_told_without_making_it_whatever_its_gaps() {
        for n in [0, 1, 35, 36, 1295, 1296, 46_655, 46_656, 1_000_000, u32::MAX] {
            let mut digits = String::new();
            push_base36(n, &mut digits);
            assert_eq!(base36_len(n), digits.len(), "{n}: {digits}");
        }
        let once = Occurrences { body: 1, ..Occurrences::default() };
        let mut index = BrowserIndex::default();
        // Gaps of one, two and three digits, across three runs.
        index.put(part("lab/a", 2000, 10, &[(0, once), (7, once), (1500, once)]));
        index.put(part("lab/b", 40, 3, &[(39, once)]));
        index.put(part("lab/c", 1, 900, &[(0, once)]));
        index.arrange(&["lab/a".to_string(), "lab/b".to_string(), "lab/c".to_string()]);
        let numbering = index.numbering();
        let lines = Lines { index: &index, numbering: &numbering };
        let mut line = String::new();
        lines.write(0, "ünïcode", &mut line);
        assert!(line.split('\t').nth(1).is_some_and(|postings| postings.len() > 12), "{line}");
        assert_eq!(lines.len(0, "ünïcode".len()), line.len(), "{line}");
    }

    /// The files `finish` hands out, by path.
    fn finished(index: &mut BrowserIndex) -> (BTreeMap<PathBuf, Vec<u8>>, Vec<PathBuf>) {
        let files = std::sync::Mutex::new(BTreeMap::new());
        let emit = |file: OutputFile| -> Result<(), ()> {
            files.lock().unwrap().insert(file.path, file.bytes);
            Ok(())
        };
        let kept = index.finish(&emit).unwrap();
        (files.into_inner().unwrap(), kept)
    }

    #[test]
    fn an_index_saved_and_read_back_keeps_its_files_and_damage_is_refused() {
        let mut index = BrowserIndex::default();
        let once = Occurrences { body: 1, ..Occurrences::default() };
        index.put(part("lab/a", 3, 10, &[(0, once), (2, once)]));
        index.put(part("lab/b", 2, 10, &[(1, once)]));
        // The parts' term 0 must have a text.
        index.vocabulary = Vocabulary::of_texts(&["turns".to_string()]);
        index.arrange(&["lab/a".to_string(), "lab/b".to_string()]);
        let (first, kept) = finished(&mut index);
        assert!(kept.is_empty() && first.keys().any(|p| p.ends_with("t/7475726e73.txt.gz")), "{first:?}");
        let mut saved = Vec::new();
        index.save(&mut saved).unwrap();
        let mut again = BrowserIndex::load(&mut saved.as_slice(), saved.len() as u64).expect("read back");
        assert_eq!(again.files(), index.files());
        let (second, kept) = finished(&mut again);
        let in_index = |name: &str| PathBuf::from(BROWSER_DIR).join(name);
        assert_eq!(kept, [in_index("t/7475726e73.txt.gz"), in_index(FACETS_FILE)], "kept as written");
        assert_eq!(second.keys().collect::<Vec<_>>(), [&in_index("meta.json")], "only meta.json is written");
        assert_eq!(second.get(&in_index("meta.json")), first.get(&in_index("meta.json")));
        assert!(BrowserIndex::load(&mut &saved[..saved.len() / 2], saved.len() as u64 / 2).is_none(), "a cut file");
        assert!(BrowserIndex::load(&mut &b"not an index"[..], 12).is_none());
        // A file whose bytes read as a length far beyond its own (its first term's): not
        // read.
        let mut huge = saved[..8].to_vec();
        huge.extend(1u64.to_le_bytes());
        huge.extend(u64::MAX.to_le_bytes());
        huge.extend(b"turns");
        assert!(BrowserIndex::load(&mut huge.as_slice(), huge.len() as u64).is_none());
    }

    #[test]
    fn the_facets_are_written_again_when_a_runs_values_change_and_only_then() {
        let mut index = BrowserIndex::default();
        let once = Occurrences { body: 1, ..Occurrences::default() };
        index.vocabulary = Vocabulary::of_texts(&["turns".to_string()]);
        index.put(part("lab/a", 3, 10, &[(0, once)]));
        index.put(part("lab/b", 2, 10, &[(1, once)]));
        index.arrange(&["lab/a".to_string(), "lab/b".to_string()]);
        let (first, _) = finished(&mut index);
        let facets = PathBuf::from(BROWSER_DIR).join(FACETS_FILE);
        let meta = PathBuf::from(BROWSER_DIR).join("meta.json");
        // Other postings, the same facet values: the facets stay.
        index.put(part("lab/b", 2, 10, &[(0, once)]));
        let (second, kept) = finished(&mut index);
        assert!(!second.contains_key(&facets) && kept.contains(&facets));
        // Another system's name in run b: the facets and their totals change.
        let mut renamed = part("lab/b", 2, 10, &[(0, once)]);
        renamed.facets.names = vec![Box::from("Other lab")];
        index.put(renamed);
        let (third, kept) = finished(&mut index);
        assert!(third.contains_key(&facets) && third[&facets] != first[&facets], "{:?}", third.keys());
        assert!(!kept.iter().any(|p| p.ends_with(FACETS_FILE)));
        let totals = |files: &BTreeMap<PathBuf, Vec<u8>>| {
            let meta: serde_json::Value = serde_json::from_slice(&files[&meta]).unwrap();
            meta["totals"]["system"].clone()
        };
        assert_eq!(totals(&second), serde_json::json!({"Lab": 5}));
        assert_eq!(totals(&third), serde_json::json!({"Lab": 3, "Other lab": 2}));
        // Run b's documents moved by a run put before it: the facets change with the numbers.
        index.put(part("lab/0", 1, 10, &[(0, once)]));
        index.arrange(&["lab/0".to_string(), "lab/a".to_string(), "lab/b".to_string()]);
        let (fourth, _) = finished(&mut index);
        assert!(fourth.contains_key(&facets) && fourth[&facets] != third[&facets]);
    }

    #[test]
    fn a_finish_stopped_before_its_end_leaves_the_next_one_to_write_what_changed_only() {
        let once = Occurrences { body: 1, ..Occurrences::default() };
        // Run a: each of 20,000 terms in its first document (term files of many chunks);
        // run b: the first term, in one of its documents or the other.
        let words: Vec<String> = (0..20_000).map(|n| format!("word{n:05}")).collect();
        let mut index = BrowserIndex { vocabulary: Vocabulary::of_texts(&words), ..BrowserIndex::default() };
        let mut every = part("lab/a", 2, 10, &[]);
        every.terms = (0..20_000).map(|t| (t, t * 2)).collect();
        every.postings = (0..20_000).flat_map(|_| [0, once.packed()]).collect();
        index.put(every);
        index.put(part("lab/b", 2, 10, &[(0, once)]));
        index.arrange(&["lab/a".to_string(), "lab/b".to_string()]);
        let (first, _) = finished(&mut index);
        let chunks =
            |files: &BTreeMap<PathBuf, Vec<u8>>| files.keys().filter(|p| p.starts_with("search/browser/t")).count();
        assert!(chunks(&first) > 4, "{} term files", chunks(&first));
        // The first term moves to run b's other document; the finish stops at meta.json, its
        // last file (a newer change waits), after the term files.
        index.put(part("lab/b", 2, 10, &[(1, once)]));
        let stopping = |file: OutputFile| if file.path.ends_with("meta.json") { Err(()) } else { Ok(()) };
        assert!(index.finish(&stopping).is_err());
        // The next finish writes the changed term's file again, not every one.
        let (next, _) = finished(&mut index);
        assert_eq!(chunks(&next), 1, "{:?}", next.keys().collect::<Vec<_>>());
    }

    #[test]
    fn the_average_is_rounded_to_an_eighth_of_an_octave() {
        assert_eq!(rounded_average(0.0, 0), 1.0);
        let a = rounded_average(1000.0, 10);
        assert!((a - 100.0).abs() / 100.0 < 0.05, "{a}");
        // A document more or less moves it seldom.
        assert_eq!(rounded_average(100_010.0, 1000), rounded_average(100_000.0, 1000));
    }

    #[test]
    fn a_chunk_begins_at_a_term_with_the_odds_of_its_line() {
        let words: Vec<String> = (0..20_000).map(|n| format!("word{n}")).collect();
        let average = SearchFiles::default().term_file_bytes();
        let begun = words.iter().filter(|w| begins_chunk(mark(w), 240, average)).count();
        // 1 % of lines of 240 bytes begin a chunk: about 200 of 20,000.
        assert!((150..250).contains(&begun), "{begun}");
        assert!(words.iter().all(|w| begins_chunk(mark(w), average, average)), "a line of a chunk's size begins one");
        assert_eq!(mark("session"), mark("session"), "the same every time");
    }

    #[test]
    fn postings_read_back_as_written_across_every_width_of_gap() {
        let numbers = [0u32, 1, 127, 128, 129, 16_383, 16_384, 2_097_152, u32::MAX];
        let mut bytes = Vec::new();
        let mut previous = None;
        for (i, &number) in numbers.iter().enumerate() {
            Postings::push(&mut bytes, previous, number, i as u8 * 17);
            previous = Some(number);
        }
        let read: Vec<(u32, u8)> = Postings { bytes: &bytes, number: 0 }.collect();
        let written: Vec<(u32, u8)> = numbers.iter().enumerate().map(|(i, &n)| (n, i as u8 * 17)).collect();
        assert_eq!(read, written);
        // Small gaps take a byte: a posting is two bytes where most of a run's are.
        let mut small = Vec::new();
        Postings::push(&mut small, Some(300), 427, 5);
        assert_eq!(small, [127, 5]);
    }

    #[test]
    fn a_term_s_runs_are_added_and_taken_out_in_any_order() {
        let mut runs = TermRuns::default();
        let slots = |runs: &TermRuns, term| {
            let mut slots: Vec<u32> = runs.slots(term).collect();
            slots.sort_unstable();
            slots
        };
        assert!(runs.add(3, 7), "the term's first run");
        assert!(!runs.add(3, 1) && !runs.add(3, 9));
        assert!(runs.add(0, 1));
        assert_eq!((slots(&runs, 3), slots(&runs, 0), slots(&runs, 2)), (vec![1, 7, 9], vec![1], vec![]));
        assert!(!runs.has(2) && !runs.has(40) && runs.has(3));
        runs.remove(3, 7);
        assert_eq!(slots(&runs, 3), [1, 9], "the first slot gone, the next takes its place");
        runs.remove(3, 9);
        runs.remove(3, 4);
        assert_eq!(slots(&runs, 3), [1]);
        assert!(runs.more.is_empty(), "no list is kept for a term of one run");
        runs.remove(3, 1);
        assert!(!runs.has(3));
        assert!(runs.add(3, 5), "a term of no run gets a first run again");
        let mut all: Vec<u32> = runs.all_slots().collect();
        all.sort_unstable();
        assert_eq!((all, runs.len()), (vec![1, 5], 4));
    }

    #[test]
    fn occurrences_fit_a_byte() {
        let all = Occurrences { body: 9, id: true, id_part: false, title: true, path: false };
        assert_eq!(Occurrences::unpacked(all.packed()), all);
        let many = Occurrences { body: 1000, ..Occurrences::default() };
        assert_eq!(Occurrences::unpacked(many.packed()).body, MAX_BODY_COUNT);
    }

    #[test]
    fn a_whole_id_outranks_text() {
        let id = Occurrences { id: true, ..Occurrences::default() };
        let text = Occurrences { body: 12, title: true, ..Occurrences::default() };
        assert!(id.level(100.0, 100.0) > text.level(100.0, 100.0));
        assert!(text.level(100.0, 100.0) > Occurrences { body: 1, ..Occurrences::default() }.level(100.0, 100.0));
    }

    #[test]
    fn facet_runs() {
        let mut runs = Vec::new();
        for v in [0, 0, 0, 1, -1, -1, 0] {
            push_run(&mut runs, v);
        }
        assert_eq!(runs, [0, 3, 1, 1, -1, 2, 0, 1]);
    }
}
