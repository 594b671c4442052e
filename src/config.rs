//! The YAML schemas a user writes: `casebook.yaml`, `system.yaml`, `run.yaml` and report
//! front matter. Every struct denies unknown keys, so a typo is an error with a line, not
//! a silently ignored setting.

use std::collections::BTreeMap;
use std::path::Path;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::model::{Code, Diagnostic, Location};

/// `content/casebook.yaml`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SiteConfig {
    /// The site's name.
    pub title: String,
    /// Absolute URL or path prefix the site is served under.
    pub base_url: String,
    /// Theme name: `themes/<name>/` if present, else the built-in theme.
    pub theme: String,
    /// How record IDs are written.
    pub ids: IdConfig,
    /// The status vocabulary, in display order.
    pub statuses: Vec<StatusDef>,
    /// Content files larger than this many MiB are refused (a safeguard for builds of
    /// untrusted pull requests).
    pub max_file_mib: u64,
    /// How citations, fields and findings are written, beyond the defaults.
    pub conventions: ConventionsConfig,
    /// A folder of clones of the sources' repositories, by host, owner and name
    /// (`DIR/github.com/o/r`), relative to the site's root: what `casebook verify` reads.
    pub sources_dir: Option<std::path::PathBuf>,
    /// Where the site's own files can be read, so that each record links to the line of
    /// the report that declares it: a URL with `{path}` (the file's path from the site's
    /// root) and optionally `{line}`, such as
    /// `https://github.com/o/analyses/blob/main/{path}#L{line}`.
    #[schemars(regex(pattern = r"^[hH][tT][tT][pP][sS]?://\S*\{path\}\S*$"))]
    pub source_url: Option<String>,
    /// `separate` (the default): a page per record. `per-run`: one page per run holding
    /// all its records, each record's own address kept by a redirect (`_redirects`, and
    /// the 404 page where a host has no redirects): a site of far fewer files, for hosts
    /// that cap them.
    pub record_pages: crate::model::RecordPages,
    /// `separate` (the default): each system has a page per status. `per-system`: one
    /// page per system listing every status, each status's own address kept by a redirect
    /// (`_redirects`, and the 404 page where a host has no redirects): fewer files, for
    /// hosts that cap them.
    pub status_pages: crate::model::StatusPages,
    /// How many entries the site's feed (`/feed.xml`) holds: the newest runs and reports.
    /// Each system's feed holds all of its own.
    pub feed_entries: usize,
    /// How the search page's index is split into files: `documents_per_file` (16) and
    /// `term_file_kib` (24). Larger files make a large site fewer files, for hosts that
    /// cap them; each query fetches more bytes.
    pub search: crate::model::SearchFiles,
}

/// The site feed's entries unless casebook.yaml says otherwise: what a feed reader shows
/// of a large site, not every report it ever published.
pub const DEFAULT_FEED_ENTRIES: usize = 100;

/// How sources of a run's register are written, unless casebook.yaml says otherwise.
pub const DEFAULT_SOURCE_IDS: &str = "SRC-[0-9]+";

/// `conventions:` of casebook.yaml: the forms casebook recognises, where a site writes
/// them its own way. Every key is optional.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct ConventionsConfig {
    /// How the sources of a run's register are written: a regular expression for a whole
    /// source ID (`SRC-[0-9]+`).
    pub source_ids: String,
    /// Keys of `Key: value` paragraphs that are never fields (`Note`).
    pub not_fields: Vec<String>,
    /// Column headers whose cells are findings (the header names the dimension), even
    /// where few of them start with a status.
    pub finding_columns: Vec<String>,
    /// Column headers whose cells are never findings, even where they start with a status.
    pub not_finding_columns: Vec<String>,
    /// How an analysis writes what it did not establish.
    pub limits: LimitsConfig,
}

