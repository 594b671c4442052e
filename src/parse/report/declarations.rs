//! Record declarations: headings that carry an ID (and sections about a record a row
//! declares), bold run-ins, and top-level list items over a nested list; each opens the
//! body of the record it declares, which the next heading (or the item's end) closes.

use std::ops::Range;

use super::{Inline, Scanner, ITEM_LEVEL, RUN_IN_LEVEL};
use crate::model::{Annotation, Declaration, DeclarationForm, Field, Owner, RecordId, Section, Text};
use crate::recognise;

impl Scanner<'_> {
    pub(super) fn heading(&mut self, level: u8, inline: Inline, range: Range<usize>) {
        if self.owner.is_some_and(|(_, owner_level)| level <= owner_level) {
            self.close_owner(range.start);
        }
        let title = inline.text.trim().to_string();
        let location = self.line_col(range.start + self.md[range.clone()].find(title.as_str()).unwrap_or(0));
        let line = location.line;
        let section_index =
            u32::try_from(self.parts.sections.len()).expect("a report has fewer than 4 billion headings");
        let anchor;
        let conventions = self.conventions;
        let named = recognise::heading_id(self.scheme, false, &title, |w| conventions.is_source(w));
        // A heading whose ID follows numbering or words (`3.2 RTE-19 and what …`, `Annex
        // CTL-02 — …`), about a record a row above already declares, is a section about
        // it, not its heading: its text is the record's, as an annotation's is.
        let about_row = named.as_ref().filter(|(range, _)| {
            let strictly_leading = !title[..range.start].chars().any(char::is_alphanumeric);
            !strictly_leading && self.row_declared.contains(&title[range.clone()])
        });
        let declared = named.clone().filter(|_| about_row.is_none());
        // `Annex CTL-02 — Its label` names the record as its subject; `3.2 RTE-19 and
        // what it means` is a section that discusses it, whose text stays the report's.
        let about_row = about_row.filter(|(range, _)| {
            let after = title[range.end..].trim_start();
            after.is_empty() || after.starts_with(['—', '–', '-', ':', '·', '|', '('])
        });
        let about_row = about_row.map(|(range, _)| title[range.clone()].to_string());
        if let Some((id_range, _)) = declared.filter(|_| recognise::annotation_target(self.scheme, &title).is_none()) {
            // A record heading nested in another record's body ends that body: bodies
            // never overlap.
            self.close_owner(range.start);
            let id = self.record_id(&title[id_range.clone()]);
            anchor = self.unique_anchor(id.slug());
            let index = self.parts.declarations.len();
            let lead = inline.text.len() - inline.text.trim_start().len();
            let (label, fields) = self.heading_label(&title, id_range.clone());
            self.parts.declarations.push(Declaration {
                id,
                form: DeclarationForm::Heading { level },
                anchor: anchor.clone(),
                label,
                fields,
                body: Some(range.end..range.end),
                location,
                section: Some(section_index),
            });
            self.owner = Some((Owner::declaration(index), level));
            self.section = Some(section_index);
            self.scan(&inline, self.owner.map(|(o, _)| o), Some(id_range.start + lead..id_range.end + lead));
        } else if let Some(target) = recognise::annotation_target(self.scheme, &title).or(about_row.as_deref()) {
            let own_text = recognise::annotation_target(self.scheme, &title).is_none();
            self.close_owner(range.start);
            let target = self.record_id(target);
            anchor = self.unique_anchor(format!("on-{}", target.slug()));
            let index = self.parts.annotations.len();
            self.parts.annotations.push(Annotation {
                target,
                anchor: anchor.clone(),
                body: range.end..range.end,
                location,
                section: Some(section_index),
                own_text,
            });
            self.owner = Some((Owner::annotation(index), level));
            self.section = Some(section_index);
        } else {
            let explicit = self.heading_id_attribute(range.clone());
            anchor = self.unique_anchor(explicit.unwrap_or_else(|| recognise::slugify(&title)));
            self.section = Some(section_index);
            self.scan(&inline, self.owner.map(|(o, _)| o), None);
        }
        let declares = matches!(self.owner, Some((Owner::Declaration(i), _)) if self.parts.declarations[i as usize].section == Some(section_index));
        self.enter_section(level, &title, declares);
        self.enter_references(level, &title, declares);
        self.parts.sections.push(Section { anchor, level, title, line });
        self.heading_spans.push(range);
    }

    /// The label of a heading that declares the record at `id` of `title`, and the fields
    /// its words give: `RF-04 · Retrieval — which backends run?` names the record by a
    /// question, so its label is the name and the question is kept as a field.
    fn heading_label(&mut self, title: &str, id: Range<usize>) -> (Option<String>, Vec<Field>) {
        let label = recognise::label_around(title, id);
        match label.as_deref().and_then(recognise::question_of) {
            Some((name, question)) => {
                let field = Field { name: self.shared("Question"), value: Text::Own(question.into()) };
                (Some(name.to_string()), vec![field])
            }
            None => (label, Vec::new()),
        }
    }

    /// `## Title {#custom-id}` keeps its author-chosen anchor.
    fn heading_id_attribute(&self, range: Range<usize>) -> Option<String> {
        let raw = self.md[range].trim_end();
        let attrs = raw.strip_suffix('}')?.rsplit_once('{')?.1;
        attrs.split_whitespace().find_map(|a| a.strip_prefix('#')).map(str::to_string)
    }

    /// `**G-01 · Agent graph assembly.** Every run is …`: a paragraph that opens with bold
    /// words led by an ID declares the record, as a heading would (the record's own words
    /// follow), unless a heading of this report declares it already. Its body runs to the
    /// next heading or run-in declaration. Returns the ID declared.
    pub(super) fn run_in_declaration(&mut self, inline: &Inline, markdown: &str) -> Option<RecordId> {
        if self.list_depth > 0 || self.table.is_some() || self.in_definition {
            return None;
        }
        let bold: String = recognise::run_in(markdown)?.chars().filter(|c| *c != '`').collect();
        let conventions = self.conventions;
        let (range, _) = recognise::heading_id(self.scheme, false, &bold, |w| conventions.is_source(w))?;
        if bold[..range.start].chars().any(char::is_alphanumeric) {
            return None;
        }
        let word = &bold[range.clone()];
        // `**OBJ-03** is the one …` stresses a reference: a run-in declaration carries its
        // label in the bold words, and declares no record a heading of this report declares
        // (a row may: the run-in is then the record's own text, as a heading would be, and
        // `**DLG-01.** The factory …` needs no label, the row gave it).
        let label = recognise::label_around(&bold, range.clone());
        let row_declared = self.row_declared.contains(word);
        let stop = bold[range.end..].trim();
        if label.is_none() && (!row_declared || !matches!(stop, "." | ":" | "—" | "–")) {
            return None;
        }
        let headed = self
            .parts
            .declarations
            .iter()
            .any(|d| d.id.as_str() == word && matches!(d.form, DeclarationForm::Heading { .. }));
        let source = inline.source.clone()?;
        let at_in_text = inline.text.find(word)?;
        if headed {
            return None;
        }
        self.close_owner(source.start);
        let id = self.record_id(word);
        let anchor = self.unique_anchor(id.slug());
        self.parts.block_anchors.insert(source.start, anchor.clone());
        let offset = self.source_offset(inline, at_in_text..at_in_text + word.len()).unwrap_or(source.start);
        let index = self.parts.declarations.len();
        self.parts.declarations.push(Declaration {
            id: id.clone(),
            // Below every heading: the next heading of any level ends its body.
            form: DeclarationForm::Heading { level: RUN_IN_LEVEL },
            anchor,
            // A run-in ends with its own stop (`Agent graph assembly.`), which is no part of
            // the label.
            label: label.map(|label| label.trim_end_matches(['.', ':']).to_string()),
            fields: Vec::new(),
            body: Some(source.start..source.start),
            location: self.line_col(offset),
            section: self.section,
        });
        self.owner = Some((Owner::declaration(index), RUN_IN_LEVEL));
        Some(id)
    }

    /// An item ends: its text is read, and the record it declared, if any, ends with it.
    pub(super) fn item_end(&mut self, end: usize) {
        let inline = std::mem::take(&mut self.inline);
        self.block_text(inline, self.owner.map(|(o, _)| o), true);
        if self.item_record == Some(self.list_depth) {
            self.close_owner(end);
            self.item_record = None;
        }
        self.list_depth -= 1;
        if self.list_depth == 0 && self.next_reference.is_some() {
            self.footnote_owner = None;
        }
    }

    /// `- Subject: Checkpoint snapshot object` under `1. **The checkpoint is a versioned
    /// snapshot …** [CK-01]`: a nested item whose key names the record (`Subject`,
    /// `Name`, `Label`, `Title`) gives its label; the item's own words, a finding in one line,
    /// are kept as its `Summary`.
    pub(super) fn item_names_its_record(&mut self, declaration: usize, key: &str, value: &str) {
        let names = ["subject", "name", "label", "title"].iter().any(|k| key.eq_ignore_ascii_case(k));
        if !names || value.is_empty() || value.chars().count() > 120 {
            return;
        }
        let summary = self.shared("Summary");
        let record = &mut self.parts.declarations[declaration];
        if record.fields.iter().any(|f| f.name == summary) {
            return;
        }
        if let Some(words) = record.label.replace(value.to_string()) {
            record.fields.push(Field { name: summary, value: Text::Own(words.into()) });
        }
    }

    /// Where the list nested under a paragraph starts, when one follows it (its next
    /// line that is not blank is an indented item).
    pub(super) fn nested_list_after(&self, inline: &Inline) -> Option<usize> {
        let end = inline.source.as_ref()?.end;
        let mut at = end;
        for line in self.md[end..].split_inclusive('\n') {
            let trimmed = line.trim_start();
            if trimmed.is_empty() {
                at += line.len();
                continue;
            }
            let indented = line.len() - trimmed.len() >= 2;
            let item = trimmed.starts_with(['-', '*', '+']) && trimmed[1..].starts_with([' ', '\t']);
            return (indented && item).then_some(at + (line.len() - trimmed.len()));
        }
        None
    }

    /// `- Context truncation (MEM-4)`, `- MEM-4: Context truncation` or `1. **A finding
    /// in one line** [CK-01]`, a top-level item whose words are a label and an ID, over a
    /// nested list (`status: …`, `where: …`):
    /// the item declares the record, and the nested list, starting at `nested`, is its
    /// body.
    pub(super) fn item_declaration(&mut self, inline: &Inline, nested: usize) {
        if self.list_depth != 1 || self.table.is_some() || self.in_definition || self.in_limits_section() {
            return;
        }
        let text = inline.text.trim();
        let conventions = self.conventions;
        let Some(range) = recognise::item_id(self.scheme, false, text, |w| conventions.is_source(w)) else {
            return;
        };
        let word = &text[range.clone()];
        let declared =
            self.row_declared.contains(word) || self.parts.declarations.iter().any(|d| d.id.as_str() == word);
        let Some(label) = recognise::label_around(text, range.clone()).filter(|_| !declared) else {
            return;
        };
        let Some(item) = inline.source.clone() else { return };
        self.close_owner(item.start);
        let id = self.record_id(word);
        let anchor = self.unique_anchor(id.slug());
        self.parts.block_anchors.insert(item.start, anchor.clone());
        let lead = inline.text.len() - inline.text.trim_start().len();
        let at = lead + range.start;
        let offset = self.source_offset(inline, at..at + word.len()).unwrap_or(item.start);
        // The body is the nested list from the start of its line: its items keep their
        // indentation relative to each other.
        let body_start = self.md[..nested].rfind('\n').map_or(nested, |n| n + 1);
        let index = self.parts.declarations.len();
        self.parts.declarations.push(Declaration {
            id,
            form: DeclarationForm::Heading { level: ITEM_LEVEL },
            anchor,
            label: Some(label),
            fields: Vec::new(),
            body: Some(body_start..body_start),
            location: self.line_col(offset),
            section: self.section,
        });
        self.owner = Some((Owner::declaration(index), ITEM_LEVEL));
        self.item_record = Some(self.list_depth);
    }
}
