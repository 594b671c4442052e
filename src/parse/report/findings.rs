//! Findings: where a report states a status of the vocabulary on a dimension of a subject.
//!
//! - a cell of a column whose header ends in `Status` (explicit: any words may follow);
//! - a cell of a column whose cells mostly start with a status (`(c) Activation`):
//!   known only at the table's end, so such cells wait there;
//! - a sentence that starts with a status key (`Status: …`, `Operation status: …`,
//!   `Status of "x": …`, `Promotion path finding: …`), in prose, list items and cells;
//! - `Key: <status> …` in a paragraph or list item.
//!
//! The subject is the row's record (an ID-first row), else the record whose text holds
//! the finding (the row's label then names the dimension), else the row's first cell, the
//! key, or the section a sentence is in.

use std::ops::Range;
use std::sync::{Arc, LazyLock};

use regex::Regex;

use super::{Cell, Inline, Scanner};
use crate::model::{Code, Diagnostic, Finding, FindingForm, Owner, RecordId, Subject, Text};
use crate::recognise::words::{CONCLUDING_HEADERS, DIMENSION_HEADERS, STATUS_HEADERS};
use crate::recognise::{self, dimension_clauses, is_placeholder, stated, status_keys, Reading, Stated, StatusKey};

/// A row's context for its findings.
pub(super) struct Row {
    subject: Subject,
    /// For a row of a table in a record's text, its label: it names the dimension (so
    /// does an ID-first row's `Dimension` cell).
    pub(super) label_dimension: Option<String>,
    /// The row's first cell, as text.
    label: String,
    part: Option<String>,
    /// The row's anchor, once it has one (a declaring row always does).
    anchor: Option<Arc<str>>,
    owner: Option<Owner>,
    /// The record the row declares.
    declares: Option<RecordId>,
    evidence: Range<usize>,
    table: usize,
    body_row: usize,
}

impl Row {
    /// A row whose first cell is no ID: about the record whose text holds the table, else
    /// about what its first cell names.
    pub(super) fn undeclared(scanner: &Scanner<'_>, cells: &[Cell], evidence: Range<usize>) -> Self {
        // A first column of row numbers (`#`) names no row: the next cell does.
        let numbered = cells.len() > 1
            && scanner
                .header
                .first()
                .is_some_and(|h| matches!(h.trim().to_lowercase().as_str(), "#" | "no" | "no." | "n°" | "nr"));
        let label = cells.get(usize::from(numbered)).map(|c| collapse(&c.inline.text)).unwrap_or_default();
        let label = if label.is_empty() { format!("row {}", scanner.body_row + 1) } else { label };
        let owner = scanner.owner.map(|(o, _)| o);
        let (subject, label_dimension) = match scanner.owner_record(owner) {
            Some(id) => (Subject::Record(id), Some(label.clone())),
            None => (Subject::Named(label.clone()), None),
        };
        Row {
            subject,
            label_dimension,
            label,
            part: None,
            anchor: None,
            owner,
            declares: None,
            evidence,
            table: scanner.table.unwrap_or(0),
            body_row: scanner.body_row,
        }
    }

    /// A row that declares `id` (its declaration is `index`).
    pub(super) fn declaring(
        scanner: &Scanner<'_>,
        id: RecordId,
        part: Option<String>,
        anchor: Arc<str>,
        index: usize,
        evidence: Range<usize>,
    ) -> Self {
        Row {
            label: id.to_string(),
            subject: Subject::Record(id.clone()),
            label_dimension: None,
            part,
            anchor: Some(anchor),
            owner: Some(Owner::declaration(index)),
            declares: Some(id),
            evidence,
            table: scanner.table.unwrap_or(0),
            body_row: scanner.body_row,
        }
    }
}

/// The cells of a table that may be findings, waiting for its end: a column holds
/// findings when most of its cells start with a status. And the table's row handles:
/// rows numbered `L1`, `L2`… (a limitations table) are anchored by their handles.
#[derive(Default)]
pub(super) struct TableFindings {
    /// Per column: cells that say something (not a placeholder), and cells that start
    /// with a status.
    filled: Vec<usize>,
    stating: Vec<usize>,
    waiting: Vec<Waiting>,
    /// Rows whose first cell is a handle (`L3`): body row, handle, where it is written.
    handles: Vec<(usize, String, usize)>,
    /// Rows whose first cell is neither empty, nor an ID, nor a handle.
    labelled_rows: usize,
}

/// True for a row handle: one to three capitals and a number (`L3`, `Q12`), a table's
/// own numbering of its rows.
pub(super) fn is_handle(text: &str) -> bool {
    let letters = text.chars().take_while(char::is_ascii_uppercase).count();
    let digits = &text[letters..];
    (1..=3).contains(&letters) && (1..=3).contains(&digits.len()) && digits.chars().all(|c| c.is_ascii_digit())
}

/// What a row's cells state, gathered before the row's findings get their anchor.
#[derive(Default)]
struct RowFound {
    /// Findings of the row now.
    findings: Vec<Finding>,
    /// The statuses its `Status` cells state.
    row_statuses: Vec<Arc<str>>,
    /// Cells in columns not yet known to hold findings: column, findings, statement.
    waiting: Vec<(usize, Vec<Finding>, Text)>,
}

/// A cell that starts with a status, in a column not yet known to hold findings.
struct Waiting {
    column: usize,
    /// Its findings, but for their anchor.
    findings: Vec<Finding>,
    /// Its row's table, body row and label, for the anchor.
    row: (usize, usize, String),
    /// The statuses of its row's `Status` cells: a cell that restates them adds no
    /// finding, but its words (`absent. The full slash-command surface …`) say more than
    /// the `Status` cell's (`absent`), and become those findings' statement.
    row_statuses: Vec<Arc<str>>,
    /// Those findings, by index into the report's findings.
    row_findings: Range<usize>,
    /// The cell's statement.
    statement: Text,
}

/// What a paragraph's findings say about the rest of its reading.
pub(super) struct BlockFindings {
    /// The paragraph starts with a status key: it is not also a field.
    pub(super) starts_with_status_key: bool,
}

/// True when a column header names a status column (`Status`, `Operation status`).
pub(super) fn is_status_header(header: &str) -> bool {
    let header = singular(&header.trim().to_lowercase()).to_string();
    STATUS_HEADERS.iter().any(|noun| header.ends_with(noun)) || scoped_status(&header) || whole_status(&header)
}

/// A status header whose noun comes first and then a word for the whole, as Romance
/// languages order them (`Esito principale`, `Estado general`, `Statut global`): the
/// status of the whole subject.
fn whole_status(header: &str) -> bool {
    let Some((noun, rest)) = header.split_once(' ') else { return false };
    STATUS_HEADERS.contains(&noun) && recognise::names_whole_subject(rest)
}

/// A status header scoped to the analysis (`Status in this review`, `Verdict at
/// revision 3f2a`): the status noun, then a preposition.
fn scoped_status(header: &str) -> bool {
    let mut words = header.split_whitespace();
    let (Some(noun), Some(preposition)) = (words.next(), words.next()) else { return false };
    STATUS_HEADERS.contains(&noun) && ["in", "at", "within", "under", "during", "for", "as"].contains(&preposition)
}

/// A header without a plural's `(s)` or `(es)` (`Determination(s)`, `Status(es)`).
fn singular(header: &str) -> &str {
    header.strip_suffix("(es)").or_else(|| header.strip_suffix("(s)")).unwrap_or(header).trim_end()
}