/// `conventions.limits` of casebook.yaml: words (matched case-insensitively within a
/// heading or a column header) that mark where an analysis states its limits.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// A section whose heading holds one of these is about limits: its tables' rows and
    /// its lists' items are limits.
    pub headings: Vec<String>,
    /// A table with a column whose header holds one of these is a limitation table,
    /// wherever it is; that column is the limitation.
    pub limitation_columns: Vec<String>,
    /// A table with a column whose header holds one of these is a coverage table: each
    /// row says what was covered (its first cell) and how far (that column).
    pub coverage_columns: Vec<String>,
    /// The column that says which conclusion a limit prevents.
    pub prevents_columns: Vec<String>,
    /// The column that says what evidence would resolve a limit.
    pub resolves_columns: Vec<String>,
}

/// The words of headings that mean limits, in every language the corpus holds: the
/// default of [`LimitsConfig::headings`].
const DEFAULT_LIMIT_HEADINGS: &[&str] = &[
    "limitation",
    "limits",
    "not inspected",
    "not established",
    "conclusion limits",
    "gaps",
    "caveats",
    "threats to validity",
    "out of scope",
    "cannot say",
    "not done",
    "not check",
    "not covered",
    "not examined",
    "not verified",
    "not reviewed",
    "unknowns",
    "open questions",
    "open risks",
    "unanswered",
    "exclusions",
    "residual risk",
    "assumptions",
    "not looked at",
    "blind spot",
    "n't look",
    "did not look",
    "n't read",
    "did not read",
    "n't check",
    "n't cover",
    "n't inspect",
    // The same in French, German and Spanish.
    "limites",
    "lacunes",
    "hors périmètre",
    "non inspecté",
    "einschränkungen",
    "grenzen",
    "nicht untersucht",
    "limitaciones",
    "fuera de alcance",
    "limitações",
    "fora do escopo",
    "não inspecionado",
    "limiti",
    "limitazioni",
    "fuori ambito",
    "non esaminato",
    // Turkish: limits, limitations, constraints, out of scope, not examined.
    "sınırlar",
    "sınırlamalar",
    "kısıtlar",
    "kapsam dışı",
    "incelenmedi",
    // Chinese: limits, limitations, not inspected, out of scope.
    "局限",
    "限制",
    "未检查",
    "范围之外",
    // Japanese: constraints, limits, not investigated, out of the scope.
    "制約事項",
    "限界",
    "未調査",
    "調査範囲外",
    // Russian: limitations, limits, not checked, out of scope.
    "ограничения",
    "пределы",
    "не проверялось",
    "вне рамок",
    // Korean: limitations, limits, not examined, out of scope.
    "제한 사항",
    "제한사항",
    "한계",
    "미검토",
    "범위 밖",
];

impl Default for LimitsConfig {
    fn default() -> Self {
        let words = |items: &[&str]| items.iter().map(|s| s.to_string()).collect();
        LimitsConfig {
            headings: words(DEFAULT_LIMIT_HEADINGS),
            limitation_columns: words(&["limitation", "gap", "caveat", "threat"]),
            coverage_columns: words(&["coverage and", "conclusion limit"]),
            prevents_columns: words(&["prevent"]),
            resolves_columns: words(&["resolve"]),
        }
    }
}

impl Default for ConventionsConfig {
    fn default() -> Self {
        ConventionsConfig {
            source_ids: DEFAULT_SOURCE_IDS.to_string(),
            not_fields: Vec::new(),
            finding_columns: Vec::new(),
            not_finding_columns: Vec::new(),
            limits: LimitsConfig::default(),
        }
    }
}

/// The default of [`SiteConfig::max_file_mib`].
pub const DEFAULT_MAX_FILE_MIB: u64 = 16;

impl Default for SiteConfig {
    fn default() -> Self {
        SiteConfig {
            title: "Analyses".to_string(),
            base_url: "/".to_string(),
            theme: "default".to_string(),
            ids: IdConfig::default(),
            statuses: default_statuses(),
            max_file_mib: DEFAULT_MAX_FILE_MIB,
            conventions: ConventionsConfig::default(),
            sources_dir: None,
            source_url: None,
            record_pages: Default::default(),
            status_pages: Default::default(),
            feed_entries: DEFAULT_FEED_ENTRIES,
            search: Default::default(),
        }
    }
}

