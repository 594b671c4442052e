//! Recognisers: the conventions analysts write in plain text, found in plain text.
//!
//! Record IDs (`MEM-OBJ-raw`, `OBJ-03`), citations (`SRC-1 session.py:368-390`), quote
//! path lines (`--- plugin/x.py`), fields (`Label: …`), status values
//! (`implemented (listing) / absent (content index)`) and the citing sentence around a
//! reference. These are pure functions over strings; `parse` uses them to build the model
//! and `render` uses the same functions to link the same words, so the two never disagree.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use crate::config::IdConfig;
use crate::model::LineRange;

mod asciidoc;
mod captions;
mod citations;
mod learned;
mod legend;
mod myst;
mod pointers;
mod rest;
mod sentences;
mod statuses;
mod trailers;
pub(crate) mod words;

pub use captions::{
    caption_path, default_source, diff_context, directive_language, directive_options, first_line_path, info_path,
    info_start_line, is_block_title, is_place_line, pandoc_info, permalink_caption, reads_as_caption_after,
    reads_as_caption_before, set_apart, without_gutter,
};
pub use citations::{parse_line_ranges, permalink, CitationMatch, Citations};
pub use learned::{declared_kinds, heading_id, item_id, outline_title, pattern_kind, run_in};
pub use legend::{is_legend, legend_synonyms};
pub use pointers::{named_labels, section_label};
pub use sentences::{copula_statuses, CopulaStatus};
pub use statuses::{
    bare_status_keys, dimension_clauses, first_sentence_end, is_placeholder, names_whole_subject, stated, status_keys,
    Reading, Stated, StatusKey, StatusWords,
};

/// The longest ID, in bytes: IDs name folders and URL segments, which file systems cap
/// at 255 bytes.
pub const MAX_ID_LEN: usize = 128;

/// What a site's reports are written in, built once from its configuration: the ID
/// grammars, how sources are cited, and the words of the status vocabulary.
#[derive(Debug, Clone)]
pub struct Conventions {
    /// How record IDs are written.
    pub ids: IdScheme,
    /// How sources are cited.
    pub citations: Citations,
    /// The status vocabulary's words and synonyms.
    pub statuses: StatusWords,
    /// Keys of paragraphs that are never fields (`conventions.not_fields`).
    pub not_fields: std::collections::BTreeSet<String>,
    /// Column headers whose cells are findings whatever they start with
    /// (`conventions.finding_columns`), and those whose cells never are
    /// (`conventions.not_finding_columns`), lower-case.
    pub finding_columns: std::collections::BTreeSet<String>,
    /// See `finding_columns`.
    pub not_finding_columns: std::collections::BTreeSet<String>,
    /// Where limits are written (`conventions.limits`), lower-case.
    pub limits: LimitWords,
    /// The revisions a run analyses (its own and its sources'), when parsing one: a
    /// permalink pinned to another is noted.
    pub revisions: Vec<String>,
}

/// The words of `conventions.limits`, lower-case.
#[derive(Debug, Clone)]
pub struct LimitWords {
    /// Headings of sections about limits.
    pub headings: Vec<String>,
    /// Headers of a limitation table's limitation column.
    pub limitation_columns: Vec<String>,
    /// Headers of a coverage table's coverage column.
    pub coverage_columns: Vec<String>,
    /// Headers of the column of the conclusion prevented.
    pub prevents_columns: Vec<String>,
    /// Headers of the column of the evidence that would resolve it.
    pub resolves_columns: Vec<String>,
}

impl LimitWords {
    fn new(config: &crate::config::LimitsConfig) -> Self {
        let lower =
            |items: &[String]| items.iter().map(|w| w.trim().to_lowercase()).filter(|w| !w.is_empty()).collect();
        LimitWords {
            headings: lower(&config.headings),
            limitation_columns: lower(&config.limitation_columns),
            coverage_columns: lower(&config.coverage_columns),
            prevents_columns: lower(&config.prevents_columns),
            resolves_columns: lower(&config.resolves_columns),
        }
    }

    /// True when `text` holds one of `words`, case aside.
    pub fn holds(words: &[String], text: &str) -> bool {
        // `didn’t` is `didn't`.
        let text = text.to_lowercase().replace('’', "'");
        words.iter().any(|w| text.contains(w.as_str()))
    }
}

impl Conventions {
    /// The conventions `config` sets.
    pub fn new(config: &crate::config::SiteConfig) -> Result<Self, GrammarError> {
        let synonyms =
            config.statuses.iter().flat_map(|s| s.synonyms.iter().map(|w| (w.clone(), s.name.clone()))).collect();
        let conventions = &config.conventions;
        let lower = |items: &[String]| items.iter().map(|h| h.trim().to_lowercase()).collect();
        Ok(Conventions {
            ids: IdScheme::new(&config.ids)?,
            citations: Citations::new(&conventions.source_ids).map_err(|e| GrammarError::SourceIds {
                pattern: conventions.source_ids.clone(),
                message: regex_problem(&e),
            })?,
            statuses: StatusWords::new(config.statuses.iter().map(|s| s.name.clone()), &synonyms),
            not_fields: conventions.not_fields.iter().cloned().collect(),
            finding_columns: lower(&conventions.finding_columns),
            not_finding_columns: lower(&conventions.not_finding_columns),
            limits: LimitWords::new(&conventions.limits),
            revisions: Vec::new(),
        })
    }

    /// These conventions, with IDs of `kinds` in the shape a run's reports declare them
    /// ([`declared_kinds`]) read as records of that run; the same when `kinds` adds none.
    /// A kind written `O#` is of numbered IDs without a hyphen (`O1`, `M7`), one written
    /// `T.MEM.` of dotted IDs (`T.MEM.1`), one written `MSG=` the one-word ID `MSG`.
    pub fn with_learned_kinds(&self, kinds: &[String]) -> std::borrow::Cow<'_, Conventions> {
        let shape_of = |k: &String| {
            if k.ends_with(learned::NUMBERED_MARK) {
                Shape::Numbered
            } else if k.ends_with(learned::DOTTED_MARK) {
                Shape::Dotted
            } else if k.ends_with(learned::WORD_MARK) {
                Shape::Word
            } else {
                Shape::Learned
            }
        };
        let kind_of = |k: &String| {
            k.trim_end_matches([learned::NUMBERED_MARK, learned::DOTTED_MARK, learned::WORD_MARK]).to_string()
        };
        let mut shapes: Vec<Shape> = kinds.iter().map(shape_of).collect();
        // The hyphenated shape is learned with any other.
        shapes.push(Shape::Learned);
        shapes.sort_by_key(|shape| *shape as u8);
        shapes.dedup();
        shapes.retain(|shape| !self.ids.shapes.contains(shape));
        let is_word = |k: &&String| k.ends_with(learned::WORD_MARK);
        let new: Vec<String> = kinds
            .iter()
            .filter(|k| !is_word(k))
            .map(kind_of)
            .filter(|k| !self.ids.kinds.contains_key(k.as_str()))
            .collect();
        let new_words: Vec<String> =
            kinds.iter().filter(is_word).map(kind_of).filter(|w| !self.ids.words.contains(w)).collect();
        if kinds.is_empty() || (new.is_empty() && new_words.is_empty() && shapes.is_empty()) {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut conventions = self.clone();
        for shape in shapes {
            let grammar = match shape {
                Shape::Learned => &learned::LEARNED_GRAMMAR,
                Shape::Numbered => &learned::NUMBERED_GRAMMAR,
                Shape::Dotted => &learned::DOTTED_GRAMMAR,
                Shape::Word => &learned::WORD_GRAMMAR,
                Shape::Configured => continue,
            };
            conventions.ids.grammars.push(Regex::clone(grammar));
            conventions.ids.shapes.push(shape);
        }
        for kind in new {
            // A kind the document declares is no technical word in it (`LLM-01 · …`).
            conventions.ids.not_ids.remove(&kind);
            conventions.ids.learned.insert(kind.clone());
            conventions.ids.kinds.insert(kind.clone(), kind);
        }
        conventions.ids.words.extend(new_words);
        std::borrow::Cow::Owned(conventions)
    }

