//! Search: queries against the tantivy index a build wrote, offline. Used by
//! `casebook search` and by the dev server; the result schema is `casebook.search/1`
//! (docs/search.md).

use std::path::{Path, PathBuf};

use serde::Serialize;
use tantivy::collector::{Count, TopDocs};
use tantivy::directory::error::{DeleteError, LockError, OpenReadError, OpenWriteError};
use tantivy::directory::{
    Directory, DirectoryLock, FileHandle, Lock, MmapDirectory, RamDirectory, WatchCallback, WatchHandle, WritePtr,
};
use tantivy::query::{BooleanQuery, Occur, Query, QueryParser, QueryParserError, TermQuery};
use tantivy::schema::{IndexRecordOption, Value};
use tantivy::snippet::SnippetGenerator;
use tantivy::{Index, IndexReader, ReloadPolicy, TantivyDocument, Term};

use crate::index::Fields;
use crate::output::TANTIVY_DIR;

/// The schema name and version of the JSON results.
pub const SCHEMA: &str = "casebook.search/1";

/// Why a search could not run.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// No index where one was expected.
    #[error("no search index in {0}: build the site first (casebook build), or point --index at a built site")]
    NoIndex(PathBuf),
    /// The index could not be opened or read.
    #[error("cannot read the search index in {path}: {source}")]
    Index {
        /// The index folder.
        path: PathBuf,
        /// The error.
        source: tantivy::TantivyError,
    },
    /// The query is not valid syntax.
    #[error("cannot understand the query: {0} (see docs/search.md for the syntax)")]
    Query(String),
}

/// The longest query, in characters, that is parsed.
pub const MAX_QUERY_CHARS: usize = 1000;

/// The deepest nesting of parentheses a query may have. tantivy's query grammar takes
/// time exponential in it, and stack in proportion to it, so a query is measured before it
/// is parsed; no one writes a search of more than a few levels.
pub const MAX_QUERY_NESTING: usize = 8;

/// Refuses a query too long or too deeply nested to parse in bounded time and stack,
/// before any parser sees it. Parentheses are counted wherever they stand, in a quoted
/// phrase too, so the bound cannot depend on how a parser reads quotes and escapes.
fn check_bounds(text: &str) -> Result<(), SearchError> {
    let chars = text.chars().count();
    if chars > MAX_QUERY_CHARS {
        return Err(SearchError::Query(format!(
            "the query is {chars} characters long; a query may have at most {MAX_QUERY_CHARS}"
        )));
    }
    let (mut depth, mut deepest) = (0usize, 0usize);
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > MAX_QUERY_NESTING {
        return Err(SearchError::Query(format!(
            "the query nests parentheses {deepest} deep; a query may nest them at most {MAX_QUERY_NESTING} deep"
        )));
    }
    Ok(())
}

/// What to search for.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// The query text.
    pub query: String,
    /// Only this system (slug).
    pub system: Option<String>,
    /// Only this run (slug).
    pub run: Option<String>,
    /// Only this kind (code).
    pub kind: Option<String>,
    /// Only this family (code).
    pub family: Option<String>,
    /// Only records with this status.
    pub status: Option<String>,
    /// Only this document type (`record`, `section`, `report`).
    pub doc_type: Option<String>,
    /// How many results.
    pub limit: usize,
}

/// Results, in rank order.
#[derive(Debug, Clone, Serialize)]
pub struct Results {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// The query as given.
    pub query: String,
    /// How many documents match in all.
    pub total: usize,
    /// The best `limit` of them.
    pub results: Vec<Hit>,
}