/// ID grammars and the family and kind codes that make a match an ID.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct IdConfig {
    /// Regular expressions with a `kind` group and optional `family`, `name`, `number`.
    pub grammars: Vec<String>,
    /// Family code → name (`MEM` → `memory`).
    pub families: BTreeMap<String, String>,
    /// Kind code → name (`OBJ` → `operative object`).
    pub kinds: BTreeMap<String, String>,
    /// Kinds and families of words written like IDs that are none (`SHA` of `SHA-256`):
    /// `check --explain` does not list them.
    pub not_ids: Vec<String>,
    /// `kinds` and `families` replace the default ones instead of adding to them.
    pub replace: bool,
}

impl IdConfig {
    /// The kinds and families a site declares, added to the default ones unless it
    /// says `replace: true`: declaring one kind of one's own must not make every record of
    /// the default kinds stop being one.
    pub fn with_defaults(mut self) -> Self {
        if !self.replace {
            let defaults = IdConfig::default();
            for (code, name) in defaults.kinds {
                self.kinds.entry(code).or_insert(name);
            }
            for (code, name) in defaults.families {
                self.families.entry(code).or_insert(name);
            }
        }
        self
    }
}

/// Words written like record IDs that are common technical names, not IDs.
pub const DEFAULT_NOT_IDS: [&str; 26] = [
    "AES", "ANSI", "API", "CVE", "CWE", "ECMA", "GMT", "GPT", "HTTP", "IEEE", "IPV", "ISO", "LLM", "MD", "PEP", "RFC",
    "RSA", "SHA", "SSL", "TLS", "UTC", "UTF", "WCAG", "XML", "HTML", "CSS",
];

impl Default for IdConfig {
    fn default() -> Self {
        let pairs = |items: &[(&str, &str)]| items.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        IdConfig {
            grammars: vec![
                r"(?P<family>[A-Z][A-Z0-9]{1,5})-(?P<kind>[A-Z]{2,5})-(?P<name>[a-z0-9]+(?:[-_][a-z0-9]+)*)"
                    .to_string(),
                r"(?P<kind>[A-Z]{2,5})-(?P<number>[0-9]+)".to_string(),
            ],
            families: pairs(&[("RT", "runtime"), ("MEM", "memory"), ("EPI", "epistemic"), ("WF", "workflow")]),
            kinds: pairs(&[
                ("CMP", "component"),
                ("OBJ", "operative object"),
                ("RTE", "route"),
                ("CLM", "claim"),
                ("ABS", "evidenced absence"),
                ("BAP", "behavioral-authority path"),
                ("CONF", "evidence conflict"),
                ("NEW", "requested record"),
            ]),
            not_ids: DEFAULT_NOT_IDS.iter().map(|s| s.to_string()).collect(),
            replace: false,
        }
    }
}

/// One status of the vocabulary.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusDef {
    /// The status as written in reports (`implemented`).
    pub name: String,
    /// One line saying what it means.
    pub meaning: String,
    /// Other ways reports write it (`not inspected` for `uninspected`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms: Vec<String>,
    /// Its badge's background (`#107569`); the default status's colour, or one of a
    /// palette, when absent. Its text must be readable on it: 4.5:1 at least.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"))]
    pub color: Option<String>,
    /// Its badge's text colour; white when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"))]
    pub text_color: Option<String>,
}

fn default_statuses() -> Vec<StatusDef> {
    [
        ("absent", "Looked for within the inspected boundary and not found."),
        ("inapplicable", "The question does not apply to this item."),
        ("uninspected", "Not examined in this run; no conclusion either way."),
        ("claimed", "Stated by documentation, comments or the system's own account, not shown in the implementation."),
        ("implemented", "Present in the inspected implementation; not shown to be reached in a default invocation."),
        ("wired", "Implemented and connected on a path that a default invocation reaches."),
        ("afforded", "Made available to an actor (a model, an operator) who may or may not use it."),
        ("observed", "Seen to happen in an execution trace or run."),
        ("causally supported", "Shown by an intervention or comparison to change behaviour."),
    ]
    .into_iter()
    .map(|(name, meaning)| StatusDef {
        name: name.to_string(),
        meaning: meaning.to_string(),
        synonyms: Vec::new(),
        color: None,
        text_color: None,
    })
    .collect()
}

