//! Citations of the source register in text: `SRC-1 session.py:368-390`,
//! `SRC-1: src/jobs.rs, src/sandbox/`, `runtime.py:222-223, 263-322`,
//! `plugin/exia_seed/pages.py`, `SRC-3 §"Known Limits"`, `SRC-8`.

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{is_word_char, QuotePath};
use crate::model::LineRange;

/// A citation found in text: `SRC-1 session.py:368-390`, `runtime.py:222-223`,
/// `SRC-1 plugin/exia_seed/rappel.py`, `SRC-1: src/jobs.rs, src/sandbox/`,
/// `plugin/exia_seed/pages.py`, `SRC-3 §"Known Limits"`, or a bare `SRC-8`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitationMatch {
    /// Byte range of the whole citation in the scanned text.
    pub range: Range<usize>,
    /// Byte range of the `SRC-n` token, when the citation names its source itself.
    pub source_range: Option<Range<usize>>,
    /// The source: named here, or the last one named earlier in the same text.
    pub source: Option<String>,
    /// The cited file or folder (`src/sandbox/`), if any.
    pub path: Option<String>,
    /// A cited section of a document (`Known Limits`), if any.
    pub section: Option<String>,
    /// Cited line ranges, possibly several (`session.py:188, 200, 278-279`).
    pub lines: Vec<LineRange>,
    /// Byte range in the scanned text of each of `lines`, in the same order.
    pub line_spans: Vec<Range<usize>>,
}

/// A file's name, with its extension (`rappel.py`).
const FILE: &str = r"\.?[A-Za-z0-9_\-][A-Za-z0-9_.\-]*\.[A-Za-z][A-Za-z0-9]*";
/// What may follow `SRC-n`: a file, or a folder written with its trailing `/` or a glob
/// (`src/sandbox/`, `src/fractal/**`).
/// A dotfile (`.gitignore`, `server/.env`) is a file too.
const SOURCED_PATH: &str = r"(?:(?:[A-Za-z0-9_.\-]+/)*(?:[A-Za-z0-9_\-][A-Za-z0-9_.\-]*\.[A-Za-z][A-Za-z0-9]*|\.[A-Za-z][A-Za-z0-9_\-]*)|(?:[A-Za-z0-9_.\-]+/)+(?:\*\*/\*|\*\*|\*)?)";
/// Line ranges: `188, 200, 278-279`, with an en dash (`368–390`) or forges' `L` (`L10-L20`).
pub(super) const LINES: &str = r"L?[0-9]+(?:[-–]L?[0-9]+)?(?:, ?L?[0-9]+(?:[-–]L?[0-9]+)?)*";
/// The word for lines, in the languages analyses are written in: `lines`, `lignes`,
/// `Zeilen`, `líneas`, `linhas`, `righe`, `satır`, `строки` (a macro, so that patterns can be made of it at compile
/// time).
macro_rules! line_words {
    () => {
        r"(?i:lines?|lignes?|zeilen?|l[ií]neas?|linhas?|righe|riga|satır(?:lar)?|строк[аиеу]?)"
    };
}
pub(super) const LINE_WORDS: &str = line_words!();
/// What joins a path to its lines: `:` or `#` (`a.py:3`, `a.py#L3`), or words after a
/// comma, a middle dot or a space (`a.py, lines 3–9`, `a.py line 7`, `setup.cfg, l. 16`,
/// `a.py, L1535`, `a.py · L3–9`, `a.py, lignes 3-9`, `a.py · Z. 3–9`: German `Zeile`;
/// `a.py, at ll. 65-69`).
/// Chinese sets a full-width comma with no space, and lines as `第 78–81 行`.
const TO_LINES: &str = concat!(
    r"(?:[:#]|(?:,| [·•])? (?:at )?(?:",
    line_words!(),
    r" |ll?\. ?|Z\. ?|стр\. ?|L)|[，、：] ?(?:",
    line_words!(),
    r" |ll?\. ?|第 ?|L))"
);
/// Line numbers written before their word, as Korean, Japanese and Chinese write them,
/// after a path and a space or comma: `devika.py 77–103행`, `a.py 39〜45行`, `a.py, 12~20줄`.
/// (The numbers are the pattern's group named by `$name`.)
macro_rules! lines_then_word {
    ($name:literal) => {
        concat!(
            r"(?:[,，、]? ?)(?P<",
            $name,
            r">[0-9]+(?: ?[-–—〜～~] ?[0-9]+)?(?:, ?[0-9]+(?: ?[-–—〜～~] ?[0-9]+)?)*) ?(?:행|行|줄)"
        )
    };
}

/// What may come between a source and what it cites: a colon (French puts a space before
/// it) or a comma, or a middle dot or
/// bullet set off by spaces (`SRC-1 · chatdev/phase.py · L3–9`).
const AFTER_SOURCE_GAP: &str = r"(?:(?: ?[:,]| [·•])? +|[：，、] ?)";

/// How a site cites its sources: the pattern of its source IDs (`SRC-1`), compiled. The
/// forms around it (paths, lists, sections) are the same for every site.
#[derive(Debug, Clone)]
pub struct Citations {
    /// A source ID as a whole word.
    token: Regex,
    /// A quote's path line, `--- [SOURCE] path[:lines]`.
    quote_path: Regex,
}

