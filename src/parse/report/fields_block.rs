//! A record's fields written as a block of YAML under its heading, as notes kept in a
//! structured habit do:
//!
//! ```yaml
//! id: GATE-01
//! status:
//!   dangerous tools in a TTY session: wired  # routed to the console prompt
//! citations:
//!   - SRC-2 praisonaiagents/agent/agent.py:2506-2558
//! related: [GATE-02, GATE-04]
//! ```
//!
//! (And a specification in Gherkin, whose steps name the records they are about.)
//!
//! Each line is read as the line of Markdown it stands for: `status: wired` as a status
//! key, each `dimension: status` under `status:` as a list item's key and status (a
//! comment after it as the status's qualifier), and every other line for the citations
//! and references it holds.

use std::sync::LazyLock;

use regex::Regex;

use super::{Inline, PendingCode, Scanner, TextRun};
use crate::model::Owner;

/// The keys that make a YAML block a record's fields rather than a quote of a file.
static FIELD_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^(?:status|statuses|findings|citations|cites|evidence|related|refs|references|see_also)\s*:")
        .unwrap()
});

/// What a line of the block is read as.
#[derive(Clone, Copy, PartialEq)]
enum Reading {
    /// Scanned for citations and references only.
    Scanned,
    /// A key and a value that may be a status (`status: wired`).
    KeyValue,
    /// A `dimension: status` under `status:`.
    Dimension,
}

impl Scanner<'_> {
    /// Reads a code block no caption attributes as what it is in the analyst's own words,
    /// when it is: a specification in Gherkin (`Given a list of operations from DEC-4`),
    /// read for the records and sources it names, or a record's fields in YAML. True when
    /// it was read so.
    pub(super) fn analyst_block(&mut self, code: &PendingCode) -> bool {
        let gherkin = code
            .language
            .as_deref()
            .is_some_and(|l| ["gherkin", "cucumber", "feature"].iter().any(|g| l.eq_ignore_ascii_case(g)));
        if gherkin {
            for (start, line) in block_lines(self.md, code) {
                let trimmed = line.trim_start();
                let lead = line.len() - trimmed.len();
                self.scan(&line_inline(trimmed, start + lead, Reading::Scanned), code.owner, None);
            }
            return true;
        }
        self.record_fields_block(code)
    }

    /// Reads `code` as its record's fields when it is a YAML block under a record that
    /// holds status, citation or reference keys; true when it was.
    fn record_fields_block(&mut self, code: &PendingCode) -> bool {
        let yaml =
            code.language.as_deref().is_some_and(|l| l.eq_ignore_ascii_case("yaml") || l.eq_ignore_ascii_case("yml"));
        let Some(Owner::Declaration(_)) = code.owner else { return false };
        if !yaml || !FIELD_KEY.is_match(&code.code) {
            return false;
        }
        let lines = block_lines(self.md, code);
        let mut under_status = false;
        for (start, line) in lines {
            let trimmed = line.trim_start();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let indented = trimmed.len() < line.len();
            let key = trimmed.split(':').next().unwrap_or("").trim().to_ascii_lowercase();
            if !indented {
                under_status = matches!(key.as_str(), "status" | "statuses" | "findings")
                    && trimmed.split_once(':').is_some_and(|(_, value)| value.trim().is_empty());
                if key == "id" {
                    continue;
                }
            }
            let reading = match (indented, key.as_str()) {
                (true, _) if under_status => Reading::Dimension,
                (false, "status" | "statuses") => Reading::KeyValue,
                _ => Reading::Scanned,
            };
            let lead = line.len() - trimmed.len();
            let inline = line_inline(trimmed.trim_start_matches("- "), start + lead, reading);
            match reading {
                Reading::Scanned => self.scan(&inline, code.owner, None),
                Reading::KeyValue => self.block_text(inline, code.owner, false),
                Reading::Dimension => self.block_text(inline, code.owner, true),
            }
        }
        true
    }
}

/// The lines of a fenced block's code, each with where it starts in the source.
fn block_lines<'m>(md: &'m str, code: &PendingCode) -> Vec<(usize, &'m str)> {
    let block = &md[code.offset..code.end.max(code.offset)];
    let mut out = Vec::new();
    let mut at = code.offset;
    for (i, line) in block.split_inclusive('\n').enumerate() {
        let text = line.trim_end_matches(['\n', '\r']);
        // The opening fence, and the closing one.
        if i > 0 && !text.trim_start().starts_with("```") && !text.trim_start().starts_with("~~~") {
            out.push((at, text));
        }
        at += line.len();
    }
    out
}

/// One line of the block as an inline container: a comment after a status reads as its
/// qualifier (`wired  # routed …` as `wired (routed …)`).
fn line_inline(line: &str, start: usize, reading: Reading) -> Inline {
    let (body, comment) = match line.find(" #") {
        Some(at) if reading != Reading::Scanned => (line[..at].trim_end(), Some(line[at + 2..].trim())),
        _ => (line, None),
    };
    let mut text = body.to_string();
    let mut runs = vec![TextRun { text: 0..body.len(), source: start..start + body.len() }];
    if let Some(comment) = comment.filter(|c| !c.is_empty()) {
        let comment_start = start + line.find(comment).unwrap_or(0);
        text.push_str(" (");
        runs.push(TextRun {
            text: text.len()..text.len() + comment.len(),
            source: comment_start..comment_start + comment.len(),
        });
        text.push_str(comment);
        text.push(')');
    }
    Inline { text, runs, source: Some(start..start + line.len()), ..Inline::default() }
}
