//! `casebook diff`: what changed in the analysis between two manifests. Records added,
//! removed and changed (and which parts of them), status transitions, and references
//! that newly point at records that are not published. Rendered as Markdown for a pull
//! request comment or as JSON (schema `casebook.diff/1`, docs/manifest.md).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::manifest::{FindingEntry, Manifest, Place, RecordEntry};
use crate::markup::escape;
use crate::model::{Code, Diagnostic, Location};

/// The schema name and version of the JSON output.
pub const SCHEMA: &str = "casebook.diff/1";

/// The changes between two manifests.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, Default)]
pub struct Diff {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Published in NEW, not in OLD.
    pub added: Vec<RecordRef>,
    /// Published in OLD, not in NEW.
    pub removed: Vec<RecordRef>,
    /// Published in both, with different content.
    pub changed: Vec<Changed>,
    /// Statuses that moved, per record, part and dimension.
    pub status_transitions: Vec<Transition>,
    /// References that point at an unpublished or unknown record in NEW and did not in OLD.
    pub newly_dangling: Vec<Dangling>,
    /// Findings without a published record whose statuses moved, appeared or vanished,
    /// per subject, part and dimension (a published record's are in `status_transitions`).
    pub finding_changes: Vec<FindingChange>,
    /// Quotes and citations whose verification changed, when both manifests are of
    /// verified builds (`--verify`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evidence_changes: Vec<EvidenceChange>,
}

/// The verdicts of a quote or citation (of those written alike in one record, one each),
/// before and after.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct EvidenceChange {
    /// System slug.
    pub system: String,
    /// Run slug.
    pub run: String,
    /// `quote` or `citation`.
    pub kind: String,
    /// The record whose text holds it.
    pub record: Option<String>,
    /// `SRC-1 src/session.py:368-390`, as cited.
    pub cited: String,
    /// Verdicts before (empty: it appeared).
    pub from: Vec<String>,
    /// Verdicts after (empty: it vanished).
    pub to: Vec<String>,
}

/// The statuses of a finding without a published record, before and after.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct FindingChange {
    /// System slug.
    pub system: String,
    /// Run slug.
    pub run: String,
    /// What the findings are about.
    pub subject: String,
    /// The part, if any.
    pub part: Option<String>,
    /// The dimension, empty for a plain status.
    pub dimension: String,
    /// Statuses before (empty: the finding appeared).
    pub from: Vec<String>,
    /// Statuses after (empty: the finding vanished).
    pub to: Vec<String>,
    /// Where it is written (in NEW, or in OLD when it vanished).
    pub url: String,
}

/// A record, named.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct RecordRef {
    /// System slug.
    pub system: String,
    /// Run slug.
    pub run: String,
    /// ID.
    pub id: String,
    /// Label.
    pub label: Option<String>,
    /// Its page (in NEW for added and changed records, in OLD for removed ones).
    pub url: String,
}

/// A changed record and what changed.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Changed {
    /// The record.
    #[serde(flatten)]
    pub record: RecordRef,
    /// Names of the parts that differ: `label`, `statuses`, `parts`, `references`, `body`,
    /// `annotations`, `field:<name>`.
    pub fields: Vec<String>,
}

/// A status that moved.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Transition {
    /// The record.
    #[serde(flatten)]
    pub record: RecordRef,
    /// The part, if the status is on one.
    pub part: Option<String>,
    /// The dimension, empty for a plain status.
    pub dimension: String,
    /// Statuses before (empty when there was none).
    pub from: Vec<String>,
    /// Statuses after (empty when there is none).
    pub to: Vec<String>,
}

/// A reference that newly dangles.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Dangling {
    /// System slug.
    pub system: String,
    /// Run slug.
    pub run: String,
    /// The referencing record.
    pub from: String,
    /// The referenced ID.
    pub to: String,
}

/// A record's place: system, run (empty when runs are compared with each other) and ID.
type Key<'m> = (&'m str, &'m str, &'m str);

