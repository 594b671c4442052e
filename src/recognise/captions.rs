//! Where a quoted code block says what it quotes, besides the `--- path` line: a caption
//! before it (`*From llm/cli.py, lines 414–421 (SRC-1):*`, `Exhibit 3.1-A — src/run.py,
//! lines 974-982:`), a caption under it (`*Listing 2. src/x.py, lines 372–380 (SRC-2).*`,
//! `*Source: SRC-1, llm/models.py:L1641-L1645*`), or its info string
//! (```` ```rust path=src/agent.rs lines=397-405 ````).

use std::sync::LazyLock;

use regex::Regex;

use super::citations::LINE_WORDS;
use super::words::CAPTION_WORDS;
use super::{parse_line_ranges, QuotePath};
use crate::model::LineRange;

/// The longest caption, in characters: a paragraph longer than this is prose that cites
/// a file, not the label of the block beside it.
const MAX_CAPTION_CHARS: usize = 320;

/// A file path with lines, in the forms analysts write: `path:10-12`, `path#L10-L12`,
/// `path, lines 10–12`, `path L10-12`, `path (lines 10 to 12)`, `path, line 7`.
/// (`path · lines 10–12` and `path, lignes 10-12` too: a middle dot for a comma, the
/// word for lines in another language.)
static PATH_WITH_LINES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?x)
        (?P<path>{PATH})
        `?\)?
        (?:
            :L?(?P<a>[0-9]+(?:\s*[-–—]\s*L?[0-9]+)?)
          | \#L(?P<b>[0-9]+(?:-L?[0-9]+)?)
          | \s*[,;·•，、；]?\s*[(（]?\s*(?:{LINE_WORDS}|ll?\.|Z\.|стр\.|L|第)\s*(?P<c>[0-9]+(?:\s*(?:[-–—〜～]|to)\s*L?[0-9]+)?(?:\s*(?:,|and)\s*[0-9]+(?:\s*[-–—]\s*[0-9]+)?)*)
          | ,?\s+\(?(?P<d>[0-9]+\s*[-–—]\s*[0-9]+)\b
          | \s*[,，、]?\s*(?P<e>[0-9]+(?:\s*[-–—〜～~]\s*[0-9]+)?)\s*(?:行|행|줄)
        )"
    ))
    .unwrap()
});

/// A file's path: folders, then a name with an extension, or a dotfile.
const PATH: &str =
    r"(?:[A-Za-z0-9_.@+-]+/)*(?:[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]*\.[A-Za-z0-9]{1,8}|\.[A-Za-z][A-Za-z0-9_-]*)";

/// Lines, then the file they are of: `lines 2597-2607 of `agixt/DB.py``, `l. 12 in a.py`.
static LINES_OF_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?:{LINE_WORDS}|ll?\.)\s+(?P<f>[0-9]+(?:\s*[-–—]\s*[0-9]+)?)\s+(?:of|in|from)\s+`?(?P<path>{PATH})`?"
    ))
    .unwrap()
});

static SOURCE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bSRC-[0-9]+\b").unwrap());

/// The path and lines a caption paragraph attributes to a code block, when it names
/// exactly one file with lines and is short enough to be a caption. `source_named` finds
/// the source (`SRC-2`) it names, if any.
pub fn caption_path(text: &str, source_named: impl Fn(&str) -> Option<String>) -> Option<QuotePath> {
    if text.chars().count() > MAX_CAPTION_CHARS {
        return None;
    }
    let mut places: Vec<regex::Captures<'_>> = PATH_WITH_LINES.captures_iter(text).collect();
    for caps in LINES_OF_PATH.captures_iter(text) {
        let range = caps.get(0).unwrap().range();
        if !places.iter().any(|p| p.get(0).is_some_and(|m| m.start() < range.end && range.start < m.end())) {
            places.push(caps);
        }
    }
    places.sort_by_key(|caps| caps.get(0).map(|m| m.start()));
    let path = places.first()?["path"].to_string();
    if places.iter().any(|other| other["path"] != *path) {
        return None;
    }
    // A caption that ends with a colon introduces what follows it: of its places, the
    // last is the block's (`… (a.py, lines 3-9), and then, as lines 20-24 of a.py show:`).
    let caps = if text.trim_end().ends_with(':') { places.last()? } else { places.first()? };
    let written = ["a", "b", "c", "d", "e", "f"].into_iter().find_map(|group| caps.name(group))?.as_str();
    let lines = lines_of(written);
    if lines.is_empty() {
        return None;
    }
    Some(QuotePath { source: source_named(text), path, lines })
}

/// `10–12`, `L10-L12`, `10 to 12`, `3, 5 and 7-9` as line ranges.
fn lines_of(written: &str) -> Vec<LineRange> {
    let normal = written
        .replace(['–', '—', '〜', '～', '~'], "-")
        .replace(" to ", "-")
        .replace(" and ", ",")
        .replace(['L', ' '], "");
    parse_line_ranges(&normal)
}

/// The source a caption names (`SRC-2`), by the site's default form.
pub fn default_source(text: &str) -> Option<String> {
    SOURCE.find(text).map(|m| m.as_str().to_string())
}

/// True when a paragraph before a code block reads as its caption: it ends with a colon
/// (`From llm/cli.py, lines 414–421:`), it is set apart as one (wholly emphasised,
/// `*Listing 1.* …`, or opening with a caption's word), or it is a short label line.
pub fn reads_as_caption_before(markdown: &str, text: &str) -> bool {
    let bare = text.trim().trim_end_matches(['*', '_', ' ']);
    bare.ends_with(':') || set_apart(markdown, text) || label_line(markdown, text) || location_line(text)
}

/// A line that is only a place: a path with lines and at most a source
/// (`gpt_researcher/skills/researcher.py:851-862`, `(a.py, lines 31–34)`,
/// `— a.py, L134–141`), nothing of a sentence around it.
fn location_line(text: &str) -> bool {
    let text = text.trim();
    let found = PATH_WITH_LINES.find(text).or_else(|| LINES_OF_PATH.find(text));
    let Some(found) = found.filter(|_| text.chars().count() <= MAX_LABEL_LINE_CHARS) else {
        return false;
    };
    let rest = format!("{} {}", &text[..found.start()], &text[found.end()..]);
    let rest = SOURCE.replace_all(&rest, "");
    !rest.chars().any(char::is_alphanumeric)
}

/// A line that only labels what follows (`**DLG-01** `crew.py`, lines 26–36`): it opens
/// with bold words, is short, and is no sentence (it ends with no stop). Whether it names
/// a file with lines is for [`caption_path`].
fn label_line(markdown: &str, text: &str) -> bool {
    let (text, markdown) = (text.trim(), markdown.trim_start());
    (markdown.starts_with("**") || markdown.starts_with("__"))
        && text.chars().count() <= MAX_LABEL_LINE_CHARS
        && !text.ends_with(['.', '!', '?'])
        && !text.contains(". ")
}

/// The longest label line before a code block, in characters.
const MAX_LABEL_LINE_CHARS: usize = 160;

/// True when a paragraph after a code block reads as its caption: set apart as one, and
/// not ending with a colon (`Evidence E3 — a.py, L4-9:` introduces the next block).
pub fn reads_as_caption_after(markdown: &str, text: &str) -> bool {
    !text.trim().trim_end_matches(['*', '_', ' ']).ends_with(':') && (set_apart(markdown, text) || aside_place(text))
}

/// True when a paragraph is only a place (`` `a/b.py`, lines 35–42 (SRC-2) ``): right
/// under a block it captions that block; set apart from it, it may introduce the next.
pub fn is_place_line(text: &str) -> bool {
    location_line(text)
}

/// A place in brackets on a line of its own (`(a/b.py, lines 35–42)`): under a block, it
/// says where the block is from (a bare place there introduces the next block).
fn aside_place(text: &str) -> bool {
    let text = text.trim().trim_end_matches('.');
    let bracketed = (text.starts_with('(') && text.ends_with(')')) || (text.starts_with('[') && text.ends_with(']'));
    bracketed && location_line(text)
}

/// A paragraph that is only a link to a forge's page of a file at lines, perhaps after
/// a mark (`🔗 https://github.com/o/r/blob/<rev>/a.py#L529-L537`): the place of the block
/// below it, as people paste a link to the lines above the lines.
pub fn permalink_caption(text: &str) -> Option<QuotePath> {
    let url = text.trim().trim_start_matches(|c: char| !c.is_alphanumeric()).trim_end_matches([':', '.']);
    if url.contains(char::is_whitespace) {
        return None;
    }
    let (path, lines, _) = super::permalink(url)?;
    (!lines.is_empty()).then_some(QuotePath { source: None, path, lines })
}

