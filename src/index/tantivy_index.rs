//! The tantivy index of `casebook search` and the dev server.
//!
//! The index is written on one thread, the caller's, and the segment files are renamed
//! after a hash of their content, so the same documents give the same bytes on every
//! build.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, STORED, STRING};

use tantivy::directory::RamDirectory;
use tantivy::index::SegmentComponent;
use tantivy::indexer::SingleSegmentIndexWriter;
use tantivy::tokenizer::{
    LowerCaser, RawTokenizer, RemoveLongFilter, SimpleTokenizer, StopWordFilter, TextAnalyzer, Token, TokenFilter,
    TokenStream, Tokenizer,
};
use tantivy::{Directory, Index};

use super::analysis::{TantivyText, ENGLISH, STOP_WORDS};
use super::{IndexError, SearchDoc};
use crate::output::{OutputFile, TANTIVY_DIR};

/// Memory a segment may take while it is written; a full one is written out. Segments
/// are not merged: merging rewrote the whole index again. The budget sets a large build's
/// peak memory, since a segment's files are held until they are written (the trade-off
/// is measured in `docs/performance.md`).
const SEGMENT_BUDGET: usize = 40 * 1024 * 1024;

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
    /// Report type (not stored).
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
    /// Plain text, English, stemmed (indexed from the analysed text's stems; queried with
    /// the English analyzer, `casebook_english`).
    pub body: Field,
    /// Plain text as it is, without what `body` leaves out of it ([`SearchDoc::twins`])
    /// (stored only, for snippets).
    pub text: Field,
    /// The text's inflected words, as written (not stemmed): a query word written as in the
    /// text outranks its variants (`turns` over `turn`). Words that are their own stem are
    /// left out: they have no variant to outrank.
    pub exact: Field,
    /// The text's identifiers and paths, whole.
    pub ident: Field,
    /// Quoted and cited paths (not stored).
    pub path: Field,
    /// Root-relative URL (stored).
    pub url: Field,
}

/// Lower-cased whole values (kinds, statuses, slugs).
const KEYWORD: &str = "casebook_keyword";
/// A record ID, whole and lower-cased: a query looks for each of its words there, and a
/// stop word must give no term in any such field (see [`without_stop_words`]).
const WHOLE_ID: &str = "casebook_id";
/// Compound identifiers and paths, whole (`render_session_summary`, `plugin/exia_seed/rappel.py`).
const IDENT: &str = "casebook_ident";
/// English prose, stemmed, without stop words ([`english`]).
const ENGLISH_TEXT: &str = "casebook_english";
/// Words, lower-cased, without stop words ([`words`]).
const WORDS: &str = "casebook_words";
/// `body`: English prose as [`ENGLISH_TEXT`] analyses it; written from casebook's own
/// analysis of the text ([`StemsTokenizer`]).
const BODY: &str = "casebook_body";

