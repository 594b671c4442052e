//! The tantivy index of `casebook search` and the dev server.
//!
//! The index is written on one thread, the caller's, and the segment files are renamed
//! after a hash of their content, so the same documents give the same bytes on every
//! build.

use std::ops::Range;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED, STRING};
use rustc_hash::FxHashMap;

use tantivy::tokenizer::{
    LowerCaser, RawTokenizer, RemoveLongFilter, SimpleTokenizer, TextAnalyzer, Token, TokenFilter, TokenStream, Tokenizer,
};
use tantivy::indexer::SingleSegmentIndexWriter;
use tantivy::{doc, Index, TantivyDocument};

use super::{IndexError, SearchDoc};
use crate::render::OutputFile;

/// Where the tantivy index lives in the output.
pub const TANTIVY_DIR: &str = "search/tantivy";
/// Memory a segment may take while it is written; a full one is written out. (Ten
/// segments at 10,000 reports; they are not merged: merging rewrote the whole index
/// again, 50 s of a 108 s build at 10,000 reports.)
const SEGMENT_BUDGET: usize = 64 * 1024 * 1024;

/// The tantivy schema and its fields. `casebook search` opens the index with the same.
#[derive(Debug, Clone)]
pub struct Fields {
    /// The schema.
    pub schema: Schema,
    /// `record`, `section` or `report`.
    pub doc_type: Field,
    /// System slug (lower-cased, whole).
    pub system: Field,
    /// System name (stored).
    pub system_name: Field,
    /// Run slug.
    pub run: Field,
    /// Revision (stored).
    pub revision: Field,
    /// Report slug.
    pub report: Field,
    /// Report type.
    pub report_type: Field,
    /// Record ID, whole.
    pub id: Field,
    /// Record ID, by its parts.
    pub id_parts: Field,
    /// Kind code.
    pub kind: Field,
    /// Family code.
    pub family: Field,
    /// Statuses.
    pub status: Field,
    /// Label or heading.
    pub label: Field,
    /// Title to show (stored, searchable).
    pub title: Field,
    /// Plain text, English, stemmed (indexed from [`AnalysedText::stems`]; queried with
    /// `en_stem`).
    pub body: Field,
    /// Plain text as it is (stored only, for snippets).
    pub text: Field,
    /// The text's inflected words, as written (not stemmed): a query word written as in the
    /// text outranks its variants (`turns` over `turn`). Words that are their own stem are
    /// left out: they have no variant to outrank.
    pub exact: Field,
    /// The text's identifiers and paths, whole.
    pub ident: Field,
    /// Quoted and cited paths.
    pub path: Field,
    /// Root-relative URL (stored).
    pub url: Field,
}

/// Lower-cased whole values (IDs, kinds, statuses, slugs).
const KEYWORD: &str = "casebook_keyword";
/// Compound identifiers and paths, whole (`render_session_summary`, `plugin/exia_seed/rappel.py`).
const IDENT: &str = "casebook_ident";
/// English prose, stemmed: tantivy's own `en_stem` analyzer, re-registered under its
/// name with a memo of stems (see [`MemoStemmer`]); the tokens are the same.
const EN_STEM: &str = "en_stem";
/// `body`: English prose, stemmed, as `en_stem` does it; written from casebook's own
/// analysis of the text ([`StemsTokenizer`]).
const BODY: &str = "casebook_body";