/// True for AsciiDoc's block title (`.Queue read helper (a.py, lines 7-8)`): the caption
/// of the block below it, never of one above.
pub fn is_block_title(markdown: &str) -> bool {
    markdown.trim_start().strip_prefix('.').is_some_and(|rest| rest.starts_with(char::is_alphanumeric))
}

/// True when a paragraph is set apart as a caption: wholly emphasised, `*Listing 1.* …`,
/// opening with a caption's word (`Source:`, `Listing`, `Exhibit` …), or a block title
/// (`.Queue read helper (a.py, lines 7-8)`).
pub fn set_apart(markdown: &str, text: &str) -> bool {
    let markdown = markdown.trim();
    let emphasised = markdown.starts_with(['*', '_']) && markdown.trim_end_matches('.').ends_with(['*', '_', ')']);
    let first = text.trim().split(|c: char| !c.is_alphabetic()).next().unwrap_or("").to_lowercase();
    emphasised || is_block_title(markdown) || CAPTION_WORDS.contains(&first.as_str())
}

/// The path and lines a code block's own first line names, when it is a comment that is
/// only a place (`# SRC-2 swarms/structs/agent.py L4096–4105`, `// a.ts:3-9`), and where
/// the code after it starts.
pub fn first_line_path(code: &str) -> Option<(QuotePath, usize)> {
    let end = code.find('\n').map_or(code.len(), |i| i + 1);
    let line = code[..end].trim();
    let comment = ["#", "//", "--", ";", "/*", "<!--", "%"].iter().find(|m| line.starts_with(*m))?;
    let place = line[comment.len()..].trim_end_matches("*/").trim_end_matches("-->").trim();
    if !location_line(place) {
        return None;
    }
    caption_path(place, default_source).map(|path| (path, end))
}