/// How records and findings are keyed: by their run (two versions of a site), or
/// without it (two runs of a system, where the same ID in both is the same record).
#[derive(Clone, Copy)]
struct Keying {
    across_runs: bool,
}

impl Keying {
    fn run(self, run: &str) -> &str {
        if self.across_runs {
            ""
        } else {
            run
        }
    }

    fn key(self, r: &RecordEntry) -> Key<'_> {
        (&r.system, self.run(&r.run), &r.id)
    }

    fn named(self, r: &RecordEntry) -> RecordRef {
        RecordRef {
            system: r.system.clone(),
            run: self.run(&r.run).to_string(),
            id: r.id.clone(),
            label: r.label.clone(),
            url: r.url.clone(),
        }
    }
}

/// Compares two manifests.
pub fn diff(old: &Manifest, new: &Manifest) -> Diff {
    compare(old, new, Keying { across_runs: false })
}

/// What changed from one run of a system to another: [`diff`] of the two runs'
/// manifests ([`crate::manifest::run_manifest`]), each record and finding keyed by its ID
/// or subject alone, so that one published in both runs is the same (and named without
/// a run). The links of a record added or changed go to the newer run's page, of one
/// removed to the older's.
pub fn between_runs(old: &Manifest, new: &Manifest) -> Diff {
    compare(old, new, Keying { across_runs: true })
}

fn compare(old: &Manifest, new: &Manifest, keying: Keying) -> Diff {
    fn published(m: &Manifest, keying: Keying) -> BTreeMap<Key<'_>, &RecordEntry> {
        m.records.iter().filter(|r| r.published).map(|r| (keying.key(r), r)).collect()
    }
    let (before, after) = (published(old, keying), published(new, keying));
    let mut out = Diff { schema: SCHEMA.to_string(), ..Diff::default() };
    for (k, r) in &after {
        match before.get(k) {
            None => out.added.push(keying.named(r)),
            Some(o) if o.hash != r.hash => {
                let names: BTreeSet<&String> = o.digests.keys().chain(r.digests.keys()).collect();
                let fields = names.into_iter().filter(|n| o.digests.get(*n) != r.digests.get(*n)).cloned().collect();
                out.changed.push(Changed { record: keying.named(r), fields });
                out.status_transitions.extend(transitions(o, r, keying));
            }
            Some(_) => {}
        }
    }
    out.removed = before.iter().filter(|(k, _)| !after.contains_key(*k)).map(|(_, r)| keying.named(r)).collect();

    // A reference dangles when its target is not published in the same run.
    fn dangling<'m>(published: &BTreeMap<Key<'m>, &'m RecordEntry>) -> BTreeSet<(&'m str, &'m str, &'m str, &'m str)> {
        published
            .iter()
            .flat_map(|(&(system, run, id), r)| r.references.iter().map(move |t| (system, run, id, t.as_str())))
            .filter(|&(system, run, _, to)| !published.contains_key(&(system, run, to)))
            .collect()
    }
    let was = dangling(&before);
    out.newly_dangling = dangling(&after)
        .into_iter()
        .filter(|d| !was.contains(d))
        .map(|(system, run, from, to)| Dangling {
            system: system.to_string(),
            run: run.to_string(),
            from: from.to_string(),
            to: to.to_string(),
        })
        .collect();
    out.finding_changes = finding_changes(old, &before, new, &after, keying);
    if !old.evidence.is_empty() && !new.evidence.is_empty() {
        out.evidence_changes = evidence_changes(old, new, keying);
    }
    out
}

/// A quote or citation by what it cites: system, run, kind, record, and the citation.
type EvidenceKey = (String, String, String, Option<String>, String);

fn cited(e: &crate::manifest::EvidenceEntry) -> String {
    let mut text = e.source.clone().unwrap_or_default();
    let section = e.section.as_ref().map(|s| format!("§{s}"));
    for part in [e.path.as_deref(), section.as_deref()].into_iter().flatten() {
        text.push(' ');
        text.push_str(part);
    }
    if !e.lines.is_empty() {
        text.push(':');
        text.push_str(&e.lines.join(", "));
    }
    text
}