/// `<system>/system.yaml`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SystemMeta {
    /// Display name.
    pub name: String,
    /// The system's repository URL, if public.
    pub repository: Option<String>,
    /// One paragraph of Markdown.
    pub summary: Option<String>,
}

/// `<system>/<run>/run.yaml`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunMeta {
    /// Display name; defaults to the folder name.
    pub name: Option<String>,
    /// The frozen git revision the run analysed.
    pub revision: String,
    /// When the run was made (`YYYY-MM-DD`).
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub date: Option<String>,
    /// The lens of the analysis (`memory / context`).
    pub lens: Option<String>,
    /// Last date the conclusions apply to (`YYYY-MM-DD`).
    #[schemars(regex(pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"))]
    pub applicability_ends: Option<String>,
    /// The statuses in force in this run; all of the site's when absent.
    pub vocabulary: Option<Vec<String>>,
    /// The source register.
    #[serde(default)]
    pub sources: Vec<SourceDef>,
    /// Where a bare `path:lines` citation points; the first source when absent.
    pub default_source: Option<String>,
    /// Records referred to but not published, by ID pattern.
    #[serde(default)]
    pub unpublished: Vec<UnpublishedDef>,
    /// The report files in order; when absent, every `*.md` by `order` then name.
    pub reports: Option<Vec<String>>,
}

/// One entry of a run's source register.
#[derive(Debug, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourceDef {
    /// `SRC-1`.
    pub id: String,
    /// What the source is.
    pub title: String,
    /// Repository URL; quotes and citations link into it when known.
    pub repository: Option<String>,
    /// The source's revision; the run's revision when absent.
    pub revision: Option<String>,
    /// Folder within the repository that citation paths are relative to.
    pub path: Option<String>,
    /// Free Markdown.
    pub note: Option<String>,
}

/// A set of records a run refers to without publishing them.
#[derive(Debug, Clone, Deserialize, serde::Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnpublishedDef {
    /// What they are (`runtime report`).
    pub name: String,
    /// Glob patterns over record IDs (`RT-*`).
    pub ids: Vec<String>,
    /// Free Markdown.
    pub note: Option<String>,
}

/// An entry of `content/redirects.yaml`: a page that moved.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq, Eq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Redirect {
    /// The old path (`/fractal/run/records/OBJ-01.html`).
    pub from: String,
    /// The new path, or an absolute URL.
    pub to: String,
}

/// A report's YAML front matter.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FrontMatter {
    /// The report's title; the file name when absent.
    pub title: Option<String>,
    /// The report type (`memory`, `runtime`, `synthesis`).
    #[serde(rename = "type")]
    pub report_type: Option<String>,
    /// The document type the report follows.
    pub schema: Option<String>,
    /// Position among the run's reports.
    pub order: Option<i64>,
    /// Where the document this report was converted from can be read (a URL or a path in
    /// the site, such as a file of `static/`).
    pub original: Option<String>,
}

/// Parses YAML into `T`; a failure becomes a diagnostic at the right line of `file`.
/// `first_line` is the file line where `text` starts (front matter starts on line 2).
pub fn parse_yaml<T: DeserializeOwned>(text: &str, file: &Path, first_line: u32) -> Result<T, Diagnostic> {
    // An empty document is an empty mapping, so every key takes its default.
    let text = if text.trim().is_empty() { "{}" } else { text };
    if let Some((yaml_line, yaml_column)) = flow_nesting_beyond(text, MAX_YAML_FLOW_DEPTH) {
        let (line, col) = file_position(text, yaml_line, yaml_column);
        let source = text.lines().nth(line as usize - 1).unwrap_or("").to_string();
        return Err(Diagnostic::error(
            Code::YamlTooDeep,
            Location::new(file.into(), first_line + line - 1, col),
            format!("YAML nested more than {MAX_YAML_FLOW_DEPTH} levels deep in `[…]` and `{{…}}`"),
        )
        .with_source(source, 1)
        .with_help("no key of casebook's YAML needs more than a few levels; flatten this value"));
    }
    serde_yaml::from_str(text).map_err(|e| {
        let (line, col) = e.location().map_or((1, 1), |l| file_position(text, l.line() - 1, l.column() - 1));
        let message = e.to_string();
        // serde_yaml appends " at line L column C"; the location already says so.
        let message = match message.find(" at line ") {
            Some(i) => message[..i].to_string(),
            None => message,
        };
        let source = text.lines().nth(line.saturating_sub(1) as usize).unwrap_or("").to_string();
        Diagnostic::error(
            Code::InvalidYaml,
            Location::new(file.into(), first_line + line - 1, col),
            format!("invalid YAML: {message}"),
        )
        .with_source(source, 1)
        .with_help("fix the YAML here; the keys each file accepts are listed in docs/format.md")
    })
}