/// Which columns of a table whose header is `header` state statuses: those
/// [`is_status_header`] says so of, and, in a table of dimensions (`| Dimension | Finding |`,
/// `| Aspect | Assessment |`), the column that concludes on each.
pub(super) fn status_columns(header: &[Arc<str>]) -> Vec<bool> {
    let per_dimension = header.first().is_some_and(|h| names_dimension(h));
    header
        .iter()
        .map(|h| {
            is_status_header(h) || (per_dimension && CONCLUDING_HEADERS.contains(&h.trim().to_lowercase().as_str()))
        })
        .collect()
}

/// The dimension a status column names: its header without `status` (`Operation`).
fn status_column_dimension(header: &str) -> &str {
    let header = header.trim();
    let lower = header.to_lowercase();
    if CONCLUDING_HEADERS.contains(&lower.as_str()) || scoped_status(&lower) || whole_status(&lower) {
        return "";
    }
    let header = singular(header);
    let noun = STATUS_HEADERS.iter().find(|noun| header.to_lowercase().ends_with(*noun)).map_or(0, |n| n.len());
    let before = header[..header.len() - noun].trim();
    // `Dimension → status`: each cell pairs dimensions and statuses; the header names none.
    if names_dimension(before.trim_matches(|c: char| !c.is_alphanumeric())) {
        return "";
    }
    before
}

/// True for the header of a column that names each row's dimension (`Dimension`,
/// `Aspect`, and in French, German, Spanish and Chinese).
pub(super) fn names_dimension(header: &str) -> bool {
    let header = header.trim().to_lowercase();
    DIMENSION_HEADERS.contains(&header.as_str())
}