/// One result.
#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// 1 for the best.
    pub rank: usize,
    /// tantivy's score.
    pub score: f32,
    /// `record`, `section` or `report`.
    #[serde(rename = "type")]
    pub doc_type: String,
    /// Record ID (records).
    pub id: Option<String>,
    /// Section heading (sections).
    pub section: Option<String>,
    /// What to show as the result's title.
    pub title: String,
    /// Record label.
    pub label: Option<String>,
    /// System slug.
    pub system: String,
    /// System name.
    pub system_name: String,
    /// Run slug.
    pub run: String,
    /// The run's revision.
    pub revision: String,
    /// Report slug.
    pub report: Option<String>,
    /// Kind code (records).
    pub kind: Option<String>,
    /// Family code (records).
    pub family: Option<String>,
    /// Statuses (records).
    pub statuses: Vec<String>,
    /// The page (and anchor), with the site's base URL.
    pub url: String,
    /// A passage of the text around the matched words.
    pub snippet: String,
    /// Byte ranges of the matched words in `snippet`.
    pub highlights: Vec<(usize, usize)>,
}

/// An open index.
pub struct Searcher {
    path: PathBuf,
    index: Index,
    reader: IndexReader,
    fields: Fields,
}

/// The index folder for `dir`: a built site (`dir/search/tantivy`) or the index itself.
pub fn index_dir(dir: &Path) -> PathBuf {
    let in_site = dir.join(TANTIVY_DIR);
    if in_site.join("meta.json").is_file() {
        in_site
    } else {
        dir.to_path_buf()
    }
}

impl Searcher {
    /// Opens the index of a built site (or an index folder).
    pub fn open(dir: &Path) -> Result<Self, SearchError> {
        let path = index_dir(dir);
        if !path.join("meta.json").is_file() {
            return Err(SearchError::NoIndex(dir.to_path_buf()));
        }
        let directory =
            MmapDirectory::open(&path).map_err(|e| SearchError::Index { path: path.clone(), source: e.into() })?;
        let index =
            Index::open(ReadOnly(directory)).map_err(|source| SearchError::Index { path: path.clone(), source })?;
        Self::over(path, index)
    }

    /// Opens the index of a built site from a copy in memory. Nothing is written into the
    /// folder (opening it in place leaves tantivy's lock file there), and the searcher
    /// keeps working while a rebuild replaces the folder: the dev server uses this.
    pub fn load(dir: &Path) -> Result<Self, SearchError> {
        let path = index_dir(dir);
        if !path.join("meta.json").is_file() {
            return Err(SearchError::NoIndex(dir.to_path_buf()));
        }
        let io = |source: std::io::Error| SearchError::Index { path: path.clone(), source: source.into() };
        let memory = RamDirectory::create();
        for entry in std::fs::read_dir(&path).map_err(io)? {
            let entry = entry.map_err(io)?;
            if !entry.file_type().map_err(io)?.is_file() {
                continue;
            }
            let bytes = std::fs::read(entry.path()).map_err(io)?;
            memory.atomic_write(Path::new(&entry.file_name()), &bytes).map_err(io)?;
        }
        let index = Index::open(memory).map_err(|source| SearchError::Index { path: path.clone(), source })?;
        Self::over(path, index)
    }

    fn over(path: PathBuf, index: Index) -> Result<Self, SearchError> {
        Fields::register_tokenizers(&index);
        // The index never changes under a searcher: no thread watching `meta.json`.
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(|source| SearchError::Index { path: path.clone(), source })?;
        let fields = Fields::new();
        Ok(Searcher { path, index, reader, fields })
    }

    /// Parses a query over the default fields. `exact` and `ident` keep no positions (a
    /// third of the indexing time): a phrase of several of their tokens cannot be looked
    /// for there, so such a query is parsed again without them, as tantivy reports each.
    fn parse(&self, text: &str) -> Result<Box<dyn Query>, SearchError> {
        let f = &self.fields;
        let mut fields = vec![f.id, f.id_parts, f.title, f.label, f.body, f.exact, f.ident, f.path];
        loop {
            let mut parser = QueryParser::for_index(&self.index, fields.clone());
            parser.set_conjunction_by_default();
            // An ID written whole outranks any passage that merely mentions it.
            parser.set_field_boost(f.id, 12.0);
            parser.set_field_boost(f.label, 3.0);
            parser.set_field_boost(f.title, 2.0);
            parser.set_field_boost(f.path, 2.0);
            parser.set_field_boost(f.id_parts, 1.5);
            let named = |field: &tantivy::schema::Field, name: &str| f.schema.get_field_name(*field) == name;
            match parser.parse_query(text) {
                // A default field: ask again without it. A field the query names stays an error.
                Err(QueryParserError::FieldDoesNotHavePositionsIndexed(name))
                    if fields.iter().any(|field| named(field, &name)) =>
                {
                    fields.retain(|field| !named(field, &name));
                }
                parsed => return parsed.map_err(|e| SearchError::Query(e.to_string())),
            }
        }
    }