fn evidence_changes(old: &Manifest, new: &Manifest, keying: Keying) -> Vec<EvidenceChange> {
    let verdicts = |m: &Manifest| {
        let mut by: BTreeMap<EvidenceKey, Vec<String>> = BTreeMap::new();
        for e in &m.evidence {
            let key = (e.system.clone(), keying.run(&e.run).to_string(), e.kind.clone(), e.record.clone(), cited(e));
            by.entry(key).or_default().push(e.verdict.clone());
        }
        by.values_mut().for_each(|v| v.sort());
        by
    };
    let (before, after) = (verdicts(old), verdicts(new));
    let keys: BTreeSet<&EvidenceKey> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .map(|k| {
            let (system, run, kind, record, cited) = k.clone();
            let from = before.get(k).cloned().unwrap_or_default();
            let to = after.get(k).cloned().unwrap_or_default();
            EvidenceChange { system, run, kind, record, cited, from, to }
        })
        .collect()
}

/// A finding's place among the findings of its run: system, run, subject, part and
/// dimension.
type FindingKey<'m> = (&'m str, &'m str, &'m str, Option<&'m str>, &'m str);

fn finding_changes(
    old: &Manifest,
    old_records: &BTreeMap<Key<'_>, &RecordEntry>,
    new: &Manifest,
    new_records: &BTreeMap<Key<'_>, &RecordEntry>,
    keying: Keying,
) -> Vec<FindingChange> {
    type Grouped<'m> = BTreeMap<FindingKey<'m>, (BTreeSet<String>, &'m str)>;
    fn group<'m>(m: &'m Manifest, records: &BTreeMap<Key<'_>, &RecordEntry>, keying: Keying) -> Grouped<'m> {
        let mut map: Grouped<'m> = BTreeMap::new();
        let of_published = |f: &FindingEntry| {
            f.record.as_deref().is_some_and(|id| records.contains_key(&(f.system.as_str(), keying.run(&f.run), id)))
        };
        for f in m.findings.iter().filter(|f| !of_published(f)) {
            let key =
                (f.system.as_str(), keying.run(&f.run), f.subject.as_str(), f.part.as_deref(), f.dimension.as_str());
            let entry = map.entry(key).or_insert_with(|| (BTreeSet::new(), f.url.as_str()));
            entry.0.insert(match &f.qualifier {
                Some(q) => format!("{} ({q})", f.status),
                None => f.status.clone(),
            });
        }
        map
    }
    let (before, after) = (group(old, old_records, keying), group(new, new_records, keying));
    let keys: BTreeSet<&FindingKey<'_>> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|k| before.get(*k).map(|e| &e.0) != after.get(*k).map(|e| &e.0))
        .map(|k| {
            let &(system, run, subject, part, dimension) = k;
            FindingChange {
                system: system.to_string(),
                run: run.to_string(),
                subject: subject.to_string(),
                part: part.map(str::to_string),
                dimension: dimension.to_string(),
                from: before.get(k).map(|e| e.0.iter().cloned().collect()).unwrap_or_default(),
                to: after.get(k).map(|e| e.0.iter().cloned().collect()).unwrap_or_default(),
                url: after.get(k).or(before.get(k)).map(|e| e.1.to_string()).unwrap_or_default(),
            }
        })
        .collect()
}

fn transitions(old: &RecordEntry, new: &RecordEntry, keying: Keying) -> Vec<Transition> {
    let group = |r: &RecordEntry| -> BTreeMap<(Option<String>, String), BTreeSet<String>> {
        let mut map: BTreeMap<(Option<String>, String), BTreeSet<String>> = BTreeMap::new();
        for s in &r.statuses {
            let shown = match &s.qualifier {
                Some(q) => format!("{} ({q})", s.value),
                None => s.value.clone(),
            };
            map.entry((s.part.clone(), s.dimension.clone())).or_default().insert(shown);
        }
        map
    };
    let (before, after) = (group(old), group(new));
    let keys: BTreeSet<&(Option<String>, String)> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .map(|k| Transition {
            record: keying.named(new),
            part: k.0.clone(),
            dimension: k.1.clone(),
            from: before.get(k).map(|s| s.iter().cloned().collect()).unwrap_or_default(),
            to: after.get(k).map(|s| s.iter().cloned().collect()).unwrap_or_default(),
        })
        .collect()
}

/// Where a change is shown: the place of the record or finding, in the version that has
/// it (the new one, else the old), else the run's run.yaml.
struct Places<'a> {
    old: &'a Manifest,
    new: &'a Manifest,
}