/// A block copied with a viewer's gutter of line numbers (`  412 |     def run(self):`):
/// the code without the gutter, and the first and last numbers, when every line but blank
/// ones has one.
pub fn without_gutter(code: &str) -> Option<(String, LineRange)> {
    static GUTTER: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(?P<n>[0-9]{1,7}) [|│](?: |$)").unwrap());
    let mut out = String::with_capacity(code.len());
    let mut numbers = Vec::new();
    for line in code.lines() {
        if line.trim().is_empty() {
            out.push('\n');
            continue;
        }
        let found = GUTTER.captures(line)?;
        numbers.push(found["n"].parse::<u32>().ok()?);
        out.push_str(&line[found.get(0).unwrap().end()..]);
        out.push('\n');
    }
    let (first, last) = (*numbers.first()?, *numbers.last()?);
    (numbers.windows(2).all(|w| w[0] < w[1])).then_some((out, LineRange { start: first, end: last }))
}

/// A block written as a unified diff of context only (`--- a/path`, `+++ b/path`, `@@
/// -658,4 +658,4 @@`, then lines each opened by a space): a review's way to quote a file as
/// it is. Returns the file the `+++` line names, the lines each hunk header gives, and the
/// code without the diff's first column. None for anything else, and for a diff that adds
/// or removes lines: that shows a change, and which side is the file at the revision the
/// diff does not say.
pub fn diff_context(code: &str) -> Option<(QuotePath, String)> {
    static HUNK: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^@@ -[0-9]+(?:,[0-9]+)? \+(?P<start>[0-9]+)(?:,(?P<count>[0-9]+))? @@").unwrap());
    let (mut path, mut lines, mut out) = (None, Vec::new(), String::with_capacity(code.len()));
    for line in code.lines() {
        if let Some(hunk) = HUNK.captures(line) {
            let start: u32 = hunk["start"].parse().ok()?;
            let count: u32 = hunk.name("count").map_or(Some(1), |c| c.as_str().parse().ok())?;
            lines.push(LineRange { start, end: start.checked_add(count.checked_sub(1)?)? });
            continue;
        }
        if lines.is_empty() {
            // The header: `diff --git`, `index`, `--- a/path`, `+++ b/path`.
            if let Some(named) = line.strip_prefix("+++ ") {
                let named = named.split('\t').next().unwrap_or(named).trim();
                path = Some(named.strip_prefix("b/").unwrap_or(named).to_string());
            } else if !(line.starts_with("--- ") || line.starts_with("diff ") || line.starts_with("index ")) {
                return None;
            }
            continue;
        }
        match line.chars().next() {
            // An editor may strip the space of an empty line of context.
            None => out.push('\n'),
            Some(' ') => {
                out.push_str(&line[1..]);
                out.push('\n');
            }
            Some('\\') => {}
            Some(_) => return None,
        }
    }
    let path = path.filter(|p| !p.is_empty() && p != "/dev/null")?;
    (!lines.is_empty()).then_some((QuotePath { source: None, path, lines }, out))
}