impl Fields {
    /// The schema every casebook index has.
    pub fn new() -> Self {
        let mut b = Schema::builder();
        let indexed = |tokenizer: &str, stored: bool, record: IndexRecordOption| {
            let options =
                TextOptions::default().set_indexing_options(TextFieldIndexing::default().set_tokenizer(tokenizer).set_index_option(record));
            if stored {
                options.set_stored()
            } else {
                options
            }
        };
        let text = |tokenizer: &str, stored: bool| indexed(tokenizer, stored, IndexRecordOption::WithFreqsAndPositions);
        // Whole words and compounds rank, but phrases are looked for in `body`: no positions
        // (`search.rs` leaves these fields out of a phrase of several of their tokens).
        let ranked = |tokenizer: &str| indexed(tokenizer, false, IndexRecordOption::WithFreqs);
        let doc_type = b.add_text_field("type", STRING | STORED);
        let system = b.add_text_field("system", text(KEYWORD, true));
        let system_name = b.add_text_field("system_name", STORED);
        let run = b.add_text_field("run", text(KEYWORD, true));
        let revision = b.add_text_field("revision", STORED);
        let report = b.add_text_field("report", text(KEYWORD, true));
        let report_type = b.add_text_field("report_type", text(KEYWORD, true));
        let id = b.add_text_field("id", text(KEYWORD, true));
        let id_parts = b.add_text_field("id_parts", text("default", false));
        let kind = b.add_text_field("kind", text(KEYWORD, true));
        let family = b.add_text_field("family", text(KEYWORD, true));
        let status = b.add_text_field("status", text(KEYWORD, true));
        let label = b.add_text_field("label", text(EN_STEM, true));
        let title = b.add_text_field("title", text(EN_STEM, true));
        let body = b.add_text_field("body", text(BODY, false));
        let stored_text = b.add_text_field("text", STORED);
        let exact = b.add_text_field("exact", ranked("default"));
        let ident = b.add_text_field("ident", ranked(IDENT));
        let path = b.add_text_field("path", text(IDENT, true));
        let url = b.add_text_field("url", STORED);
        Fields {
            schema: b.build(),
            doc_type,
            system,
            system_name,
            run,
            revision,
            report,
            report_type,
            id,
            id_parts,
            kind,
            family,
            status,
            label,
            title,
            body,
            text: stored_text,
            exact,
            ident,
            path,
            url,
        }
    }

    /// Registers casebook's tokenizers on an index (needed to write and to query).
    pub fn register_tokenizers(index: &Index) {
        let manager = index.tokenizers();
        manager.register(KEYWORD, TextAnalyzer::builder(RawTokenizer::default()).filter(LowerCaser).build());
        manager.register(IDENT, TextAnalyzer::builder(CompoundTokenizer::default()).filter(RemoveLongFilter::limit(100)).filter(LowerCaser).build());
        manager.register(EN_STEM, english_stemmed());
        manager.register(BODY, english_stemmed());
    }
}

/// tantivy's `en_stem` (simple words of at most 40 bytes, lower-cased, Snowball's English
/// stemmer), with the stems memoised.
fn english_stemmed() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default()).filter(RemoveLongFilter::limit(40)).filter(LowerCaser).filter(MemoStemmer).build()
}

/// Snowball's English stemmer with a memo: prose repeats a small vocabulary, and stemming
/// each occurrence anew was a third of the indexer's time. Each analyzer (one per
/// indexing thread and field) keeps its own memo, so there is no lock.
#[derive(Clone, Copy)]
struct MemoStemmer;

/// Words whose stems a memo keeps at most (a few megabytes).
const STEM_MEMO_WORDS: usize = 100_000;

impl TokenFilter for MemoStemmer {
    type Tokenizer<T: Tokenizer> = MemoStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, tokenizer: T) -> MemoStemmerFilter<T> {
        MemoStemmerFilter { inner: tokenizer, stems: FxHashMap::default() }
    }
}

#[derive(Clone)]
struct MemoStemmerFilter<T> {
    inner: T,
    stems: FxHashMap<String, String>,
}

impl<T: Tokenizer> Tokenizer for MemoStemmerFilter<T> {
    type TokenStream<'a> = MemoStemmerStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        MemoStemmerStream { tail: self.inner.token_stream(text), stems: &mut self.stems }
    }
}

struct MemoStemmerStream<'a, T> {
    tail: T,
    stems: &'a mut FxHashMap<String, String>,
}

impl<T: TokenStream> TokenStream for MemoStemmerStream<'_, T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        if let Some(stem) = self.stems.get(&token.text) {
            token.text.clear();
            token.text.push_str(stem);
            return true;
        }
        let stem = ENGLISH.stem(&token.text).into_owned();
        if self.stems.len() < STEM_MEMO_WORDS {
            self.stems.insert(std::mem::take(&mut token.text), stem.clone());
        }
        token.text = stem;
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

static ENGLISH: std::sync::LazyLock<rust_stemmers::Stemmer> =
    std::sync::LazyLock::new(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English));

impl Default for Fields {
    fn default() -> Self {
        Self::new()
    }
}

/// Emits only compound words: runs of letters and digits joined by `_ . / -`
/// (`files_modified`, `session.py`, `plugin/exia_seed/rappel.py`, `MEM-OBJ-raw`), without
/// separators at either end: the runs of the browser index that hold a joiner, found by
/// the same scan. Plain words are in `body` already. (A hand-written scan: a Unicode
/// regex here spent most of its time building DFA states.)
#[derive(Clone, Default)]
struct CompoundTokenizer {
    token: Token,
}