impl Places<'_> {
    fn location(place: &Place) -> Location {
        Location::new(std::path::Path::new(&place.file).into(), place.line.max(1), 1)
    }

    fn run_file(system: &str, run: &str) -> Location {
        Location::file(&std::path::Path::new("content").join(system).join(run).join("run.yaml"))
    }

    fn record_in(manifest: &Manifest, system: &str, run: &str, id: &str) -> Option<Location> {
        let record = manifest.records.iter().find(|r| r.system == system && r.run == run && r.id == id)?;
        record.declared.first().map(Self::location)
    }

    /// The record's declaration, in the new version first.
    fn record(&self, system: &str, run: &str, id: &str) -> Location {
        Self::record_in(self.new, system, run, id)
            .or_else(|| Self::record_in(self.old, system, run, id))
            .unwrap_or_else(|| Self::run_file(system, run))
    }

    /// The record's declaration in the old version (it is gone from the new).
    fn old_record(&self, system: &str, run: &str, id: &str) -> Location {
        Self::record_in(self.old, system, run, id).unwrap_or_else(|| Self::run_file(system, run))
    }

    fn finding(&self, change: &FindingChange) -> Location {
        let at = |m: &Manifest| {
            m.findings
                .iter()
                .find(|f| {
                    f.system == change.system
                        && f.run == change.run
                        && f.subject == change.subject
                        && f.part == change.part
                        && f.dimension == change.dimension
                })
                .map(|f| Self::location(&f.at))
        };
        at(self.new).or_else(|| at(self.old)).unwrap_or_else(|| Self::run_file(&change.system, &change.run))
    }

    fn evidence(&self, change: &EvidenceChange) -> Location {
        let at = |m: &Manifest| {
            m.evidence
                .iter()
                .find(|e| {
                    e.system == change.system
                        && e.run == change.run
                        && e.kind == change.kind
                        && cited(e) == change.cited
                })
                .and_then(|e| {
                    let (file, line) = e.at.rsplit_once(':')?;
                    Some(Location::new(std::path::Path::new(file).into(), line.parse().ok()?, 1))
                })
        };
        at(self.new).or_else(|| at(self.old)).unwrap_or_else(|| Self::run_file(&change.system, &change.run))
    }
}

