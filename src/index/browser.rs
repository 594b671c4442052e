//! The static search index of the search page (`search/browser/`), read by
//! `themes/default/assets/search.js` from any static host, with no server and no
//! WebAssembly.
//!
//! Why not Pagefind: fed one document per record and per section, its library API's
//! time and memory grew with the square of the document count (measured in
//! `docs/performance.md`). This index is built in one pass over the documents, in time and
//! memory linear in their text, and a query fetches only what it shows.
//!
//! Files (the format is `casebook.browser-search/1`, described in `docs/search.md`):
//!
//! - `meta.json`: the document count, the first term of each term chunk, and the facet
//!   totals shown before any query;
//! - `t/N.txt.gz`: term chunks, terms in byte order, one line each: the term, a tab, and
//!   its postings (a letter `A`–`Z` for the document's score level, then the distance
//!   from the previous document's number in base 36);
//! - `d/N.json.gz`: documents in groups of [`DOCS_PER_CHUNK`]: URL, title, where it is,
//!   and the start of its text for snippets;
//! - `facets.json.gz`: each document's system, kind and statuses, run-length encoded in
//!   document order, for counts within results and for filtering.
//!
//! The `.gz` files are gzipped here, as Pagefind does its own: two thirds of the index's
//! bytes go, on the host's disk and in a deploy, and a host that compresses on the fly
//! gains little on them. The page inflates them itself (and takes them as they are when a
//! host sent them with `Content-Encoding: gzip` and the browser already did).
//!
//! Tokenising (in [`super::analysis`]) is shared with the browser and must stay identical
//! to `search.js`: words are runs of letters and digits, lower-cased; compounds are runs
//! of letters, digits and `_ . / -` that hold a joiner, without joiners at either end
//! (`files_modified`, `session.py`, `MEM-OBJ-raw`); a few English function words are left
//! out.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use serde::Serialize;

use super::analysis::{BrowserTerms, Occurrences, Vocabulary, STOP_WORDS};
use super::{DocType, SearchDoc};
use crate::output::{OutputFile, BROWSER_DIR};

/// The format name in `meta.json`; `search.js` refuses any other.
const FORMAT: &str = "casebook.browser-search/2";
/// Documents per `d/N.json.gz`: ten results fetch at most ten small files.
const DOCS_PER_CHUNK: usize = 16;
/// A term chunk is closed once it holds this many bytes (a term with longer postings
/// has a chunk to itself).
const TERM_CHUNK_BYTES: usize = 24 * 1024;
/// Characters of a document's text kept for snippets.
const SNIPPET_SOURCE_CHARS: usize = 1000;

/// The browser index being made: documents are added a batch at a time, in site order
/// (reports are left out: their sections stand for them), and [`BrowserIndex::finish`]
/// writes the term chunks and facets. URLs are root-relative; the search page adds the
/// base path.
#[derive(Default)]
pub struct BrowserIndex {
    /// Each term's postings, by its number in the [`Vocabulary`] (its text is there
    /// once: a site has millions of terms).
    postings: Vec<RawPostings>,
    /// Each document's length in terms, for BM25's normalisation.
    lengths: Vec<u32>,
    /// The next `d/N.json` as far as it is written: documents added but not yet emitted
    /// (fewer than a chunk), each as the JSON of its [`ShownDoc`].
    unshown: Vec<u8>,
    /// Documents in `unshown`.
    unshown_docs: usize,
    /// `d/N.json` files written.
    shown_chunks: usize,
    facets: FacetValues,
}

impl BrowserIndex {
    /// Adds `docs` with their terms ([`super::analyse`]; `None` for reports: their
    /// sections stand for them), handing each full `d/N.json` to `emit`.
    pub fn add<E>(
        &mut self,
        docs: &[Arc<SearchDoc>],
        terms: Vec<Option<BrowserTerms>>,
        emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
    ) -> Result<(), E> {
        let docs: Vec<&SearchDoc> = docs.iter().map(|d| &**d).filter(|d| d.doc_type != DocType::Report).collect();
        for BrowserTerms { terms, length } in terms.into_iter().flatten() {
            let number = u32::try_from(self.lengths.len()).expect("fewer than 4 billion documents");
            self.lengths.push(length);
            for term in terms {
                let at = term.term as usize;
                if at >= self.postings.len() {
                    self.postings.resize_with(at + 1, RawPostings::default);
                }
                self.postings[at].push(number, term.occurrences);
            }
        }
        let mut text = String::with_capacity(SNIPPET_SOURCE_CHARS + 8);
        for d in &docs {
            self.facets.add(d);
            // Each full chunk goes; the rest waits for the next batch.
            self.unshown.push(if self.unshown_docs == 0 { b'[' } else { b',' });
            serde_json::to_writer(&mut self.unshown, &ShownDoc::of(d, &mut text)).expect("documents serialise");
            self.unshown_docs += 1;
            if self.unshown_docs == DOCS_PER_CHUNK {
                self.emit_shown(emit)?;
            }
        }
        Ok(())
    }