struct CompoundTokenStream<'a> {
    text: &'a str,
    at: usize,
    token: &'a mut Token,
}

impl Tokenizer for CompoundTokenizer {
    type TokenStream<'a> = CompoundTokenStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> CompoundTokenStream<'a> {
        self.token.reset();
        CompoundTokenStream { text, at: 0, token: &mut self.token }
    }
}

impl TokenStream for CompoundTokenStream<'_> {
    fn advance(&mut self) -> bool {
        while let Some(run) = super::next_run(self.text, self.at) {
            self.at = run.next;
            if run.compound {
                self.token.text.clear();
                self.token.text.push_str(&self.text[run.range.clone()]);
                self.token.offset_from = run.range.start;
                self.token.offset_to = run.range.end;
                self.token.position = self.token.position.wrapping_add(1);
                return true;
            }
        }
        self.at = self.text.len();
        false
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

/// The tantivy index being made: documents are added in site order, each in the calling
/// thread (one thread, segments cut at the same documents every time, files renamed
/// after their content: the same bytes on every build), and [`TantivyIndex::finish`]
/// hands its files to `emit`. Stored URLs start with the base URL, so results point into
/// the site as published.
pub struct TantivyIndex {
    fields: Fields,
    base: String,
    scratch: tempfile::TempDir,
    index: Index,
    /// The segment being written, made at its first document.
    writer: Option<SingleSegmentIndexWriter<TantivyDocument>>,
    /// The segments written.
    segments: Vec<tantivy::SegmentMeta>,
    analyser: TextAnalyser,
}

impl TantivyIndex {
    /// An empty index for a site published at `base_url`.
    pub fn new(base_url: &str) -> Result<Self, IndexError> {
        let fields = Fields::new();
        let scratch = tempfile::tempdir()?;
        // The document store's blocks are compressed in this thread: handing each to a
        // thread of its own cost more in waking it than the compression.
        let settings = tantivy::IndexSettings { docstore_compress_dedicated_thread: false, ..Default::default() };
        let index = Index::builder().schema(fields.schema.clone()).settings(settings).create_in_dir(scratch.path())?;
        Fields::register_tokenizers(&index);
        index.tokenizers().register(BODY, TextAnalyzer::from(StemsTokenizer::default()));
        Ok(TantivyIndex { fields, base: base_url.trim_end_matches('/').to_string(), scratch, index, writer: None, segments: Vec::new(), analyser: TextAnalyser::default() })
    }

    /// Adds `docs`. tantivy's own `IndexWriter` would index on a thread of its own, fed
    /// through a queue that holds up to 10,000 messages: a document each kept the two
    /// threads waking each other, batches let the queue hold most of the site. Its
    /// `SingleSegmentIndexWriter` (public, though left out of tantivy's documentation; the
    /// version is pinned by Cargo.lock) writes in this thread instead.
    pub fn add(&mut self, docs: &[SearchDoc]) -> Result<(), IndexError> {
        for d in docs {
            let writer = match &mut self.writer {
                Some(writer) => writer,
                None => self.writer.insert(SingleSegmentIndexWriter::new(self.index.clone(), SEGMENT_BUDGET)?),
            };
            writer.add_document(document(&self.fields, d, &self.base, &mut self.analyser))?;
            // Memory stays bounded: a full segment is written out and a new one begun.
            if writer.mem_usage() >= SEGMENT_BUDGET {
                self.close_segment()?;
            }
        }
        Ok(())
    }

    fn close_segment(&mut self) -> Result<(), IndexError> {
        if let Some(writer) = self.writer.take() {
            // Each segment's `meta.json` names it alone; the last one names them all.
            self.segments.extend(writer.finalize()?.searchable_segment_metas()?);
        }
        Ok(())
    }

    /// Writes the last segment and `meta.json`, then hands every file to `emit`, one at a
    /// time, named deterministically.
    pub fn finish<E: From<IndexError>>(mut self, emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync)) -> Result<(), E> {
        self.close_segment()?;
        let meta = tantivy::IndexMeta {
            index_settings: self.index.settings().clone(),
            segments: std::mem::take(&mut self.segments),
            schema: self.fields.schema.clone(),
            opstamp: 0,
            payload: None,
        };
        let mut json = serde_json::to_vec_pretty(&meta).map_err(|e| IndexError::Io(e.into()))?;
        json.push(b'\n');
        std::fs::write(self.scratch.path().join("meta.json"), json).map_err(IndexError::from)?;
        for file in deterministic_names(self.scratch.path())? {
            let bytes = std::fs::read(self.scratch.path().join(&file.0)).map_err(IndexError::from)?;
            let bytes = if file.0.ends_with(".json") { file.2(&String::from_utf8_lossy(&bytes)).into_bytes() } else { bytes };
            emit(OutputFile { path: PathBuf::from(TANTIVY_DIR).join(&file.1), bytes })?;
        }
        Ok(())
    }
}