    /// These conventions with the run's own words for the statuses (`learned`: written
    /// form → status name, from its legends); the same when it has none.
    pub fn with_status_words(&self, learned: &[(String, String)]) -> std::borrow::Cow<'_, Conventions> {
        if learned.is_empty() {
            return std::borrow::Cow::Borrowed(self);
        }
        std::borrow::Cow::Owned(Conventions { statuses: self.statuses.with_learned(learned), ..self.clone() })
    }

    /// These conventions for parsing a run that analyses `revisions`.
    pub fn with_revisions(&self, revisions: Vec<String>) -> Conventions {
        Conventions { revisions, ..self.clone() }
    }

    /// True when a permalink's `revision` (full or abbreviated) is one the run analyses,
    /// or no run is known.
    pub fn analyses_revision(&self, revision: &str) -> bool {
        let revision = revision.to_ascii_lowercase();
        self.revisions.is_empty()
            || self.revisions.iter().any(|r| {
                let r = r.to_ascii_lowercase();
                revision.len() >= 7 && (r.starts_with(&revision) || revision.starts_with(&r))
            })
    }

    /// True when `word` is a source of the register (`SRC-1`), not a record.
    pub fn is_source(&self, word: &str) -> bool {
        self.citations.names_source(word)
    }

    /// [`field`], unless the key holds a record ID or a source (`SRC-1: a.rs, b.rs` is a
    /// citation, `Distinct from RT-RTE-x: …` a sentence) or is one of `not_fields`.
    pub fn field<'t>(&self, text: &'t str) -> Option<(&'t str, usize)> {
        self.unless_it_names_something(field(text)?)
    }

    /// A list item's `key: value`, whose key may start in lower case and run to eight
    /// words (`- carries active agent across user turns: wired`): read for the findings
    /// it states, never as a record's field.
    pub fn item_key<'t>(&self, text: &'t str) -> Option<(&'t str, usize)> {
        static ITEM_KEY: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(
                r#"^[\p{L}\p{N}][\p{L}\p{N}()/'’,._&+%«»“”"„-]*(?: [\p{L}\p{N}()/'’,._&+%«»“”"„-]+){0,15}[ \u{a0}\u{202f}]?::?[ \t]+\S"#,
            )
            .unwrap()
        });
        // `- key composition as documented ("…", [SRC-6 § "x"]): **claimed**`: an aside in
        // parentheses may close the key, when a status follows.
        static ASIDE_KEY: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"^(?P<key>[\p{L}\p{N}][\p{L}\p{N}/'’,._-]*(?: [\p{L}\p{N}/'’,._-]+){0,15}) ?\((?:[^()]|\([^()]*\)){1,300}\)[ \u{a0}\u{202f}]?::?[ \t]+\S")
                .unwrap()
        });
        // A short aside (`read-only flag (value edits): wired`) is part of the key; one that
        // quotes or cites is not.
        let cites = |aside: &regex::Captures<'_>| {
            let whole = aside.get(0).unwrap().as_str();
            whole[aside.name("key").unwrap().end()..].contains(['"', '“', '[', '§'])
        };
        if let Some(aside) = ASIDE_KEY.captures(text).filter(cites) {
            let whole = aside.get(0).unwrap();
            let value_at = whole.end() - text[..whole.end()].chars().next_back()?.len_utf8();
            if self.statuses.at_start(&text[value_at..]).is_some() {
                return self.unless_it_names_something((aside.name("key").unwrap().as_str().trim_end(), value_at));
            }
        }
        let Some(found) = ITEM_KEY.find(text) else { return self.dashed_item_key(text) };
        // `routing fields :: wired`: a double colon is a key's colon too.
        let key = text[..text.find(':')?].trim_end();
        let value_at = found.end() - text[..found.end()].chars().next_back()?.len_utf8();
        // A key of more than eight words is one only when a status follows it
        // (`- something that raises into it from the memory layer: absent`).
        let status_follows = self.statuses.at_start(&text[value_at..]).is_some();
        if key.split_whitespace().count() > 8 && !status_follows {
            return None;
        }
        // `- Role for REQ-1.2: **implemented**`: a record named inside a key, with a status
        // after it, is part of the dimension; a key that opens with one names that record.
        let (ids, undeclared) = self.ids.find_ids_and_undeclared(key);
        let opens_with_id = ids.iter().chain(&undeclared).any(|m| m.range.start == 0);
        if status_follows && !opens_with_id && !self.citations.names_source(key) && !self.not_fields.contains(key) {
            return Some((key, value_at));
        }
        self.unless_it_names_something((key, value_at))
    }

    /// A list item's key closed by a dash or an arrow, when a status follows it (`- turn
    /// loop — **wired**`, `- read back – absent (…)`, `- direct chat → implemented, but …`):
    /// an item that is a sentence with a dash in it states nothing so.
    fn dashed_item_key<'t>(&self, text: &'t str) -> Option<(&'t str, usize)> {
        static DASHED_KEY: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"^[\p{L}\p{N}`][\p{L}\p{N}()/'’,._`-]*(?: [\p{L}\p{N}()/'’,._`-]+){0,7} [—–→] +").unwrap()
        });
        let found = DASHED_KEY.find(text)?;
        let value_at = found.end();
        self.statuses.at_start(&text[value_at..])?;
        let key = text[..found.end()].trim_end().trim_end_matches(['—', '–', '→']).trim_end();
        self.unless_it_names_something((key, value_at))
    }

    /// The key of `text` that is its first `key_len` bytes (a definition's term), and
    /// where its value starts, unless it names a record or source.
    pub fn key_of<'t>(&self, text: &'t str, key_len: usize) -> Option<(&'t str, usize)> {
        let key = text.get(..key_len)?.trim();
        let value = text.get(key_len..)?.strip_prefix(':')?;
        let value_at = text.len() - value.trim_start().len();
        (!key.is_empty() && value_at < text.len()).then_some(())?;
        self.unless_it_names_something((key, value_at))
    }

    fn unless_it_names_something<'t>(&self, (key, value_at): (&'t str, usize)) -> Option<(&'t str, usize)> {
        // Also an ID of a kind this site does not declare (`XY-ABC-foo`, `CONF-6`).
        static ID_SHAPED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b[A-Z][A-Z0-9]+-[A-Za-z0-9]").unwrap());
        // (An ID of the default grammars is ID-shaped; a site's own grammar may write IDs
        // otherwise, so a key with a capital after its first letter is read for them too.)
        let capital_inside = key.chars().skip(1).any(|c| c.is_ascii_uppercase());
        let names_something = ID_SHAPED.is_match(key)
            || self.citations.names_source(key)
            || (capital_inside && !self.ids.find_ids(key).is_empty())
            || self.not_fields.contains(key);
        (!names_something).then_some((key, value_at))
    }

    /// The IDs of `text`, and the words a grammar matches whose kind is not declared
    /// (but for sources: `SRC-1` is no record).
    pub fn find_ids_and_undeclared(&self, text: &str) -> (Vec<IdMatch>, Vec<IdMatch>) {
        let (ids, mut undeclared) = self.ids.find_ids_and_undeclared(text);
        undeclared.retain(|m| !self.citations.names_source(&text[m.range.clone()]));
        (ids, undeclared)
    }
}