/// Whitespace collapsed, ends trimmed.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl<'a> Scanner<'a> {
    /// The record whose text holds an item of `owner`.
    fn owner_record(&self, owner: Option<Owner>) -> Option<RecordId> {
        Some(owner?.record(&self.parts.declarations, &self.parts.annotations).clone())
    }

    /// The findings of a table row: its status cells and status keys now, the cells that
    /// may be findings at the table's end.
    pub(super) fn row_findings(&mut self, cells: &[Cell], mut row: Row) {
        if row.declares.is_none() {
            self.count_row_label(cells, &row);
        }
        let mut found = RowFound::default();
        for (column, cell) in cells.iter().enumerate().skip(1) {
            self.cell_findings(column, cell, &row, &mut found);
        }
        let first = self.parts.findings.len();
        if !found.findings.is_empty() {
            let anchor = self.row_anchor(&mut row);
            for mut finding in found.findings {
                finding.anchor = anchor.clone();
                self.parts.findings.push(finding);
            }
        }
        let row_findings = first..self.parts.findings.len();
        for (column, findings, statement) in found.waiting {
            self.table_findings.waiting.push(Waiting {
                column,
                findings,
                row: (row.table, row.body_row, row.label.clone()),
                row_statuses: found.row_statuses.clone(),
                row_findings: row_findings.clone(),
                statement,
            });
        }
        if let Some(anchor) = row.anchor {
            self.parts.row_anchors.entry((row.table, row.body_row)).or_insert(anchor);
        }
    }

    /// A row declaring no record: its first cell is a handle (`L3`, kept for its anchor)
    /// or a label (counted: labelled rows make a table's cells findings of the row).
    fn count_row_label(&mut self, cells: &[Cell], row: &Row) {
        let first = cells.first().map(|c| c.inline.text.trim()).unwrap_or("");
        if is_handle(first) {
            let offset = cells[0].source.start + self.md[cells[0].source.clone()].find(first).unwrap_or(0);
            self.table_findings.handles.push((row.body_row, first.to_string(), offset));
        } else if !first.is_empty() {
            self.table_findings.labelled_rows += 1;
        }
    }

    /// The findings of one cell (not the first) of a row, by what its column is: one the
    /// site names as holding findings or not, a status column, or any other (whose
    /// findings wait for the table's end, or come of status keys in it).
    fn cell_findings(&mut self, column: usize, cell: &Cell, row: &Row, found: &mut RowFound) {
        let header = self.header.get(column).cloned().unwrap_or_else(|| Arc::from(""));
        let lead = cell.inline.text.len() - cell.inline.text.trim_start().len();
        let text = cell.inline.text.trim();
        if is_placeholder(text) {
            return;
        }
        let md = self.md;
        let statement = md[cell.source.clone()].trim().trim_matches('|').trim();
        let configured =
            |set: &std::collections::BTreeSet<String>| !set.is_empty() && set.contains(&header.trim().to_lowercase());
        if configured(&self.conventions.not_finding_columns) {
            return;
        }
        if configured(&self.conventions.finding_columns) {
            self.configured_column_findings(&header, cell, row, statement, found);
            return;
        }
        if self.header_is_status.get(column).copied().unwrap_or(false) {
            if self.status_clauses(&header, cell, row, statement, found) {
                return;
            }
            let stated_here = stated(self.words, text, Reading::Explicit);
            if stated_here.is_empty() {
                // `module screen: wired`: a status on the dimension the cell names.
                let keyed: Vec<Finding> = match text.split_once(": ") {
                    Some((key, value)) if key.split_whitespace().count() <= 6 && !key.trim().is_empty() => {
                        let at = lead + key.len() + 2 + (value.len() - value.trim_start().len());
                        let dimension = key.trim().to_string();
                        stated(self.words, value.trim_start(), Reading::Explicit)
                            .iter()
                            .map(|s| {
                                self.finding(row, &dimension, s, &cell.inline, at, FindingForm::StatusColumn, statement)
                            })
                            .collect()
                    }
                    _ => Vec::new(),
                };
                if keyed.is_empty() {
                    // A `Status` column holds statuses: a short word that is none is likely a
                    // slip. A `Verdict` or `Result` column may hold the analysis's own scale
                    // (`Conforms`, `Partially conforms`): only a near miss is one.
                    let strict = header.trim().to_lowercase().ends_with("status");
                    self.unread_status(&cell.inline, lead, text, row.declares.as_ref().or(row_record(row)), strict);
                }
                for finding in keyed {
                    found.row_statuses.push(finding.status.clone());
                    found.findings.push(finding);
                }
                return;
            }
            let dimension = status_column_dimension(&header).to_string();
            for s in stated_here {
                let finding =
                    self.finding(row, &dimension, &s, &cell.inline, lead, FindingForm::StatusColumn, statement);
                found.row_statuses.push(finding.status.clone());
                found.findings.push(finding);
            }
            return;
        }
        self.count_cell(column, false);
        let stated_here = stated(self.words, text, Reading::Column);
        if !stated_here.is_empty() {
            self.count_cell(column, true);
            let findings = stated_here
                .iter()
                .map(|s| self.finding(row, &header, s, &cell.inline, lead, FindingForm::DimensionColumn, statement))
                .collect();
            found.waiting.push((column, findings, Text::of(md, statement)));
            return;
        }
        let keys = status_keys(&cell.inline.text);
        for (i, key) in keys.iter().enumerate() {
            let (subject, label) = (row.subject.clone(), row.label_dimension.clone());
            let until = keys.get(i + 1).map_or(cell.inline.text.len(), |next| next.start);
            let found_here = self.key_findings(&cell.inline, key, until, &subject, label.as_deref(), row, statement);
            found.findings.extend(found_here);
        }
    }

    /// A cell of a column the site says holds findings: read as a `Status` column's is,
    /// on the dimension its header names.
    fn configured_column_findings(
        &mut self,
        header: &str,
        cell: &Cell,
        row: &Row,
        statement: &str,
        found: &mut RowFound,
    ) {
        let lead = cell.inline.text.len() - cell.inline.text.trim_start().len();
        let text = cell.inline.text.trim();
        let stated_here = stated(self.words, text, Reading::Explicit);
        if stated_here.is_empty() {
            self.unread_status(&cell.inline, lead, text, row.declares.as_ref().or(row_record(row)), false);
        }
        for s in stated_here {
            let finding = self.finding(row, header, &s, &cell.inline, lead, FindingForm::DimensionColumn, statement);
            found.findings.push(finding);
        }
    }

    /// `wired (30 s default); in-container enforcement: uninspected` in a `Status` cell:
    /// a status per dimension, the first on the column's. Returns whether the cell is so.
    fn status_clauses(&mut self, header: &str, cell: &Cell, row: &Row, statement: &str, found: &mut RowFound) -> bool {
        let lead = cell.inline.text.len() - cell.inline.text.trim_start().len();
        let text = cell.inline.text.trim();
        let clauses = dimension_clauses(self.words, text);
        let column_dimension = status_column_dimension(header).to_string();
        for clause in &clauses {
            let dimension = match clause.dimension.is_empty() {
                true => column_dimension.clone(),
                false => text[clause.dimension.clone()].to_string(),
            };
            let at = lead + clause.value.start;
            for s in stated(self.words, &text[clause.value.clone()], Reading::Explicit) {
                let finding = self.finding(row, &dimension, &s, &cell.inline, at, FindingForm::StatusColumn, statement);
                found.row_statuses.push(finding.status.clone());
                found.findings.push(finding);
            }
        }
        !clauses.is_empty()
    }

    fn count_cell(&mut self, column: usize, stating: bool) {
        let counts = &mut self.table_findings;
        if counts.filled.len() <= column {
            counts.filled.resize(column + 1, 0);
            counts.stating.resize(column + 1, 0);
        }
        if stating {
            counts.stating[column] += 1;
        } else {
            counts.filled[column] += 1;
        }
    }

    /// The row's anchor, made from its label when it has none yet.
    fn row_anchor(&mut self, row: &mut Row) -> Arc<str> {
        if let Some(anchor) = &row.anchor {
            return anchor.clone();
        }
        let anchor = match self.parts.row_anchors.get(&(row.table, row.body_row)) {
            Some(anchor) => anchor.clone(),
            None => {
                let anchor = self.unique_anchor(row_slug(&row.label));
                self.parts.row_anchors.insert((row.table, row.body_row), anchor.clone());
                anchor
            }
        };
        row.anchor = Some(anchor.clone());
        anchor
    }

    /// At a table's end: the waiting cells of the columns that hold findings (most of
    /// their cells start with a status) become findings, but for those that only restate
    /// their row's `Status` cell; the others are noted as not understood.
    pub(super) fn finish_table_findings(&mut self) {
        let table = std::mem::take(&mut self.table_findings);
        let mut findings = Vec::new();
        for waiting in table.waiting {
            let (filled, stating) = (table.filled[waiting.column], table.stating[waiting.column]);
            let restates = {
                let mut said: Vec<&str> = waiting.findings.iter().map(|f| &*f.status).collect();
                let mut row: Vec<&str> = waiting.row_statuses.iter().map(|s| &**s).collect();
                said.sort_unstable();
                said.dedup();
                row.sort_unstable();
                row.dedup();
                !row.is_empty() && said == row
            };
            if restates {
                for finding in &mut self.parts.findings[waiting.row_findings.clone()] {
                    if finding.statement.get(self.md).trim().eq_ignore_ascii_case(&finding.status) {
                        finding.statement = waiting.statement.clone();
                    }
                }
                continue;
            }
            if 2 * stating < filled {
                let first = &waiting.findings[0];
                self.diagnostics.push(
                    Diagnostic::note(
                        Code::NotUnderstood,
                        first.location.of(&self.file),
                        format!("`{}` starts this cell, but few cells of its column start with a status", first.status),
                    )
                    .with_help("casebook reads a column as findings when most of its cells start with a status; write the status in a `Status` column, or as `Status: …`"),
                );
                continue;
            }
            let (table_index, body_row, label) = waiting.row;
            let anchor = match self.parts.row_anchors.get(&(table_index, body_row)) {
                Some(anchor) => anchor.clone(),
                None => {
                    let anchor = self.unique_anchor(row_slug(&label));
                    self.parts.row_anchors.insert((table_index, body_row), anchor.clone());
                    anchor
                }
            };
            for mut finding in waiting.findings {
                finding.anchor = anchor.clone();
                findings.push(finding);
            }
        }
        self.parts.findings.extend(findings);
        // A table numbered by handles anchors each row by its handle; a handle among
        // labelled rows looks like an ID but is none.
        let table_index = self.table.unwrap_or(0);
        for (body_row, handle, offset) in table.handles {
            if table.labelled_rows == 0 {
                if !self.parts.row_anchors.contains_key(&(table_index, body_row)) {
                    let anchor = self.unique_anchor(handle);
                    self.parts.row_anchors.insert((table_index, body_row), anchor);
                }
            } else {
                self.note(
                    offset,
                    handle.chars().count(),
                    format!("`{handle}` starts this row like an ID, but it is no record ID, and the other rows of its table are not numbered so"),
                    "declare its kind under `ids` in casebook.yaml to make it a record, or number every row of the table (`L1`, `L2`…) to make them the table's handles",
                );
            }
        }
    }

    /// One finding of `row`, on the dimension a column names.
    #[allow(clippy::too_many_arguments, reason = "the parts of one cell's finding, each from another place")]
    fn finding(
        &mut self,
        row: &Row,
        column_dimension: &str,
        stated: &Stated,
        inline: &Inline,
        lead: usize,
        form: FindingForm,
        statement: &str,
    ) -> Finding {
        let dimension = match (row.label_dimension.as_deref(), column_dimension.trim()) {
            (Some(label), "") => label.to_string(),
            (Some(label), column) => format!("{label} · {column}"),
            (None, column) => column.to_string(),
        };
        let offset = lead + stated.range.start;
        let source = self.source_offset(inline, offset..lead + stated.range.end).unwrap_or(0);
        self.make_finding(FindingParts {
            subject: row.subject.clone(),
            dimension,
            stated,
            part: row.part.as_deref(),
            statement: Text::of(self.md, statement),
            form,
            source,
            owner: row.owner,
            evidence: row.evidence.clone(),
        })
    }

    fn make_finding(&mut self, parts: FindingParts<'_>) -> Finding {
        let FindingParts { subject, dimension, stated, part, statement, form, source, owner, evidence } = parts;
        // `(overall)`, `Overall`: the whole subject's status.
        let dimension = if recognise::names_whole_subject(&dimension) { String::new() } else { dimension };
        // A lead of adverbs (`mostly implemented`) qualifies the status; another names
        // what it is on (`retention implemented`).
        let adverbs = stated.lead.as_ref().is_some_and(|l| l.split_whitespace().all(|w| w.ends_with("ly")));
        let (dimension, qualifier) = match (&stated.lead, dimension.is_empty()) {
            (Some(lead), true) if !adverbs => (lead.clone(), stated.qualifier.clone()),
            (Some(lead), true) => {
                (dimension, Some(stated.qualifier.as_ref().map_or_else(|| lead.clone(), |q| format!("{lead}; {q}"))))
            }
            (Some(lead), false) => {
                (dimension, Some(stated.qualifier.as_ref().map_or_else(|| lead.clone(), |q| format!("{lead}; {q}"))))
            }
            (None, _) => (dimension, stated.qualifier.clone()),
        };
        Finding {
            subject,
            dimension: self.shared(&dimension),
            status: self.shared(&stated.status),
            qualifier: qualifier.map(|q| self.shared(&q)),
            part: part.map(|p| self.shared(p)),
            statement,
            form,
            location: self.line_col(source),
            section: self.section,
            anchor: Arc::default(),
            owner,
            evidence: narrow(evidence.start)..narrow(evidence.end),
        }
    }

    /// The findings of one status key (`Status: …`) of a cell or paragraph, about
    /// `subject`; `label_dimension` (a row's label in a record's table) comes first in
    /// the dimension. A plain key's value may state a status per dimension up to `until`
    /// (`Status: overall: wired; at build: absent`).
    #[allow(clippy::too_many_arguments, reason = "the parts of one key, each named in the doc")]
    fn key_findings(
        &mut self,
        inline: &Inline,
        key: &StatusKey,
        until: usize,
        subject: &Subject,
        label_dimension: Option<&str>,
        row: &Row,
        statement: &str,
    ) -> Vec<Finding> {
        // A key's own words name the dimension of a record, or, outside records, the
        // subject (then `subject` already says so).
        let names = match subject {
            Subject::Record(_) => key.names.clone(),
            Subject::Named(_) => None,
        };
        let clauses = match key.names {
            None => dimension_clauses(self.words, &inline.text[key.value_start..until.max(key.value_start)]),
            Some(_) => Vec::new(),
        };
        let values: Vec<(Option<String>, Range<usize>)> = if clauses.is_empty() {
            vec![(names, key.value_start..key.value_end)]
        } else {
            let at = key.value_start;
            let words = |r: &Range<usize>| (!r.is_empty()).then(|| inline.text[at + r.start..at + r.end].to_string());
            clauses.iter().map(|c| (words(&c.dimension), at + c.value.start..at + c.value.end)).collect()
        };
        let mut out = Vec::new();
        for (names, value_range) in values {
            let value = &inline.text[value_range.clone()];
            let stated_here = stated(self.words, value, Reading::Explicit);
            if stated_here.is_empty() {
                let record = match subject {
                    Subject::Record(id) => Some(id.clone()),
                    Subject::Named(_) => None,
                };
                self.unread_status(inline, value_range.start, value.trim(), record.as_ref(), false);
                continue;
            }
            let dimension = match (label_dimension, names) {
                (Some(label), Some(names)) => format!("{label} · {names}"),
                (Some(label), None) => label.to_string(),
                (None, names) => names.unwrap_or_default(),
            };
            for s in &stated_here {
                let offset = value_range.start + s.range.start;
                let source = self.source_offset(inline, offset..value_range.start + s.range.end).unwrap_or(0);
                out.push(self.make_finding(FindingParts {
                    subject: subject.clone(),
                    dimension: dimension.clone(),
                    stated: s,
                    part: row.part.as_deref(),
                    statement: Text::of(self.md, statement),
                    form: FindingForm::StatusKey,
                    source,
                    owner: row.owner,
                    evidence: row.evidence.clone(),
                }));
            }
        }
        out
    }

    /// The findings of a paragraph or list item: its status keys, else a `Key: value`
    /// whose value concludes with a status.
    pub(super) fn block_findings(
        &mut self,
        inline: &Inline,
        owner: Option<Owner>,
        evidence: Range<usize>,
        field: Option<(&str, usize)>,
    ) -> BlockFindings {
        let (findings_from, noted_from) = (self.parts.findings.len(), self.diagnostics.len());
        let mut keys = status_keys(&inline.text);
        let starts_with_status_key = keys.first().is_some_and(|k| inline.text[..k.start].trim().is_empty());
        let record = self.owner_record(owner);
        // Within a record's prose, `Offered to the model: afforded (…)` states a finding
        // too, when it is no field of the record (or in a field's value that holds no status
        // key, after its key: `- Architect oddity: the comment says … Watch inert :: claimed`).
        if record.is_some()
            && (field.is_none() || keys.is_empty())
            && (inline.text.contains(": ") || inline.text.contains('：'))
        {
            let after_field = field.map_or(0, |(_, value_at)| value_at + 1);
            let bare = recognise::bare_status_keys(self.words, &inline.text);
            let free: Vec<StatusKey> = bare
                .into_iter()
                .filter(|b| {
                    b.start >= after_field && !keys.iter().any(|k| k.start < b.value_end && b.start < k.value_end)
                })
                .collect();
            if !free.is_empty() {
                keys.extend(free);
                keys.sort_by_key(|k| k.start);
            }
        }
        let mut found = Vec::new();
        let row = Row {
            subject: Subject::Named(String::new()),
            label_dimension: None,
            label: String::new(),
            part: None,
            anchor: None,
            owner,
            declares: None,
            evidence: evidence.clone(),
            table: 0,
            body_row: 0,
        };
        // `- Written by: upsert_run (REQ-1.1). Status: **wired**.`: in a record's list item
        // led by a key, a plain status key later on states that key's status.
        let item_key = field
            .filter(|_| self.list_depth > 0 && record.is_some() && !starts_with_status_key)
            .map(|(key, _)| key.to_string());
        for (i, key) in keys.iter().enumerate() {
            let subject = match (&record, key.names.as_deref()) {
                (Some(id), _) => Subject::Record(id.clone()),
                (None, Some(names)) => Subject::Named(collapse(names)),
                (None, None) => Subject::Named(self.section_name()),
            };
            let until = keys.get(i + 1).map_or(inline.text.len(), |next| next.start);
            let statement = self.statement_source(inline, key.start..key.value_end);
            let label = item_key.as_deref().filter(|_| key.names.is_none() && !key.of);
            found.extend(self.key_findings(inline, key, until, &subject, label, &row, statement));
        }
        if let (true, Some(field)) = (keys.is_empty(), field) {
            found = self.key_value_findings(inline, field, record.as_ref(), owner, evidence.clone());
        }
        if let Some(id) = &record {
            let more = self.sentence_findings(inline, id, &keys, &found, owner, evidence);
            found.extend(more);
        }
        if !found.is_empty() {
            let anchor = self.block_anchor(inline, &found[0]);
            for mut finding in found {
                finding.anchor = anchor.clone();
                self.parts.findings.push(finding);
            }
        }
        self.note_statuses_in_prose(inline, findings_from, noted_from);
        BlockFindings { starts_with_status_key }
    }

    /// Lists a status the text states in a way no form reads, when no finding or note of
    /// this block (from `findings_from`, `noted_from`) is at its word: a status word closing an emphasised run (`is *uninspected* (L3)`,
    /// `**только заявлено**`), or closing a sentence after `is` or `are` (`… is therefore
    /// uninspected.`). The reader sees the words; `check --explain` says no finding came
    /// of them.
    fn note_statuses_in_prose(&mut self, inline: &Inline, findings_from: usize, noted_from: usize) {
        // (Asterisks only: an underscore is as often part of a name in code.)
        static EMPHASIS: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"(\*\*|\*)([^*\n]{1,60}?)(\*\*|\*)").unwrap());
        static COPULA_END: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(r"(?i)\b(?:is|are|remains?)\s+(?:(?:therefore|thus|so|also|still|likewise|equally)\s+)?(?P<s>\p{L}+(?: \p{L}+){0,2})[.;]?\s*(?:\([^()]{0,40}\))?[.;]?$").unwrap()
        });
        let Some(source) = inline.source.clone() else { return };
        if !self.words.mentions_any(&inline.text) {
            return;
        }
        let mut places: Vec<(usize, String)> = Vec::new();
        for caps in EMPHASIS.captures_iter(&self.md[source.clone()]) {
            let (open, inner) = (caps.get(1).unwrap(), caps.get(2).unwrap());
            if open.as_str() != &caps[3] || inner.as_str().trim() != inner.as_str() {
                continue;
            }
            if let Some((status, start)) = self.words.at_end(inner.as_str()) {
                places.push((source.start + inner.start() + start, status.to_string()));
            }
        }
        let mut at = 0;
        while at < inline.text.len() {
            let end = at + recognise::first_sentence_end(&inline.text[at..]).max(1);
            let sentence = &inline.text[at..end];
            if let Some(caps) = COPULA_END.captures(sentence.trim_end()) {
                let written = caps.name("s").unwrap();
                if let Some((status, len)) = self.words.at_start(written.as_str()).filter(|(_, l)| *l == written.len())
                {
                    let range = at + written.start()..at + written.start() + len;
                    if let Some(offset) = self.source_offset(inline, range) {
                        places.push((offset, status.to_string()));
                    }
                }
            }
            at = end;
        }
        for (offset, status) in places {
            let location = self.location(offset);
            let found_here = self.parts.findings[findings_from..]
                .iter()
                .any(|f| f.location.line == location.line && f.location.col == location.col);
            // (Only this block's own notes can be at its words: a scan of all would be
            // quadratic in a report's notes.)
            let noted_here = self.diagnostics[noted_from..].iter().any(|d| d.location == location);
            if found_here || noted_here {
                continue;
            }
            let line = self.line_text(offset).to_string();
            self.diagnostics.push(
                Diagnostic::note(
                    Code::NotUnderstood,
                    location,
                    format!("`{status}` is stated here in prose, but no finding was read from it"),
                )
                .with_source(line, status.chars().count())
                .with_help("to state a finding, write `dimension: status` on a line or item of its own, or in a `Status` column"),
            );
        }
    }

    /// The findings a record's prose states in sentences (`User scoping is *absent*.`),
    /// where the status word is emphasised, outside the status keys and findings
    /// already read.
    fn sentence_findings(
        &mut self,
        inline: &Inline,
        record: &RecordId,
        keys: &[StatusKey],
        found: &[Finding],
        owner: Option<Owner>,
        evidence: Range<usize>,
    ) -> Vec<Finding> {
        if !inline.text.contains(['i', 'a', 'w', 's']) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for copula in recognise::copula_statuses(self.words, &inline.text) {
            let at = copula.stated.range.clone();
            if keys.iter().any(|k| k.start <= at.start && at.start < k.value_end) {
                continue;
            }
            let Some(source) = self.source_offset(inline, at.clone()) else { continue };
            // The word as written, between emphasis marks (`*absent*`, `**absent**`).
            let written = self.md.get(source..source + at.len()) == Some(&inline.text[at.clone()]);
            let emphasised = written
                && self.md[..source].ends_with(['*', '_'])
                && self.md[source + at.len()..].starts_with(['*', '_']);
            let location = self.line_col(source);
            if !emphasised || found.iter().chain(&out).any(|f| f.location == location) {
                continue;
            }
            let statement = Text::of(self.md, self.statement_source(inline, copula.sentence.clone()));
            out.push(self.make_finding(FindingParts {
                subject: Subject::Record(record.clone()),
                dimension: copula.dimension,
                stated: &copula.stated,
                part: None,
                statement,
                form: FindingForm::Sentence,
                source,
                owner,
                evidence: evidence.clone(),
            }));
        }
        out
    }

    /// The status opening `value` (at `at` of the inline's text) when the author set that
    /// word apart in emphasis (`: **предоставлено** оператору (…)`, `: **wired** on the
    /// default path`): the emphasis says where the status ends, so the words after it,
    /// to the sentence's end, are its qualifier, whatever language they are in.
    fn emphasised_status(&self, inline: &Inline, at: usize, value: &str) -> Option<Stated> {
        let (status, len) = self.words.at_start(value)?;
        let source = self.source_offset(inline, at..at + len)?;
        let written = self.md.get(source..source + len) == Some(&inline.text[at..at + len]);
        let emphasised =
            written && self.md[..source].ends_with(['*', '_']) && self.md[source + len..].starts_with(['*', '_']);
        if !emphasised {
            return None;
        }
        let rest = &value[len..];
        let qualifier = rest[..recognise::first_sentence_end(rest)].trim().trim_end_matches('.').trim();
        Some(Stated {
            status: status.to_string(),
            qualifier: (!qualifier.is_empty()).then(|| qualifier.to_string()),
            lead: None,
            range: 0..len,
        })
    }

    /// The findings of a `Key: value` paragraph whose value concludes with a status (a
    /// note when a status starts the value but it reads as prose).
    fn key_value_findings(
        &mut self,
        inline: &Inline,
        (key, value_at): (&str, usize),
        record: Option<&RecordId>,
        owner: Option<Owner>,
        evidence: Range<usize>,
    ) -> Vec<Finding> {
        let block_source = inline.source.clone().unwrap_or(0..0);
        let text = inline.text.trim();
        let lead = inline.text.len() - inline.text.trim_start().len();
        let value = &text[value_at..];
        let mut stated_here = stated(self.words, value, Reading::KeyValue);
        if stated_here.is_empty() {
            stated_here.extend(self.emphasised_status(inline, lead + value_at, value));
        }
        if stated_here.is_empty() {
            if let Some((status, _)) = self.words.at_start(value) {
                let offset =
                    self.source_offset(inline, lead + value_at..lead + value_at + 1).unwrap_or(block_source.start);
                self.diagnostics.push(
                    Diagnostic::note(
                        Code::NotUnderstood,
                        self.location(offset),
                        format!("`{status}` follows `{key}:` but reads as prose, not as a finding"),
                    )
                    .with_help(format!(
                        "to state a finding, write `{key} status: {status}` or end the status's clause (`{key}: {status}.`)"
                    )),
                );
            }
            return Vec::new();
        }
        let (subject, dimension) = match record {
            Some(id) => (Subject::Record(id.clone()), key.to_string()),
            None => (Subject::Named(collapse(key)), String::new()),
        };
        let statement = Text::of(self.md, self.md[block_source].trim());
        stated_here
            .iter()
            .map(|s| {
                let offset = lead + value_at + s.range.start;
                let source = self.source_offset(inline, offset..lead + value_at + s.range.end).unwrap_or(0);
                self.make_finding(FindingParts {
                    subject: subject.clone(),
                    dimension: dimension.clone(),
                    stated: s,
                    part: None,
                    statement: statement.clone(),
                    form: FindingForm::KeyValue,
                    source,
                    owner,
                    evidence: evidence.clone(),
                })
            })
            .collect()
    }

    /// The anchor of a block holding findings, made once per block from what its first
    /// finding is about: `memory`, `CAP-2-approval`, `2-4-raw-traces-status`.
    fn block_anchor(&mut self, inline: &Inline, first: &Finding) -> Arc<str> {
        let block_start = inline.source.as_ref().map_or(0, |s| s.start);
        if let Some(anchor) = self.parts.block_anchors.get(&block_start) {
            return anchor.clone();
        }
        let on = if first.dimension.is_empty() { "status".to_string() } else { short_slug(&first.dimension) };
        let label = match &first.subject {
            Subject::Record(id) => format!("{}-{on}", id.slug()),
            Subject::Named(name) if *name != self.section_name() => short_slug(name),
            Subject::Named(_) => {
                let section =
                    self.section.and_then(|s| self.parts.sections.get(s as usize)).map(|s| s.anchor.to_string());
                short_slug(&format!("{}-{on}", section.unwrap_or_else(|| "report".to_string())))
            }
        };
        let anchor = self.unique_anchor(label);
        self.parts.block_anchors.insert(block_start, anchor.clone());
        anchor
    }

    /// The Markdown source of `range` of an inline container's text, or the container's
    /// whole source when the range cannot be placed.
    fn statement_source(&self, inline: &Inline, range: Range<usize>) -> &'a str {
        let whole = inline.source.clone().unwrap_or(0..0);
        let first_len = inline.text[range.start..].chars().next().map_or(1, char::len_utf8);
        let start = self.source_offset(inline, range.start..range.start + first_len);
        let last = inline.text[..range.end].char_indices().next_back().map(|(i, c)| (i, c.len_utf8()));
        let end = last.and_then(|(i, len)| self.source_offset(inline, i..i + len).map(|at| at + len));
        match (start, end) {
            (Some(start), Some(end)) if start < end && end <= whole.end.max(end) => self.md[start..end].trim(),
            _ => self.md[whole].trim(),
        }
    }

    /// The name of the section being read (its heading), for a finding that names no
    /// subject of its own.
    fn section_name(&self) -> String {
        match self.section.and_then(|s| self.parts.sections.get(s as usize)) {
            Some(section) => collapse(&section.title),
            None => "the report's opening".to_string(),
        }
    }

    /// A value where a key or column says a status is, that states none: a typo is an
    /// error in a record's text (as `unknown status`) and a warning elsewhere; a short
    /// value in a record's `Status` is an error; anything else is not understood.
    fn unread_status(&mut self, inline: &Inline, at: usize, value: &str, record: Option<&RecordId>, column: bool) {
        let first_words: String = value.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
        let first_word = value.split_whitespace().next().unwrap_or("");
        let near = self
            .words
            .near_miss(value.trim_end_matches('.'))
            .or_else(|| self.words.near_miss(&first_words))
            .or_else(|| self.words.near_miss(first_word.trim_end_matches(['.', ',', ';'])));
        let offset = self.source_offset(inline, at..at + value.len().max(1)).unwrap_or(0);
        let location = self.location(offset);
        let line = self.line_text(offset).to_string();
        let span = value.chars().count().min(60);
        let shown: String = value.chars().take(60).collect();
        let short = value.split_whitespace().count() <= 3;
        let names_a_status = self.words.mentions_any(value);
        let diagnostic = match (record, near) {
            (Some(id), Some(near)) => Diagnostic::error(Code::UnknownStatus, location, format!("unknown status `{shown}` on {id}"))
                .with_help(format!("did you mean `{near}`?")),
            (Some(id), None) if short && column => Diagnostic::error(Code::UnknownStatus, location, format!("unknown status `{shown}` on {id}"))
                .with_help(format!("use one of: {}", self.words.names().join(", "))),
            (None, Some(near)) => Diagnostic::warning(Code::UnknownStatus, location, format!("unknown status `{shown}`"))
                .with_help(format!("did you mean `{near}`?")),
            // A value without a word of the vocabulary (`Status: retained state, not
            // read-back`) is a classification of the analysis's own, not a status.
            _ if !names_a_status => return,
            _ => Diagnostic::note(Code::NotUnderstood, location, format!("`{}` is where a status belongs, but it does not start with one", recognise_shorten(&shown)))
                .with_help("casebook reads a status at the start of the value, or at the end of its first clause (`retention implemented`); reword it so, or leave it as prose"),
        };
        self.diagnostics.push(diagnostic.with_source(line, span));
    }
}