/// A document's text as casebook gives it to tantivy, from one scan of it (three
/// tokenisers over the whole text, one per field, were most of the index's time):
#[derive(Debug, Default, PartialEq)]
struct AnalysedText {
    /// For `body`: the stems of its words, one per position, separated by spaces; a word
    /// `en_stem` leaves out (40 bytes or more) is an empty one, keeping its position.
    /// These are exactly `en_stem`'s tokens (a test compares them).
    stems: String,
    /// For `exact`: its inflected words (those whose stem differs), as written.
    inflected: String,
    /// For `ident`: its compounds (identifiers and paths), as written.
    compounds: String,
}

/// A word's stem, lower-cased, and whether it differs from the word lower-cased.
struct Stem {
    stem: Box<str>,
    inflected: bool,
}

/// Analyses texts, with a memo of the stems of the words it met, as written.
#[derive(Default)]
struct TextAnalyser {
    stems: hashbrown::HashMap<Box<str>, Stem, rustc_hash::FxBuildHasher>,
    /// A word lower-cased, reused.
    lowered: String,
}

impl TextAnalyser {
    /// `text` as `body`, `exact` and `ident` take it: words are runs of letters and digits
    /// (as tantivy's `SimpleTokenizer` finds them), compounds are the runs that also hold a
    /// joiner (see [`super::next_run`]).
    fn analyse(&mut self, text: &str) -> AnalysedText {
        self.analyse_without(text, &[])
    }

    /// `text` without the byte ranges `left_out` (in order, apart), as [`Self::analyse`]
    /// gives it.
    fn analyse_without(&mut self, text: &str, left_out: &[Range<usize>]) -> AnalysedText {
        let mut out = AnalysedText::default();
        let mut first = true;
        let mut from = 0;
        let ends = left_out.iter().map(|skip| (skip.start, skip.end)).chain([(text.len(), text.len())]);
        let kept = ends.map(|(start, end)| {
            let part = &text[from..start];
            from = end;
            part
        });
        for (run, compound) in kept.flat_map(super::runs) {
            if compound {
                push_word(&mut out.compounds, run);
            }
            for word in run.split(super::is_joiner).filter(|w| !w.is_empty()) {
                if !first {
                    out.stems.push(' ');
                }
                first = false;
                // `en_stem` leaves out words of 40 bytes or more, and so does `exact`'s tokenizer.
                if word.len() >= 40 {
                    continue;
                }
                let stem = self.stem(word);
                out.stems.push_str(&stem.stem);
                if stem.inflected {
                    push_word(&mut out.inflected, word);
                }
            }
        }
        out
    }

    fn stem(&mut self, word: &str) -> &Stem {
        let TextAnalyser { stems, lowered } = self;
        // Past the memo's size, the memo starts again.
        if stems.len() >= STEM_MEMO_WORDS && !stems.contains_key(word) {
            stems.clear();
        }
        stems.entry_ref(word).or_insert_with(|| {
            // As tantivy's `LowerCaser` does it.
            lowered.clear();
            if word.is_ascii() {
                lowered.push_str(word);
                lowered.make_ascii_lowercase();
            } else {
                lowered.extend(word.chars().flat_map(char::to_lowercase));
            }
            let stem: Box<str> = ENGLISH.stem(lowered).into();
            let inflected = *stem != **lowered;
            Stem { stem, inflected }
        })
    }
}

fn push_word(out: &mut String, word: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(word);
}

