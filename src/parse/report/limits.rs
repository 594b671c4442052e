//! Limits: what a report says it did not inspect or establish. The rows of limitation
//! tables (a column named like `Limitation`) and coverage tables (`Coverage and conclusion
//! limits`) anywhere,
//! and the rows and items of the tables and lists of a section about limits (its heading
//! holds `Limitations`, `Limits` …; all of it is `conventions.limits`). Each gets a
//! handle (the report's own, `L3`, where it numbers them) and an anchor on the page.

use std::ops::Range;

use super::{Cell, Inline, Scanner};
use crate::model::{Limit, LimitKind, LineCol, RecordId};
use crate::recognise::LimitWords;

/// How the table being read states limits, read from its header.
#[derive(Clone, Copy)]
pub(super) struct LimitColumns {
    kind: LimitKind,
    /// The column of the limitation (or coverage) itself.
    text: usize,
    prevents: Option<usize>,
    resolves: Option<usize>,
}

/// A limit of a table row, waiting for the table's end to get its anchor: the findings
/// of the table may give its row one first.
pub(super) struct PendingLimit {
    limit: Limit,
    row: (usize, usize),
}

/// True for a handle as analyses number limits: `L3`, `L-3`, `3`, `L3a`.
fn is_handle(text: &str) -> bool {
    let digits = text.trim_start_matches(|c: char| c.is_ascii_alphabetic()).trim_start_matches('-');
    let letters = text.len() - text.trim_start_matches(|c: char| c.is_ascii_alphabetic()).len();
    let number = digits.trim_end_matches(|c: char| c.is_ascii_lowercase());
    letters <= 3 && !number.is_empty() && number.len() <= 4 && number.chars().all(|c| c.is_ascii_digit())
}

/// The handle a limit's text opens with (`L1 — …`, `**G2.** …`, `#3: …`, `(C4) …`), and
/// the text after it and its separator.
fn leading_handle(text: &str) -> Option<(String, &str)> {
    let text = text.trim_start();
    let token_end = text.find(|c: char| c.is_whitespace() || ".:—–)]".contains(c)).unwrap_or(text.len());
    let token = text[..token_end].trim_start_matches(['#', '(', '[']);
    // `SRC-1 was read.` opens with a source, not a handle.
    if !is_handle(token) || token.contains('-') {
        return None;
    }
    let rest = text[token_end..].trim_start_matches(|c: char| c.is_whitespace() || ".:—–-)]|".contains(c));
    (!rest.is_empty()).then(|| (token.to_string(), rest))
}

/// True when a heading speaks of the analysis itself (`limits of this review`, `what our
/// audit did not cover`), not of the system it is about.
fn names_the_analysis(title: &str) -> bool {
    const WORKS: [&str; 12] = [
        "review",
        "analysis",
        "audit",
        "report",
        "run",
        "study",
        "assessment",
        "evaluation",
        "export",
        "investigation",
        "inspection",
        "work",
    ];
    let words: Vec<String> =
        title.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect();
    words.windows(2).any(|pair| ["this", "our"].contains(&pair[0].as_str()) && WORKS.contains(&pair[1].as_str()))
}

/// A header that names a column of handles.
fn is_handle_header(header: &str) -> bool {
    matches!(header.trim().to_lowercase().as_str(), "" | "#" | "id" | "no" | "no." | "n°" | "nr" | "handle")
}