/// `markdown` as CommonMark should read it, when markup of another dialect would make it
/// read otherwise: MyST's targets and colon fences and Obsidian's block IDs blanked
/// ([`myst::plain_markdown`]), reStructuredText's field lists without their opening colon
/// ([`rest::field_lists_plain`]), AsciiDoc's attribute lines blanked and cross-references
/// as words ([`asciidoc::asciidoc_plain`]), indented trailer lines written as list items
/// ([`trailers::trailers_as_items`]). Every byte offset is kept. None when nothing changed.
pub fn plain_markdown(markdown: &str) -> Option<String> {
    let mut plain = myst::plain_markdown(markdown);
    for pass in [rest::field_lists_plain, asciidoc::asciidoc_plain, trailers::trailers_as_items] {
        plain = pass(plain.as_deref().unwrap_or(markdown)).or(plain);
    }
    plain
}

/// True when the part of an ID after its kind is a placeholder (`-nn`, `-NN`, `-xx`,
/// `-XXX`, `-n`): the ID scheme described, not a record named.
fn placeholder_name(name: &str) -> bool {
    let name = name.trim_start_matches(['-', '.', '_']);
    let mut letters = name.chars();
    let Some(first) = letters.next() else { return false };
    name.len() <= 4 && matches!(first, 'n' | 'N' | 'x' | 'X' | '#') && letters.all(|c| c == first)
}

/// What is wrong with a regular expression, on one line (`unclosed group`): the regex
/// crate's message draws the pattern and a caret over several lines, which a diagnostic
/// shows already.
fn regex_problem(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(&text);
    last.trim().trim_start_matches("error:").trim().to_string()
}

/// The compiled ID grammars of a site, with the families and kinds that make a match count.
#[derive(Debug, Clone)]
pub struct IdScheme {
    grammars: Vec<Regex>,
    /// The shape of each grammar, by index: configured, or learned from the analysis.
    shapes: Vec<Shape>,
    families: BTreeMap<String, String>,
    kinds: BTreeMap<String, String>,
    /// Kinds (and families) of ID-shaped words that are no IDs (`SHA` of `SHA-256`).
    not_ids: std::collections::BTreeSet<String>,
    /// One-word IDs learned from the analysis (`MSG`): each is an ID, and a kind of its own
    /// only as that word (`MSG-X` is no ID of it, `TL` of `TL-PUBLISH` no word ID).
    words: std::collections::BTreeSet<String>,
    /// The kinds read off the analysis itself, not configured: a guess, so a word of one
    /// that names no record is a warning, not an error.
    learned: std::collections::BTreeSet<String>,
}

/// Where a grammar of an [`IdScheme`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// casebook.yaml's (or the default).
    Configured,
    /// The hyphenated shape read off the analysis ([`declared_kinds`]): `ED-SEL`.
    Learned,
    /// Numbered without a hyphen, learned from headings: `O1`.
    Numbered,
    /// Dotted, learned from headings: `T.MEM.1`.
    Dotted,
    /// One word in capitals, each its own kind, learned from headings: `Record MSG — …`.
    Word,
}

/// An ID found in text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdMatch {
    /// Byte range in the scanned text.
    pub range: Range<usize>,
    /// The kind code (`OBJ`).
    pub kind: String,
    /// The family code (`MEM`), for grammars that have one.
    pub family: Option<String>,
    /// True for a word of a declared kind that is longer than an ID may be
    /// ([`MAX_ID_LEN`]): among the undeclared, so that it is noted, never dropped quietly.
    pub too_long: bool,
}

/// Why an ID grammar could not be used.
#[derive(Debug, thiserror::Error)]
pub enum GrammarError {
    /// Not a valid regular expression.
    #[error("ID grammar `{pattern}` is not a valid regular expression: {message}")]
    Invalid {
        /// The pattern as configured.
        pattern: String,
        /// The regex crate's explanation.
        message: String,
    },
    /// `conventions.source_ids` is not a valid regular expression.
    #[error("`conventions.source_ids` `{pattern}` is not a valid regular expression: {message}")]
    SourceIds {
        /// The pattern as configured.
        pattern: String,
        /// The regex crate's explanation.
        message: String,
    },
    /// A grammar must say which part of the ID is its kind.
    #[error("ID grammar `{0}` has no `(?P<kind>…)` group; every grammar must name the kind")]
    NoKind(String),
}

impl IdScheme {
    /// Compiles the configured grammars.
    pub fn new(config: &IdConfig) -> Result<Self, GrammarError> {
        let mut grammars = Vec::new();
        for pattern in &config.grammars {
            let regex = Regex::new(pattern)
                .map_err(|e| GrammarError::Invalid { pattern: pattern.clone(), message: regex_problem(&e) })?;
            if !regex.capture_names().any(|n| n == Some("kind")) {
                return Err(GrammarError::NoKind(pattern.clone()));
            }
            grammars.push(regex);
        }
        Ok(IdScheme {
            shapes: vec![Shape::Configured; grammars.len()],
            grammars,
            families: config.families.clone(),
            kinds: config.kinds.clone(),
            not_ids: config.not_ids.iter().cloned().collect(),
            words: std::collections::BTreeSet::new(),
            learned: std::collections::BTreeSet::new(),
        })
    }

    /// Every ID in `text`, in order, not overlapping. A grammar match counts only at word
    /// boundaries, when its kind (and family) are declared, and when it is at most
    /// [`MAX_ID_LEN`] bytes long (an ID becomes a folder name).
    pub fn find_ids(&self, text: &str) -> Vec<IdMatch> {
        self.matches(text, false).0
    }