    /// Runs a request.
    pub fn search(&self, request: &Request) -> Result<Results, SearchError> {
        let f = &self.fields;
        let text = request.query.trim();
        check_bounds(text)?;
        let main: Box<dyn Query> = if text.is_empty() { Box::new(tantivy::query::AllQuery) } else { self.parse(text)? };
        let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, main.box_clone())];
        for (field, value) in [
            (f.system, &request.system),
            (f.run, &request.run),
            (f.kind, &request.kind),
            (f.family, &request.family),
            (f.status, &request.status),
        ] {
            if let Some(value) = value {
                let term = Term::from_field_text(field, &value.to_lowercase());
                clauses.push((Occur::Must, Box::new(TermQuery::new(term, IndexRecordOption::Basic))));
            }
        }
        if let Some(t) = &request.doc_type {
            let term = Term::from_field_text(f.doc_type, t);
            clauses.push((Occur::Must, Box::new(TermQuery::new(term, IndexRecordOption::Basic))));
        }
        let query = BooleanQuery::new(clauses);
        let searcher = self.reader.searcher();
        let wrap = |source| SearchError::Index { path: self.path.clone(), source };
        let (top, total) = searcher
            .search(&query, &(TopDocs::with_limit(request.limit.max(1)).order_by_score(), Count))
            .map_err(|e| unanswerable(e).unwrap_or_else(wrap))?;
        let mut snippets = SnippetGenerator::create(&searcher, &*main, f.body).map_err(wrap)?;
        snippets.set_max_num_chars(220);
        let mut results = Vec::new();
        for (rank, (score, address)) in top.into_iter().enumerate() {
            let doc: TantivyDocument = searcher.doc(address).map_err(wrap)?;
            let text = |field| doc.get_first(field).and_then(|v| v.as_str()).map(str::to_string);
            let all = |field| doc.get_all(field).filter_map(|v| v.as_str().map(str::to_string)).collect::<Vec<_>>();
            let doc_type = text(f.doc_type).unwrap_or_default();
            // `body` is indexed, not stored: its text is stored as `text`.
            let body = text(f.text).unwrap_or_default();
            let mut snippet = snippets.snippet(&body);
            if snippet.is_empty() {
                // No word of the query is in the body (an ID or path match): show the start.
                snippet = snippets.snippet(&body.chars().take(200).collect::<String>());
            }
            let fragment = snippet.fragment().trim_end().to_string();
            let highlights =
                snippet.highlighted().iter().map(|r| (r.start, r.end)).filter(|(_, e)| *e <= fragment.len()).collect();
            let label = text(f.label);
            results.push(Hit {
                rank: rank + 1,
                score,
                section: (doc_type == "section").then(|| label.clone()).flatten(),
                label: matches!(doc_type.as_str(), "record" | "finding" | "limit").then_some(label).flatten(),
                doc_type,
                id: text(f.id),
                title: text(f.title).unwrap_or_default(),
                system: text(f.system).unwrap_or_default(),
                system_name: text(f.system_name).unwrap_or_default(),
                run: text(f.run).unwrap_or_default(),
                revision: text(f.revision).unwrap_or_default(),
                report: text(f.report),
                kind: text(f.kind),
                family: text(f.family),
                statuses: all(f.status),
                url: text(f.url).unwrap_or_default(),
                snippet: fragment,
                highlights,
            });
        }
        Ok(Results { schema: SCHEMA, query: request.query.clone(), total, results })
    }
}