impl Fields {
    /// The schema every casebook index has.
    pub fn new() -> Self {
        let mut b = Schema::builder();
        let indexed = |tokenizer: &str, stored: bool, record: IndexRecordOption| {
            let options = TextOptions::default()
                .set_indexing_options(TextFieldIndexing::default().set_tokenizer(tokenizer).set_index_option(record));
            if stored {
                options.set_stored()
            } else {
                options
            }
        };
        let text = |tokenizer: &str, stored: bool| indexed(tokenizer, stored, IndexRecordOption::WithFreqsAndPositions);
        // A whole value is one token: where it is and how often say nothing. Stored if
        // results show it.
        let keyword = |tokenizer: &str| indexed(tokenizer, true, IndexRecordOption::Basic);
        let filter = |tokenizer: &str| indexed(tokenizer, false, IndexRecordOption::Basic);
        // Whole words and compounds rank by being there (each is given once per document),
        // but phrases are looked for in `body`: no positions (`search.rs` leaves these
        // fields out of a phrase of several of their tokens).
        let ranked = |tokenizer: &str| indexed(tokenizer, false, IndexRecordOption::Basic);
        let doc_type = b.add_text_field("type", STRING | STORED);
        let system = b.add_text_field("system", keyword(KEYWORD));
        let system_name = b.add_text_field("system_name", STORED);
        let run = b.add_text_field("run", keyword(KEYWORD));
        let revision = b.add_text_field("revision", STORED);
        let report = b.add_text_field("report", keyword(KEYWORD));
        let report_type = b.add_text_field("report_type", filter(KEYWORD));
        let id = b.add_text_field("id", keyword(WHOLE_ID));
        let id_parts = b.add_text_field("id_parts", text(WORDS, false));
        let kind = b.add_text_field("kind", keyword(KEYWORD));
        let family = b.add_text_field("family", keyword(KEYWORD));
        let status = b.add_text_field("status", keyword(KEYWORD));
        let label = b.add_text_field("label", text(ENGLISH_TEXT, true));
        let title = b.add_text_field("title", text(ENGLISH_TEXT, true));
        let body = b.add_text_field("body", text(BODY, false));
        let stored_text = b.add_text_field("text", STORED);
        let exact = b.add_text_field("exact", ranked(WORDS));
        let ident = b.add_text_field("ident", ranked(IDENT));
        let path = b.add_text_field("path", text(IDENT, false));
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
        manager.register(
            WHOLE_ID,
            TextAnalyzer::builder(RawTokenizer::default()).filter(LowerCaser).filter(without_stop_words()).build(),
        );
        manager.register(
            IDENT,
            TextAnalyzer::builder(CompoundTokenizer::default())
                .filter(RemoveLongFilter::limit(100))
                .filter(LowerCaser)
                .build(),
        );
        manager.register(ENGLISH_TEXT, english());
        manager.register(WORDS, words());
        manager.register(BODY, english());
    }
}

/// The words of [`STOP_WORDS`] filtered out: a sixth of the text's words are these, and
/// they rank nothing. Each leaves its position empty, so a phrase around one still matches
/// only in order. The search page leaves them out too. Every field a query looks in by
/// default leaves them out (identifiers and paths have none): a word of the query that
/// gives no term anywhere is dropped from it, where one found in some field only would
/// have to be there.
fn without_stop_words() -> StopWordFilter {
    StopWordFilter::remove(STOP_WORDS.iter().map(|w| w.to_string()))
}

/// tantivy's `en_stem` (simple words under 40 bytes, lower-cased, Snowball's English
/// stemmer), without stop words, with the stems memoised.
fn english() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(without_stop_words())
        .filter(MemoStemmer)
        .build()
}

/// tantivy's `default` analyzer (simple words under 40 bytes, lower-cased), without stop
/// words.
fn words() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(without_stop_words())
        .build()
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
/// after their content: the same bytes on every build). The index is made in memory, and
/// each segment's files go to `emit` as soon as the segment is full, so memory holds one
/// segment at most; [`TantivyIndex::finish`] writes the last one and `meta.json`. Stored
/// URLs start with the base URL, so results point into the site as published.
pub struct TantivyIndex {
    fields: Fields,
    base: String,
    index: Index,
    /// The files of the segment being written, an index of its own (tantivy's own view
    /// of them leaves out each file's footer).
    files: RamDirectory,
    /// The segment being written, made at its first document.
    writer: Option<SingleSegmentIndexWriter<IndexedDoc>>,
    /// The segments of the index, in order: written, or kept from the last build.
    segments: Vec<Segment>,
    /// How many of `segments` the current group made ([`TantivyIndex::end_group`]).
    group_start: usize,
    /// [`SEGMENT_BUDGET`], but for tests.
    segment_budget: usize,
}

/// The files a segment written at once may have (no deletes, no temporary store).
const SEGMENT_FILES: [SegmentComponent; 6] = [
    SegmentComponent::Postings,
    SegmentComponent::Positions,
    SegmentComponent::FastFields,
    SegmentComponent::FieldNorms,
    SegmentComponent::Terms,
    SegmentComponent::Store,
];

/// A segment of the index as the output holds it: its name (a hash of its files, also
/// its id in `meta.json`), its documents, and its files' paths in the output. A build
/// keeps the segments of the runs that did not change ([`TantivyIndex::keep`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Segment {
    /// 32 hex digits.
    pub name: String,
    /// Its documents.
    pub docs: u32,
    /// Its files, below the output.
    pub files: Vec<PathBuf>,
}