    /// The IDs of `text`, as [`IdScheme::find_ids`], and the words a grammar matches whose
    /// kind or family is not declared (`CONF-6` where `CONF` is no kind), but for the
    /// configured words that are no IDs (`SHA-256`); sources are left to
    /// [`Conventions::find_ids_and_undeclared`].
    pub fn find_ids_and_undeclared(&self, text: &str) -> (Vec<IdMatch>, Vec<IdMatch>) {
        self.matches(text, true)
    }

    fn matches(&self, text: &str, undeclared: bool) -> (Vec<IdMatch>, Vec<IdMatch>) {
        let (mut declared, mut others): (Vec<IdMatch>, Vec<IdMatch>) = (Vec::new(), Vec::new());
        for (grammar, shape) in self.grammars.iter().zip(&self.shapes) {
            for caps in grammar.captures_iter(text) {
                let whole = caps.get(0).expect("group 0 always matches");
                if !at_word_boundary(text, whole.range()) {
                    continue;
                }
                let kind = caps.name("kind").map(|m| m.as_str()).unwrap_or_default();
                if whole.len() > MAX_ID_LEN {
                    if undeclared && self.kinds.contains_key(kind) {
                        let range = whole.range();
                        others.push(IdMatch { range, kind: kind.to_string(), family: None, too_long: true });
                    }
                    continue;
                }
                // `T.MEM.2.3` is a number with more parts, not `T.MEM.2`.
                let mut after = text[whole.end()..].chars();
                if *shape == Shape::Dotted
                    && after.next() == Some('.')
                    && after.next().is_some_and(char::is_alphanumeric)
                {
                    continue;
                }
                // `AG-nn`, `REQ-xx`, `F-###`: the shape of the scheme's IDs, written to
                // describe it, is no ID.
                if placeholder_name(&text[whole.start() + kind.len()..whole.end()]) {
                    continue;
                }
                // `N-th` is no `N-07`: the learned shape's one-letter kinds need a digit or capitals.
                if *shape == Shape::Learned && !learned::id_shaped(self, text, whole.range(), kind) {
                    continue;
                }
                let family = caps.name("family").map(|m| m.as_str());
                let is_id = match shape {
                    Shape::Word => self.words.contains(kind),
                    _ => self.kinds.contains_key(kind) && family.is_none_or(|f| self.families.contains_key(f)),
                };
                // `H2`, `P4`, `U.S.1`: a word of a kind no heading declared is ordinary.
                if matches!(shape, Shape::Numbered | Shape::Dotted | Shape::Word) && !is_id {
                    continue;
                }
                let list = if is_id {
                    &mut declared
                } else if undeclared
                    && !self.not_ids.contains(kind)
                    && !family.is_some_and(|f| self.not_ids.contains(f))
                {
                    &mut others
                } else {
                    continue;
                };
                let family = family.map(str::to_string);
                list.push(IdMatch { range: whole.range(), kind: kind.to_string(), family, too_long: false });
            }
        }
        let ids = without_overlaps(declared);
        // A word that is no ID counts only where no ID is.
        let mut others = without_overlaps(others);
        others.retain(|m| !ids.iter().any(|id| id.range.start < m.range.end && m.range.start < id.range.end));
        (ids, others)
    }

    /// The ID at the very start of `text` (after leading spaces), if any. Only the first
    /// [`MAX_ID_LEN`] bytes and one more are searched (an ID is no longer; a match cut
    /// there is longer than an ID may be), and the word boundary is the whole text's.
    pub fn leading_id(&self, text: &str) -> Option<IdMatch> {
        let offset = text.len() - text.trim_start().len();
        let mut end = (offset + MAX_ID_LEN + 1).min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let found = self.find_ids(&text[..end]).into_iter().next().filter(|m| m.range.start == offset)?;
        at_word_boundary(text, found.range.clone()).then_some(found)
    }

    /// The kind and family of `id` when the whole string is one ID.
    pub fn classify(&self, id: &str) -> Option<IdMatch> {
        self.find_ids(id).into_iter().next().filter(|m| m.range == (0..id.len()))
    }

    /// True when `kind` was read off the analysis rather than configured.
    pub fn is_learned_kind(&self, kind: &str) -> bool {
        self.learned.contains(kind)
    }

    /// True when `kind` is a kind of record of this scheme.
    pub fn is_kind(&self, kind: &str) -> bool {
        self.kinds.contains_key(kind)
    }

    /// The display name of a kind code (`OBJ` → `operative object`).
    pub fn kind_name(&self, kind: &str) -> Option<&str> {
        self.kinds.get(kind).map(String::as_str)
    }

    /// The display name of a family code (`MEM` → `memory`).
    pub fn family_name(&self, family: &str) -> Option<&str> {
        self.families.get(family).map(String::as_str)
    }
}

/// A letter, digit or `_` that continues a word. Korean, Japanese and Chinese set their
/// particles and words against an ID or a path with no space between
/// (`DV-OBJ-agentstate의`, `MEM-01は`), so a letter of those scripts ends a word of another.
fn is_word_char(c: char) -> bool {
    (c.is_alphanumeric() || c == '_') && !written_without_spaces(c)
}

/// True for a letter of a script written without spaces between words: Hangul, kana,
/// CJK ideographs, Thai.
fn written_without_spaces(c: char) -> bool {
    matches!(c,
        '\u{0E00}'..='\u{0E7F}'
        | '\u{1100}'..='\u{11FF}'
        | '\u{3040}'..='\u{30FF}'
        | '\u{3130}'..='\u{318F}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}'
        | '\u{AC00}'..='\u{D7AF}'
        | '\u{F900}'..='\u{FAFF}')
}

/// Matches earliest first, the longest at one start, without those that overlap an
/// earlier one.
fn without_overlaps(mut found: Vec<IdMatch>) -> Vec<IdMatch> {
    found.sort_by(|a, b| a.range.start.cmp(&b.range.start).then(b.range.end.cmp(&a.range.end)));
    let mut out: Vec<IdMatch> = Vec::with_capacity(found.len());
    for m in found {
        if out.last().is_none_or(|last| m.range.start >= last.range.end) {
            out.push(m);
        }
    }
    out
}

/// An ID must not be glued to a word or to another hyphenated segment on either side.
fn at_word_boundary(text: &str, range: Range<usize>) -> bool {
    let before = text[..range.start].chars().next_back();
    let after = text[range.end..].chars().next();
    let after2 = text[range.end..].chars().nth(1);
    let before_ok = before.is_none_or(|c| !is_word_char(c) && c != '-');
    let after_ok = match after {
        None => true,
        Some('-') => !after2.is_some_and(is_word_char),
        Some(c) => !is_word_char(c),
    };
    before_ok && after_ok
}

/// The `--- path` line that follows a quoted code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotePath {
    /// `SRC-n` when the line names the source.
    pub source: Option<String>,
    /// The quoted file.
    pub path: String,
    /// The quoted lines, when given (`--- a.py:10-12`).
    pub lines: Vec<LineRange>,
}

