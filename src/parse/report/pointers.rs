//! Sections a record names by their label: a walkthrough keeps the evidence of `W-TRAJ`
//! in `### Step 4: The trajectory buffer` and the record says only `Step 4.`; a memo
//! keeps a quote in `## Exhibit 3 — …` that one record's paragraph refers to. Such a
//! section's text is the record's, as an `On W-TRAJ` section's would be.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::Range;

use super::Scanner;
use crate::model::{Annotation, Owner};
use crate::recognise;

/// A labelled section that no record owns, and the records that name its label.
struct Named {
    section: usize,
    /// Declarations naming it, each with whether it is the first label that record names.
    claims: Vec<(usize, bool)>,
}

impl Scanner<'_> {
    /// Gives each labelled section that no record owns to the one record that names it;
    /// when several do, to the one that names it before any other label (its home
    /// section). Otherwise the section stays the report's. Only its unowned quotes,
    /// citations and references change hands.
    pub(super) fn adopt_named_sections(&mut self) {
        let mut named = self.unowned_labelled_sections();
        if named.is_empty() {
            return;
        }
        for (d, declaration) in self.parts.declarations.iter().enumerate() {
            let text = match &declaration.body {
                Some(body) => &self.md[body.clone()],
                None => self.line_text(self.offset_of_line(declaration.location.line)),
            };
            let mut seen = HashSet::new();
            for label in recognise::named_labels(text) {
                if let Some(entry) = named.get_mut(&label) {
                    if seen.insert(label) {
                        entry.claims.push((d, seen.len() == 1));
                    }
                }
            }
        }
        let mut adopted: Vec<(Range<u32>, Owner)> = Vec::new();
        let mut by_section: Vec<Named> = named.into_values().collect();
        by_section.sort_by_key(|n| n.section);
        for Named { section, claims } in by_section {
            let homes: Vec<usize> = claims.iter().filter(|(_, home)| *home).map(|(d, _)| *d).collect();
            let record = match (claims.as_slice(), homes.as_slice()) {
                ([(only, _)], _) => *only,
                (_, [home]) => *home,
                _ => continue,
            };
            let span = self.heading_spans[section].clone();
            let next = self.heading_spans.get(section + 1).map_or(self.md.len(), |s| s.start);
            let owner = Owner::annotation(self.parts.annotations.len());
            self.parts.annotations.push(Annotation {
                target: self.parts.declarations[record].id.clone(),
                anchor: self.parts.sections[section].anchor.clone(),
                body: span.end..next,
                location: self.line_col(span.start),
                section: u32::try_from(section).ok(),
                own_text: true,
            });
            let end_line = self.parts.sections.get(section + 1).map_or(u32::MAX, |s| s.line);
            adopted.push((self.parts.sections[section].line..end_line, owner));
        }
        let owner_at = |line: u32| {
            let after = adopted.partition_point(|(lines, _)| lines.start <= line);
            after.checked_sub(1).map(|i| &adopted[i]).filter(|(lines, _)| lines.contains(&line)).map(|(_, o)| *o)
        };
        for quote in self.parts.quotes.iter_mut().filter(|q| q.owner.is_none()) {
            quote.owner = owner_at(quote.location.line);
        }
        for citation in self.parts.citations.iter_mut().filter(|c| c.owner.is_none()) {
            citation.owner = owner_at(citation.location.line);
        }
        for mention in self.parts.mentions.iter_mut().filter(|m| m.owner.is_none()) {
            mention.owner = owner_at(mention.location.line);
        }
    }

    /// The sections whose heading leads with a label (`Step 4:`), which declare no
    /// record, annotate none, hold no declaration and lie in no record's body; by label,
    /// a label two sections share being no one's.
    fn unowned_labelled_sections(&self) -> HashMap<String, Named> {
        let sections = &self.parts.sections;
        let section_at = |offset: usize| self.heading_spans.partition_point(|s| s.start <= offset).checked_sub(1);
        let mut owned: HashSet<usize> = HashSet::new();
        for declaration in &self.parts.declarations {
            owned.extend(declaration.section.map(|s| s as usize));
            owned.extend(section_at(self.offset_of_line(declaration.location.line)));
        }
        owned.extend(self.parts.annotations.iter().filter_map(|a| a.section.map(|s| s as usize)));
        let bodies = self.parts.declarations.iter().filter_map(|d| d.body.clone());
        for body in bodies.chain(self.parts.annotations.iter().map(|a| a.body.clone())) {
            let first = self.heading_spans.partition_point(|s| s.start < body.start);
            owned.extend((first..self.heading_spans.len()).take_while(|&i| self.heading_spans[i].start < body.end));
        }
        let mut by_label: BTreeMap<String, Option<usize>> = BTreeMap::new();
        for (i, section) in sections.iter().enumerate() {
            if let Some(label) = recognise::section_label(&section.title) {
                let entry = by_label.entry(label).or_insert(Some(i));
                if *entry != Some(i) {
                    *entry = None;
                }
            }
        }
        by_label
            .into_iter()
            .filter_map(|(label, section)| Some((label, section?)))
            .filter(|(_, section)| !owned.contains(section))
            .map(|(label, section)| (label, Named { section, claims: Vec::new() }))
            .collect()
    }
}