/// Indexes the stems of [`AnalysedText::stems`] at their positions: the writer's tokenizer
/// of `body`. Queries analyse `body` with `en_stem` (registered under the same name by
/// [`Fields::register_tokenizers`]), which gives the same tokens from the text.
#[derive(Clone, Default)]
struct StemsTokenizer {
    token: Token,
}

struct StemsTokenStream<'a> {
    parts: std::iter::Enumerate<std::str::Split<'a, char>>,
    token: &'a mut Token,
}

impl Tokenizer for StemsTokenizer {
    type TokenStream<'a> = StemsTokenStream<'a>;
    fn token_stream<'a>(&'a mut self, text: &'a str) -> StemsTokenStream<'a> {
        self.token.reset();
        // `split` of an empty text gives one empty part: no token.
        StemsTokenStream { parts: text.split(' ').enumerate(), token: &mut self.token }
    }
}

impl TokenStream for StemsTokenStream<'_> {
    fn advance(&mut self) -> bool {
        for (position, stem) in self.parts.by_ref() {
            if !stem.is_empty() {
                self.token.text.clear();
                self.token.text.push_str(stem);
                self.token.position = position;
                return true;
            }
        }
        false
    }

    fn token(&self) -> &Token {
        self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        self.token
    }
}

/// The tantivy document of `d`, its URL starting with `base`.
fn document(fields: &Fields, d: &SearchDoc, base: &str, analyser: &mut TextAnalyser) -> TantivyDocument {
    let analysed = analyser.analyse_without(&d.body, &d.twins);
    let mut document = doc!(
        fields.doc_type => d.doc_type.as_str(),
        fields.system => d.system.0.as_str(),
        fields.system_name => d.system.1.as_str(),
        fields.run => d.run.as_str(),
        fields.revision => d.revision.as_str(),
        fields.title => d.title.as_str(),
        fields.body => analysed.stems,
        fields.text => d.body.as_str(),
        fields.exact => analysed.inflected,
        fields.ident => analysed.compounds,
        fields.url => format!("{base}{}", d.path),
    );
    if let Some((report, report_type)) = &d.report {
        document.add_text(fields.report, report);
        if let Some(t) = report_type {
            document.add_text(fields.report_type, t);
        }
    }
    if let Some(id) = &d.id {
        document.add_text(fields.id, id);
        document.add_text(fields.id_parts, id);
        document.add_text(fields.ident, id);
    }
    for (field, value) in [(fields.kind, &d.kind), (fields.family, &d.family), (fields.label, &d.label)] {
        if let Some(value) = value {
            document.add_text(field, value);
        }
    }
    for status in &d.statuses {
        document.add_text(fields.status, status);
    }
    for path in &d.paths {
        document.add_text(fields.path, path);
    }
    document
}

/// A file of the index: its name in the scratch folder, its name in the output, and how
/// its text changes (JSON files name the segments).
type Renamed = (String, String, std::sync::Arc<dyn Fn(&str) -> String>);

/// The index files and their output names: each segment is renamed after a hash of its
/// files' content, so that file names and `meta.json` are the same on every build. Files
/// are read one at a time (an index can be hundreds of megabytes).
fn deterministic_names(dir: &Path) -> Result<Vec<Renamed>, IndexError> {
    let mut names: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        // Lock files, and the list of managed files (a set, in hash order), are only
        // needed while writing; readers do without them.
        if (name.starts_with(".tantivy-") && name.ends_with(".lock")) || name == ".managed.json" {
            continue;
        }
        names.push(name);
    }
    names.sort();
    // Segment files are `<32 hex uuid>.<extension>`.
    let mut segments: Vec<String> = names
        .iter()
        .filter_map(|n| n.split_once('.').map(|(stem, _)| stem.to_string()))
        .filter(|stem| stem.len() == 32 && stem.chars().all(|c| c.is_ascii_hexdigit()))
        .collect();
    segments.sort();
    segments.dedup();
    let mut renames: Vec<(String, String)> = Vec::new();
    for segment in &segments {
        let mut hasher = Sha256::new();
        for name in names.iter().filter(|n| n.starts_with(segment.as_str())) {
            hasher.update(&name.as_bytes()[segment.len()..]);
            let mut file = std::fs::File::open(dir.join(name))?;
            std::io::copy(&mut file, &mut hasher)?;
        }
        let digest = hasher.finalize();
        let stable: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        // meta.json writes the same UUID hyphenated.
        renames.push((hyphenated(segment), hyphenated(&stable)));
        renames.push((segment.clone(), stable));
    }
    let rename: std::sync::Arc<dyn Fn(&str) -> String> =
        std::sync::Arc::new(move |text: &str| renames.iter().fold(text.to_string(), |t, (from, to)| t.replace(from.as_str(), to)));
    Ok(names.into_iter().map(|name| (name.clone(), rename(&name), rename.clone())).collect())
}