/// The highlighting language of a quoted file, from its extension.
pub fn language_for_path(path: &str) -> Option<&'static str> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    Some(match extension.as_str() {
        "py" | "pyi" => "python",
        "rs" => "rust",
        "sh" | "bash" => "bash",
        "ts" | "tsx" => "typescript",
        "js" | "mjs" | "cjs" | "jsx" => "javascript",
        "go" => "go",
        "java" => "java",
        "c" | "h" => "c",
        "cc" | "cpp" | "hpp" | "cxx" => "cpp",
        "rb" => "ruby",
        "md" => "markdown",
        "json" | "jsonl" => "json",
        "yaml" | "yml" => "yaml",
        "toml" => "toml",
        "html" | "htm" => "html",
        "css" => "css",
        "sql" => "sql",
        _ => return None,
    })
}

/// The start of `Key: value`, up to the value's first character (the rest of a paragraph
/// need not be read: the key has no colon, so it ends at the first one).
static FIELD: LazyLock<Regex> =
    // A space may come before the colon, as French sets it (`Statut : wired`).
    LazyLock::new(|| {
        Regex::new(r"^[\p{Lu}\p{Lo}][\p{L}\p{N}()/'’-]*(?: [\p{L}\p{N}()/'’-]+){0,3}[ \u{a0}\u{202f}]?:[ \t]+\S")
            .unwrap()
    });

/// Words that start sentences, never field names: `The cache gives ranking: …` is prose.
const SENTENCE_STARTS: [&str; 22] = [
    "A", "An", "And", "But", "For", "Here", "In", "It", "Its", "No", "On", "So", "That", "The", "There", "These",
    "They", "This", "Those", "Thus", "We", "When",
];

/// The length of the underscores of the emphasis at `range` of `md` when they are part
/// of a path, not emphasis: `swarm/__init__.py` is Markdown for `swarm/**init**.py`, never
/// what its author meant. Its delimiters are then read, and shown, as written.
pub fn path_underscores(md: &str, range: std::ops::Range<usize>) -> Option<usize> {
    let inner = md.get(range.clone())?;
    let n = inner.len() - inner.trim_start_matches('_').len();
    if !(1..=2).contains(&n) || inner.len() <= 2 * n || !inner.ends_with(&"__"[..n]) {
        return None;
    }
    let before = md[..range.start].chars().next_back();
    let mut after = md[range.end..].chars();
    let (next, then) = (after.next(), after.next());
    let glued_before = before.is_some_and(|c| c == '/' || c == '.' || c.is_alphanumeric());
    let glued_after = next.is_some_and(|c| c == '/' || c == '.' || c.is_alphanumeric());
    let extension = next == Some('.') && then.is_some_and(|c| c.is_ascii_alphabetic());
    ((glued_before && glued_after) || extension).then_some(n)
}

/// True when a line of Markdown opens with a key, bold or not (`**Status:** wired`,
/// `**Status**: wired`, `Component: COMP-LPE`): a line of fields.
pub fn starts_with_key(line: &str) -> bool {
    static KEY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^\s*(?:\*\*|__|\*|_)?[\x22“«]?[\p{Lu}\p{Lo}][^:*_\n]{0,60}(?::(?:\*\*|__|\*|_)|(?:\*\*|__|\*|_)?:)[ \t]+\S")
            .unwrap()
    });
    // A Dataview field (`time fields:: wired`): any short key, then two colons.
    static FIELD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*[^:\s][^:\n]{0,60}::[ \t]+\S").unwrap());
    KEY.is_match(line) || FIELD.is_match(line)
}

/// Reads `Key: value` (a key of one to four words starting with a capital letter, or a
/// letter of a script without case, not a
/// sentence opener). Returns the key and the byte offset where the value starts.
/// [`IdScheme::field`] also refuses keys that hold a record or source ID.
pub fn field(text: &str) -> Option<(&str, usize)> {
    // `Key: value`: a capital first (or a letter of a script without case: `読み戻し: wired`),
    // and a colon (most paragraphs fail here, cheaply).
    if !text.chars().next().is_some_and(|c| c.is_alphabetic() && !c.is_lowercase()) || !text.contains(':') {
        return None;
    }
    let start = FIELD.find(text)?;
    let key = text[..text.find(':')?].trim_end();
    // The value starts at the last character matched.
    let value_at = start.end() - text[..start.end()].chars().next_back()?.len_utf8();
    let first = key.split([' ', '-']).next().unwrap_or(key);
    if SENTENCE_STARTS.contains(&first) {
        return None;
    }
    Some((key, value_at))
}

/// Splits the first cell of an ID-first row (after the ID) into a label and a part:
/// `TurnUsage (part: context_tokens)` → (`TurnUsage`, `context_tokens`).
pub fn label_and_part(rest: &str) -> (Option<String>, Option<String>) {
    static PART: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\(part:\s*(?P<part>[^)]*)\)").unwrap());
    let (label, part) = match PART.captures(rest) {
        Some(c) => {
            let whole = c.get(0).unwrap();
            let label = format!("{} {}", &rest[..whole.start()], &rest[whole.end()..]);
            (label, Some(c["part"].trim().to_string()))
        }
        None => (rest.to_string(), None),
    };
    let label = heading_label(&label);
    (label, part.filter(|p| !p.is_empty()))
}

/// The label in a heading or first cell after the ID: separators and spaces trimmed.
pub fn heading_label(rest: &str) -> Option<String> {
    // `… pipeline :flow:memory:`: an outline's tags close the line; they are no part of it.
    let rest = learned::without_tags(rest);
    let label = rest.trim().trim_start_matches([':', '—', '–', '-', '.']).trim();
    let label = label.split_whitespace().collect::<Vec<_>>().join(" ");
    (!label.is_empty()).then_some(label)
}

/// The label of a heading or cell that carries an ID at `id` (a byte range of `text`):
/// the words after the ID (`ED-SEL — Edit-format selection`, `[TC-W01] add() stores`,
/// `4.2 GR-1: Input guardrail`), or, when none follow it, those before it
/// (`The logs database (SW-S-history)`), without the punctuation around the ID.
/// A heading's label that asks its question after a dash (`Retrieval — which search
/// backends run, and how many hits come back?`): the name before the dash, and the
/// question. `None` when the label asks nothing so.
pub fn question_of(label: &str) -> Option<(&str, &str)> {
    let label = label.trim();
    if !label.ends_with('?') {
        return None;
    }
    let (name, question) = [" — ", " – ", " - ", ": "].iter().find_map(|dash| label.split_once(dash))?;
    let name = name.trim();
    (!name.is_empty() && !name.ends_with('?') && name.split_whitespace().count() <= 8).then(|| (name, question.trim()))
}

