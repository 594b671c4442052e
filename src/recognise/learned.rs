//! IDs in the shapes an analysis itself uses: the kinds of record a run's reports declare
//! in their headings and ID-first rows (`ED-SEL — Edit-format selection`,
//! `### [TC-W01] …`, `| GR-1 | …`), and those its `unpublished` patterns name (`CLM-*`),
//! whatever the site's grammars say. An analyst who never configured casebook writes IDs
//! of their own scheme; this reads the scheme off the document.

use std::collections::BTreeSet;
use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{at_word_boundary, IdScheme, MAX_ID_LEN};

/// The shape of an ID of a learned kind: a kind code of capitals, a hyphen,
/// and one or more segments of letters and digits (`ED-SEL`, `TC-W01`, `SW-C-loop`),
/// numbered in parts too (`REQ-1.2`).
/// An ID may have a namespace of capitals before a slash (`ODR/GR-01`): it is part of the
/// ID, not of the kind.
pub(super) static LEARNED_GRAMMAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:[A-Z][A-Z0-9]{1,9}/)?(?P<kind>[A-Z]{1,10})-(?P<name>[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+|\.[0-9]+)*)")
        .unwrap()
});

/// The shape of a numbered ID without a hyphen (`O1`, `M7`, `H12`): one to three
/// capitals and one to three digits. Learned only from headings that lead with them.
pub(super) static NUMBERED_GRAMMAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?P<kind>[A-Z]{1,3})(?P<name>[0-9]{1,3})").unwrap());

/// What marks a learned kind of numbered IDs in [`declared_kinds`]' answer: `O#`.
pub(super) const NUMBERED_MARK: char = '#';

/// The shape of a dotted ID (`T.MEM.1`, `TM.3`): a kind of capitals in one to four dotted
/// parts, a dot, and a number. Learned only from headings that lead with them.
pub(super) static DOTTED_GRAMMAR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?P<kind>[A-Z][A-Z0-9]{0,7}(?:\.[A-Z][A-Z0-9]{0,7}){0,3})\.(?P<name>[0-9]{1,4})").unwrap()
});

/// What marks a learned kind of dotted IDs in [`declared_kinds`]' answer: `T.MEM.`.
pub(super) const DOTTED_MARK: char = '.';

/// The shape of an ID that is one word in capitals (`MSG`, `BUDGET`), each its own kind.
/// Learned only from headings that announce a record by name (`#### Record MSG — …`).
pub(super) static WORD_GRAMMAR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?P<kind>[A-Z][A-Z0-9]{1,15})").unwrap());

/// What marks a learned one-word ID in [`declared_kinds`]' answer: `MSG=`.
pub(super) const WORD_MARK: char = '=';

/// A heading that announces a record by a word in capitals: `Record MSG — Message envelope`.
static WORD_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:Record|Entry|Item|Object)\s+(?P<id>[A-Z][A-Z0-9]{1,15})(?:\s+[—–:·|-]\s+\S|\s*$)").unwrap()
});

/// A heading that leads, after its numbering, with a numbered ID and then its label:
/// `### O1 AgentState`, `### 6.1 H1 — digest, not transcript`.
static NUMBERED_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:[0-9]+(?:\.[0-9]+)*\.?\s+)?(?P<id>(?P<kind>[A-Z]{1,3})[0-9]{1,3})(?:\s+[—–:·|-]\s+\S|:?\s+\p{Lu})",
    )
    .unwrap()
});

/// A heading that leads, after its numbering, with a numbered ID and then a label after a
/// separator (`### LLM-01 · Adapter batch fan-out`): read for kinds the site holds back as
/// technical words (`LLM`, `ISO`), which two such headings make a kind of the document's.
static HELD_BACK_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?:[0-9]+(?:\.[0-9]+)*\.?\s+)?(?P<id>(?P<kind>[A-Z]{2,10})-[0-9]{1,4})\s+[—–:·|-]\s+\S").unwrap()
});