/// The 1-based line (counted at `\n`, as every diagnostic counts them) and column of
/// `text` where libyaml's 0-based `yaml_line` and `yaml_column` are. libyaml also starts a
/// line at a lone `\r` and at U+0085, U+2028 and U+2029, so its line can be past the
/// file's last.
fn file_position(text: &str, yaml_line: usize, yaml_column: usize) -> (u32, u32) {
    let mut chars = text.char_indices().peekable();
    let mut breaks = 0;
    let mut at = text.len();
    while let Some((i, c)) = chars.next() {
        if breaks == yaml_line {
            at = i;
            break;
        }
        let yaml_break = match c {
            '\r' => {
                chars.next_if(|&(_, c)| c == '\n');
                true
            }
            '\n' | '\u{85}' | '\u{2028}' | '\u{2029}' => true,
            _ => false,
        };
        breaks += usize::from(yaml_break);
        if breaks == yaml_line {
            at = chars.peek().map_or(text.len(), |&(i, _)| i);
            break;
        }
    }
    // The column, in characters, without going past the end of the file's line.
    let rest = &text[at..];
    let in_line = rest.find('\n').map_or(rest, |end| &rest[..end]);
    let at = at + in_line.char_indices().nth(yaml_column).map_or(in_line.len(), |(i, _)| i);
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() + 1;
    let column = text[line_start..at].chars().count() + 1;
    (line as u32, column as u32)
}

/// The deepest `[…]`/`{…}` nesting a YAML file may have: far more than any schema here
/// needs. libyaml's scanner rechecks every open flow level at each token, so a file of
/// nothing but `[` costs time quadratic in its size before serde_yaml's own recursion
/// limit is ever reached.
pub const MAX_YAML_FLOW_DEPTH: usize = 64;