pub fn label_around(text: &str, id: Range<usize>) -> Option<String> {
    const AROUND: &[char] = &[':', '—', '–', '-', '.', '·', '|', ']', ')', '[', '(', '*', '#', ',', ';', '/'];
    let after = text[id.end..].trim().trim_start_matches(|c: char| AROUND.contains(&c) || c.is_whitespace());
    let before = text[..id.start].trim_end_matches(|c: char| AROUND.contains(&c) || c.is_whitespace());
    let before_has_words = before.chars().any(char::is_alphabetic);
    let label = if after.chars().any(char::is_alphanumeric) || !before_has_words { after } else { before };
    // `Observation 1 — The shared turn loop (MGR-LOOP)`: the numbering words are no part
    // of the label.
    let label =
        pointers::after_section_label(label).filter(|rest| rest.chars().any(char::is_alphabetic)).unwrap_or(label);
    heading_label(label)
}

/// Headers of a table's column that names what each row is: its records' labels.
const ROW_NAME_HEADERS: [&str; 28] = [
    "name",
    "label",
    "title",
    "control",
    "component",
    "mechanism",
    "item",
    "object",
    "subject",
    "record",
    "capability",
    "feature",
    "check",
    "hypothesis",
    "claim",
    "requirement",
    // The same in French, German and Spanish.
    "nom",
    "libellé",
    "intitulé",
    "titre",
    "objet",
    "bezeichnung",
    "titel",
    "gegenstand",
    "komponente",
    "nombre",
    "título",
    "etiqueta",
];

/// True when a column headed `header` names what each row is (`Control`, `Name`,
/// `Component name`).
pub fn names_rows(header: &str) -> bool {
    let header = header.trim().to_lowercase();
    ROW_NAME_HEADERS.contains(&header.as_str()) || header.ends_with(" name")
}

/// True when a table's two columns are a key and its value (`| Field | Value |`,
/// `| Property | Details |`): each row is a `Key: value` line.
pub fn is_key_value_header(key: &str, value: &str) -> bool {
    // (And `Feld | Wert`, `Champ | Valeur`, `Campo | Valor`.)
    const KEYS: [&str; 14] = [
        "",
        "field",
        "key",
        "property",
        "attribute",
        "item",
        "name",
        "aspect",
        "fact",
        "feld",
        "eigenschaft",
        "champ",
        "propriété",
        "campo",
    ];
    const VALUES: [&str; 12] = [
        "value",
        "values",
        "detail",
        "details",
        "description",
        "content",
        "entry",
        "wert",
        "angabe",
        "valeur",
        "valor",
        "beschreibung",
    ];
    let (key, value) = (key.trim().to_lowercase(), value.trim().to_lowercase());
    KEYS.contains(&key.as_str()) && VALUES.contains(&value.as_str())
}

/// The annotation target in a heading `On <ID>`.
pub fn annotation_target<'a>(scheme: &IdScheme, heading: &'a str) -> Option<&'a str> {
    let rest = heading.trim().strip_prefix("On ")?;
    let m = scheme.leading_id(rest)?;
    let after = rest[m.range.end..].trim();
    after.is_empty().then(|| &rest[m.range])
}

/// The sentence of `text` that contains `range`, shortened to about `max` characters
/// around it. Used to show why a record is cited.
///
/// Sentence boundaries are looked for only within `4 * max` bytes (at least `max`
/// characters) on either side of `range`: what is shown lies within that window anyway,
/// and a line of megabytes with a mention every few words would otherwise be scanned
/// once per mention.
pub fn sentence_around(text: &str, range: Range<usize>, max: usize) -> String {
    let mut window_start = range.start.saturating_sub(4 * max);
    while !text.is_char_boundary(window_start) {
        window_start -= 1;
    }
    let mut window_end = range.end.saturating_add(4 * max).min(text.len());
    while !text.is_char_boundary(window_end) {
        window_end += 1;
    }
    let start = sentence_start(text, window_start, range.start, window_end);
    let end = sentence_end(text, range.end, window_end);
    let raw = &text[start..end];
    let lead = raw.len() - raw.trim_start().len();
    let sentence = raw.trim();
    let chars = sentence.chars().count();
    if chars <= max {
        return sentence.to_string();
    }
    // Keep a window around the mention (its offset in the trimmed sentence is a char
    // boundary: `range.start` is one in `text`, and trimming removes whole characters).
    let offset_in = range.start.saturating_sub(start).saturating_sub(lead);
    let before: Vec<char> = sentence[..offset_in.min(sentence.len())].chars().collect();
    let keep_before = (max / 3).min(before.len());
    let head: String = before[before.len() - keep_before..].iter().collect();
    let tail: String = sentence[offset_in.min(sentence.len())..].chars().take(max - keep_before).collect();
    let mut shown = String::new();
    if keep_before < before.len() {
        shown.push('…');
    }
    shown.push_str(head.trim_start());
    shown.push_str(&tail);
    if tail.chars().count() + keep_before < chars - (before.len() - keep_before) {
        shown.push('…');
    }
    shown
}

const ABBREVIATIONS: [&str; 6] = ["e.g", "i.e", "etc", "vs", "cf", "al"];

/// True when a sentence ends just before byte `i` (just after a terminator). Looks no
/// further than `limit` for the next word.
pub(super) fn is_boundary_before(text: &str, i: usize, limit: usize) -> bool {
    // A boundary needs whitespace then a capital, digit, quote or bracket, and a
    // terminator that does not end an abbreviation: the word before it (after the last
    // space or `(`) is not one of them. Only the abbreviation's length is read, so a long
    // run without spaces costs nothing more.
    let prefix = &text[..i - 1];
    let ends_abbreviation = ABBREVIATIONS.iter().any(|a| {
        let at = prefix.len().wrapping_sub(a.len());
        prefix.len() >= a.len()
            && prefix.as_bytes()[at..].eq_ignore_ascii_case(a.as_bytes())
            && prefix[..at].chars().next_back().is_none_or(|c| c.is_whitespace() || c == '(')
    });
    if ends_abbreviation {
        return false;
    }
    let rest = &text[i..limit.max(i)];
    match rest.chars().next() {
        Some(c) if c.is_whitespace() => {}
        _ => return false,
    }
    let next = rest.trim_start().chars().next();
    next.is_some_and(|c| c.is_uppercase() || c.is_ascii_digit() || "\"“'‘([".contains(c))
}

/// Scans back from `pos` to the nearest sentence boundary, but not before `floor`.
fn sentence_start(text: &str, floor: usize, pos: usize, limit: usize) -> usize {
    for (i, c) in text[floor..pos].char_indices().rev() {
        if matches!(c, '.' | '!' | '?') && is_boundary_before(text, floor + i + 1, limit) {
            return floor + i + 1;
        }
    }
    floor
}

/// Scans forward from `pos` to the end of its sentence, but not past `limit`.
fn sentence_end(text: &str, pos: usize, limit: usize) -> usize {
    for (i, c) in text[pos..limit.max(pos)].char_indices() {
        let at = pos + i + c.len_utf8();
        if matches!(c, '.' | '!' | '?') && (at == text.len() || is_boundary_before(text, at, limit)) {
            return at;
        }
    }
    limit.max(pos)
}