/// `a, b` of a set of statuses or verdicts; `none` for the empty set.
fn listed(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

/// [`on`] as plain text, for a message.
fn on_in_words(dimension: &str, part: Option<&str>) -> String {
    let dimension = if dimension.is_empty() { "status".to_string() } else { format!("`{dimension}`") };
    match part {
        Some(part) => format!("{dimension} of part {part}"),
        None => dimension,
    }
}

impl Diff {
    /// Each change as a diagnostic at the place it is declared (`diff --message-format
    /// json|github`): notes, but for a record removed and a reference newly dangling,
    /// which are warnings. `old` and `new` are the manifests this diff was made of.
    pub fn messages(&self, old: &Manifest, new: &Manifest) -> Vec<Diagnostic> {
        let places = Places { old, new };
        let named = |r: &RecordRef| match &r.label {
            Some(label) => format!("{} ({label})", r.id),
            None => r.id.clone(),
        };
        let mut out = Vec::new();
        for r in &self.added {
            let message = format!("record {} added in {}/{}", named(r), r.system, r.run);
            out.push(Diagnostic::note(Code::RecordAdded, places.record(&r.system, &r.run, &r.id), message));
        }
        for r in &self.removed {
            let message = format!("record {} is no longer published in {}/{}", named(r), r.system, r.run);
            out.push(
                Diagnostic::warning(Code::RecordRemoved, places.old_record(&r.system, &r.run, &r.id), message)
                    .with_help(format!(
                        "its page {} goes too; if the record moved, add a redirect to content/redirects.yaml",
                        r.url
                    )),
            );
        }
        for c in &self.changed {
            let r = &c.record;
            let message = format!("record {} changed: {}", named(r), c.fields.join(", "));
            out.push(Diagnostic::note(Code::RecordChanged, places.record(&r.system, &r.run, &r.id), message));
        }
        for t in &self.status_transitions {
            let r = &t.record;
            let message = format!(
                "{}: {} {} → {}",
                r.id,
                on_in_words(&t.dimension, t.part.as_deref()),
                listed(&t.from),
                listed(&t.to)
            );
            out.push(Diagnostic::note(Code::StatusChanged, places.record(&r.system, &r.run, &r.id), message));
        }
        for f in &self.finding_changes {
            let message = format!(
                "finding on {}: {} {} → {}",
                f.subject,
                on_in_words(&f.dimension, f.part.as_deref()),
                listed(&f.from),
                listed(&f.to)
            );
            out.push(Diagnostic::note(Code::FindingChanged, places.finding(f), message));
        }
        for d in &self.newly_dangling {
            let message =
                format!("{} refers to {}, which is not published in {}/{} any more", d.from, d.to, d.system, d.run);
            out.push(
                Diagnostic::warning(Code::NewlyDangling, places.record(&d.system, &d.run, &d.from), message).with_help(
                    "publish the record again, correct the reference, or list the ID under `unpublished:` in run.yaml",
                ),
            );
        }
        for e in &self.evidence_changes {
            let of = e.record.as_ref().map(|r| format!(" of {r}")).unwrap_or_default();
            let message = format!("{} {}{of}: {} → {}", e.kind, e.cited, listed(&e.from), listed(&e.to));
            out.push(Diagnostic::note(Code::EvidenceChanged, places.evidence(e), message));
        }
        out
    }

    /// True when nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.status_transitions.is_empty()
            && self.newly_dangling.is_empty()
            && self.finding_changes.is_empty()
            && self.evidence_changes.is_empty()
    }

    /// The JSON report.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("a diff serialises");
        text.push('\n');
        text
    }

    /// The Markdown report, for a pull request comment or a job summary. Records link to
    /// their pages (in the new site, or the old one for removed records).
    pub fn to_markdown(&self) -> String {
        let mut md = String::from("## What changed in the analysis\n\n");
        if self.is_empty() {
            md.push_str("No record or finding was added, removed or changed.\n");
            return md;
        }
        md.push_str(&format!(
            "| added | removed | changed | status transitions | newly dangling references | findings without a record |\n|---:|---:|---:|---:|---:|---:|\n| {} | {} | {} | {} | {} | {} |\n",
            self.added.len(),
            self.removed.len(),
            self.changed.len(),
            self.status_transitions.len(),
            self.newly_dangling.len(),
            self.finding_changes.len()
        ));
        if !self.status_transitions.is_empty() {
            md.push_str("\n### Status transitions\n\n| record | run | on | from | to |\n|---|---|---|---|---|\n");
            for t in &self.status_transitions {
                md.push_str(&format!(
                    "| {} | {} | {} | {} | {} |\n",
                    link(&t.record),
                    run(&t.record),
                    on(t.part.as_deref(), &t.dimension),
                    statuses_list(&t.from),
                    statuses_list(&t.to)
                ));
            }
        }
        if !self.finding_changes.is_empty() {
            md.push_str(
                "\n### Findings without a record\n\n| subject | run | on | from | to |\n|---|---|---|---|---|\n",
            );
            for f in &self.finding_changes {
                md.push_str(&format!(
                    "| [{}]({}) | {} / {} | {} | {} | {} |\n",
                    cell(&f.subject).replace(['[', ']'], ""),
                    f.url.replace(' ', "%20").replace(')', "%29"),
                    cell(&f.system),
                    cell(&f.run),
                    on(f.part.as_deref(), &f.dimension),
                    statuses_list(&f.from),
                    statuses_list(&f.to)
                ));
            }
        }
        for (title, records) in [("Added", &self.added), ("Removed", &self.removed)] {
            if records.is_empty() {
                continue;
            }
            md.push_str(&format!("\n### {title}\n\n| record | run | label |\n|---|---|---|\n"));
            for r in records.iter() {
                md.push_str(&format!("| {} | {} | {} |\n", link(r), run(r), cell(r.label.as_deref().unwrap_or(""))));
            }
        }
        if !self.changed.is_empty() {
            md.push_str("\n### Changed\n\n| record | run | what changed |\n|---|---|---|\n");
            for c in &self.changed {
                let fields = c.fields.iter().map(|f| cell(f)).collect::<Vec<_>>().join(", ");
                md.push_str(&format!("| {} | {} | {fields} |\n", link(&c.record), run(&c.record)));
            }
        }
        if !self.newly_dangling.is_empty() {
            md.push_str(
                "\n### References that newly point at unpublished records\n\n| from | to | run |\n|---|---|---|\n",
            );
            for d in &self.newly_dangling {
                md.push_str(&format!("| `{}` | `{}` | {} / {} |\n", d.from, d.to, cell(&d.system), cell(&d.run)));
            }
        }
        md.push_str(&self.evidence_section());
        md
    }

    /// The Markdown of the evidence whose verification changed, empty when none did.
    fn evidence_section(&self) -> String {
        let mut md = String::new();
        if self.evidence_changes.is_empty() {
            return md;
        }
        md.push_str(
            "\n### Evidence whose verification changed\n\n| cited | kind | record | run | from | to |\n|---|---|---|---|---|---|\n",
        );
        for e in &self.evidence_changes {
            md.push_str(&format!(
                "| {} | {} | {} | {} / {} | {} | {} |\n",
                cell(&e.cited),
                e.kind,
                e.record.as_deref().map(|r| format!("`{}`", r.replace('`', "'"))).unwrap_or_else(|| "—".into()),
                cell(&e.system),
                cell(&e.run),
                statuses_list(&e.from),
                statuses_list(&e.to)
            ));
        }
        md
    }
}

/// What a status is on: its dimension and part, or `status` for a plain one.
fn on(part: Option<&str>, dimension: &str) -> String {
    match (part, dimension) {
        (Some(p), "") => format!("part {}", cell(p)),
        (Some(p), d) => format!("{}, part {}", cell(d), cell(p)),
        (None, "") => "status".to_string(),
        (None, d) => cell(d),
    }
}

/// Statuses as code spans, or a dash for none.
fn statuses_list(v: &[String]) -> String {
    if v.is_empty() {
        "—".to_string()
    } else {
        v.iter().map(|s| format!("`{}`", s.replace('`', "'"))).collect::<Vec<_>>().join(", ")
    }
}

/// Text safe in a Markdown table cell: no pipes, no line breaks, no HTML.
fn cell(text: &str) -> String {
    escape(text).replace('|', "\\|").replace('\n', " ")
}

fn link(r: &RecordRef) -> String {
    format!("[`{}`]({})", r.id, r.url.replace(' ', "%20").replace(')', "%29"))
}

fn run(r: &RecordRef) -> String {
    format!("{} / {}", cell(&r.system), cell(&r.run))
}