/// The path and lines an info string gives after its language: `path=src/a.rs
/// lines=3-9`, `title="src/a.rs:3-9"`, or a second word `src/a.rs:3-9`. A title that is
/// only a path (MkDocs: `title="src/a.rs" linenums="3"`) gives no lines: the block's first
/// line ([`info_start_line`]) and length give them.
pub fn info_path(info: &str) -> Option<QuotePath> {
    let rest: String = info.split_whitespace().skip(1).collect::<Vec<_>>().join(" ");
    if rest.is_empty() {
        return None;
    }
    if let Some(path) = info_value(&rest, "path").or_else(|| info_value(&rest, "file")) {
        let lines = info_value(&rest, "lines").map(|l| lines_of(&l)).unwrap_or_default();
        return Some(QuotePath { source: default_source(&rest), path, lines });
    }
    let title = info_value(&rest, "title").or_else(|| info_value(&rest, "caption"));
    if let Some(path) = title.as_deref().filter(|t| is_file_path(t)) {
        return Some(QuotePath { source: default_source(&rest), path: path.to_string(), lines: Vec::new() });
    }
    caption_path(&title.unwrap_or(rest), default_source)
}

/// The value of `key=value` (or `key="value with spaces"`) in an info string.
fn info_value(info: &str, key: &str) -> Option<String> {
    let at = info.match_indices(&format!("{key}=")).find(|(at, _)| *at == 0 || info[..*at].ends_with(' '))?.0;
    let value = &info[at + key.len() + 1..];
    let (value, end_at) = match value.chars().next() {
        Some(quote @ ('"' | '\'')) => (&value[1..], vec![quote]),
        _ => (value, vec!['"', '\'', ' ', '}']),
    };
    let end = value.find(end_at.as_slice()).unwrap_or(value.len());
    Some(value[..end].to_string())
}

/// A Pandoc code block's attributes (```` ```{.python #lst:loop caption="a.py, lines 3–9"
/// startFrom="3"} ````) as an info string of the usual form: its class as the language,
/// then the attributes (`python #lst:loop caption=…`).
pub fn pandoc_info(info: &str) -> Option<String> {
    let inner = info.trim().strip_prefix('{')?.strip_suffix('}')?.trim();
    let language = inner.split_whitespace().find_map(|word| word.strip_prefix('.'))?;
    Some(format!("{language} {inner}"))
}

/// True when `text` is one file's path and nothing else (`pr_agent/algo/utils.py`).
fn is_file_path(text: &str) -> bool {
    static FILE_PATH: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^(?:[A-Za-z0-9_.@+-]+/)*[A-Za-z0-9_@+-][A-Za-z0-9_.@+-]*\.[A-Za-z0-9]{1,8}$").unwrap()
    });
    FILE_PATH.is_match(text)
}

/// The line a code block's first line is at, as its info string numbers it
/// (`linenums="120"` of MkDocs, `lineno-start=120`, `startline=120`).
pub fn info_start_line(info: &str) -> Option<u32> {
    ["linenums", "lineno-start", "linenostart", "startline", "start-line", "startFrom"]
        .iter()
        .find_map(|key| info_value(info, key))
        .and_then(|value| value.parse().ok())
        .filter(|line| *line > 0)
}