/// A heading that leads, after its numbering, with a dotted ID and then its label:
/// `### T.MEM.1 — Unbounded growth`.
static DOTTED_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"^\s*(?:[0-9]+(?:\.[0-9]+)*\.?\s+)?(?P<id>{})(?:\s+[—–:·|-]\s+\S|:?\s+\p{{Lu}})",
        DOTTED_GRAMMAR.as_str()
    ))
    .unwrap()
});

/// A word of the learned shape at `range` in `text`, if it can be an ID: at word
/// boundaries, short enough, not a configured non-ID's numbered name (`SHA-256`,
/// `ISO-8601`; a report may still declare `ISO-COMPOSE`), and, when its kind is a single
/// letter, with a digit or a name in capitals (`N-07`, `W-SIG`; not `A-B`, `N-th`,
/// `X-ray`).
pub(super) fn id_shaped(scheme: &IdScheme, text: &str, range: Range<usize>, kind: &str) -> bool {
    let word = &text[range.clone()];
    let name = &word[kind.len() + 1..];
    let in_capitals = name.len() >= 2 && name.bytes().all(|b| b.is_ascii_uppercase() || b == b'-' || b == b'_');
    let technical_name = scheme.not_ids.contains(kind) && !in_capitals;
    word.len() <= MAX_ID_LEN
        && at_word_boundary(text, range)
        && !technical_name
        && (kind.len() > 1 || word.bytes().any(|b| b.is_ascii_digit()) || in_capitals)
}

/// The ID a heading carries and declares, with its byte range in `heading`: the first ID
/// (of the site's grammars, or of the learned shape), when it leads the heading (after
/// numbering and punctuation: `4.2 GR-1: …`, `[TC-W01] …`, `**F-07** …`) or is the only
/// one in it (`The logs database (MEM-OBJ-logs-db)`). A heading that names two records
/// after other words (`How ED-SEL feeds ED-PIPE`) declares neither.
pub fn heading_id(
    scheme: &IdScheme,
    learned_too: bool,
    heading: &str,
    is_source: impl Fn(&str) -> bool,
) -> Option<(Range<usize>, String)> {
    let mut found: Vec<(Range<usize>, String)> =
        scheme.find_ids(heading).into_iter().map(|m| (m.range, m.kind)).collect();
    if learned_too {
        for caps in LEARNED_GRAMMAR.captures_iter(heading) {
            let whole = caps.get(0).expect("group 0 always matches").range();
            let kind = &caps["kind"];
            if id_shaped(scheme, heading, whole.clone(), kind)
                && !found.iter().any(|(r, _)| r.start < whole.end && whole.start < r.end)
            {
                found.push((whole, kind.to_string()));
            }
        }
    }
    found.retain(|(range, _)| !is_source(&heading[range.clone()]));
    found.sort_by_key(|(range, _)| range.start);
    let (first, kind) = found.first().cloned()?;
    let leads = heading[..first.start].chars().all(|c| !c.is_alphabetic());
    let distinct: BTreeSet<&str> = found.iter().map(|(r, _)| &heading[r.clone()]).collect();
    (leads || distinct.len() == 1).then_some((first, kind))
}

/// True when `trimmed` (a line without its indent) opens, closes or is inside a fenced
/// code block; `fence` is the one open (its character and length).
pub(super) fn in_fence(trimmed: &str, fence: &mut Option<(char, usize)>) -> bool {
    if let Some(c) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~') {
        let run = trimmed.chars().take_while(|x| *x == c).count();
        if run >= 3 {
            match *fence {
                None => *fence = Some((c, run)),
                Some((open, len)) if open == c && run >= len && trimmed[run..].trim().is_empty() => *fence = None,
                _ => {}
            }
            return true;
        }
    }
    fence.is_some()
}

/// The level of `line` when the line after it underlines it as a heading (`---`: two;
/// `===`: one, the title).
fn setext_heading(line: &str, next: Option<&str>) -> Option<u8> {
    let trimmed = line.trim_start();
    let heading_text = !trimmed.is_empty() && !line.starts_with("    ") && !trimmed.starts_with(['#', '|', '>']);
    next.and_then(setext_level).filter(|_| heading_text)
}