impl TantivyIndex {
    /// An empty index for a site published at `base_url`.
    pub fn new(base_url: &str) -> Result<Self, IndexError> {
        let fields = Fields::new();
        // The document store's blocks are compressed in this thread: handing each to a
        // thread of its own cost more in waking it than the compression.
        // zstd keeps the stored text (snippets) in two thirds of lz4's bytes; `casebook
        // search` reads a few documents per query, so its slower decompression is unseen.
        let settings = tantivy::IndexSettings {
            docstore_compress_dedicated_thread: false,
            docstore_compression: tantivy::store::Compressor::Zstd(tantivy::store::ZstdCompressor::default()),
            ..Default::default()
        };
        let files = RamDirectory::create();
        let index = Index::create(files.clone(), fields.schema.clone(), settings)?;
        Fields::register_tokenizers(&index);
        index.tokenizers().register(BODY, TextAnalyzer::from(StemsTokenizer::default()));
        Ok(TantivyIndex {
            fields,
            base: base_url.trim_end_matches('/').to_string(),
            index,
            files,
            writer: None,
            segments: Vec::new(),
            group_start: 0,
            segment_budget: SEGMENT_BUDGET,
        })
    }

    /// Adds `docs`, handing the files of each full segment to `emit`. tantivy's own
    /// `IndexWriter` would index on a thread of its own, fed through a queue that holds up
    /// to 10,000 messages: a document each kept the two threads waking each other, batches
    /// let the queue hold most of the site. Its `SingleSegmentIndexWriter` (public, though
    /// left out of tantivy's documentation; the version is pinned by Cargo.lock) writes in
    /// this thread instead, each segment an index of its own in a directory of its own.
    pub fn add<E: From<IndexError>>(
        &mut self,
        docs: &[Arc<SearchDoc>],
        texts: Vec<TantivyText>,
        emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
    ) -> Result<(), E> {
        for (d, text) in docs.iter().zip(texts) {
            let writer = match &mut self.writer {
                Some(writer) => writer,
                None => {
                    self.files = RamDirectory::create();
                    let writer = Index::builder()
                        .schema(self.fields.schema.clone())
                        .settings(self.index.settings().clone())
                        .tokenizers(self.index.tokenizers().clone())
                        .single_segment_index_writer(self.files.clone(), self.segment_budget)
                        .map_err(IndexError::from)?;
                    self.writer.insert(writer)
                }
            };
            writer
                .add_document(IndexedDoc::new(&self.fields, Arc::clone(d), text, &self.base))
                .map_err(IndexError::from)?;
            // Memory stays bounded: a full segment is written out and a new one begun.
            if writer.mem_usage() >= self.segment_budget {
                self.close_segment(emit)?;
            }
        }
        Ok(())
    }

    /// Writes the segment being made and hands its files to `emit`, renamed after a hash
    /// of the segment (its files in name order: each name's ending and bytes), so that the
    /// same documents give the same names.
    fn close_segment<E: From<IndexError>>(
        &mut self,
        emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
    ) -> Result<(), E> {
        let Some(writer) = self.writer.take() else { return Ok(()) };
        // The index `finalize` returns names this segment alone.
        let segment = writer
            .finalize()
            .map_err(IndexError::from)?
            .searchable_segment_metas()
            .map_err(IndexError::from)?
            .remove(0);
        let directory = &self.files;
        let uuid = segment.id().uuid_string();
        let mut names: Vec<String> = SEGMENT_FILES
            .into_iter()
            .map(|component| segment.relative_path(component).to_string_lossy().into_owned())
            .collect();
        names.sort();
        // First the hash, from the files where they are (no copy), then each file copied
        // out, removed, and handed on, one at a time: memory holds the segment once.
        let mut written = Vec::with_capacity(names.len());
        let mut hasher = Sha256::new();
        for name in names {
            // `SEGMENT_FILES` names every kind of file a segment may have; some are never written.
            let Ok(file) = directory.open_read(Path::new(&name)) else { continue };
            hasher.update(&name.as_bytes()[uuid.len()..]);
            hasher.update(file.read_bytes().map_err(IndexError::from)?.as_slice());
            written.push(name);
        }
        let stable = hex::encode(&hasher.finalize()[..16]);
        let mut files = Vec::with_capacity(written.len());
        for name in written {
            let bytes =
                directory.atomic_read(Path::new(&name)).map_err(|e| IndexError::Io(std::io::Error::other(e)))?;
            directory.delete(Path::new(&name)).map_err(|e| IndexError::Io(std::io::Error::other(e)))?;
            let path = PathBuf::from(TANTIVY_DIR).join(format!("{stable}{}", &name[uuid.len()..]));
            files.push(path.clone());
            emit(OutputFile { path, bytes })?;
        }
        self.segments.push(Segment { name: stable, docs: segment.max_doc(), files });
        Ok(())
    }