fn row_record(row: &Row) -> Option<&RecordId> {
    match &row.subject {
        Subject::Record(id) => Some(id),
        Subject::Named(_) => None,
    }
}

/// What [`Scanner::make_finding`] builds a finding from.
struct FindingParts<'s> {
    subject: Subject,
    dimension: String,
    stated: &'s Stated,
    part: Option<&'s str>,
    statement: Text,
    form: FindingForm,
    source: usize,
    owner: Option<Owner>,
    evidence: Range<usize>,
}

/// At most 40 characters of `text`, cut at a word.
fn recognise_shorten(text: &str) -> String {
    if text.chars().count() <= 40 {
        return text.to_string();
    }
    let cut: String = text.chars().take(40).collect();
    format!("{}…", cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head))
}

/// A row's anchor from its label: a handle as it is written (`L3`), else its slug.
fn row_slug(label: &str) -> String {
    if is_handle(label) {
        label.to_string()
    } else {
        short_slug(label)
    }
}

/// An anchor from a label: its slug, cut at a word to at most 48 bytes.
fn short_slug(label: &str) -> String {
    let slug = recognise::slugify(label);
    if slug.len() <= 48 {
        return slug;
    }
    let mut cut = 48;
    while !slug.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &slug[..cut];
    head.rsplit_once('-').map_or(head, |(h, _)| h).to_string()
}