/// The level of the Setext heading `line` underlines (`===`: 1, `---`: 2), if it is one.
fn setext_level(line: &str) -> Option<u8> {
    let trimmed = line.trim_end();
    if line.starts_with("    ") || trimmed.is_empty() {
        return None;
    }
    let marks = trimmed.trim_start();
    if marks.chars().all(|c| c == '=') {
        Some(1)
    } else if marks.chars().all(|c| c == '-') {
        Some(2)
    } else {
        None
    }
}

/// The kinds of record that `markdown` declares in the learned shape: in headings (ATX and
/// Setext), and in the first cells of table rows, outside code blocks. Read line by line,
/// without the Markdown parser: a cheap first look that the parse then relies on.
pub fn declared_kinds(scheme: &IdScheme, markdown: &str, is_source: impl Fn(&str) -> bool + Copy) -> BTreeSet<String> {
    let mut kinds = BTreeSet::new();
    // Numbered IDs by kind, from headings: a kind needs two to be a scheme.
    let mut numbered: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    // Headings that declare IDs of a kind held back as a technical word (`LLM-01 · …`,
    // where `LLM` is no kind by default), by kind: two make it one of this document's.
    let mut held_back: std::collections::BTreeMap<String, BTreeSet<String>> = Default::default();
    let mut fence: Option<(char, usize)> = None;
    // A top-level item that a nested list follows (`- Context truncation (TC-4)`, then
    // `  - status: …`) declares as a heading does.
    let mut item_above: Option<&str> = None;
    let lines: Vec<&str> = markdown.lines().collect();
    for (i, line) in lines.iter().copied().enumerate() {
        if let Some(item) = item_above.take() {
            let nested = line.starts_with([' ', '\t']) && line.trim_start().starts_with(['-', '*', '+']);
            if nested {
                learn_item(scheme, item, is_source, &mut kinds);
            } else if line.trim().is_empty() {
                item_above = Some(item);
            }
        }
        let trimmed = line.trim_start();
        if in_fence(trimmed, &mut fence) {
            continue;
        }
        if let Some(item) = top_level_item(line) {
            item_above = Some(item);
            continue;
        }
        let underline = setext_heading(line, lines.get(i + 1).copied());
        let (text, must_lead) = if let Some(level) = underline {
            if level == 1 {
                continue;
            }
            learn_heading_shapes(trimmed, &mut numbered, &mut kinds);
            (trimmed, false)
        } else if let Some(rest) = trimmed.strip_prefix('#') {
            // A level-one heading is the report's title (`# SWE-agent — Tool-call
            // handling`): it names the system, and teaches no kind of record.
            if !rest.starts_with('#') {
                continue;
            }
            let heading = rest.trim_start_matches('#');
            learn_heading_shapes(heading, &mut numbered, &mut kinds);
            if let Some(caps) = HELD_BACK_HEADING.captures(heading).filter(|c| scheme.not_ids.contains(&c["kind"])) {
                held_back.entry(caps["kind"].to_string()).or_default().insert(caps["id"].to_string());
            }
            (heading, false)
        } else if let Some(rest) = trimmed.strip_prefix('|') {
            // An ID-first row: the ID leads its first cell (`| reached in IM-channel runs |`
            // names a dimension, and teaches no kind).
            (rest.split('|').next().unwrap_or(""), true)
        } else if let Some(bold) = run_in(trimmed) {
            (bold, true)
        } else {
            continue;
        };
        let found = heading_id(scheme, true, text, is_source)
            .filter(|(range, _)| !must_lead || !text[..range.start].chars().any(char::is_alphanumeric));
        if let Some((range, _)) = found {
            if let Some(caps) = LEARNED_GRAMMAR.captures(&text[range.clone()]) {
                if caps.get(0).is_some_and(|m| m.range() == (0..range.len())) {
                    kinds.insert(caps["kind"].to_string());
                }
            }
        }
    }
    for (kind, ids) in held_back {
        if ids.len() >= 2 {
            kinds.insert(kind);
        }
    }
    for (marked, ids) in numbered {
        let kind = &marked[..marked.len() - 1];
        if ids.len() >= 2 && !scheme.is_kind(kind) && !scheme.not_ids.contains(kind) {
            kinds.insert(marked);
        }
    }
    kinds
}