    /// Ends a group of documents: the next document begins a segment. Gives the segments
    /// the group made, for a later build to keep while the group's documents are the same.
    pub fn end_group<E: From<IndexError>>(
        &mut self,
        emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync),
    ) -> Result<Vec<Segment>, E> {
        self.close_segment(emit)?;
        let made = self.segments[self.group_start..].to_vec();
        self.group_start = self.segments.len();
        Ok(made)
    }

    /// Takes `segments` as they are in the output (a group whose documents did not change
    /// since the build that wrote them), in the place of the group's documents.
    pub fn keep(&mut self, segments: &[Segment]) {
        debug_assert!(self.writer.is_none(), "a group ended before another is kept");
        self.segments.extend_from_slice(segments);
        self.group_start = self.segments.len();
    }

    /// Writes the last segment, then `meta.json`, which names each segment as the output does.
    pub fn finish<E: From<IndexError>>(mut self, emit: &(dyn Fn(OutputFile) -> Result<(), E> + Sync)) -> Result<(), E> {
        self.close_segment(emit)?;
        // Each segment under its name: the files' names and the id `meta.json` gives it.
        let segments = self
            .segments
            .iter()
            .map(|segment| {
                let id = tantivy::index::SegmentId::from_uuid_string(&segment.name)
                    .map_err(|e| IndexError::Io(std::io::Error::other(e.to_string())))?;
                Ok(self.index.new_segment_meta(id, segment.docs))
            })
            .collect::<Result<Vec<_>, IndexError>>()?;
        let meta = tantivy::IndexMeta {
            index_settings: self.index.settings().clone(),
            persisted_custom_extensions: Vec::new(),
            segments,
            schema: self.fields.schema.clone(),
            opstamp: 0,
            payload: None,
        };
        let mut json = serde_json::to_string_pretty(&meta).map_err(|e| IndexError::Io(e.into()))?;
        json.push('\n');
        emit(OutputFile { path: PathBuf::from(TANTIVY_DIR).join("meta.json"), bytes: json.into_bytes() })
    }
}

/// Indexes the stems of [`TantivyText::stems`] at their positions: the writer's tokenizer
/// of `body`. Queries analyse `body` with [`english`] (registered under the same name by
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

/// A search document as tantivy reads it: its values are read where they are (the search
/// document, its analysed text), not copied into a `TantivyDocument` (which copied every
/// value, the text twice over).
struct IndexedDoc {
    fields: Fields,
    doc: Arc<SearchDoc>,
    analysed: TantivyText,
    /// The text stored for snippets, when it is not `doc.body` ([`kept_text`]).
    kept: Option<String>,
    url: String,
}

impl IndexedDoc {
    fn new(fields: &Fields, doc: Arc<SearchDoc>, analysed: TantivyText, base: &str) -> Self {
        let kept = match kept_text(&doc.body, &doc.twins) {
            std::borrow::Cow::Owned(kept) => Some(kept),
            std::borrow::Cow::Borrowed(_) => None,
        };
        let url = format!("{base}{}", doc.path);
        IndexedDoc { fields: fields.clone(), doc, analysed, kept, url }
    }
}