/// True when `unknown` is probably a misspelling of `known`: the same numbers, and the
/// same text up to case and a small edit distance. IDs that differ in a number
/// (`OBJ-01`, `OBJ-02`) are distinct records, never typos of each other.
pub fn is_near_miss(unknown: &str, known: &str) -> bool {
    if unknown == known {
        return false;
    }
    let numbers = |s: &str| -> Vec<u64> {
        s.split(|c: char| !c.is_ascii_digit()).filter(|p| !p.is_empty()).filter_map(|p| p.parse().ok()).collect()
    };
    if numbers(unknown) != numbers(known) {
        return false;
    }
    let letters =
        |s: &str| -> String { s.chars().filter(|c| !c.is_ascii_digit()).flat_map(char::to_lowercase).collect() };
    let (a, b) = (letters(unknown), letters(known));
    let limit = (a.chars().count().min(b.chars().count()) / 5).max(1);
    if a.chars().count().abs_diff(b.chars().count()) > limit {
        return false;
    }
    strsim::damerau_levenshtein(&a, &b) <= limit
}

/// A MyST or Sphinx role's code span (`` {ref}`MEM-OBJ-state <mem-obj-state>` ``): the
/// text it shows (`MEM-OBJ-state`; the code itself when it names no target) and the
/// length of the role before it, when `before` ends with a role.
pub fn role_title<'c>(code: &'c str, before: &str) -> Option<(&'c str, usize)> {
    const ROLES: [&str; 6] = ["{ref}", "{doc}", "{numref}", "{term}", "{any}", "{need}"];
    let role = ROLES.iter().find(|role| before.ends_with(*role))?;
    let code = code.trim();
    let title =
        code.strip_suffix('>').and_then(|rest| rest.rsplit_once('<')).map_or(code, |(title, _)| title.trim_end());
    Some((title, role.len()))
}