/// The shapes without a hyphen a heading leads with: a numbered ID (`O1`), counted by
/// kind in `numbered` (a kind needs two); a word announced as a record (`Record MSG`),
/// learned at once; a dotted ID (`T.MEM.1`), counted.
fn learn_heading_shapes(
    heading: &str,
    numbered: &mut std::collections::BTreeMap<String, BTreeSet<String>>,
    kinds: &mut BTreeSet<String>,
) {
    if let Some(caps) = NUMBERED_HEADING.captures(heading) {
        numbered.entry(format!("{}{NUMBERED_MARK}", &caps["kind"])).or_default().insert(caps["id"].to_string());
    } else if let Some(caps) = WORD_HEADING.captures(heading) {
        kinds.insert(format!("{}{WORD_MARK}", &caps["id"]));
    } else if let Some(caps) = DOTTED_HEADING.captures(heading).filter(|c| c["kind"].len() >= 2) {
        // `C.7 Threats to validity` is an appendix's numbering: a dotted kind has two
        // letters at least (`T.MEM`, `TM`).
        numbered.entry(format!("{}{DOTTED_MARK}", &caps["kind"])).or_default().insert(caps["id"].to_string());
    }
}

/// The ID a top-level list item declares by its shape, with its byte range in `item`:
/// the item is a label and an ID, the ID leading it (`TC-4: Context truncation`) or
/// closing it in brackets (`Context truncation (TC-4)`, `**The checkpoint is …** [CK-01]`),
/// no sentence before it. Whether a nested list follows is the caller's to tell.
pub fn item_id(
    scheme: &IdScheme,
    learned_too: bool,
    item: &str,
    is_source: impl Fn(&str) -> bool,
) -> Option<Range<usize>> {
    if item.chars().count() > MAX_ITEM_CHARS || item.contains(". ") {
        return None;
    }
    let (range, _) = heading_id(scheme, learned_too, item, is_source)?;
    // `DONE ODR/GR-01 …`: an outline's keyword of state comes before the ID.
    let keyword = org_keyword_len(item);
    let leads = range.start >= keyword && !item[keyword..range.start].chars().any(char::is_alphanumeric);
    let before = item[..range.start].trim_end();
    let after = item[range.end..].trim();
    let trails = (after == ")" && before.ends_with('(')) || (after == "]" && before.ends_with('['));
    (leads || trails).then_some(range)
}

/// The length of the keyword of state an outline item opens with (`TODO `, `DONE `,
/// `WAIT `), org-mode's habit, or 0.
fn org_keyword_len(item: &str) -> usize {
    const KEYWORDS: [&str; 10] =
        ["TODO", "DONE", "WAIT", "WAITING", "NEXT", "LATER", "HOLD", "CANCELLED", "CANCELED", "STARTED"];
    let word = item.split_whitespace().next().unwrap_or("");
    if !KEYWORDS.contains(&word) {
        return 0;
    }
    let after = &item[item.find(word).unwrap_or(0) + word.len()..];
    item.len() - after.trim_start().len()
}

/// An outline item's title without its keyword of state and its tags: `WAIT Limits
/// :limits:` is `Limits`.
pub fn outline_title(item: &str) -> &str {
    without_tags(&item[org_keyword_len(item)..]).trim()
}