/// `0123…` (32 hex digits) → `01234567-89ab-cdef-0123-456789abcdef`.
fn hyphenated(simple: &str) -> String {
    format!("{}-{}-{}-{}-{}", &simple[..8], &simple[8..12], &simple[12..16], &simple[16..20], &simple[20..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compounds(text: &str) -> Vec<String> {
        let mut tokenizer = CompoundTokenizer::default();
        let mut stream = tokenizer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    #[test]
    fn the_memoised_stemmer_gives_tantivys_en_stem_tokens() {
        let text = "Retaining the retained files; RETAINS runs, running-runner's «Ünïcode» données x ".repeat(3)
            + &"a".repeat(41);
        let tokens = |mut analyzer: TextAnalyzer| {
            let mut stream = analyzer.token_stream(&text);
            let mut out = Vec::new();
            while stream.advance() {
                let t = stream.token();
                out.push((t.text.clone(), t.position, t.offset_from, t.offset_to));
            }
            out
        };
        let builtin = tantivy::tokenizer::TokenizerManager::default().get("en_stem").unwrap();
        let ours = tokens(english_stemmed());
        assert_eq!(ours, tokens(builtin));
        assert!(ours.iter().filter(|t| t.0 == "retain").count() == 9, "{ours:?}");
    }

    /// (text, position) of each token `analyzer` finds in `text`.
    fn positioned(analyzer: &mut TextAnalyzer, text: &str) -> Vec<(String, usize)> {
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push((stream.token().text.clone(), stream.token().position));
        }
        out
    }

    #[test]
    fn the_analysed_stems_are_en_stems_tokens_at_their_positions() {
        let long = "x".repeat(39) + " " + &"y".repeat(40);
        let texts = [
            "Retaining the retained files; RETAINS runs, running-runner's «Ünïcode» données",
            "files_modified in plugin/exia_seed/rappel.py --- session.py:368-390 (MEM-OBJ-raw)",
            "  a--b x/ .leading trailing. ΣΊΣΥΦΟΣ İstanbul ǅemal 20 turns 3.5x",
            long.as_str(),
            "",
            " .-_ ",
        ];
        let mut analyser = TextAnalyser::default();
        let mut en_stem = tantivy::tokenizer::TokenizerManager::default().get("en_stem").unwrap();
        let mut stems = TextAnalyzer::from(StemsTokenizer::default());
        for text in texts {
            // Twice: the second time from the memo.
            for _ in 0..2 {
                let analysed = analyser.analyse(text);
                assert_eq!(positioned(&mut stems, &analysed.stems), positioned(&mut en_stem, text), "{text:?}");
            }
        }
    }

    #[test]
    fn left_out_ranges_give_no_terms() {
        let text = "kept words | twin row words |\nmore kept";
        let twin = text.find("twin").unwrap()..text.find("more").unwrap();
        let analysed = TextAnalyser::default().analyse_without(text, &[twin]);
        assert_eq!(analysed.stems, "kept word more kept");
        assert_eq!(TextAnalyser::default().analyse_without(text, &[0..text.len()]), AnalysedText::default());
    }

    #[test]
    fn inflected_words_and_compounds_are_kept_as_written() {
        let analysed = TextAnalyser::default().analyse("The session retained 20 Turns in files_modified; see session.py.");
        assert_eq!(analysed.inflected, "retained Turns files modified");
        assert_eq!(analysed.compounds, "files_modified session.py");
        assert_eq!(analysed.stems, "the session retain 20 turn in file modifi see session py");
    }

    #[test]
    fn compound_words_only() {
        assert_eq!(
            compounds("See _append_unique in plugin/exia_seed/rappel.py, session.py. Also MEM-OBJ-raw and plain words."),
            ["append_unique", "plugin/exia_seed/rappel.py", "session.py", "MEM-OBJ-raw"]
        );
        assert!(compounds("no compound here — at all").is_empty());
        assert_eq!(compounds("x/"), Vec::<String>::new());
    }
}