/// A URL-safe anchor for a heading: `2.1 Write agency` → `2-1-write-agency`.
pub fn slugify(text: &str) -> String {
    let mut slug = String::with_capacity(text.len());
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    while slug.ends_with('-') {
        slug.pop();
    }
    if slug.is_empty() {
        slug.push_str("section");
    }
    slug
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_s_code_span_shows_its_title() {
        assert_eq!(role_title("MEM-OBJ-state <mem-obj-state>", "see {ref}"), Some(("MEM-OBJ-state", 5)));
        assert_eq!(role_title("OBJ-01", "{doc}"), Some(("OBJ-01", 5)));
        assert_eq!(role_title("OBJ-01 <x>", "see "), None);
    }

    #[test]
    fn a_list_item_s_key_may_close_with_an_aside_that_quotes_or_cites() {
        let conventions = Conventions::new(&crate::config::SiteConfig::default()).unwrap();
        let key = |text: &'static str| conventions.item_key(text).map(|(k, at)| (k, &text[at..]));
        assert_eq!(
            key("key composition as documented (\"the options\", [SRC-6 § \"Cache\"]): claimed"),
            Some(("key composition as documented", "claimed"))
        );
        assert_eq!(key("read-only flag (value edits): wired"), Some(("read-only flag (value edits)", "wired")));
        assert_eq!(key("écriture : wired (à chaque réponse)"), Some(("écriture", "wired (à chaque réponse)")));
    }

    #[test]
    fn a_list_item_s_key_may_close_with_a_dash_when_a_status_follows() {
        let conventions = Conventions::new(&crate::config::SiteConfig::default()).unwrap();
        let key = |text: &'static str| conventions.item_key(text).map(|(k, at)| (k, &text[at..]));
        assert_eq!(key("turn loop — wired"), Some(("turn loop", "wired")));
        assert_eq!(
            key("fail-closed on `error` – implemented (denies)"),
            Some(("fail-closed on `error`", "implemented (denies)"))
        );
        assert_eq!(key("the loop — which we read twice — is wired"), None, "a sentence with dashes is prose");
        assert_eq!(key("OBJ-01 — wired"), None, "a record's ID is no key");
        assert_eq!(
            key("direct chat (recipient) → implemented, but not reached"),
            Some(("direct chat (recipient)", "implemented, but not reached"))
        );
    }

    #[test]
    fn a_list_item_s_key_may_name_a_record_or_a_share_when_a_status_follows() {
        let conventions = Conventions::new(&crate::config::SiteConfig::default()).unwrap();
        let key = |text: &'static str| conventions.item_key(text).map(|(k, at)| (k, &text[at..]));
        assert_eq!(key("Role for REQ-1.2: implemented."), Some(("Role for REQ-1.2", "implemented.")));
        assert_eq!(key("Role for REQ-1.2: the cache"), None, "no status follows");
        assert_eq!(key("OBJ-01: wired"), None, "a key that opens with an ID names that record");
        assert_eq!(key("budget warning at 75 %: observed"), Some(("budget warning at 75 %", "observed")));
        assert_eq!(key("формулировка «деактивирует»: claimed"), Some(("формулировка «деактивирует»", "claimed")));
    }

    #[test]
    fn underscores_inside_a_path_are_no_emphasis() {
        let at = |md: &str, inner: &str| {
            let start = md.find(inner).unwrap();
            path_underscores(md, start..start + inner.len())
        };
        assert_eq!(at("swarm/__init__.py", "__init__"), Some(2));
        assert_eq!(at("see (__main__.py)", "__main__"), Some(2), "a file name's extension follows");
        assert_eq!(at("a/_b_/c", "_b_"), Some(1));
        assert_eq!(at("this is __stressed__.", "__stressed__"), None);
        assert_eq!(at("__stressed__ words", "__stressed__"), None);
        assert_eq!(at("**bold**.py", "**bold**"), None, "asterisks are emphasis, always");
    }
    use crate::config::IdConfig;

    fn scheme() -> IdScheme {
        IdScheme::new(&IdConfig::default()).unwrap()
    }

    fn ids(text: &str) -> Vec<&str> {
        scheme().find_ids(text).into_iter().map(|m| &text[m.range]).collect()
    }

    #[test]
    fn a_leading_id_is_found_in_a_long_text_and_only_at_its_start() {
        let tail = " and then a long sentence about OBJ-09".to_string() + &" words".repeat(100);
        assert_eq!(scheme().leading_id(&format!("  MEM-OBJ-raw{tail}")).map(|m| m.range), Some(2..13));
        assert!(scheme().leading_id(&format!("See MEM-OBJ-raw{tail}")).is_none());
        // The longest ID there may be, at the start of a long text; one byte longer is none.
        let longest = format!("MEM-OBJ-{}", "a".repeat(MAX_ID_LEN - 8));
        assert_eq!(scheme().leading_id(&format!("{longest}{tail}")).map(|m| m.range), Some(0..MAX_ID_LEN));
        assert!(scheme().leading_id(&format!("{longest}a{tail}")).is_none());
        // A word boundary is the whole text's: `MEM-OBJ-raw` is no ID inside `MEM-OBJ-rawé`.
        assert!(scheme().leading_id("MEM-OBJ-rawé and more").is_none());
    }

    #[test]
    fn finds_both_grammars_and_only_declared_kinds() {
        assert_eq!(
            ids("See RT-RTE-memory-delivery, MEM-OBJ-raw and OBJ-03; not SRC-1, SHA-256, UTF-8 or OBJ-nn."),
            ["RT-RTE-memory-delivery", "MEM-OBJ-raw", "OBJ-03"]
        );
    }

    #[test]
    fn ids_respect_word_boundaries() {
        assert_eq!(ids("OBJ-03/OBJ-02 (summary layer)"), ["OBJ-03", "OBJ-02"]);
        assert_eq!(ids("xOBJ-03 OBJ-03x OBJ-09's"), ["OBJ-09"]);
        assert_eq!(ids("MEM-OBJ-page-facts/MEM-OBJ-page-metadata."), ["MEM-OBJ-page-facts", "MEM-OBJ-page-metadata"]);
        assert!(ids("AAS-2026-08-20-fractal-01").is_empty());
    }

    #[test]
    fn ids_end_where_a_script_without_spaces_begins() {
        assert_eq!(ids("MEM-OBJ-state의 최신 상태"), ["MEM-OBJ-state"]);
        assert_eq!(ids("OBJ-03は、見るとOBJ-02"), ["OBJ-03", "OBJ-02"]);
        assert_eq!(ids("见OBJ-03号"), ["OBJ-03"]);
        assert!(ids("OBJ-03é OBJ-03я").is_empty(), "Latin and Cyrillic letters are written with spaces");
    }

    #[test]
    fn overlong_ids_are_not_ids() {
        let long = format!("MEM-OBJ-{}", "a".repeat(10_000));
        assert!(ids(&long).is_empty());
        let fits = format!("MEM-OBJ-{}", "a".repeat(MAX_ID_LEN - 8));
        assert_eq!(ids(&fits).len(), 1);
    }

    #[test]
    fn family_must_be_declared() {
        assert!(ids("XX-OBJ-raw").is_empty());
        assert_eq!(scheme().classify("EPI-CLM-context-rot").unwrap().family.as_deref(), Some("EPI"));
        assert!(scheme().classify("EPI-CLM-context-rot.").is_none());
    }

    #[test]
    fn keys_that_name_a_record_or_source_are_not_fields() {
        let s = Conventions::new(&crate::config::SiteConfig::default()).unwrap();
        assert_eq!(s.field("SRC-1: src/jobs.rs, src/sandbox/jail.rs"), None);
        assert_eq!(s.field("Distinct from RT-RTE-file-exchange: the jail is per job."), None);
        assert_eq!(s.field("Distinct from XY-ABC-other: an undeclared kind is still an ID."), None);
        assert_eq!(s.field("Source-native identity: raw/x.md").map(|f| f.0), Some("Source-native identity"));
    }

    #[test]
    fn quote_path_lines() {
        assert_eq!(
            Citations::default().quote_path("--- plugin/exia_seed/rappel.py"),
            Some(QuotePath { source: None, path: "plugin/exia_seed/rappel.py".into(), lines: vec![] })
        );
        let q = Citations::default().quote_path("--- SRC-3 docs/session-management.md:20-29").unwrap();
        assert_eq!(q.source.as_deref(), Some("SRC-3"));
        assert_eq!(q.lines, vec![LineRange { start: 20, end: 29 }]);
        assert_eq!(Citations::default().quote_path("--- this is prose, not a path"), None);
        assert_eq!(Citations::default().quote_path("plugin/x.py"), None);
    }

    #[test]
    fn fields() {
        assert_eq!(field("Label: Raw conversation batches").map(|f| f.0), Some("Label"));
        // Where the value starts, a character beyond ASCII first, or over several lines.
        assert_eq!(field("Label: éclair x"), Some(("Label", 7)));
        assert_eq!(field("Two words:\t\tvalue\nmore"), Some(("Two words", 12)));
        assert_eq!(field("Key:value"), None);
        assert_eq!(field("Source-native identity: raw/*_open.md").map(|f| f.0), Some("Source-native identity"));
        assert_eq!(field("The cache gives ranking: authority to code, and more words than a key."), None);
        assert_eq!(field("lower: not a key"), None);
    }

    #[test]
    fn first_cell_label_and_part() {
        assert_eq!(
            label_and_part(" TurnUsage (part: context_tokens)"),
            (Some("TurnUsage".into()), Some("context_tokens".into()))
        );
        assert_eq!(label_and_part(" (part: files_read)"), (None, Some("files_read".into())));
        assert_eq!(
            label_and_part(" SessionSummary / SummaryTurn"),
            (Some("SessionSummary / SummaryTurn".into()), None)
        );
    }

    #[test]
    fn annotation_headings() {
        let s = scheme();
        assert_eq!(annotation_target(&s, "On RT-RTE-memory-delivery"), Some("RT-RTE-memory-delivery"));
        assert_eq!(annotation_target(&s, "On the RT-RTE-memory-delivery route"), None);
        assert_eq!(annotation_target(&s, "Once RT-RTE-x"), None);
    }

    #[test]
    fn citing_sentence() {
        let text = "Raw files remain available. Later, e.g. in MEM-OBJ-raw, lines are kept. Another one.";
        let at = text.find("MEM-OBJ-raw").unwrap();
        assert_eq!(sentence_around(text, at..at + 11, 300), "Later, e.g. in MEM-OBJ-raw, lines are kept.");
        let short = sentence_around(text, at..at + 11, 20);
        assert!(short.contains("MEM-OBJ-raw") && short.starts_with('…'), "{short}");
    }

    #[test]
    fn long_sentences_with_leading_space_and_wide_characters_are_cut_safely() {
        let text = format!("   {}MEM-OBJ-raw{}", "é".repeat(400), "ü".repeat(400));
        let at = text.find("MEM-OBJ-raw").unwrap();
        let shown = sentence_around(&text, at..at + 11, 60);
        assert!(shown.contains("MEM-OBJ-raw") && shown.starts_with('…') && shown.ends_with('…'), "{shown}");
    }

    #[test]
    fn near_misses() {
        assert!(is_near_miss("MEM-OBJ-rw", "MEM-OBJ-raw"));
        assert!(is_near_miss("mem-obj-raw", "MEM-OBJ-raw"));
        assert!(is_near_miss("OBJ-3", "OBJ-03"));
        assert!(!is_near_miss("OBJ-01", "OBJ-02"));
        assert!(!is_near_miss("RT-CMP-main-lm", "RT-CMP-sub-lm"));
        assert!(!is_near_miss("MEM-OBJ-raw", "MEM-OBJ-raw"));
    }

    #[test]
    fn slugs() {
        assert_eq!(slugify("2.1 Write agency"), "2-1-write-agency");
        assert_eq!(slugify("Réception — “à la carte”"), "réception-à-la-carte");
        assert_eq!(slugify("—"), "section");
    }
}