/// An index folder opened for reading only: a downloaded site stays as it was. (tantivy's
/// own directory takes its lock by creating `.tantivy-meta.lock` in the folder and leaves
/// it there; a reader that never writes needs no lock.)
#[derive(Debug, Clone)]
struct ReadOnly(MmapDirectory);

impl ReadOnly {
    fn refused(path: &Path) -> std::io::Error {
        std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{} is opened for reading only", path.display()),
        )
    }
}

impl Directory for ReadOnly {
    fn get_file_handle(&self, path: &Path) -> Result<std::sync::Arc<dyn FileHandle>, OpenReadError> {
        self.0.get_file_handle(path)
    }

    fn exists(&self, path: &Path) -> Result<bool, OpenReadError> {
        self.0.exists(path)
    }

    fn atomic_read(&self, path: &Path) -> Result<Vec<u8>, OpenReadError> {
        self.0.atomic_read(path)
    }

    fn delete(&self, path: &Path) -> Result<(), DeleteError> {
        Err(DeleteError::IoError { io_error: Self::refused(path).into(), filepath: path.to_path_buf() })
    }

    fn open_write(&self, path: &Path) -> Result<WritePtr, OpenWriteError> {
        Err(OpenWriteError::wrap_io_error(Self::refused(path), path.to_path_buf()))
    }

    fn atomic_write(&self, path: &Path, _data: &[u8]) -> std::io::Result<()> {
        Err(Self::refused(path))
    }

    fn sync_directory(&self) -> std::io::Result<()> {
        Ok(())
    }

    fn acquire_lock(&self, _lock: &Lock) -> Result<DirectoryLock, LockError> {
        Ok(DirectoryLock::from(Box::new(())))
    }

    fn watch(&self, callback: WatchCallback) -> tantivy::Result<WatchHandle> {
        self.0.watch(callback)
    }
}

/// A query the index cannot answer, found only as it runs: `field:*` asks whether a
/// document has the field, which tantivy answers from fast fields (this index keeps none),
/// or of a field it lacks. The query's fault, not the index's.
fn unanswerable(error: tantivy::TantivyError) -> Result<SearchError, tantivy::TantivyError> {
    match error {
        tantivy::TantivyError::SchemaError(message) | tantivy::TantivyError::FieldNotFound(message) => {
            Ok(SearchError::Query(format!(
                "it asks of a field what the index cannot answer ({message}); `field:*` is not supported"
            )))
        }
        other => Err(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        format!("{}memory{}", "(".repeat(levels), ")".repeat(levels))
    }

    #[test]
    fn queries_within_the_bounds_pass() {
        assert!(check_bounds("memory AND (cache OR (history -summary))").is_ok());
        assert!(check_bounds(&nested(MAX_QUERY_NESTING)).is_ok());
        assert!(check_bounds(&"a".repeat(MAX_QUERY_CHARS)).is_ok());
    }

    #[test]
    fn deep_or_long_queries_are_refused_before_parsing() {
        for levels in [MAX_QUERY_NESTING + 1, 30, 400] {
            let Err(SearchError::Query(message)) = check_bounds(&nested(levels)) else {
                panic!("{levels} levels passed")
            };
            assert!(message.contains(&format!("{levels} deep")), "{message}");
        }
        assert!(check_bounds(&nested(5_000)).is_err(), "too long before it is too deep");
        // Unbalanced, and inside a phrase: still nesting as a parser might read it.
        assert!(check_bounds(&"(".repeat(MAX_QUERY_NESTING + 1)).is_err());
        assert!(check_bounds(&format!("\"{}\"", nested(20))).is_err());
        let Err(SearchError::Query(message)) = check_bounds(&"é".repeat(MAX_QUERY_CHARS + 1)) else { panic!() };
        assert!(message.contains("1001 characters"), "{message}");
    }
}