/// A citation's index in its report, as the model counts them.
fn narrow(index: usize) -> u32 {
    u32::try_from(index).expect("a report has fewer than 4 billion citations")
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::config::SiteConfig;
    use crate::model::{Code, Diagnostic, FindingForm, Report, Severity, Subject};
    use crate::recognise::Conventions;

    fn parse_with(config: &SiteConfig, md: &str) -> (Report, Vec<Diagnostic>) {
        let conventions = Conventions::new(config).unwrap();
        let (report, diagnostics) = crate::parse::parse_report(
            Path::new("r.md"),
            "r.md",
            &crate::model::Slug::parse("r").unwrap(),
            md,
            &conventions,
        );
        (report.expect("the report parses"), diagnostics)
    }

    fn parse(md: &str) -> (Report, Vec<Diagnostic>) {
        parse_with(&SiteConfig::default(), md)
    }

    /// (subject, dimension, status, qualifier, form) of each finding.
    fn findings(report: &Report) -> Vec<(String, String, String, Option<String>, FindingForm)> {
        report
            .findings
            .iter()
            .map(|f| {
                let subject = match &f.subject {
                    Subject::Record(id) => format!("record {id}"),
                    Subject::Named(name) => name.clone(),
                };
                (
                    subject,
                    f.dimension.to_string(),
                    f.status.to_string(),
                    f.qualifier.as_deref().map(str::to_string),
                    f.form,
                )
            })
            .collect()
    }

    fn f(
        subject: &str,
        dimension: &str,
        status: &str,
        form: FindingForm,
    ) -> (String, String, String, Option<String>, FindingForm) {
        (subject.to_string(), dimension.to_string(), status.to_string(), None, form)
    }

    fn notes(diagnostics: &[Diagnostic]) -> Vec<u32> {
        diagnostics.iter().filter(|d| d.severity == Severity::Note).map(|d| d.location.line).collect()
    }

    #[test]
    fn a_status_column_of_rows_without_an_id_states_findings_about_their_first_cell() {
        let (report, diagnostics) =
            parse("| Operation | Status | Evidence |\n|---|---|---|\n| Consolidation | absent for OBJ-03. Nothing merges. | SRC-1 a.py:3 |\n| Decay | — | |\n");
        assert_eq!(findings(&report), [f("Consolidation", "", "absent", FindingForm::StatusColumn)]);
        let consolidation = &report.findings[0];
        assert_eq!(&*consolidation.anchor, "consolidation");
        assert_eq!(report.row_anchors.get(&(0, 0)).map(|a| &**a), Some("consolidation"));
        assert_eq!(consolidation.evidence, 0..1, "the row's citation is its evidence");
        assert_eq!((consolidation.location.line, consolidation.location.col), (3, 19));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
    }

    #[test]
    fn a_table_of_dimensions_concludes_in_its_finding_column() {
        let (report, _) = parse(
            "# R\n\n### OBJ-01 · State\n\n| Dimension | Finding |\n|---|---|\n| persisted | **wired** — through the saver |\n\
             | documented shape | **claimed** — six fields |\n\n## Other\n\n| Item | Finding |\n|---|---|\n| cache | kept in memory |\n",
        );
        let found: Vec<_> =
            findings(&report).into_iter().map(|(_, dimension, status, ..)| (dimension, status)).collect();
        assert_eq!(
            found,
            [("persisted".to_string(), "wired".to_string()), ("documented shape".to_string(), "claimed".to_string())],
            "a Finding column outside a table of dimensions is prose"
        );
    }

    #[test]
    fn status_headers_scoped_to_the_review_or_plural_state_the_whole_status() {
        let md = "| ID | Title | Severity | Status in this review |\n|---|---|---|---|\n| OBJ-01 | Runs commands | High | wired (first agent) |\n\n\
                  | Record | Determination(s) |\n|---|---|\n| OBJ-02 | written by: implemented |\n";
        let (report, _) = parse(md);
        let shown: Vec<_> = findings(&report).into_iter().map(|(s, d, st, _, _)| (s, d, st)).collect();
        let row = |s: &str, d: &str, st: &str| (s.to_string(), d.to_string(), st.to_string());
        assert_eq!(shown, [row("record OBJ-01", "", "wired"), row("record OBJ-02", "written by", "implemented")]);
        assert!(!super::is_status_header("Status quo") && !super::is_status_header("Statuses seen"));
    }

    #[test]
    fn an_id_first_row_s_dimension_cell_names_its_status_s_dimension() {
        let md = "| Record | Subject | Dimension | Status |\n|---|---|---|---|\n| OBJ-01 | Gate | in a TTY | wired |\n\
                  | OBJ-01 | Gate | overall | absent |\n";
        let (report, _) = parse(md);
        let shown: Vec<_> = findings(&report).into_iter().map(|(_, d, st, _, _)| (d, st)).collect();
        assert_eq!(shown, [("in a TTY".to_string(), "wired".to_string()), (String::new(), "absent".to_string())]);
    }

    #[test]
    fn a_column_whose_cells_start_with_statuses_names_a_dimension() {
        let md = "| Item | (a) Presence | (c) Activation | Note |\n|---|---|---|---|\n| OBJ-02 summary | implemented — at signature.py:55 | uninspected. No run occurred | host |\n| Files | implemented, but self-reported | uninspected | observed by none |\n| Other | n/a | uninspected, and weaker | plain |\n";
        let (report, diagnostics) = parse(md);
        assert_eq!(
            findings(&report),
            [
                f("record OBJ-02", "(a) Presence", "implemented", FindingForm::DimensionColumn),
                f("record OBJ-02", "(c) Activation", "uninspected", FindingForm::DimensionColumn),
                f("Files", "(a) Presence", "implemented", FindingForm::DimensionColumn),
                f("Files", "(c) Activation", "uninspected", FindingForm::DimensionColumn),
                f("Other", "(c) Activation", "uninspected", FindingForm::DimensionColumn),
            ]
        );
        // `observed by none` starts one cell of three in `Note`: not a findings column.
        assert_eq!(notes(&diagnostics), [4]);
    }

    #[test]
    fn a_column_that_restates_the_status_lends_its_words_and_adds_no_finding() {
        let md = "| Question | Finding | Status |\n|---|---|---|\n| Manual write | absent. No command writes memory. | absent |\n| Automatic write | implemented, every turn | implemented |\n";
        let (report, _) = parse(md);
        assert_eq!(
            findings(&report),
            [
                f("Manual write", "", "absent", FindingForm::StatusColumn),
                f("Automatic write", "", "implemented", FindingForm::StatusColumn)
            ]
        );
        assert_eq!(report.text(&report.findings[0].statement), "absent. No command writes memory.");
    }

    #[test]
    fn a_table_in_a_record_s_text_is_about_the_record_its_rows_name_dimensions() {
        let md = "### MEM-OBJ-raw Raw batches\n\n| Operation | Status |\n|---|---|\n| Decay | absent |\n| Eviction | implemented (count cap) |\n";
        let (report, _) = parse(md);
        let mut expected = vec![
            f("record MEM-OBJ-raw", "Decay", "absent", FindingForm::StatusColumn),
            f("record MEM-OBJ-raw", "Eviction", "implemented", FindingForm::StatusColumn),
        ];
        expected[1].3 = Some("count cap".into());
        assert_eq!(findings(&report), expected);
    }

    #[test]
    fn status_sentences_in_prose_cells_and_lists() {
        let md = "## 2.4 Traces\n\nThe label does not survive. Status of \"compression\": absent. Status: retention implemented, garbage collection absent.\n\n- Memory status: inapplicable (no state kept).\n- Promotion path finding: absent.\n\n| Ref | Description |\n|---|---|\n| NEW-2 | Hot sandbox. Status within this run: uninspected (CMP-13). |\n";
        let (report, _) = parse(md);
        let mut expected = vec![
            f("\"compression\"", "", "absent", FindingForm::StatusKey),
            f("2.4 Traces", "retention", "implemented", FindingForm::StatusKey),
            f("2.4 Traces", "garbage collection", "absent", FindingForm::StatusKey),
            f("Memory", "", "inapplicable", FindingForm::StatusKey),
            f("Promotion path", "", "absent", FindingForm::StatusKey),
            f("record NEW-2", "", "uninspected", FindingForm::StatusKey),
        ];
        expected[3].3 = Some("no state kept".into());
        expected[5].3 = Some("CMP-13".into());
        assert_eq!(findings(&report), expected);
        // One anchor per paragraph, named by its first finding.
        assert_eq!(&*report.findings[1].anchor, "compression");
        assert_eq!(&*report.findings[4].anchor, "promotion-path");
        assert_eq!(report.block_anchors.len(), 3, "each paragraph or item with findings has one anchor");
    }

    #[test]
    fn a_plain_status_key_states_a_status_per_dimension_on_its_own_line() {
        let md = "### OBJ-02: Import allowlist\n\n**Affected component:** COMP-LPE\n\
                  **Status:** on import: **wired**. Submodule restriction: **wired**. Wildcard `*`: **afforded** (to the operator).\n\n\
                  ### OBJ-03: Graph\n\n*Status* — overall: **wired**; validation at build: **absent** (disabled).\n";
        let (report, diagnostics) = parse(md);
        let key = FindingForm::StatusKey;
        let q = |subject: &str, dimension: &str, status: &str, qualifier: &str| {
            (subject.to_string(), dimension.to_string(), status.to_string(), Some(qualifier.to_string()), key)
        };
        assert_eq!(
            findings(&report),
            [
                f("record OBJ-02", "on import", "wired", key),
                f("record OBJ-02", "Submodule restriction", "wired", key),
                q("record OBJ-02", "Wildcard *", "afforded", "to the operator"),
                f("record OBJ-03", "", "wired", key),
                q("record OBJ-03", "validation at build", "absent", "disabled"),
            ]
        );
        assert!(notes(&diagnostics).is_empty(), "{diagnostics:?}");
        let fields: Vec<_> = report.declarations[0].fields.iter().map(|f| f.name.to_string()).collect();
        assert_eq!(fields, ["Affected component"], "the line above is a field of its own");
        assert_eq!(report.block_anchors.len(), 2, "each line stating findings has its anchor");
    }

    #[test]
    fn a_status_stated_in_prose_that_makes_no_finding_is_listed() {
        let md = "### OBJ-01: Store\n\nThe README calls the store *wired*, loosely. Scoping is *uninspected* (L3).\n\n\
                  ## Limits\n\n- L1. The router was not read, so how OBJ-01 is reached is therefore uninspected.\n\
                  - L2. Nothing else.\n";
        let (report, diagnostics) = parse(md);
        // `Scoping is *uninspected*` is a finding; the rest is listed, each at its word.
        assert_eq!(report.findings.iter().map(|f| &*f.status).collect::<Vec<_>>(), ["uninspected"]);
        let listed: Vec<(u32, u32)> = diagnostics
            .iter()
            .filter(|d| d.is_not_understood() && d.message.contains("stated here in prose"))
            .map(|d| (d.location.line, d.location.col))
            .collect();
        assert_eq!(listed, [(3, 29), (7, 70)], "{diagnostics:?}");
    }

    #[test]
    fn key_value_findings_and_their_near_misses() {
        let (report, diagnostics) =
            parse("- Self-modification: absent.\n- Cause: the user observed it.\n- Note: observed behaviour differs.\n\nLineage: implemented by the host.\n");
        assert_eq!(
            findings(&report),
            [
                f("Self-modification", "", "absent", FindingForm::KeyValue),
                f("Lineage", "", "implemented", FindingForm::KeyValue)
            ]
        );
        // `observed` right after a key, used as an adjective: not understood, noted.
        assert_eq!(notes(&diagnostics), [3]);
    }

    #[test]
    fn values_where_a_status_belongs_that_state_none() {
        let md = "| ID | Status |\n|---|---|\n| OBJ-01 | implmented |\n| OBJ-02 | open |\n| OBJ-03 | retained state, not read-back |\n| Thing | abset |\n| Other | mostly not implemented yet |\n\nStatus: retained state, not read-back.\n";
        let (report, diagnostics) = parse(md);
        assert!(report.findings.is_empty(), "{:?}", findings(&report));
        let shown: Vec<(u32, Severity, Code, &str)> =
            diagnostics.iter().map(|d| (d.location.line, d.severity, d.code, d.message.as_str())).collect();
        assert_eq!(
            shown,
            [
                (3, Severity::Error, Code::UnknownStatus, "unknown status `implmented` on OBJ-01"),
                (4, Severity::Error, Code::UnknownStatus, "unknown status `open` on OBJ-02"),
                (6, Severity::Warning, Code::UnknownStatus, "unknown status `abset`"),
                (
                    7,
                    Severity::Note,
                    Code::NotUnderstood,
                    "`mostly not implemented yet` is where a status belongs, but it does not start with one"
                ),
            ]
        );
        assert_eq!(diagnostics[0].help.as_deref(), Some("did you mean `implemented`?"));
    }

    #[test]
    fn configured_columns_hold_findings_or_never_do() {
        let mut config = SiteConfig::default();
        config.conventions.finding_columns = vec!["Deployed".into()];
        config.conventions.not_finding_columns = vec!["Verdict".into()];
        let md = "| Item | Deployed | Verdict |\n|---|---|---|\n| A | wired | absent |\n| B | no idea | absent |\n| C | implemented | absent |\n";
        let (report, diagnostics) = parse_with(&config, md);
        assert_eq!(
            findings(&report),
            [
                f("A", "Deployed", "wired", FindingForm::DimensionColumn),
                f("C", "Deployed", "implemented", FindingForm::DimensionColumn)
            ]
        );
        assert!(diagnostics.is_empty(), "`no idea` has no status word: nothing to note");
    }

    #[test]
    fn a_table_numbered_by_handles_anchors_its_rows_a_lone_handle_is_noted() {
        let (report, diagnostics) = parse("| # | Limitation |\n|---|---|\n| L1 | no run |\n| L2 | no trace |\n\n| Thing | Note |\n|---|---|\n| Q3 | code |\n| Label | row |\n");
        assert_eq!(report.row_anchors.get(&(0, 0)).map(|a| &**a), Some("L1"));
        assert_eq!(report.row_anchors.get(&(0, 1)).map(|a| &**a), Some("L2"));
        assert_eq!(report.row_anchors.get(&(1, 0)), None);
        assert_eq!(notes(&diagnostics), [8]);
    }

    #[test]
    fn a_key_in_a_script_without_case_and_a_full_width_colon_states_a_status() {
        let md = "## OBJ-02 プロンプト\n\n- 読み込み: **wired**\n- 書き込み：**wired**（既定）\n- 状態：**absent**。\n";
        let (report, diagnostics) = parse(md);
        let shown: Vec<(String, String)> =
            findings(&report).into_iter().map(|(_, dimension, status, _, _)| (dimension, status)).collect();
        let expected = [("読み込み", "wired"), ("書き込み", "wired"), ("状態", "absent")];
        assert_eq!(shown, expected.map(|(d, s)| (d.to_string(), s.to_string())));
        assert!(diagnostics.is_empty(), "{diagnostics:?}");
    }

    #[test]
    fn a_status_word_of_another_script_that_reads_as_prose_is_noted_not_a_panic() {
        let md = "| Термин | Статус |\n|---|---|\n| отсутствует | absent |\n| реализовано | implemented |\n| подключено | wired |\n| предоставлено | afforded |\n\n## OBJ-01 Хранилище\n\nХранение: предоставлено оператору (через session_store или строку mongodb).\n";
        let conventions = crate::testing::conventions();
        let words = crate::parse::learned_status_words(&[md], &conventions);
        let conventions = conventions.with_status_words(&words);
        let (report, _) = crate::parse::parse_report(
            Path::new("r.md"),
            "r.md",
            &crate::model::Slug::parse("r").unwrap(),
            md,
            &conventions,
        );
        assert!(report.is_some(), "the report parses");
    }

    #[test]
    fn a_column_of_dimension_status_pairs_names_no_dimension_itself() {
        let md = "## OBJ-01 Store\n\nIt keeps turns.\n\n## Summary\n\n| Record | Label | Dimension → status |\n|---|---|---|\n| OBJ-01 | Store | written by → wired · bounded → absent |\n| OBJ-01 | Store | implemented |\n";
        let (report, _) = parse(md);
        let shown: Vec<(String, String)> =
            findings(&report).into_iter().map(|(_, dimension, status, _, _)| (dimension, status)).collect();
        let expected = [("written by", "wired"), ("bounded", "absent"), ("", "implemented")];
        assert_eq!(shown, expected.map(|(d, s)| (d.to_string(), s.to_string())));
    }
}