/// A MyST or Sphinx directive that shows code (```` ```{code-block} python ````): its
/// language, the word after it.
pub fn directive_language(info: &str) -> Option<Option<&str>> {
    let mut words = info.split_whitespace();
    let directive = words.next()?.strip_prefix('{')?.strip_suffix('}')?;
    matches!(directive, "code-block" | "code" | "code-cell" | "sourcecode" | "literalinclude").then(|| words.next())
}

/// The options a MyST directive's body opens with (`:caption: Listing 1 — a.py, lines
/// 3–9`, `:lineno-start: 3`), by name, and where the code after them (and the blank line
/// that ends them) starts.
pub fn directive_options(body: &str) -> (Vec<(&str, &str)>, usize) {
    let mut options = Vec::new();
    let mut at = 0;
    for line in body.split_inclusive('\n') {
        let Some((name, value)) = line.trim().strip_prefix(':').and_then(|rest| rest.split_once(':')) else {
            if line.trim().is_empty() && !options.is_empty() {
                at += line.len();
            }
            break;
        };
        if name.is_empty() || name.contains(' ') {
            break;
        }
        options.push((name, value.trim()));
        at += line.len();
    }
    (options, at)
}

#[cfg(test)]
mod tests {
    use super::*;

    type Read = (String, Vec<(u32, u32)>, Option<String>);

    fn read(text: &str) -> Option<Read> {
        caption_path(text, default_source)
            .map(|q| (q.path, q.lines.iter().map(|r| (r.start, r.end)).collect(), q.source))
    }

    #[test]
    fn captions_in_the_forms_analysts_write() {
        let r = |p: &str, a: u32, b: u32, s: Option<&str>| Some((p.to_string(), vec![(a, b)], s.map(str::to_string)));
        assert_eq!(read("From llm/cli.py, lines 414–421 (SRC-1):"), r("llm/cli.py", 414, 421, Some("SRC-1")));
        assert_eq!(read("Source: SRC-1, llm/models.py:L1641-L1645"), r("llm/models.py", 1641, 1645, Some("SRC-1")));
        assert_eq!(read("Evidence E1 — llm/__init__.py, L414-421:"), r("llm/__init__.py", 414, 421, None));
        assert_eq!(
            read("Listing 1. src/smolagents/agents.py, lines 1602–1606 (SRC-2). The default."),
            r("src/smolagents/agents.py", 1602, 1606, Some("SRC-2"))
        );
        assert_eq!(read("aider/coders/base_coder.py, lines 190-194:"), r("aider/coders/base_coder.py", 190, 194, None));
        assert_eq!(read("swarm/core.py#L66-L70"), r("swarm/core.py", 66, 70, None));
        assert_eq!(read("a.py, line 7"), r("a.py", 7, 7, None));
        assert_eq!(read("a.py, lines 3 to 9"), r("a.py", 3, 9, None));
        assert_eq!(read("Quoted from a.py (no lines)"), None);
        assert_eq!(read("a.py:3-4 and b.py:5-6"), None, "two files: no one caption");
        assert_eq!(
            read("Excerpt: SRC-1 · `taskweaver/memory/memory.py` · lines 41–51"),
            r("taskweaver/memory/memory.py", 41, 51, Some("SRC-1"))
        );
        assert_eq!(read("Extrait : `langroid/task.py`, lignes 1440-1450"), r("langroid/task.py", 1440, 1450, None));
        assert_eq!(read("From server/.env, lines 5-7:"), r("server/.env", 5, 7, None), "a dotfile");
    }

    #[test]
    fn a_diff_of_context_quotes_its_file_at_the_hunk_s_lines() {
        let code =
            "--- a/src/m.py\n+++ b/src/m.py\n@@ -658,4 +658,4 @@ class C:\n class C:\n     user = 1\n\n     log = 2\n";
        let (path, body) = diff_context(code).unwrap();
        assert_eq!((path.path.as_str(), path.lines.clone()), ("src/m.py", vec![LineRange { start: 658, end: 661 }]));
        assert_eq!(body, "class C:\n    user = 1\n\n    log = 2\n");
        let two = "+++ b/a.rs\n@@ -3 +3 @@\n x\n@@ -10,2 +10,2 @@\n y\n z\n";
        assert_eq!(
            diff_context(two).unwrap().0.lines,
            vec![LineRange { start: 3, end: 3 }, LineRange { start: 10, end: 11 }]
        );
        assert!(diff_context("--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n-x = 1\n+x = 2\n").is_none(), "a change");
        assert!(diff_context("@@ -1 +1 @@\n x\n").is_none(), "no file named");
        assert!(diff_context("--- a/a.py\n+++ /dev/null\n@@ -1 +0,0 @@\n x\n").is_none());
        assert!(diff_context("x = 1\n").is_none());
    }