    /// Emits the documents added and not yet emitted, as the next `d/N.json`.
    fn emit_shown<E>(&mut self, emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync)) -> Result<(), E> {
        let mut bytes =
            std::mem::replace(&mut self.unshown, Vec::with_capacity(DOCS_PER_CHUNK * (SNIPPET_SOURCE_CHARS + 256)));
        bytes.push(b']');
        emit(gzipped(format!("d/{}.json.gz", self.shown_chunks), &bytes))?;
        self.shown_chunks += 1;
        self.unshown_docs = 0;
        Ok(())
    }

    /// Writes the term chunks (the terms' text is in `vocabulary`, which numbered the
    /// terms of the documents added), the last documents, the facets and `meta.json`.
    pub fn finish<E>(
        mut self,
        vocabulary: Vocabulary,
        emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
    ) -> Result<(), E> {
        if self.unshown_docs > 0 {
            self.emit_shown(emit)?;
        }
        let documents = self.lengths.len();
        let average_len = (self.lengths.iter().map(|&n| f64::from(n)).sum::<f64>() / documents.max(1) as f64).max(1.0);
        let sorted = vocabulary.sorted();
        // Reports' words are numbered too, and may be in no document of this index.
        let terms = sorted
            .iter()
            .filter_map(|(n, term)| self.postings.get(n as usize).filter(|p| !p.bytes.is_empty()).map(|p| (term, p)));

        let mut chunk_starts = Vec::new();
        let mut chunk = String::new();
        for (term, list) in terms {
            if chunk.is_empty() {
                chunk_starts.push(term.to_string());
            }
            chunk.push_str(term);
            chunk.push('\t');
            list.encode(&self.lengths, average_len, &mut chunk);
            chunk.push('\n');
            if chunk.len() >= TERM_CHUNK_BYTES {
                emit(gzipped(format!("t/{}.txt.gz", chunk_starts.len() - 1), std::mem::take(&mut chunk).as_bytes()))?;
            }
        }
        if !chunk.is_empty() {
            emit(gzipped(format!("t/{}.txt.gz", chunk_starts.len() - 1), chunk.as_bytes()))?;
        }

        let facets = self.facets.finish();
        let meta = Meta {
            format: FORMAT,
            documents,
            docs_per_chunk: DOCS_PER_CHUNK,
            term_chunks: chunk_starts,
            stop_words: &STOP_WORDS,
            totals: facets.totals(),
        };
        emit(file("meta.json".to_string(), serde_json::to_vec(&meta).expect("meta serialises")))?;
        emit(gzipped("facets.json.gz".to_string(), &serde_json::to_vec(&facets).expect("facets serialise")))
    }
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

/// A term's postings while documents are added: for each document, its [`Occurrences`]
/// packed in a byte, then the gap from the previous document as a LEB128 number. They
/// become levels once the average length is known ([`RawPostings::encode`]).
#[derive(Default)]
struct RawPostings {
    /// Most terms occur in a few documents: their postings fit in place.
    bytes: smallvec::SmallVec<[u8; 16]>,
    last: u32,
}

impl RawPostings {
    /// Adds a document (numbers only grow).
    fn push(&mut self, doc: u32, occurrences: Occurrences) {
        self.bytes.push(occurrences.packed());
        let mut gap = doc - self.last;
        while gap >= 0x80 {
            self.bytes.push((gap & 0x7f) as u8 | 0x80);
            gap >>= 7;
        }
        self.bytes.push(gap as u8);
        self.last = doc;
    }