impl tantivy::Document for IndexedDoc {
    type Value<'a> = &'a str;
    // tantivy asks for a document's values three times (fast fields, terms, store): in
    // place, not allocated each time.
    type FieldsValuesIter<'a> = smallvec::IntoIter<[(Field, &'a str); 24]>;

    /// The values in the order the document store keeps them.
    fn iter_fields_and_values(&self) -> Self::FieldsValuesIter<'_> {
        let (f, d) = (&self.fields, &*self.doc);
        let mut values: smallvec::SmallVec<[(Field, &str); 24]> = smallvec::smallvec![
            (f.doc_type, d.doc_type.as_str()),
            (f.system, d.system.as_str()),
            (f.system_name, d.system_name.as_str()),
            (f.run, d.run.as_str()),
            (f.revision, d.revision.as_str()),
            (f.title, d.title.as_str()),
            (f.body, self.analysed.stems.as_str()),
            (f.text, self.kept.as_deref().unwrap_or(&d.body)),
            (f.exact, self.analysed.inflected.as_str()),
            (f.ident, self.analysed.compounds.as_str()),
            (f.url, self.url.as_str()),
        ];
        if let Some((report, report_type)) = &d.report {
            values.push((f.report, report));
            if let Some(t) = report_type {
                values.push((f.report_type, t));
            }
        }
        if let Some(id) = &d.id {
            values.extend([(f.id, id.as_str()), (f.id_parts, id), (f.ident, id)]);
        }
        for (field, value) in [(f.kind, &d.kind), (f.family, &d.family), (f.label, &d.label)] {
            if let Some(value) = value {
                values.push((field, value));
            }
        }
        values.extend(d.statuses.iter().map(|status| (f.status, status.as_str())));
        values.extend(d.paths.iter().map(|path| (f.path, path.as_str())));
        values.into_iter()
    }
}