    #[test]
    fn a_block_s_first_comment_may_name_the_place_and_a_gutter_the_lines() {
        let code = "# SRC-2 swarms/structs/agent.py L4096–4105\n 4096 |     elif n > 1:\n 4097 |         x = 1\n\n 4099 | y()\n";
        let (path, at) = first_line_path(code).unwrap();
        assert_eq!(
            (path.path.as_str(), path.source.as_deref(), path.lines[0].start),
            ("swarms/structs/agent.py", Some("SRC-2"), 4096)
        );
        let (body, lines) = without_gutter(&code[at..]).unwrap();
        assert_eq!(body, "    elif n > 1:\n        x = 1\n\ny()\n");
        assert_eq!((lines.start, lines.end), (4096, 4099));
        assert!(first_line_path("# the loop below retries, see a.py:3-4\nx = 1\n").is_none(), "a comment, not a place");
        assert!(without_gutter("x = 1\n 12 | y\n").is_none(), "every line has its number");
        assert!(without_gutter(" 12 | a\n 11 | b\n").is_none(), "numbers that go up");
    }

    #[test]
    fn directives_and_info_strings_that_number_the_first_line() {
        assert_eq!(directive_language("{code-block} python"), Some(Some("python")));
        assert_eq!(directive_language("{note}"), None);
        assert_eq!(directive_language("python"), None);
        let body = ":caption: Listing 1 — `a/b.py`, lines 3–4 (SRC-2)\n:lineno-start: 3\n\nx = 1\ny = 2\n";
        let (options, at) = directive_options(body);
        assert_eq!(options, [("caption", "Listing 1 — `a/b.py`, lines 3–4 (SRC-2)"), ("lineno-start", "3")]);
        assert_eq!(&body[at..], "x = 1\ny = 2\n");
        assert_eq!(directive_options("x = {'a': 1}\n"), (Vec::new(), 0));
        let info = "python title=\"pr_agent/algo/utils.py\" linenums=\"1010\" hl_lines=\"4 5\"";
        let q = info_path(info).unwrap();
        assert_eq!((q.path.as_str(), q.lines.len()), ("pr_agent/algo/utils.py", 0));
        assert_eq!(info_start_line(info), Some(1010));
        assert_eq!(info_start_line("python title=\"a.py\""), None);
        assert_eq!(info_path("python title=\"Retry loop\""), None, "a title that is no path");
    }

    #[test]
    fn a_pandoc_block_s_attributes_give_its_language_caption_and_first_line() {
        let info =
            pandoc_info("{.python #lst:mgr caption=\"ToolServer/main.py, lines 126-131 (SRC-2)\" startFrom=\"126\"}")
                .unwrap();
        assert!(info.starts_with("python "), "{info}");
        let q = info_path(&info).unwrap();
        assert_eq!(
            (q.path.as_str(), q.lines[0].start, q.lines[0].end, q.source.as_deref()),
            ("ToolServer/main.py", 126, 131, Some("SRC-2"))
        );
        assert_eq!(info_start_line(&info), Some(126));
        assert_eq!(pandoc_info("{code-block} python"), None, "a MyST directive has no class");
        assert_eq!(pandoc_info("python"), None);
    }