    /// The postings as the chunk files hold them: for each document, a letter `A`–`Z` for
    /// its level, then the gap from the previous document in base 36.
    fn encode(&self, lengths: &[u32], average_len: f64, out: &mut String) {
        let mut bytes = self.bytes.iter().copied();
        let mut doc = 0u32;
        while let Some(packed) = bytes.next() {
            let mut gap = 0u32;
            for shift in (0..).step_by(7) {
                let byte = bytes.next().expect("a gap follows each document");
                gap |= u32::from(byte & 0x7f) << shift;
                if byte < 0x80 {
                    break;
                }
            }
            doc += gap;
            let level = Occurrences::unpacked(packed).level(f64::from(lengths[doc as usize]), average_len);
            out.push(char::from(b'A' + (level - 1)));
            push_base36(gap, out);
        }
    }
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
    documents: usize,
    docs_per_chunk: usize,
    term_chunks: Vec<String>,
    stop_words: &'a [&'a str],
    totals: BTreeMap<&'static str, BTreeMap<String, usize>>,
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
}

/// A document without a kind (not a record).
const NO_KIND: u32 = u32::MAX;

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
    fn add(&mut self, d: &SearchDoc) {
        let number = |n: usize| u32::try_from(n).expect("fewer than 4 billion values");
        let system = number(self.systems.number(&d.system_name));
        let kind = d.kind.as_deref().map_or(NO_KIND, |k| number(self.kinds.number(k)));
        let set: Vec<usize> = d.statuses.iter().map(|v| self.statuses.number(v)).collect();
        if self.status_sets.is_empty() {
            self.status_sets.push(Vec::new());
        }
        // A site has a few dozen sets: a search through them is quicker than hashing.
        let set = match self.status_sets.iter().position(|s| *s == set) {
            Some(n) => n,
            None => {
                self.status_sets.push(set);
                self.status_sets.len() - 1
            }
        };
        self.docs.push((system, kind, number(set)));
    }

    fn finish(self) -> Facets {
        let (systems, system_place) = self.systems.sorted();
        let (kinds, kind_place) = self.kinds.sorted();
        let (statuses, status_place) = self.statuses.sorted();
        let status_sets: Vec<Vec<usize>> =
            self.status_sets.into_iter().map(|set| set.into_iter().map(|v| status_place[v]).collect()).collect();
        let mut counts: BTreeMap<&'static str, Vec<usize>> = BTreeMap::from([
            ("system", vec![0; systems.len()]),
            ("kind", vec![0; kinds.len()]),
            ("status", vec![0; statuses.len()]),
        ]);
        let (mut system, mut kind, mut status) = (Vec::new(), Vec::new(), Vec::new());
        for (s, k, set) in self.docs {
            let s = system_place[s as usize];
            counts.get_mut("system").expect("present")[s] += 1;
            push_run(&mut system, s as i64);
            let k = (k != NO_KIND).then(|| kind_place[k as usize]);
            if let Some(k) = k {
                counts.get_mut("kind").expect("present")[k] += 1;
            }
            push_run(&mut kind, k.map_or(-1, |k| k as i64));
            for &v in &status_sets[set as usize] {
                counts.get_mut("status").expect("present")[v] += 1;
            }
            push_run(&mut status, i64::from(set));
        }
        let status_sets = if status_sets.is_empty() { vec![Vec::new()] } else { status_sets };
        let values = BTreeMap::from([("system", systems), ("kind", kinds), ("status", statuses)]);
        Facets { values, system, kind, status, status_sets, counts }
    }
}

/// Each document's facet values by number, run-length encoded as `[value, count, …]` in
/// document order (`-1`: none). Statuses are sets, numbered in `status_sets`.
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
    fn totals(&self) -> BTreeMap<&'static str, BTreeMap<String, usize>> {
        self.values
            .iter()
            .map(|(facet, values)| (*facet, values.iter().cloned().zip(self.counts[facet].iter().copied()).collect()))
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

    #[test]
    fn postings_are_levels_and_gaps() {
        let none = Occurrences::default();
        let all = Occurrences { body: 40, id: true, id_part: true, title: true, path: true };
        let once = Occurrences { body: 1, ..none };
        let mut postings = RawPostings::default();
        // Gaps of 0, 5, 36 and 200 (two bytes of LEB128).
        for (doc, occurrences) in [(0, none), (5, all), (41, once), (241, once)] {
            postings.push(doc, occurrences);
        }
        let lengths = vec![10; 242];
        let mut encoded = String::new();
        postings.encode(&lengths, 10.0, &mut encoded);
        let letter = |o: Occurrences| char::from(b'A' + o.level(10.0, 10.0) - 1);
        assert_eq!(encoded, format!("{}0{}5{}10{}5k", letter(none), letter(all), letter(once), letter(once)));
        assert_eq!(letter(none), 'A');
        assert_eq!(
            encoded.chars().nth(2),
            Some('Y'),
            "every place, and the text 15 times (counted at most): {encoded}"
        );
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