impl Scanner<'_> {
    /// A heading of `level` opens a section: it is about limits when its title says so,
    /// or when a heading around it is.
    pub(super) fn enter_section(&mut self, level: u8, title: &str, declares: bool) {
        while self.heading_stack.last().is_some_and(|&(open, _)| open >= level) {
            self.heading_stack.pop();
        }
        let around = self.heading_stack.last().is_some_and(|&(_, limits)| limits);
        // A record's heading (`### OBJ-07 Limitation register`, `### 5.1 LOOP-1: Turn
        // limit` under `## 5. Run-loop limits`) is about the record.
        // The first level-one heading is the report's title: one about `context limits` is
        // not wholly a list of its own limits. (Later ones are sections, as in a report
        // that underlines its parts with `===`.)
        let is_title = level == 1 && !self.parts.sections.iter().any(|s| s.level == 1);
        let says = !is_title && LimitWords::holds(&self.conventions.limits.headings, title);
        // `## TWV-299 · Not looked at (limits of this review)`: a record's heading that
        // says it holds the analysis's own limits does.
        let own = says && names_the_analysis(title);
        self.heading_stack.push((level, (!declares && (around || says)) || own));
    }

    /// A paragraph of a section about limits: a limit when it opens with a handle
    /// (`L1. No code was executed …`), else prose.
    pub(super) fn limits_paragraph(&mut self, inline: &Inline, mentions: Range<usize>, citations: Range<usize>) {
        if leading_handle(&inline.text).is_some() {
            self.limit_item(inline, mentions, citations);
        } else {
            self.limits_prose(inline);
        }
    }

    /// True when the current section, or one around it, is about limits.
    pub(super) fn in_limits_section(&self) -> bool {
        self.heading_stack.last().is_some_and(|&(_, limits)| limits)
    }

    /// How the table being read states limits, if it does: a limitation or coverage
    /// column anywhere, or any table of a section about limits.
    pub(super) fn limit_columns(&self) -> Option<LimitColumns> {
        let words = &self.conventions.limits;
        let find = |list: &[String]| self.header.iter().position(|h| LimitWords::holds(list, h));
        let (kind, text) = match (find(&words.limitation_columns), find(&words.coverage_columns)) {
            (Some(column), _) => (LimitKind::Limitation, column),
            (None, Some(column)) => (LimitKind::Coverage, column),
            (None, None) if self.in_limits_section() => {
                let first =
                    usize::from(self.header.first().is_some_and(|h| is_handle_header(h)) && self.header.len() > 1);
                (LimitKind::Limitation, first)
            }
            (None, None) => return None,
        };
        let other = |list: &[String]| find(list).filter(|&c| c != text);
        Some(LimitColumns {
            kind,
            text,
            prevents: other(&words.prevents_columns),
            resolves: other(&words.resolves_columns),
        })
    }

    /// A row of a limitation or coverage table: a limit, anchored at the table's end.
    /// `mentions` and `citations` are what the row's scan found.
    pub(super) fn limit_row(&mut self, cells: &[Cell], mentions: Range<usize>, citations: Range<usize>) {
        let Some(columns) = self.table_limits else { return };
        let cell = |column: Option<usize>| {
            let cell = cells.get(column?)?;
            let text = self.md[cell.source.clone()].trim().trim_matches('|').trim();
            (!text.is_empty()).then(|| text.to_string())
        };
        let Some(text) = cell(Some(columns.text)) else { return };
        let first = cells.first().map(|c| c.inline.text.trim().to_string()).unwrap_or_default();
        let given = (columns.text != 0 && is_handle(&first)).then_some(first);
        let scope = match columns.kind {
            LimitKind::Coverage if columns.text != 0 => cell(Some(0)),
            _ => None,
        };
        let offset = cells.get(columns.text).map_or(0, |c| c.source.start);
        let limit = self.new_limit(given, columns.kind, scope, text, self.line_col(offset), mentions, citations);
        let limit = Limit { prevents: cell(columns.prevents), resolves: cell(columns.resolves), ..limit };
        self.pending_limits.push(PendingLimit { limit, row: (self.table.unwrap_or(0), self.body_row) });
    }

    /// At a table's end: its limits, each anchored at its row (the anchor its findings
    /// gave the row, if they did).
    pub(super) fn finish_table_limits(&mut self) {
        for PendingLimit { mut limit, row } in std::mem::take(&mut self.pending_limits) {
            limit.anchor = match self.parts.row_anchors.get(&row) {
                Some(anchor) => anchor.clone(),
                None => {
                    let anchor = self.unique_anchor(format!("limit-{}", limit.handle.to_lowercase()));
                    self.parts.row_anchors.insert(row, anchor.clone());
                    anchor
                }
            };
            self.parts.limits.push(limit);
        }
        self.table_limits = None;
    }

    /// An item of a list in a section about limits: a limit, anchored at the item.
    pub(super) fn limit_item(&mut self, inline: &Inline, mentions: Range<usize>, citations: Range<usize>) {
        let text = inline.text.trim();
        let Some(source) = inline.source.clone().filter(|_| !text.is_empty()) else { return };
        let location = self.line_col(source.start);
        let (given, text) = match leading_handle(text) {
            Some((handle, rest)) => (Some(handle), rest),
            None => (None, text),
        };
        let mut limit =
            self.new_limit(given, LimitKind::Limitation, None, text.to_string(), location, mentions, citations);
        limit.anchor = match self.parts.block_anchors.get(&source.start) {
            Some(anchor) => anchor.clone(),
            None => {
                let anchor = self.unique_anchor(format!("limit-{}", limit.handle.to_lowercase()));
                self.parts.block_anchors.insert(source.start, anchor.clone());
                anchor
            }
        };
        self.parts.limits.push(limit);
    }

    /// A paragraph of a section about limits, which is no limit of its own: noted once
    /// per section, so that `--explain` says the section was read as prose.
    pub(super) fn limits_prose(&mut self, inline: &Inline) {
        if self.limits_prose_noted == self.section {
            return;
        }
        self.limits_prose_noted = self.section;
        let offset = inline.source.as_ref().map_or(0, |s| s.start);
        self.note(
            offset,
            1,
            "a section about limits written as paragraphs: casebook lists its tables' rows and its lists' items as limits, and shows its prose as it is".into(),
            "to have each limit listed, with its handle, on the run's and the records' pages, write them as a list or a table (`| # | Limitation | Conclusion prevented |`)",
        );
    }

    /// A top-level item led by a lettered handle (`**L1.** Nothing was executed …`) where
    /// no heading says limits: likely a list of limits under a heading casebook does not
    /// read as one. Noted once per section; a record's ID is no handle.
    pub(super) fn handle_item_outside_limits(&mut self, inline: &Inline) {
        let Some((handle, _)) = leading_handle(&inline.text) else { return };
        let lettered = handle.starts_with(|c: char| c.is_ascii_alphabetic());
        if !lettered || self.scheme.leading_id(inline.text.trim_start_matches(['*', '_', '(', '['])).is_some() {
            return;
        }
        if self.handles_noted == Some(self.section) {
            return;
        }
        self.handles_noted = Some(self.section);
        let offset = inline.source.as_ref().map_or(0, |s| s.start);
        self.note(
            offset,
            1,
            format!("a list whose items lead with handles ({handle}, …), as limits do, under a heading that does not say limits"),
            "if these are the analysis's limits, say so in the heading (`## Limits`, `## Gaps`, `## Residual risk`), or add the heading's words to `conventions.limits.headings` in casebook.yaml",
        );
    }

    #[allow(clippy::too_many_arguments)]
    fn new_limit(
        &self,
        given: Option<String>,
        kind: LimitKind,
        scope: Option<String>,
        text: String,
        location: LineCol,
        mentions: Range<usize>,
        citations: Range<usize>,
    ) -> Limit {
        let number = self.parts.limits.len() + self.pending_limits.len() + 1;
        let handle_given = given.is_some();
        let handle = given.unwrap_or_else(|| format!("L{number}"));
        let mut named: Vec<RecordId> = self.parts.mentions[mentions].iter().map(|m| m.target.clone()).collect();
        named.dedup();
        let mut paths: Vec<String> =
            self.parts.citations[citations].iter().filter_map(|c| c.path.as_deref().map(str::to_string)).collect();
        paths.sort();
        paths.dedup();
        Limit {
            handle,
            handle_given,
            kind,
            scope,
            text,
            prevents: None,
            resolves: None,
            anchor: std::sync::Arc::default(),
            location,
            section: self.section,
            mentions: named,
            paths,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_limit_s_handle_is_read_off_its_text() {
        let read = |t: &'static str| leading_handle(t).map(|(h, rest)| (h, rest.to_string()));
        assert_eq!(read("L1 — Mock model only."), Some(("L1".into(), "Mock model only.".into())));
        assert_eq!(
            read("L3. The blocked-output module was not read."),
            Some(("L3".into(), "The blocked-output module was not read.".into()))
        );
        assert_eq!(read("G2: gaps"), Some(("G2".into(), "gaps".into())));
        assert_eq!(read("#4 nothing ran"), Some(("4".into(), "nothing ran".into())));
        assert_eq!(read("Nothing was executed."), None);
        assert_eq!(read("SRC-1 was read."), None);
    }

    use super::{is_handle, leading_handle};
    use crate::model::{Diagnostic, LimitKind};
    use crate::parse::report::tests::parse;

    #[test]
    fn an_outline_item_of_limits_holds_its_nested_items_as_limits() {
        let (report, _) = parse(
            "# R\n\n- DONE OBJ-01 A gate :flow:\n  - STATUS: wired\n\n- WAIT Limits :limits:\n  - L1 :: The handler was not read.\n  - L2 :: No run was made.\n\n- Other\n  - L3 :: not a limit\n",
        );
        let limits: Vec<_> = report.limits.iter().map(|l| (l.handle.as_str(), l.text.as_str())).collect();
        assert_eq!(limits, [("L1", "The handler was not read."), ("L2", "No run was made.")]);
    }

    #[test]
    fn a_record_s_heading_that_holds_the_analysis_s_own_limits_does() {
        let (report, _) = parse(
            "# R\n\n## TWV-299 · Not looked at (limits of this review)\n\n- **L1.** Nothing ran.\n\n\
             ## OBJ-07 Limitation register\n\n- **L2.** An entry of the system's register.\n\n\
             ## 8. Limites\n\n- **L3** — Les tests n'ont pas été lus.\n",
        );
        let limits: Vec<_> = report.limits.iter().map(|l| l.handle.as_str()).collect();
        assert_eq!(limits, ["L1", "L3"]);
        assert!(super::names_the_analysis("What our audit did not cover"));
        assert!(!super::names_the_analysis("Context limits in this agent"));
    }

    #[test]
    fn a_list_led_by_limitations_and_a_handle_column_are_limits() {
        let (report, _) = parse(
            "# R\n\n## What I read\n\nLimitations:\n\n- **L1 — The engine was not read.** So G-01 rests on docs.\n\n\
             Then:\n\n- not a limit\n\n## Gaps\n\n| Handle | Not inspected | Prevents conclusion on |\n|---|---|---|\n\
             | L2 | No execution. | observed statuses |\n",
        );
        let limits: Vec<_> =
            report.limits.iter().map(|l| (l.handle.as_str(), l.handle_given, l.text.as_str())).collect();
        assert_eq!(
            limits,
            [("L1", true, "The engine was not read. So G-01 rests on docs."), ("L2", true, "No execution.")]
        );
        assert_eq!(report.limits[1].prevents.as_deref(), Some("observed statuses"));
    }

    #[test]
    fn a_numbered_limitation_table_gives_each_row_its_handle_and_what_it_prevents() {
        let (report, _) = parse(
            "# R\n\n## 6. Limitations, each paired with the conclusion it prevents\n\n\
             | # | Limitation | Exact conclusion it prevents |\n|---|---|---|\n\
             | L1 | The dependency (SRC-1 `dep/a.py:3`) was not read. | Prevents any claim about OBJ-02. |\n\
             | L2 | No execution. | Prevents every observed status. |\n",
        );
        let handles: Vec<(&str, bool)> = report.limits.iter().map(|l| (l.handle.as_str(), l.handle_given)).collect();
        assert_eq!(handles, [("L1", true), ("L2", true)]);
        let first = &report.limits[0];
        assert_eq!(first.kind, LimitKind::Limitation);
        assert_eq!(first.text, "The dependency (SRC-1 `dep/a.py:3`) was not read.");
        assert_eq!(first.prevents.as_deref(), Some("Prevents any claim about OBJ-02."));
        assert_eq!(first.mentions.iter().map(|m| m.as_str()).collect::<Vec<_>>(), ["OBJ-02"]);
        assert_eq!(first.paths, ["dep/a.py"]);
        // The row's anchor: here the one its cells' findings gave it (`L1`).
        assert_eq!(report.row_anchors.get(&(0, 0)), Some(&first.anchor));
        assert_eq!(first.location.line, 7);
        assert_ne!(report.limits[1].anchor, first.anchor);
    }

    #[test]
    fn a_limitation_column_anywhere_and_a_coverage_table_are_limits_with_derived_handles() {
        let (report, _) = parse(
            "# R\n\n## Findings\n\n| Limitation | Conclusion prevented | Evidence that would resolve it |\n|---|---|---|\n\
             | No trace | Exercised recall | A trace |\n\n\
             | Entry point or operation | SRC-1 paths | Coverage and conclusion limits |\n|---|---|---|\n\
             | Turn admission | a.py | Direct reads; host completeness remains external. |\n\n\
             | Object | Status |\n|---|---|\n| Cache | absent |\n",
        );
        assert_eq!(report.limits.len(), 2, "{:?}", report.limits);
        let (limitation, coverage) = (&report.limits[0], &report.limits[1]);
        assert_eq!((limitation.handle.as_str(), limitation.handle_given), ("L1", false));
        assert_eq!(limitation.resolves.as_deref(), Some("A trace"));
        assert_eq!(coverage.kind, LimitKind::Coverage);
        assert_eq!(coverage.scope.as_deref(), Some("Turn admission"));
        assert_eq!(coverage.text, "Direct reads; host completeness remains external.");
        assert_eq!(coverage.handle, "L2");
    }

    #[test]
    fn a_test_coverage_column_and_a_record_named_like_a_limit_are_no_limits() {
        let (report, diagnostics) = parse(
            "# R\n\n| Component | Test coverage |\n|---|---|\n| Cache | 80% |\n\n\
             ### OBJ-07 Limitation register\n\n- an item of the record\n\nA paragraph of the record.\n",
        );
        assert!(report.limits.is_empty(), "{:?}", report.limits);
        assert!(!diagnostics.iter().any(|d| d.message.contains("section about limits")), "{diagnostics:?}");
    }

    #[test]
    fn a_section_about_limits_makes_its_list_items_limits_and_notes_its_prose() {
        let (report, diagnostics) = parse(
            "# R\n\n## Limitations of this run\n\nThe source was read, not run.\n\n- Tests were not read (OBJ-04).\n- No history.\n  - a nested detail\n\n## Other\n\n- not a limit\n",
        );
        let texts: Vec<&str> = report.limits.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["Tests were not read (OBJ-04).", "No history."]);
        assert_eq!(report.block_anchors.values().filter(|a| a.starts_with("limit-")).count(), 2);
        let notes: Vec<&Diagnostic> =
            diagnostics.iter().filter(|d| d.message.contains("section about limits")).collect();
        assert_eq!(notes.len(), 1, "{diagnostics:?}");
        assert_eq!(notes[0].location.line, 5);
    }

    #[test]
    fn a_definition_list_of_handles_under_myst_targets_is_a_list_of_limits() {
        let (report, diagnostics) =
            parse("## Limits\n\n(lim-l1)=\nL1\n: Nothing was executed.\n\n(lim-l2)=\nL2\n: Two providers were read.\n");
        let limits: Vec<(&str, &str)> = report.limits.iter().map(|l| (l.handle.as_str(), l.text.as_str())).collect();
        assert_eq!(limits, [("L1", "Nothing was executed."), ("L2", "Two providers were read.")]);
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
    }

    #[test]
    fn a_later_level_one_heading_about_limits_is_a_section_of_limits_but_the_title_is_not() {
        let (report, _) =
            parse("Context limits\n==\n\n- L1 Not a limit.\n\nCoverage and limits\n==\n\n- L1  Nothing was run.\n");
        let limits: Vec<&str> = report.limits.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(limits, ["Nothing was run."]);
    }

    #[test]
    fn handles_are_short_numbered_tokens() {
        for handle in ["L1", "L12", "3", "L-3", "L3a", "LIM7"] {
            assert!(is_handle(handle), "{handle}");
        }
        for text in ["", "L", "Limitation", "No execution", "L12345", "ABCD1", "1.2"] {
            assert!(!is_handle(text), "{text}");
        }
    }
}