    #[test]
    fn captions_in_japanese_and_chinese() {
        let r = |p: &str, a: u32, b: u32| Some((p.to_string(), vec![(a, b)], Some("SRC-1".to_string())));
        assert_eq!(
            read("出典：SRC-1 `gpt_engineer/core/default/file_store.py` 39〜45行"),
            r("gpt_engineer/core/default/file_store.py", 39, 45)
        );
        assert_eq!(read("出典：SRC-1 a/b.py 第 39～45 行"), r("a/b.py", 39, 45));
        assert_eq!(read("출처: SRC-1 `devika.py` 85–93행"), r("devika.py", 85, 93));
        assert_eq!(read("Lines 2597-2607 of `agixt/DB.py` (SRC-1)."), r("agixt/DB.py", 2597, 2607));
        assert!(set_apart(".Queue read helper (a/q.py, lines 7-8)", ".Queue read helper (a/q.py, lines 7-8)"));
        assert!(!set_apart("...and so on", "...and so on"));
        let linked = permalink_caption("🔗 https://github.com/o/r/blob/11c853d/babyagi.py#L529-L537").unwrap();
        assert_eq!((linked.path.as_str(), linked.lines), ("babyagi.py", vec![LineRange { start: 529, end: 537 }]));
        assert!(permalink_caption("see https://github.com/o/r/blob/1/a.py#L3").is_none(), "words beside it");
        assert_eq!(read("as lines 1059-1061 of `a/M.py` (SRC-1) show::"), r("a/M.py", 1059, 1061));
        assert_eq!(read("(SRC-1, a/M.py, lines 3-9), then, as lines 20-24 of `a/M.py` show::"), r("a/M.py", 20, 24));
        assert_eq!(read("Lines 20-24 of a/M.py (SRC-1), not a/M.py lines 3-9."), r("a/M.py", 20, 24));
        assert_eq!(read("출처: SRC-1 `src/a.py` 12~20줄"), r("src/a.py", 12, 20));
        assert!(set_apart("出典：SRC-1 a/b.py 39〜45行", "出典：SRC-1 a/b.py 39〜45行"));
        assert_eq!(read("Источник: SRC-1, `a/b.py`, строки 1322–1327"), r("a/b.py", 1322, 1327));
        assert_eq!(read("Источник: SRC-1, `a/b.py`, стр. 1322–1327"), r("a/b.py", 1322, 1327));
        assert!(set_apart("Источник: SRC-1", "Источник: SRC-1"), "a caption's word in Cyrillic");
    }

    #[test]
    fn info_strings_that_name_the_file() {
        let q = info_path("rust path=crates/goose/src/agents/agent.rs lines=397-405").unwrap();
        assert_eq!((q.path.as_str(), q.lines[0].start, q.lines[0].end), ("crates/goose/src/agents/agent.rs", 397, 405));
        let q = info_path("python title=\"swarm/core.py:10-12\"").unwrap();
        assert_eq!((q.path.as_str(), q.lines[0].end), ("swarm/core.py", 12));
        assert!(info_path("python").is_none());
        assert!(info_path("python {linenos=true}").is_none());
    }

    #[test]
    fn what_reads_as_a_caption() {
        assert!(reads_as_caption_before("From `a.py`, lines 1-2:", "From a.py, lines 1-2:"));
        assert!(reads_as_caption_before("*`a.py`, lines 1-2:*", "a.py, lines 1-2:"));
        assert!(reads_as_caption_after("*Listing 2. `a.py`, lines 1-2.*", "Listing 2. a.py, lines 1-2."));
        assert!(reads_as_caption_before("Extrait : `a.py`, lignes 1-2", "Extrait : a.py, lignes 1-2"));
        assert!(!reads_as_caption_after("The loop in a.py:1-2 retries.", "The loop in a.py:1-2 retries."));
        for line in [
            "a/b.py:851-862",
            "(a/b.py, lines 31–34)",
            "— a/b.py, L134–141",
            "a.py 162–167",
            "a.py (L73–79)",
            "SRC-2 a.py, 82–88",
        ] {
            assert!(reads_as_caption_before(line, line), "{line}");
            assert!(read(line).is_some(), "{line}");
        }
        assert!(!reads_as_caption_before("See a.py:1-2", "See a.py:1-2"), "a sentence, however short");
        assert!(!reads_as_caption_after("a.py:1-2", "a.py:1-2"), "under a block, a bare place introduces the next");
        let aside = "(`e2b/sandbox/signature.py`, lines 35–42)";
        assert!(
            reads_as_caption_after(aside, "(e2b/sandbox/signature.py, lines 35–42)"),
            "a place in brackets does not"
        );
    }
}