/// `text` without the ranges `left_out` (in order, apart): what snippets are made from is
/// what the document's terms were (a section's snippet never shows the rows of its records).
fn kept_text<'a>(text: &'a str, left_out: &[std::ops::Range<usize>]) -> std::borrow::Cow<'a, str> {
    if left_out.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(super::own_parts(text, left_out).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::DocType;

    fn record(n: usize) -> SearchDoc {
        SearchDoc {
            doc_type: DocType::Record,
            system: "sys".into(),
            system_name: "System".into(),
            run: "run-1".into(),
            revision: "abc".into(),
            report: Some(("memory".into(), None)),
            id: Some(format!("OBJ-{n:03}")),
            kind: Some("OBJ".into()),
            family: None,
            statuses: vec!["implemented".into()],
            label: Some(format!("object number {n}")),
            title: format!("OBJ-{n:03} — object number {n}"),
            body: format!("The session retained {n} turns in files_modified; see session.py and item{n}. ").repeat(20),
            twins: Vec::new(),
            paths: vec!["session.py".into()],
            path: format!("/sys/run-1/records/OBJ-{n:03}.html"),
        }
    }

    /// The files of an index of `docs` made with segments of at most `budget` bytes.
    fn files(docs: &[SearchDoc], budget: usize) -> Vec<OutputFile> {
        let files = std::sync::Mutex::new(Vec::new());
        let emit = |file: OutputFile| -> Result<(), IndexError> {
            files.lock().unwrap().push(file);
            Ok(())
        };
        let mut index = TantivyIndex::new("/").unwrap();
        index.segment_budget = budget;
        let vocabulary = crate::index::Vocabulary::default();
        let texts = docs.iter().map(|d| super::super::analysis::analyse(d, &vocabulary).0).collect();
        let docs: Vec<Arc<SearchDoc>> = docs.iter().cloned().map(Arc::new).collect();
        index.add(&docs, texts, &emit).unwrap();
        index.finish(&emit).unwrap();
        let mut files = files.into_inner().unwrap();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files
    }

    #[test]
    fn segments_are_written_as_they_fill_and_named_after_their_content() {
        let docs: Vec<SearchDoc> = (0..100).map(record).collect();
        let small = files(&docs, 1024 * 1024);
        assert_eq!(small, files(&docs, 1024 * 1024), "the same documents give the same files");
        let segments =
            |files: &[OutputFile]| files.iter().filter(|f| f.path.extension().is_some_and(|e| e == "store")).count();
        assert!(segments(&small) > 1, "a small budget makes several segments: {}", segments(&small));
        assert_eq!(segments(&files(&docs, SEGMENT_BUDGET)), 1);
        // The files make an index tantivy opens, with every document, found by its words.
        let directory = tantivy::directory::RamDirectory::create();
        for file in &small {
            directory.atomic_write(file.path.strip_prefix(TANTIVY_DIR).unwrap(), &file.bytes).unwrap();
        }
        let index = Index::open(directory).unwrap();
        Fields::register_tokenizers(&index);
        let searcher = index.reader().unwrap().searcher();
        assert_eq!(searcher.num_docs(), 100);
        let fields = Fields::new();
        let query = tantivy::query::QueryParser::for_index(&index, vec![fields.body])
            .parse_query("\"retain 99 turn\"")
            .unwrap();
        assert_eq!(searcher.search(&query, &tantivy::collector::Count).unwrap(), 1);
    }

    fn compounds(text: &str) -> Vec<String> {
        let mut tokenizer = CompoundTokenizer::default();
        let mut stream = tokenizer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    /// tantivy's `en_stem`, made of its own parts, and the stop words left out.
    fn reference_english() -> TextAnalyzer {
        TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(40))
            .filter(LowerCaser)
            .filter(without_stop_words())
            .filter(tantivy::tokenizer::Stemmer::new(tantivy::tokenizer::Language::English))
            .build()
    }

    #[test]
    fn the_memoised_stemmer_gives_tantivys_stems() {
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
        let ours = tokens(english());
        assert_eq!(ours, tokens(reference_english()));
        assert!(ours.iter().filter(|t| t.0 == "retain").count() == 9, "{ours:?}");
        assert!(
            !ours.iter().any(|t| t.0 == "the") && ours[1].1 == 2,
            "stop words leave their positions empty: {ours:?}"
        );
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
    fn the_analysed_stems_are_the_query_analyzers_tokens_at_their_positions() {
        let long = "x".repeat(39) + " " + &"y".repeat(40);
        let texts = [
            "Retaining the retained files; RETAINS runs, running-runner's «Ünïcode» données",
            "files_modified in plugin/exia_seed/rappel.py --- session.py:368-390 (MEM-OBJ-raw)",
            "  a--b x/ .leading trailing. ΣΊΣΥΦΟΣ İstanbul ǅemal 20 turns 3.5x",
            long.as_str(),
            "",
            " .-_ ",
        ];
        let mut en_stem = reference_english();
        let mut stems = TextAnalyzer::from(StemsTokenizer::default());
        for text in texts {
            // Twice: the second time from the memo.
            for _ in 0..2 {
                let analysed = super::super::analysis::tantivy_text(text, &[]);
                assert_eq!(positioned(&mut stems, &analysed.stems), positioned(&mut en_stem, text), "{text:?}");
            }
        }
    }

    #[test]
    fn the_stored_text_leaves_out_what_the_terms_do() {
        let text = "kept | row one |\n| row two |\nmore";
        let rows = text.find("| row one").unwrap()..text.find("more").unwrap();
        assert_eq!(kept_text(text, std::slice::from_ref(&rows)), "kept more");
        assert_eq!(kept_text(text, &[0..4, 5..7]), " row one |\n| row two |\nmore");
        assert!(matches!(kept_text(text, &[]), std::borrow::Cow::Borrowed(_)));
    }

    #[test]
    fn compound_words_only() {
        assert_eq!(
            compounds(
                "See _append_unique in plugin/exia_seed/rappel.py, session.py. Also MEM-OBJ-raw and plain words."
            ),
            ["append_unique", "plugin/exia_seed/rappel.py", "session.py", "MEM-OBJ-raw"]
        );
        assert!(compounds("no compound here — at all").is_empty());
        assert_eq!(compounds("x/"), Vec::<String>::new());
    }
}