/// libyaml's 0-based line and column of the first flow collection (`[` or `{`) nested
/// deeper than `max`, found with libyaml's own scanner (so quotes, comments and block scalars
/// are read exactly as serde_yaml will read them). The scan stops there, so it costs time
/// linear in the text; a scanner error stops it too, and serde_yaml reports it.
fn flow_nesting_beyond(text: &str, max: usize) -> Option<(usize, usize)> {
    use std::mem::MaybeUninit;
    let mut found = None;
    // SAFETY: the parser is initialised before use and deleted once; it reads `text`,
    // which outlives it; each token is deleted after its type and mark are read.
    unsafe {
        let mut parser = MaybeUninit::<unsafe_libyaml::yaml_parser_t>::uninit();
        if unsafe_libyaml::yaml_parser_initialize(parser.as_mut_ptr()).fail {
            return None;
        }
        let parser = parser.as_mut_ptr();
        unsafe_libyaml::yaml_parser_set_input_string(parser, text.as_ptr(), text.len() as u64);
        let mut depth = 0usize;
        loop {
            let mut token = MaybeUninit::<unsafe_libyaml::yaml_token_t>::uninit();
            if unsafe_libyaml::yaml_parser_scan(parser, token.as_mut_ptr()).fail {
                break;
            }
            let token = token.as_mut_ptr();
            let kind = (*token).type_;
            let mark = (*token).start_mark;
            unsafe_libyaml::yaml_token_delete(token);
            match kind {
                unsafe_libyaml::YAML_FLOW_SEQUENCE_START_TOKEN | unsafe_libyaml::YAML_FLOW_MAPPING_START_TOKEN => {
                    depth += 1;
                    if depth > max {
                        found = Some((mark.line as usize, mark.column as usize));
                        break;
                    }
                }
                unsafe_libyaml::YAML_FLOW_SEQUENCE_END_TOKEN | unsafe_libyaml::YAML_FLOW_MAPPING_END_TOKEN => {
                    depth = depth.saturating_sub(1)
                }
                unsafe_libyaml::YAML_STREAM_END_TOKEN => break,
                _ => {}
            }
        }
        unsafe_libyaml::yaml_parser_delete(parser);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_errors_are_placed_on_the_files_lines() {
        // libyaml breaks lines at a lone `\r` too: its line 60 is the file's line 2.
        let text = format!("title: x\nsummary: a{}b\nbad: [\n", "\r".repeat(60));
        let e = parse_yaml::<FrontMatter>(&text, Path::new("r.md"), 2).unwrap_err();
        let lines = text.split('\n').count() as u32;
        assert!(e.location.line <= 1 + lines, "{e}");
        assert_eq!(file_position("a\r\nb\rc\u{2028}d\ne", 3, 0), (2, 5));
        assert_eq!(file_position("a\nbc\nd", 1, 1), (2, 2));
        assert_eq!(file_position("ab", 0, 1), (1, 2));
        assert_eq!(file_position("ab\n", 7, 3), (2, 1), "past the end: the end");
        let deep = format!("title: x\r\rorder: {}", "[".repeat(MAX_YAML_FLOW_DEPTH + 1));
        let e = parse_yaml::<FrontMatter>(&deep, Path::new("r.md"), 2).unwrap_err();
        assert_eq!(e.code, Code::YamlTooDeep, "{e}");
        // The file's line 1 (the front matter's first), after `title: x\r\rorder: ` and 64 `[`.
        assert_eq!((e.location.line, e.location.col), (2, 17 + MAX_YAML_FLOW_DEPTH as u32 + 1), "{e}");
    }

    #[test]
    fn unknown_key_is_an_error_with_its_line() {
        let err = parse_yaml::<SystemMeta>("name: Fractal\nrepo: x\n", Path::new("s/system.yaml"), 1).unwrap_err();
        assert_eq!(err.location.line, 2);
        assert!(err.message.contains("unknown field `repo`"), "{}", err.message);
    }

    #[test]
    fn front_matter_lines_are_offset() {
        let err = parse_yaml::<FrontMatter>("title: x\norder: [\n", Path::new("r.md"), 2).unwrap_err();
        assert!(err.location.line >= 3, "{:?}", err.location);
    }

    #[test]
    fn empty_config_takes_defaults() {
        let config: SiteConfig = parse_yaml("", Path::new("casebook.yaml"), 1).unwrap();
        assert_eq!(config.statuses.len(), 9);
        assert!(config.ids.kinds.contains_key("OBJ"));
    }

    #[test]
    fn flow_nesting_is_bounded_before_libyaml_slows_down() {
        let deep = format!("statuses: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let err = parse_yaml::<SiteConfig>(&deep, Path::new("casebook.yaml"), 1).unwrap_err();
        assert_eq!((err.location.line, err.location.col), (1, 11 + MAX_YAML_FLOW_DEPTH as u32));
        assert_eq!(err.code, Code::YamlTooDeep, "{err}");
        // Brackets in quoted strings, comments and block scalars are text, not nesting.
        let text = format!("title: '{0}'\n# {0}\nbase_url: |\n  {0}\nstatuses: [[[]]]\n", "[".repeat(100));
        let err = parse_yaml::<SiteConfig>(&text, Path::new("casebook.yaml"), 1).unwrap_err();
        assert_eq!(err.code, Code::InvalidYaml, "{err}");
        // Front matter lines are offset.
        let err = parse_yaml::<FrontMatter>(&format!("title: x\norder: {}", "{a: ".repeat(70)), Path::new("r.md"), 2)
            .unwrap_err();
        assert_eq!(err.location.line, 3, "{err}");
    }
}