impl Default for Citations {
    fn default() -> Self {
        Citations::new(crate::config::DEFAULT_SOURCE_IDS).expect("the default source pattern compiles")
    }
}
/// A path without a source: with lines (`runtime.py:222-223`), or, without lines, only
/// when it has a folder (`plugin/exia_seed/pages.py`) or a section follows
/// (`README.md § "Architecture"`): `Node.js` or `step.usage` are words.
/// (Two alternatives, so that a word with a dot and neither is no match at all: most text
/// has many.)
static BARE_CITATION: LazyLock<Regex> = LazyLock::new(|| {
    const SLASHED_THEN_WORD: &str = lines_then_word!("slashed_suffix");
    const PLAIN_THEN_WORD: &str = lines_then_word!("plain_suffix");
    Regex::new(&format!(
        r#"(?P<slashed>(?:[A-Za-z0-9_.\-]+/)+{FILE})(?:{TO_LINES}(?P<slashed_lines>{LINES})|{SLASHED_THEN_WORD})?|(?P<plain>{FILE})(?:{TO_LINES}(?P<plain_lines>{LINES})|{PLAIN_THEN_WORD})|(?P<document>{FILE})(?:[:,]? +(?:§|(?i:section) +["“])|,)"#
    ))
    .unwrap()
});
/// After `SRC-n`, optionally a colon: a path (and lines). A file without an extension
/// (`tools/forfeit/bin/exit_forfeit:1-5`, `docker/Dockerfile, l. 11`) is a path when a
/// folder and lines say so.
static AFTER_SOURCE_PATH: LazyLock<Regex> = LazyLock::new(|| {
    const THEN_WORD: &str = lines_then_word!("suffix_lines");
    Regex::new(&format!(
        r"^{AFTER_SOURCE_GAP}(?:(?P<script>(?:[A-Za-z0-9_.\-]+/)+[A-Za-z0-9_\-]+){TO_LINES}(?P<script_lines>{LINES})|(?P<path>{SOURCED_PATH})(?:{TO_LINES}(?P<lines>{LINES})|{THEN_WORD})?)"
    ))
    .unwrap()
});
/// After `SRC-n`, lines of the source itself, in words: `, ll. 278–279`, `: lines 3-9`.
static AFTER_SOURCE_LINES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(r"^{AFTER_SOURCE_GAP}(?:{LINE_WORDS} |ll?\. ?|Z\. ?|стр\. ?|第 ?)(?P<lines>{LINES})\b"))
        .unwrap()
});
/// A further path of a list after `SRC-n a.py`: `, b.py`, `; c.py:3-4`, `and d.py`,
/// also after a parenthesis on the one before (`a.py (run_job), b.py`).
static NEXT_LISTED_PATH: LazyLock<Regex> = LazyLock::new(|| {
    const THEN_WORD: &str = lines_then_word!("suffix_lines");
    Regex::new(&format!(
        r"^(?: ?\([^()]{{0,80}}\))?(?:[,;]|,? and|,? or) +(?P<path>{SOURCED_PATH})(?:{TO_LINES}(?P<lines>{LINES})|{THEN_WORD})?"
    ))
    .unwrap()
});
/// After `SRC-n` (or its path): a section of the document, `§"Known Limits"`,
/// `, § “Known Limits”`, `§4.2`, `, section "Key Features"`, `Abschnitt „News“`, `section « FAQ »`, `§「Hello」`,
/// or unquoted words after `§`
/// (`§ Permission Levels`), which [`section_after`] bounds.
static AFTER_SOURCE_SECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"^{AFTER_SOURCE_GAP}(?:§ ?|(?P<word>(?i:section|sect?\.|abschnitt|kapitel|sección|apartado|seção|secção|sezione|bölüm|раздел|глава) +))(?:"(?P<q>[^"]+)"|“(?P<c>[^”]+)”|„(?P<g>[^“”]+)[“”]|« ?(?P<f>[^»]+?) ?»|「(?P<j>[^」]+)」|『(?P<k>[^』]+)』|(?P<n>[0-9][0-9.]*[0-9]|[0-9])\b|(?P<u>[A-Za-z`/\p{{So}}]))"#,
    ))
    .unwrap()
});
/// The longest unquoted section read: a heading, not a sentence.
const MAX_UNQUOTED_SECTION: usize = 100;
/// A further section of a list: `, §5`, `and §"Limits"`.
static NEXT_LISTED_SECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^(?:[,;]|,? and) +§ ?(?:"(?P<q>[^"]+)"|“(?P<c>[^”]+)”|(?P<n>[0-9][0-9.]*[0-9]|[0-9]))"#).unwrap()
});

impl Citations {
    /// The citations of a site whose source IDs match `source_ids` (a regular expression
    /// for the whole ID, `SRC-[0-9]+` by default).
    pub fn new(source_ids: &str) -> Result<Self, regex::Error> {
        let token = Regex::new(&format!(r"\b(?:{source_ids})\b"))?;
        let quote_path = Regex::new(&format!(
            r"^---[ \t]+(?:(?P<src>{source_ids})[ \t]+)?(?P<path>[^\s:]+)(?::(?P<lines>{LINES}))?[ \t]*$"
        ))?;
        Ok(Citations { token, quote_path })
    }

    /// The citation a code span is, when it is one whole citation (`` `src/jobs.rs:12` ``,
    /// `` `SRC-2 docs/x.md` ``): its source is the one it names, else a source written
    /// right before it (`SRC-2 `docs/x.md``), else none (the run's default). Its ranges
    /// are in `code`.
    pub fn in_code(&self, code: &str, before: &str) -> Option<CitationMatch> {
        let trimmed = code.trim();
        if trimmed.is_empty() || trimmed.len() != code.len() {
            return None;
        }
        let mut found = self.find(code);
        if found.len() != 1 || found[0].range != (0..code.len()) || found[0].path.is_none() {
            return None;
        }
        let mut citation = found.remove(0);
        if citation.source_range.is_none() {
            let tail = before.trim_end().trim_end_matches(':').trim_end();
            let named = self.token.find_iter(tail).last().filter(|m| m.end() == tail.len());
            citation.source = named.map(|m| m.as_str().to_string());
        }
        Some(citation)
    }

    /// True when `word` holds a source ID.
    pub fn names_source(&self, word: &str) -> bool {
        self.token.is_match(word)
    }

    /// Reads a paragraph as a quote's path line (`--- plugin/exia_seed/rappel.py`).
    pub fn quote_path(&self, paragraph: &str) -> Option<QuotePath> {
        let caps = self.quote_path.captures(paragraph.trim())?;
        Some(QuotePath {
            source: caps.name("src").map(|m| m.as_str().to_string()),
            path: caps["path"].to_string(),
            lines: caps.name("lines").map(|l| parse_line_ranges(l.as_str())).unwrap_or_default(),
        })
    }

    /// Every citation in `text`, in order. A bare path takes the source last cited with a
    /// path earlier in the same text; paths listed after `SRC-n` share it.
    pub fn find(&self, text: &str) -> Vec<CitationMatch> {
        self.find_with_unread(text).0
    }

    /// False when `text` cannot cite: every citation names a source, or has `path:lines`,
    /// a folder or a section. Most text has none of these, and is not worth the regular
    /// expressions (render asks of every text it links).
    fn may_cite(&self, text: &str) -> bool {
        text.contains([':', '/', '§'])
            || self.token.is_match(text)
            || text.contains("ection \"")
            || text.contains(", \"")
            || text.contains(", “")
            || text.contains(['행', '行', '줄'])
            || mentions_lines(text)
    }

    /// [`Citations::find`], and the source tokens followed by a word that looks like a
    /// path but is not read as one (`SRC-1 src/fractal`: a folder without its trailing
    /// `/`), with the word: what `check --explain` lists.
    #[allow(clippy::type_complexity, reason = "a pair of lists, each named in the doc")]
    pub fn find_with_unread(&self, text: &str) -> (Vec<CitationMatch>, Vec<(Range<usize>, Range<usize>)>) {
        if !self.may_cite(text) {
            return (Vec::new(), Vec::new());
        }
        let mut unread = Vec::new();
        let mut out = Vec::new();
        let mut consumed_to = 0;
        let mut current_source: Option<String> = None;
        let sources: Vec<Range<usize>> = self.token.find_iter(text).map(|m| m.range()).collect();
        let bares: Vec<regex::Captures<'_>> = BARE_CITATION.captures_iter(text).collect();
        let (mut si, mut bi) = (0, 0);
        loop {
            let next_source = sources.get(si).map(|r| r.start);
            let next_bare = bares.get(bi).map(|c| c.get(0).unwrap().start());
            match (next_source, next_bare) {
                (None, None) => break,
                (Some(s), b) if b.is_none_or(|b| s <= b) => {
                    let token = sources[si].clone();
                    si += 1;
                    if token.start < consumed_to {
                        continue;
                    }
                    let (found, end, with_path) = after_source(text, token.clone());
                    if !found.iter().any(|c| c.path.is_some() || c.section.is_some()) {
                        unread.extend(unread_follower(text, token.end).map(|word| (token.clone(), word)));
                    }
                    if with_path {
                        // Only a source cited with a path is inherited by later bare paths:
                        // `SRC-3 §"Known Limits" … (events.py:277-281)` cites SRC-3 and then
                        // a file of the default source.
                        current_source = found[0].source.clone();
                    }
                    out.extend(found);
                    consumed_to = end;
                }
                _ => {
                    let caps = &bares[bi];
                    bi += 1;
                    let whole = caps.get(0).unwrap();
                    if whole.start() < consumed_to
                        || !path_starts_at_boundary(text, whole.start())
                        || !path_ends_at_boundary(text, whole.end())
                    {
                        continue;
                    }
                    if let Some(document) = caps.name("document") {
                        if let Some(cited) = document_section(text, document.range(), current_source.clone()) {
                            consumed_to = cited.range.end;
                            out.push(cited);
                        }
                        continue;
                    }
                    let path = caps.name("slashed").or(caps.name("plain")).expect("one alternative matched");
                    let (lines, line_spans) = caps
                        .name("slashed_lines")
                        .or(caps.name("plain_lines"))
                        .or(caps.name("slashed_suffix"))
                        .or(caps.name("plain_suffix"))
                        .map(|l| line_ranges_at(text, l.range()))
                        .unwrap_or_default();
                    out.push(CitationMatch {
                        range: whole.range(),
                        source_range: None,
                        source: current_source.clone(),
                        path: Some(path.as_str().to_string()),
                        section: None,
                        lines,
                        line_spans,
                    });
                    consumed_to = whole.end();
                }
            }
        }
        (out, unread)
    }
}

/// True when `text` may give a file's lines in words or forges' `L` (`a.py L3-9`, `a.py,
/// lines 3–9`) with no colon or slash anywhere to tell.
fn mentions_lines(text: &str) -> bool {
    static LINES_HINT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(&format!(r"(?:\bL[0-9]|\b{LINE_WORDS}\s+[0-9]|\bll?\.\s?[0-9])")).unwrap());
    LINES_HINT.is_match(text)
}

/// `README.md § "Architecture"`: the section of the file named at `file` of `text`, of
/// `source` (the one a bare path inherits), when a section follows the file's name.
fn document_section(text: &str, file: Range<usize>, source: Option<String>) -> Option<CitationMatch> {
    let opened_by = text[..file.start].chars().next_back();
    let (section, end) =
        section_after(text, file.end, opened_by).or_else(|| quoted_heading_after(text, file.clone()))?;
    Some(CitationMatch {
        range: file.start..end,
        source_range: None,
        source,
        path: Some(text[file].to_string()),
        section: Some(section),
        lines: Vec::new(),
        line_spans: Vec::new(),
    })
}

/// A document's heading quoted after its name and a comma (`README.md, "Chat Mode"`):
/// only for a document (Markdown, reStructuredText, AsciiDoc, text or HTML), where a
/// quoted title after a code file's name is likelier a string of the code.
fn quoted_heading_after(text: &str, file: Range<usize>) -> Option<(String, usize)> {
    static QUOTED: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r#"^, +(?:"(?P<q>[^"\n]{1,100})"|“(?P<c>[^”\n]{1,100})”)"#).unwrap());
    let extension = text[file.clone()].rsplit_once('.')?.1.to_ascii_lowercase();
    if !matches!(extension.as_str(), "md" | "markdown" | "rst" | "adoc" | "txt" | "html") {
        return None;
    }
    let found = QUOTED.captures(&text[file.end..])?;
    let heading = found.name("q").or(found.name("c"))?.as_str().trim();
    Some((heading.to_string(), file.end + found.get(0)?.end()))
}

/// The file and lines a link to a forge's page of a file cites, and the revision it is
/// pinned to: `https://github.com/o/r/blob/<rev>/src/a.py#L10-L20`,
/// `https://gitlab.com/o/r/-/blob/<rev>/src/a.py#L10-20`.
pub fn permalink(url: &str) -> Option<(String, Vec<LineRange>, String)> {
    let rest = url.strip_prefix("https://").or_else(|| url.strip_prefix("http://"))?;
    let (location, fragment) = rest.split_once('#').unwrap_or((rest, ""));
    let parts: Vec<&str> = location.split('/').collect();
    // host, owner, repository, [-], blob, revision, path…
    let blob = parts.iter().position(|p| *p == "blob")?;
    if blob < 3 || parts.len() < blob + 3 {
        return None;
    }
    let revision = parts[blob + 1].to_string();
    let path = parts[blob + 2..].join("/");
    let path = percent_encoding::percent_decode_str(&path).decode_utf8().ok()?.into_owned();
    let lines = fragment.strip_prefix('L').map(|f| parse_line_ranges(&f.replace("-L", "-"))).unwrap_or_default();
    Some((path, lines, revision))
}

/// The word after a source token ending at `after` (and a colon), when it looks like a
/// path: it has a `/`.
fn unread_follower(text: &str, after: usize) -> Option<Range<usize>> {
    let rest = &text[after..];
    let skipped = rest.len() - rest.trim_start_matches(':').trim_start_matches([' ', '\t']).len();
    if skipped == 0 {
        return None;
    }
    let start = after + skipped;
    let word: &str = text[start..].split(|c: char| c.is_whitespace() || ",;()[]\"'".contains(c)).next().unwrap_or("");
    let word = word.trim_end_matches(['.', ':']);
    let looks_like_path = word.contains('/') && word.chars().any(char::is_alphanumeric) && !word.contains("//");
    looks_like_path.then(|| start..start + word.len())
}

/// The citations made by the source token at `token`: its paths or sections, or the
/// source alone. Returns them, where they end, and whether they cite paths.
fn after_source(text: &str, token: Range<usize>) -> (Vec<CitationMatch>, usize, bool) {
    let source = text[token.clone()].to_string();
    let rest = &text[token.end..];
    let cite = |range: Range<usize>, first: bool| CitationMatch {
        range,
        source_range: first.then(|| token.clone()),
        source: Some(source.clone()),
        path: None,
        section: None,
        lines: Vec::new(),
        line_spans: Vec::new(),
    };
    let mut found = Vec::new();
    let section_of =
        |c: &regex::Captures<'_>| c.name("q").or(c.name("c")).or(c.name("n")).unwrap().as_str().to_string();
    let opened_by = text[..token.start].chars().next_back();
    if let Some((section, mut end)) = section_after(text, token.end, opened_by) {
        // `SRC-2, section "Events", line 103`: the section, and lines of the document.
        let (lines, line_spans) = match AFTER_SOURCE_LINES.captures(&text[end..]) {
            Some(c) => {
                let lines = c.name("lines").unwrap();
                let found = line_ranges_at(text, end + lines.start()..end + lines.end());
                end += c.get(0).unwrap().end();
                found
            }
            None => (Vec::new(), Vec::new()),
        };
        found.push(CitationMatch { section: Some(section), lines, line_spans, ..cite(token.start..end, true) });
        while let Some(c) = NEXT_LISTED_SECTION.captures(&text[end..]) {
            let stop = end + c.get(0).unwrap().end();
            let start = end + text[end..stop].find('§').unwrap_or(0);
            found.push(CitationMatch { section: Some(section_of(&c)), ..cite(start..stop, false) });
            end = stop;
        }
        return (found, end, false);
    }
    // `SRC-3, ll. 278–279`: lines of a source that is one document.
    if let Some(c) = AFTER_SOURCE_LINES.captures(rest) {
        let lines = c.name("lines").unwrap();
        let (lines, line_spans) = line_ranges_at(text, token.end + lines.start()..token.end + lines.end());
        let end = token.end + c.get(0).unwrap().end();
        return (vec![CitationMatch { lines, line_spans, ..cite(token.start..end, true) }], end, false);
    }
    let Some(c) = AFTER_SOURCE_PATH.captures(rest).filter(|c| path_ends_at_boundary(rest, c.get(0).unwrap().end()))
    else {
        return (vec![cite(token.clone(), true)], token.end, false);
    };
    let mut end = token.end + c.get(0).unwrap().end();
    let (lines, line_spans) = path_lines(text, &c, token.end);
    let path = c.name("path").or(c.name("script")).expect("one alternative matched").as_str().to_string();
    // `SRC-3, docs/agent.md, § "Iterating"`: a section of the file cited.
    let section = section_after(text, end, opened_by).map(|(section, stop)| {
        end = stop;
        section
    });
    found.push(CitationMatch { path: Some(path), section, lines, line_spans, ..cite(token.start..end, true) });
    // `SRC-1 a.py, b.py:3-4; c.py` — the listed paths share the source.
    while let Some(c) =
        NEXT_LISTED_PATH.captures(&text[end..]).filter(|c| path_ends_at_boundary(&text[end..], c.get(0).unwrap().end()))
    {
        let path = c.name("path").unwrap();
        let start = end + path.start();
        let stop = end + c.get(0).unwrap().end();
        let (lines, line_spans) = path_lines(text, &c, end);
        found.push(CitationMatch {
            path: Some(path.as_str().to_string()),
            lines,
            line_spans,
            ..cite(start..stop, false)
        });
        end = stop;
    }
    (found, end, true)
}

/// The lines a path's match `c` (found at `offset` of `text`) gives, written in any of its
/// forms, each with its byte range.
fn path_lines(text: &str, c: &regex::Captures<'_>, offset: usize) -> (Vec<LineRange>, Vec<Range<usize>>) {
    c.name("lines")
        .or(c.name("script_lines"))
        .or(c.name("suffix_lines"))
        .map(|l| line_ranges_at(text, offset + l.start()..offset + l.end()))
        .unwrap_or_default()
}

/// The section cited at `at` of `text` (`§"Known Limits"`, `, § Permission Levels`), and
/// where it ends. Unquoted words run to the bracket that closes the citation
/// (`[SRC-6 § Permission Levels]`), or, with none, to the end of their clause (a
/// footnote's `SRC-3, § Usage.`); anything longer is no heading.
fn section_after(text: &str, at: usize, opened_by: Option<char>) -> Option<(String, usize)> {
    let c = AFTER_SOURCE_SECTION.captures(&text[at..])?;
    let whole = c.get(0).unwrap();
    let closing =
        opened_by.and_then(|open| [('[', ']'), ('(', ')'), ('⟨', '⟩'), ('〈', '〉')].into_iter().find(|p| p.0 == open));
    // `SRC-2, section headings are …` is a sentence: after the word, a section is quoted
    // or numbered.
    if c.name("word").is_some() && c.name("u").is_some() {
        return None;
    }
    let Some(first) = c.name("u") else {
        let section = ["q", "c", "g", "f", "j", "k", "n"].iter().find_map(|group| c.name(group)).unwrap();
        // `(SRC-3 § 7. ChatAdapter falls back …)`: a numbered heading whole, to its bracket.
        if let (Some(number), Some((_, close))) = (c.name("n"), closing) {
            let rest = &text[at + number.end()..];
            let titled =
                rest.strip_prefix(". ").or(rest.strip_prefix(' ')).is_some_and(|r| r.starts_with(char::is_alphabetic));
            let heading = rest.find(close).map(|end| &text[at + number.start()..at + number.end() + end]);
            if let Some(heading) =
                heading.filter(|h| titled && h.len() <= MAX_UNQUOTED_SECTION && !h.contains(['\n', '§']))
            {
                return Some((heading.trim_end().to_string(), at + number.start() + heading.trim_end().len()));
            }
        }
        return Some((section.as_str().to_string(), at + whole.end()));
    };
    let start = at + first.start();
    let rest = &text[start..];
    let words = match closing {
        Some((_, close)) => &rest[..rest.find(close)?],
        // Unbracketed, a heading ends with its clause.
        None => &rest[..rest.find([';', ',', '.', '!', '?', ')', ']', '⟩']).unwrap_or(rest.len())],
    };
    let words = words.trim_end();
    if words.is_empty() || words.len() > MAX_UNQUOTED_SECTION || words.contains(['\n', '§']) {
        return None;
    }
    // `ReAct: trajectory-based execution › How history is stored` is a trail down the
    // document; the heading cited is its last step.
    let heading = words.rsplit(['›', '»']).next().unwrap_or(words).trim();
    Some((heading.to_string(), start + words.len()))
}

fn path_starts_at_boundary(text: &str, start: usize) -> bool {
    text[..start].chars().next_back().is_none_or(|c| !(is_word_char(c) || c == '/' || c == '.' || c == '-'))
}

/// A path ends where a word does: `and/` in `and/or` is not a folder.
fn path_ends_at_boundary(text: &str, end: usize) -> bool {
    text[end..].chars().next().is_none_or(|c| !(is_word_char(c) || c == '/'))
}

/// The line ranges written at `range` of `text` (`188, 200, 278-279`), each with its own
/// byte range.
fn line_ranges_at(text: &str, range: Range<usize>) -> (Vec<LineRange>, Vec<Range<usize>>) {
    let mut lines = Vec::new();
    let mut spans = Vec::new();
    let mut at = range.start;
    for part in text[range.clone()].split(',') {
        let lead = part.len() - part.trim_start().len();
        let trimmed = part.trim();
        let start = at + lead;
        if let Some(line) = parse_line_ranges(trimmed).into_iter().next() {
            lines.push(line);
            spans.push(start..start + trimmed.len());
        }
        at += part.len() + 1;
    }
    (lines, spans)
}

/// Parses `188, 200, 278-279` into line ranges. A reversed range is kept as written
/// (`parse` reports it).
pub fn parse_line_ranges(text: &str) -> Vec<LineRange> {
    let number = |n: &str| n.trim().trim_start_matches('L').parse().ok();
    text.split(',')
        .filter_map(|part| {
            let part = part.trim();
            let (a, b) = part.split_once(['-', '–', '—', '〜', '～', '~']).unwrap_or((part, part));
            Some(LineRange { start: number(a)?, end: number(b)? })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forge_permalinks_cite_their_file_and_lines() {
        let read =
            |url: &str| permalink(url).map(|(p, l, r)| (p, l.iter().map(|r| (r.start, r.end)).collect::<Vec<_>>(), r));
        assert_eq!(
            read("https://github.com/o/r/blob/5dc9490/aider/models.py#L30"),
            Some(("aider/models.py".into(), vec![(30, 30)], "5dc9490".into()))
        );
        assert_eq!(
            read("https://github.com/o/r/blob/abc/a/b%20c.py#L10-L20"),
            Some(("a/b c.py".into(), vec![(10, 20)], "abc".into()))
        );
        assert_eq!(read("https://gitlab.com/o/r/-/blob/abc/x.rs#L3-9").map(|r| r.1), Some(vec![(3, 9)]));
        assert_eq!(read("https://github.com/o/r/blob/abc/README.md").map(|r| r.1), Some(vec![]));
        assert_eq!(read("https://github.com/o/r/pull/3"), None);
        assert_eq!(read("https://example.org/blob"), None);
    }

    #[test]
    fn lines_joined_by_words_and_sources_by_a_comma() {
        type Found = (Option<String>, Option<String>, Vec<(u32, u32)>);
        let found = |text: &str| -> Vec<Found> {
            Citations::default()
                .find(text)
                .into_iter()
                .map(|c| (c.source, c.path, c.lines.iter().map(|r| (r.start, r.end)).collect()))
                .collect()
        };
        let one =
            |s: Option<&str>, p: &str, a: u32, b: u32| vec![(s.map(str::to_string), Some(p.to_string()), vec![(a, b)])];
        assert_eq!(found("[SRC-2, swarm/core.py, ll. 214–221]"), one(Some("SRC-2"), "swarm/core.py", 214, 221));
        assert_eq!(
            found("[SRC-2: src/smolagents/agents.py, L1535]"),
            one(Some("SRC-2"), "src/smolagents/agents.py", 1535, 1535)
        );
        assert_eq!(found("(SRC-1: llm/models.py, lines 300–340)"), one(Some("SRC-1"), "llm/models.py", 300, 340));
        assert_eq!(found("the floor [SRC-1, setup.cfg, l. 16];"), one(Some("SRC-1"), "setup.cfg", 16, 16));
        assert_eq!(found("see llm/cli.py line 7."), one(None, "llm/cli.py", 7, 7));
        assert_eq!(
            found("[SRC-1 tools/forfeit/bin/exit_forfeit:1-5]"),
            one(Some("SRC-1"), "tools/forfeit/bin/exit_forfeit", 1, 5),
            "a script without an extension, with its folder and lines"
        );
        assert_eq!(found("SRC-1 and/or"), vec![(Some("SRC-1".to_string()), None, vec![])]);
        assert_eq!(found("Node.js, Lambda"), vec![], "a capital L is no line");
    }

    #[test]
    fn middle_dots_angle_brackets_and_other_languages_words_for_lines() {
        let read = |text: &str| {
            Citations::default()
                .find(text)
                .into_iter()
                .map(|c| (c.source, c.path, c.section, c.lines.iter().map(|r| (r.start, r.end)).collect::<Vec<_>>()))
                .collect::<Vec<_>>()
        };
        let s = |v: &str| Some(v.to_string());
        assert_eq!(
            read("offset ⟨SRC-1 · chatdev/phase.py · L320–322⟩ then"),
            [(s("SRC-1"), s("chatdev/phase.py"), None, vec![(320, 322)])]
        );
        assert_eq!(
            read("the layout ⟨SRC-2 · §3. Check your software⟩"),
            [(s("SRC-2"), None, s("3. Check your software"), vec![])]
        );
        assert_eq!(read("⟨SRC-2 · §Co-Reasoning⟩"), [(s("SRC-2"), None, s("Co-Reasoning"), vec![])]);
        assert_eq!(
            read("[SRC-2 : langroid/agent/chat_agent.py, lignes 1597-1605]"),
            [(s("SRC-2"), s("langroid/agent/chat_agent.py"), None, vec![(1597, 1605)])]
        );
        assert_eq!(read("src/a.py, Zeilen 3–9"), [(None, s("src/a.py"), None, vec![(3, 9)])]);
        assert_eq!(
            read("〔SRC-1，src/agent/_react_agent.py，L243–268〕（SRC-3，src/memory/_m.py，第 78–81 行）"),
            [
                (s("SRC-1"), s("src/agent/_react_agent.py"), None, vec![(243, 268)]),
                (s("SRC-3"), s("src/memory/_m.py"), None, vec![(78, 81)])
            ]
        );
        assert_eq!(
            read("[SRC-1: devika.py 77–103행] [SRC-1: src/a.py 289행]의 (src/b.py, 39〜45行)"),
            [
                (s("SRC-1"), s("devika.py"), None, vec![(77, 103)]),
                (s("SRC-1"), s("src/a.py"), None, vec![(289, 289)]),
                (s("SRC-1"), s("src/b.py"), None, vec![(39, 45)])
            ]
        );
        assert_eq!(read("run.py 12~20줄"), [(None, s("run.py"), None, vec![(12, 20)])]);
        assert_eq!(
            read("it swaps the queue (📎 babyagi.py L596-599)."),
            [(None, s("babyagi.py"), None, vec![(596, 599)])]
        );
        assert_eq!(read("as the run shows (a.py, lines 3-9)."), [(None, s("a.py"), None, vec![(3, 9)])]);
        assert_eq!(read("set in (`.env.example L35-38`)."), [(None, s(".env.example"), None, vec![(35, 38)])]);
        assert_eq!(read("구현은 3행에 있다"), [], "lines without a path cite nothing");
        let sections: Vec<Option<String>> =
            Citations::default().find("〔SRC-2，§「👋 Hello AgentScope!」〕").into_iter().map(|c| c.section).collect();
        assert_eq!(sections, [Some("👋 Hello AgentScope!".to_string())]);
        assert_eq!(
            read("[SRC-1, griptape/structures/agent.py, at ll. 65-69] and [SRC-1, a/b.py, at l. 35]"),
            [
                (s("SRC-1"), s("griptape/structures/agent.py"), None, vec![(65, 69)]),
                (s("SRC-1"), s("a/b.py"), None, vec![(35, 35)])
            ]
        );
        assert_eq!(
            read("[SRC-1 · qwen_agent/agent.py · Z. 212–237]"),
            [(s("SRC-1"), s("qwen_agent/agent.py"), None, vec![(212, 237)])]
        );
        assert_eq!(read("[SRC-2 · Abschnitt „FAQ › Tools?“]"), [(s("SRC-2"), None, s("FAQ › Tools?"), vec![])]);
        assert_eq!(read("(SRC-2, section « Limites »)"), [(s("SRC-2"), None, s("Limites"), vec![])]);
        assert_eq!(read("(SRC-3 · §💡 Features)"), [(s("SRC-3"), None, s("💡 Features"), vec![])]);
    }

    #[test]
    fn citation_with_source_and_lines() {
        let c = Citations::default().find("render_session_summary (SRC-1 session.py:368-390) main LM");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].source.as_deref(), Some("SRC-1"));
        assert_eq!(c[0].path.as_deref(), Some("session.py"));
        assert_eq!(c[0].lines, vec![LineRange { start: 368, end: 390 }]);
    }

    #[test]
    fn bare_citation_with_several_ranges_inherits_the_source() {
        let text = "SRC-1 tui/app.py:59-70; signature.py:97-106 and session.py:188, 200, 278-279.";
        let c = Citations::default().find(text);
        let paths: Vec<_> =
            c.iter().map(|c| (c.source.as_deref(), c.path.as_deref().unwrap(), c.lines.len())).collect();
        assert_eq!(
            paths,
            [(Some("SRC-1"), "tui/app.py", 1), (Some("SRC-1"), "signature.py", 1), (Some("SRC-1"), "session.py", 3)]
        );
        assert_eq!(&text[c[2].range.clone()], "session.py:188, 200, 278-279");
    }

    #[test]
    fn bare_citation_without_source_has_none() {
        let c = Citations::default().find("trimmed on every save (runtime.py:222-223, 263-322).");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].source, None);
        assert_eq!(c[0].lines, vec![LineRange { start: 222, end: 223 }, LineRange { start: 263, end: 322 }]);
    }

    #[test]
    fn source_with_path_list_and_section() {
        let c = Citations::default().find("SRC-1 plugin/exia_seed/pages.py, plugin/exia_seed/registre.py. SRC-3 §\"Known Limits\" says so; SRC-8 was not obtained.");
        assert_eq!(c.len(), 4);
        assert_eq!(c[1].path.as_deref(), Some("plugin/exia_seed/registre.py"));
        assert_eq!(c[1].source.as_deref(), Some("SRC-1"));
        assert_eq!(c[2].section.as_deref(), Some("Known Limits"));
        assert_eq!((c[3].source.as_deref(), c[3].path.as_deref()), (Some("SRC-8"), None));
    }

    #[test]
    fn section_and_bare_source_mentions_are_not_inherited() {
        let c = Citations::default().find(
            "SRC-3 §\"Known Limits\" states it, and hooks return [] (events.py:277-281); see (SRC-7) runtime.py:262.",
        );
        let bare: Vec<_> = c.iter().filter(|c| c.source_range.is_none()).map(|c| c.source.clone()).collect();
        assert_eq!(bare, [None, None]);
    }

    #[test]
    fn a_colon_after_the_source_then_a_list_of_paths() {
        let text = "SRC-1: src/jobs.rs, src/sandbox/jail.rs; src/sandbox/lima.rs and src/sandbox/ (the jail).";
        let c = Citations::default().find(text);
        let paths: Vec<_> = c.iter().map(|c| (c.source.as_deref(), c.path.as_deref().unwrap())).collect();
        assert_eq!(
            paths,
            [
                (Some("SRC-1"), "src/jobs.rs"),
                (Some("SRC-1"), "src/sandbox/jail.rs"),
                (Some("SRC-1"), "src/sandbox/lima.rs"),
                (Some("SRC-1"), "src/sandbox/")
            ]
        );
        assert_eq!(c[0].source_range, Some(0..5));
        assert!(c[1..].iter().all(|c| c.source_range.is_none()));
    }

    #[test]
    fn each_line_range_has_its_own_span() {
        let text = "see session.py:188, 200, 278-279.";
        let c = &Citations::default().find(text)[0];
        let spans: Vec<&str> = c.line_spans.iter().map(|r| &text[r.clone()]).collect();
        assert_eq!(spans, ["188", "200", "278-279"]);
        assert_eq!(c.lines.len(), 3);
    }

    #[test]
    fn a_bare_path_needs_lines_or_a_folder() {
        let paths = |text: &str| -> Vec<String> {
            Citations::default().find(text).into_iter().filter_map(|c| c.path).collect()
        };
        assert_eq!(
            paths("read in plugin/exia_seed/pages.py and Node.js, not session.py"),
            ["plugin/exia_seed/pages.py"]
        );
        assert!(paths("and/or, N/A., https://example.org/docs/a.md, TCP/IP").is_empty());
        assert_eq!(paths("SRC-1 src/fractal/** host layer"), ["src/fractal/**"]);
        assert!(paths("SRC-1 and/or SRC-2").is_empty());
    }

    #[test]
    fn section_lists_after_a_source() {
        let c = Citations::default().find("SRC-3 §2, §5.1 and §\"Known Limits\" say so");
        let sections: Vec<_> = c.iter().map(|c| (c.source.as_deref(), c.section.as_deref().unwrap())).collect();
        assert_eq!(sections, [(Some("SRC-3"), "2"), (Some("SRC-3"), "5.1"), (Some("SRC-3"), "Known Limits")]);
    }

    #[test]
    fn sections_quoted_or_bounded_by_their_bracket() {
        let sections = |text: &str| -> Vec<(Option<String>, Option<String>, Option<String>)> {
            Citations::default().find(text).into_iter().map(|c| (c.source, c.path, c.section)).collect()
        };
        let one = |s: &str, p: Option<&str>, section: &str| {
            vec![(Some(s.to_string()), p.map(str::to_string), Some(section.to_string()))]
        };
        assert_eq!(
            Citations::default()
                .find("README.md § \"Architecture\" lists it; Node.js does not.")
                .into_iter()
                .map(|c| (c.path, c.section))
                .collect::<Vec<_>>(),
            [(Some("README.md".to_string()), Some("Architecture".to_string()))]
        );
        let paths_and_sections = |text: &str| -> Vec<(Option<String>, Option<String>)> {
            Citations::default().find(text).into_iter().map(|c| (c.path, c.section)).collect()
        };
        assert_eq!(
            paths_and_sections("(README.md, \"Chat Mode\")"),
            [(Some("README.md".to_string()), Some("Chat Mode".to_string()))]
        );
        assert!(paths_and_sections("config.py, \"debug\" is the key").is_empty(), "a code file's string");
        assert_eq!(sections("as SRC-2, section \"Key Features\" says"), one("SRC-2", None, "Key Features"));
        assert_eq!(sections("SRC-3: CHANGELOG.md, section \"1.0.0\"."), one("SRC-3", Some("CHANGELOG.md"), "1.0.0"));
        assert_eq!(sections("SRC-2, section headings are long"), [(Some("SRC-2".to_string()), None, None)]);
        assert_eq!(
            sections("says so (SRC-2 § ReAct: trajectory-based execution › How history is stored)."),
            one("SRC-2", None, "How history is stored")
        );
        assert_eq!(
            sections("says so (SRC-3 § 7. ChatAdapter falls back on parse error). The"),
            one("SRC-3", None, "7. ChatAdapter falls back on parse error")
        );
        assert_eq!(
            sections("modes work alongside [SRC-6 § Permission Levels]."),
            one("SRC-6", None, "Permission Levels")
        );
        assert_eq!(sections("(SRC-4, §\"How does it work?\")"), one("SRC-4", None, "How does it work?"));
        assert_eq!(
            sections("out of scope [SRC-3: § Threat model & trust boundaries]. The tutorial"),
            one("SRC-3", None, "Threat model & trust boundaries")
        );
        assert_eq!(sections("SRC-3, § Usage."), one("SRC-3", None, "Usage"), "a footnote's whole text");
        let lines: Vec<_> = Citations::default()
            .find("SRC-3, ll. 278–279.")
            .into_iter()
            .map(|c| (c.source, c.path, c.lines.iter().map(|r| (r.start, r.end)).collect::<Vec<_>>()))
            .collect();
        assert_eq!(lines, [(Some("SRC-3".to_string()), None, vec![(278, 279)])], "lines of the source's own document");
        assert_eq!(
            sections("SRC-3, docs/agent.md, § \"Iterating Over an Agent's Graph\" — see"),
            one("SRC-3", Some("docs/agent.md"), "Iterating Over an Agent's Graph")
        );
        assert_eq!(
            sections("SRC-2 § Notes; SRC-3.")[0],
            one("SRC-2", None, "Notes")[0],
            "a heading ends with its clause"
        );
    }

    #[test]
    fn dotfiles_files_without_extension_sections_of_routes_and_russian_words() {
        type Read = (Option<String>, Option<String>, Vec<(u32, u32)>);
        let read = |text: &str| -> Vec<Read> {
            Citations::default()
                .find(text)
                .into_iter()
                .map(|c| (c.path, c.section, c.lines.iter().map(|l| (l.start, l.end)).collect()))
                .collect()
        };
        let path = |p: &str, lines: Vec<(u32, u32)>| vec![(Some(p.to_string()), None, lines)];
        assert_eq!(read("[SRC-1: .gitignore, l. 28-29]"), path(".gitignore", vec![(28, 29)]));
        assert_eq!(
            read("[SRC-1: dockerfiles/Node/Dockerfile, l. 11]"),
            path("dockerfiles/Node/Dockerfile", vec![(11, 11)])
        );
        assert_eq!(read("SRC-1, src/sessions.py, стр. 249–260"), path("src/sessions.py", vec![(249, 260)]));
        let section = |s: &str| vec![(None, Some(s.to_string()), Vec::new())];
        assert_eq!(read("[SRC-4, § /close_session]"), section("/close_session"));
        assert_eq!(read("SRC-2, раздел «Event Driven Communication»"), section("Event Driven Communication"));
        assert_eq!(read("(SRC-2, seção «Overview»)"), section("Overview"));
        assert_eq!(
            read("SRC-2, раздел «Events», стр. 103"),
            vec![(None, Some("Events".to_string()), vec![(103, 103)])],
            "a section, then lines of the document"
        );
    }

    #[test]
    fn line_ranges_as_exports_and_forges_write_them() {
        let c = Citations::default().find("SRC-1 a.py:368–390, src/b.rs#L10-L20 and c.rs (run_job), d.rs:L7");
        let found: Vec<(&str, Vec<LineRange>)> =
            c.iter().map(|c| (c.path.as_deref().unwrap(), c.lines.clone())).collect();
        let r = |start, end| LineRange { start, end };
        assert_eq!(
            found,
            [("a.py", vec![r(368, 390)]), ("src/b.rs", vec![r(10, 20)]), ("c.rs", vec![]), ("d.rs", vec![r(7, 7)])]
        );
    }

    #[test]
    fn a_code_span_that_is_a_whole_citation() {
        let c = Citations::default();
        let cited =
            |code: &str, before: &str| c.in_code(code, before).map(|m| (m.source, m.path.unwrap(), m.lines.len()));
        assert_eq!(cited("src/jobs.rs:12-20", "see "), Some((None, "src/jobs.rs".into(), 1)));
        assert_eq!(cited("docs/x.md", "as SRC-2: "), Some((Some("SRC-2".into()), "docs/x.md".into(), 0)));
        assert_eq!(cited("SRC-3 a.py:4", ""), Some((Some("SRC-3".into()), "a.py".into(), 1)));
        assert_eq!(cited("session.py", ""), None, "a file name alone, as `foo.bar` could be code");
        assert_eq!(cited("x = a/b.rs", ""), None, "code that holds a path is not one");
    }

    #[test]
    fn words_with_dots_are_not_citations() {
        assert!(Citations::default()
            .find("predict_rlm.RuntimeHook and step.usage.main.input_tokens at 12:30")
            .is_empty());
    }
}