/// `text` without the tags an outline closes a line with (`… pipeline :flow:memory:`).
pub(super) fn without_tags(text: &str) -> &str {
    static TAGS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\s+:(?:[\p{L}\p{N}_@#%]+:)+\s*$").unwrap());
    TAGS.find(text).map_or(text, |tags| &text[..tags.start()])
}

/// The longest list item that declares a record: a label, or a one-line finding.
const MAX_ITEM_CHARS: usize = 200;

/// Learns the kind of the ID a list item declares ([`item_id`]).
fn learn_item(scheme: &IdScheme, item: &str, is_source: impl Fn(&str) -> bool, kinds: &mut BTreeSet<String>) {
    let text = item.trim();
    let Some(range) = item_id(scheme, true, text, is_source) else { return };
    if let Some(caps) = LEARNED_GRAMMAR.captures(&text[range.clone()]) {
        if caps.get(0).is_some_and(|m| m.range() == (0..range.len())) {
            kinds.insert(caps["kind"].to_string());
        }
    }
}

/// The text of a top-level list item's first line: `- …`, `* …`, `+ …`, `1. …`, `2) …`.
fn top_level_item(line: &str) -> Option<&str> {
    if let Some(item) = line.strip_prefix("- ").or_else(|| line.strip_prefix("* ")).or_else(|| line.strip_prefix("+ "))
    {
        return Some(item);
    }
    let digits = line.len() - line.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &line[digits..];
    (1..=3).contains(&digits).then(|| rest.strip_prefix(". ").or_else(|| rest.strip_prefix(") "))).flatten()
}

/// The bold words a paragraph opens with (`**G-01 · Agent graph.** Every run …` →
/// `G-01 · Agent graph.`), as Markdown.
pub fn run_in(paragraph: &str) -> Option<&str> {
    // A thread's post number and its emoji may come first: `**4/** 🔁 **BAGI-LOOP — …**`.
    static POST: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^(?:\*\*|__)?[0-9]{1,3}/(?:[0-9]{1,3})?(?:\*\*|__)?\s+").unwrap());
    let text = paragraph.trim_start();
    let text = match POST.find(text) {
        Some(post) => text[post.end()..].trim_start_matches(|c: char| !c.is_alphanumeric() && !"*_`[(".contains(c)),
        None => text,
    };
    let marker = ["**", "__"].into_iter().find(|m| text.starts_with(m))?;
    let close = text[2..].find(marker)? + 2;
    Some(&text[2..close])
}

/// The kind code of an `unpublished` pattern in the learned shape (`CLM-*` → `CLM`).
pub fn pattern_kind(pattern: &str) -> Option<String> {
    let (kind, _) = pattern.split_once('-')?;
    let shaped = kind.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && kind.len() <= 10
        && kind.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    shaped.then(|| kind.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::SiteConfig;

    fn scheme() -> IdScheme {
        IdScheme::new(&SiteConfig::default().ids).unwrap()
    }

    fn declared(heading: &str) -> Option<&str> {
        heading_id(&scheme(), true, heading, |w| w.starts_with("SRC-")).map(|(r, _)| &heading[r])
    }

    #[test]
    fn a_heading_declares_the_id_it_leads_with_or_its_only_one() {
        assert_eq!(declared(" ED-SEL — Edit-format selection"), Some("ED-SEL"));
        assert_eq!(declared(" [MEM-OBJ-logs-db] The logs database"), Some("MEM-OBJ-logs-db"));
        assert_eq!(declared(" 4.2.1 GR-1: Input guardrail"), Some("GR-1"));
        assert_eq!(declared(" **TC-W01** · add() stores facts"), Some("TC-W01"));
        assert_eq!(declared(" The logs database (SW-S-history)"), Some("SW-S-history"));
        assert_eq!(declared(" Finding SMA-01: dunder writes"), Some("SMA-01"));
        assert_eq!(declared(" How ED-SEL feeds ED-PIPE"), None);
        assert_eq!(declared(" Sources (SRC-1)"), None);
        assert_eq!(declared(" Why SHA-256 and UTF-8"), None);
        assert_eq!(declared(" X-ray and A-B testing"), None);
        assert_eq!(declared(" E11 — llm/cli.py, L517-527"), None, "a kind is letters");
        assert_eq!(declared(" W-SIG · step signature"), Some("W-SIG"), "one letter, then capitals");
        assert_eq!(declared(" A-B testing"), None);
    }

    #[test]
    fn kinds_are_read_from_headings_and_first_cells_outside_code() {
        let md = "# SWE-agent — Review\n\n### ED-SEL — Selection\n\n```\n### FAKE-1 not a heading\n```\n\n| ID | What |\n|---|---|\n| GIT-AUTO | commits |\n| 3 | HO-2 in a later cell |\n| reached in IM-channel runs | a dimension |\n\nText about TXT-1.\n";
        let kinds = declared_kinds(&scheme(), md, |w| w.starts_with("SRC-"));
        assert_eq!(kinds.into_iter().collect::<Vec<_>>(), ["ED", "GIT"]);
    }

    #[test]
    fn an_outline_s_items_declare_with_a_keyword_before_and_tags_after() {
        let md = "# Outline\n\n- DONE ODR/GR-01 Top-level pipeline :flow:\n  - STATUS: wired\n\n- TODO Coverage :coverage:\n  - [x] read\n";
        let kinds = declared_kinds(&scheme(), md, |w| w.starts_with("SRC-"));
        assert_eq!(kinds.into_iter().collect::<Vec<_>>(), ["GR"]);
        let conventions = crate::recognise::Conventions::new(&SiteConfig::default()).unwrap();
        let learned = conventions.with_learned_kinds(&["GR".to_string()]);
        let item = "DONE ODR/GR-01 Top-level pipeline :flow:memory:";
        let range = item_id(&learned.ids, true, item, |w| w.starts_with("SRC-")).unwrap();
        assert_eq!(&item[range.clone()], "ODR/GR-01", "the namespace is part of the ID");
        assert_eq!(crate::recognise::label_around(item, range).as_deref(), Some("Top-level pipeline"));
        assert_eq!(outline_title("WAIT Limits :limits:"), "Limits");
        assert_eq!(outline_title("Limits of this run"), "Limits of this run");
        let text = "see src/GR-01.md and ODR/GR-02";
        let ids: Vec<&str> = learned.ids.find_ids(text).into_iter().map(|m| &text[m.range]).collect();
        assert_eq!(ids, ["GR-01", "ODR/GR-02"], "a lower-case folder is no namespace");
    }

    #[test]
    fn a_technical_word_is_a_kind_where_two_headings_declare_it() {
        let md = "# Kernel\n\n### KRN-01 · Bootstrap\n\n### LLM-01 · Adapter fan-out\n\n### LLM-02 · Output cap\n\nLLM-01 and ISO-8601.\n";
        let kinds = declared_kinds(&scheme(), md, |w| w.starts_with("SRC-"));
        assert_eq!(kinds.iter().map(String::as_str).collect::<Vec<_>>(), ["KRN", "LLM"]);
        let conventions = crate::recognise::Conventions::new(&SiteConfig::default()).unwrap();
        let learned = conventions.with_learned_kinds(&kinds.into_iter().collect::<Vec<_>>());
        let text = "LLM-01 and ISO-8601.";
        let ids: Vec<&str> = learned.ids.find_ids(text).into_iter().map(|m| &text[m.range]).collect();
        assert_eq!(ids, ["LLM-01"], "only the kind the document declares");
        let one = "# K\n\n### KRN-01 · Bootstrap\n\n### GPT-4 · Model behaviour\n";
        let kinds = declared_kinds(&scheme(), one, |w| w.starts_with("SRC-"));
        assert!(!kinds.contains("GPT"), "one heading is no scheme");
    }

    #[test]
    fn numbered_kinds_are_learned_from_two_headings_that_lead_with_them() {
        let md = "# Paper\n\n### O1 AgentState\n\n### O2 MessageManagerState\n\n### 6.1 H1 — digest\n\n\
                  ### 6.2 H2 — bounding\n\n### Q1 Alone\n\n### 3 Results and M4 cores\n";
        let kinds = declared_kinds(&scheme(), md, |w| w.starts_with("SRC-"));
        assert_eq!(kinds.into_iter().collect::<Vec<_>>(), ["H#", "O#"], "Q has one heading; M4 does not lead");
        let conventions = crate::recognise::Conventions::new(&SiteConfig::default()).unwrap();
        let learned = conventions.with_learned_kinds(&["O#".to_string()]);
        let text = "O1 holds O2; H2 and P4 are words.";
        let ids: Vec<&str> = learned.ids.find_ids(text).into_iter().map(|m| &text[m.range]).collect();
        assert_eq!(ids, ["O1", "O2"]);
        let (_, undeclared) = learned.ids.find_ids_and_undeclared(text);
        assert!(undeclared.is_empty(), "a numbered word of no learned kind is no near miss: {undeclared:?}");
    }

    #[test]
    fn dotted_kinds_are_learned_from_two_headings_that_lead_with_them() {
        let md = "# Threat model\n\n### T.MEM.1 — Unbounded growth\n\n### T.MEM.2 — Self-injection\n\n\
                  ### 3.1 Python 3.12 Support\n\n### U.S.1 — Alone\n\n## C.1 Method\n\n## C.2 Threats\n";
        let kinds = declared_kinds(&scheme(), md, |w| w.starts_with("SRC-"));
        assert_eq!(kinds.into_iter().collect::<Vec<_>>(), ["T.MEM."], "U.S has one heading; C.1 numbers");
        let conventions = crate::recognise::Conventions::new(&SiteConfig::default()).unwrap();
        let learned = conventions.with_learned_kinds(&["T.MEM.".to_string()]);
        let text = "T.MEM.1 and T.MEM.10 (T.MEM.2.3 is a version); U.S.1 and v1.2 are words.";
        let ids: Vec<&str> = learned.ids.find_ids(text).into_iter().map(|m| &text[m.range]).collect();
        assert_eq!(ids, ["T.MEM.1", "T.MEM.10"]);
        assert_eq!(learned.ids.classify("T.MEM.10").map(|m| m.kind).as_deref(), Some("T.MEM"));
    }

    #[test]
    fn a_record_announced_by_a_word_in_capitals_makes_that_word_an_id() {
        let md =
            "# Notes\n\n#### Record MSG — Message envelope\n\n#### Record ENV-POOL — The pool\n\n### JSON output\n";
        let kinds = declared_kinds(&scheme(), md, |w| w.starts_with("SRC-"));
        assert_eq!(kinds.into_iter().collect::<Vec<_>>(), ["ENV", "MSG="]);
        let conventions = crate::recognise::Conventions::new(&SiteConfig::default()).unwrap();
        let learned = conventions.with_learned_kinds(&["MSG=".to_string(), "ENV".to_string()]);
        let text = "cf. MSG and ENV-POOL; JSON, MSG-X, ENV and MSGS are words.";
        let ids: Vec<&str> = learned.ids.find_ids(text).into_iter().map(|m| &text[m.range]).collect();
        assert_eq!(ids, ["MSG", "ENV-POOL"]);
    }

    #[test]
    fn learned_kinds_find_their_ids_but_not_hyphenated_words() {
        let conventions = crate::recognise::Conventions::new(&SiteConfig::default()).unwrap();
        let learned = conventions.with_learned_kinds(&["N".to_string(), "ED".to_string()]);
        let text = "See N-07, the N-th call, ED-SEL and L517-527.";
        let ids: Vec<&str> = learned.ids.find_ids(text).into_iter().map(|m| &text[m.range]).collect();
        assert_eq!(ids, ["N-07", "ED-SEL"]);
        assert!(conventions.ids.find_ids(text).is_empty(), "the site's own conventions are untouched");
    }

    #[test]
    fn unpublished_patterns_name_their_kind() {
        assert_eq!(pattern_kind("CLM-*").as_deref(), Some("CLM"));
        assert_eq!(pattern_kind("N-*").as_deref(), Some("N"));
        assert_eq!(pattern_kind("RT-OBJ-*").as_deref(), Some("RT"));
        assert_eq!(pattern_kind("*-draft"), None);
    }
}
