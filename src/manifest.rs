//! The record manifest: every record of the site as data (`records.json`, one JSON
//! document, and `records.jsonl`, one record per line), for other tools, agents and
//! `casebook diff`. The schema is versioned and documented in docs/manifest.md; fields
//! are only ever added within a version.

use std::collections::BTreeMap;
use std::io::Write;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::model::{DeclarationForm, Finding, Publication, Record, Report, Run, Site, Subject, System};
use crate::urls;

/// The schema name and version written in every manifest.
pub const SCHEMA: &str = "casebook.records/1";

/// The schema name and version of the manifest's findings section.
pub const FINDINGS_SCHEMA: &str = "casebook.findings/1";

/// The schema name and version of the manifest's evidence section (a verified build's).
pub const EVIDENCE_SCHEMA: &str = "casebook.evidence/1";

/// The whole manifest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Manifest {
    /// Always [`SCHEMA`] for this version.
    pub schema: String,
    /// The site's title.
    pub title: String,
    /// The base URL the site was built for.
    pub base_url: String,
    /// Every record, published or only referenced, by system, run and ID.
    pub records: Vec<RecordEntry>,
    /// [`FINDINGS_SCHEMA`]; absent in manifests written before findings were.
    #[serde(default)]
    pub findings_schema: Option<String>,
    /// Every finding, by system, run, report and place.
    #[serde(default)]
    pub findings: Vec<FindingEntry>,
    /// [`EVIDENCE_SCHEMA`], in the manifest of a verified build (`--verify`) only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence_schema: Option<String>,
    /// Every quote and citation of a verified build, with its verdict, in report order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<EvidenceEntry>,
}

/// A quote or citation, and what verification found of it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct EvidenceEntry {
    /// System slug.
    pub system: String,
    /// Run slug.
    pub run: String,
    /// `quote` or `citation`.
    pub kind: String,
    /// The record whose text holds it, if any.
    pub record: Option<String>,
    /// The source (`SRC-1`), named or the run's default.
    pub source: Option<String>,
    /// The file or folder, as written.
    pub path: Option<String>,
    /// A cited section of a document.
    pub section: Option<String>,
    /// The cited lines (`368-390`), as written.
    pub lines: Vec<String>,
    /// Where the report writes it: `content/…/report.md:LINE`.
    pub at: String,
    /// `verified`, `elsewhere`, `not-found`, `missing-file`, `missing-path`, `past-end`,
    /// `wrong-kind`, `whole-source` or `not-verified`.
    pub verdict: String,
    /// The lines the quote was found at (or that are most like it).
    pub found: Option<String>,
    /// How alike the quote and those lines are, per mille, when it was not found.
    pub alike: Option<u16>,
    /// The commit the source was read at.
    pub commit: Option<String>,
    /// Why it was not verified.
    pub why: Option<String>,
}

/// One finding: a status on a dimension of a subject, where it is written.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct FindingEntry {
    /// System slug.
    pub system: String,
    /// Run slug.
    pub run: String,
    /// The run's frozen revision.
    pub revision: String,
    /// The record it is about, when it is about one (published or not).
    pub record: Option<String>,
    /// What it is about: the record's ID, or what the analysis names (`Consolidation`).
    pub subject: String,
    /// The dimension, empty for a plain status.
    pub dimension: String,
    /// The status.
    pub status: String,
    /// Qualifier.
    pub qualifier: Option<String>,
    /// Part.
    pub part: Option<String>,
    /// The statement as written (Markdown).
    pub statement: String,
    /// How it is written: `status-column`, `dimension-column`, `status-key`, `key-value`.
    pub form: String,
    /// Where it is written.
    pub at: Place,
    /// Its place on the report page, with the base URL.
    pub url: String,
}

/// One record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RecordEntry {
    /// System slug.
    pub system: String,
    /// Run slug.
    pub run: String,
    /// The run's frozen revision.
    pub revision: String,
    /// Record ID.
    pub id: String,
    /// Kind code.
    pub kind: String,
    /// Family code.
    pub family: Option<String>,
    /// Label.
    pub label: Option<String>,
    /// For a published record without a label, the title casebook derived for it.
    #[serde(default)]
    pub derived_label: Option<String>,
    /// True when declared in a report of the run.
    pub published: bool,
    /// For unpublished records, the `unpublished` set of run.yaml they fall in.
    pub unpublished_in: Option<String>,
    /// Statuses, in declaration order.
    pub statuses: Vec<StatusEntry>,
    /// Parts, in order.
    pub parts: Vec<String>,
    /// The record page's path below the base URL (`fractal/…/records/OBJ-03.html`).
    pub path: String,
    /// The record page's URL with the base URL.
    pub url: String,
    /// Where it is declared (empty for unpublished records).
    pub declared: Vec<Place>,
    /// IDs its own text references, sorted.
    pub references: Vec<String>,
    /// SHA-256 of its content (label, statuses, parts, fields, body, annotations,
    /// references), independent of where in the files it stands.
    pub hash: String,
    /// A short hash per part of its content, so a diff can say what changed:
    /// `label`, `statuses`, `parts`, `references`, `body`, `annotations`, `field:<name>`.
    pub digests: BTreeMap<String, String>,
}

/// A status on a record.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct StatusEntry {
    /// Dimension, empty for a plain status.
    pub dimension: String,
    /// Status name.
    pub value: String,
    /// Qualifier.
    pub qualifier: Option<String>,
    /// Part.
    pub part: Option<String>,
}

/// A place in the sources.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Place {
    /// File relative to the site root.
    pub file: String,
    /// Line.
    pub line: u32,
    /// The report's slug.
    pub report: String,
    /// The anchor on the report page.
    pub anchor: String,
}

/// Builds the manifest of a resolved site. `base_url` is what pages were built for.
pub fn manifest(site: &Site, base_url: &str) -> Manifest {
    let entries = Entries { site, base_url };
    Manifest {
        schema: SCHEMA.to_string(),
        title: site.title.clone(),
        base_url: base_url.to_string(),
        records: entries.iter().collect(),
        findings_schema: Some(FINDINGS_SCHEMA.to_string()),
        findings: entries.findings().map(|f| f.to_entry()).collect(),
        evidence_schema: None,
        evidence: Vec::new(),
    }
}

/// The records and findings of one run, as the manifest holds them: what a comparison
/// of two runs of a system is made of ([`crate::diff::between_runs`]).
pub fn run_manifest(system: &System, run: &Run, base_url: &str) -> Manifest {
    let base = base_url.trim_end_matches('/');
    Manifest {
        schema: SCHEMA.to_string(),
        title: String::new(),
        base_url: base_url.to_string(),
        records: run.records.values().map(|record| entry(system, run, record, base)).collect(),
        findings_schema: Some(FINDINGS_SCHEMA.to_string()),
        findings: run
            .reports
            .iter()
            .flat_map(|report| report.findings.iter().map(move |f| finding_entry(system, run, report, f, base)))
            .map(|f| f.to_entry())
            .collect(),
        evidence_schema: None,
        evidence: Vec::new(),
    }
}

/// Every quote and citation of `site` with its verdict in `verification`, in the order of
/// systems, runs, reports, then a report's quotes and its citations.
pub fn evidence_entries<'a>(
    site: &'a Site,
    verification: &'a crate::model::Verification,
) -> impl Iterator<Item = EvidenceEntry> + 'a {
    site.systems
        .iter()
        .flat_map(|s| s.runs.iter().map(move |r| (s, &**r)))
        .flat_map(move |(system, run)| run_evidence(system, run, verification))
}

/// The quotes and citations of one run with their verdicts, in the order of its reports,
/// then a report's quotes and its citations.
fn run_evidence<'a>(
    system: &'a System,
    run: &'a Run,
    verification: &'a crate::model::Verification,
) -> impl Iterator<Item = EvidenceEntry> + 'a {
    {
        let verdicts = verification.runs.get(&(system.slug.clone(), run.slug.clone()));
        run.reports.iter().enumerate().flat_map(move |(r, report)| {
            let owner = |o: Option<crate::model::Owner>| {
                o.map(|o| o.record(&report.declarations, &report.annotations).to_string())
            };
            let entry = move |kind: &str,
                              source: Option<&str>,
                              record,
                              path: Option<&str>,
                              section: Option<&str>,
                              lines: &[crate::model::LineRange],
                              line: u32| {
                let source = source.or(run.default_source.as_deref()).map(str::to_string);
                let commit = source.as_ref().and_then(|s| verdicts?.revisions.get(s).cloned());
                EvidenceEntry {
                    system: system.slug.to_string(),
                    run: run.slug.to_string(),
                    kind: kind.to_string(),
                    record,
                    source,
                    path: path.map(str::to_string),
                    section: section.map(str::to_string),
                    lines: lines.iter().map(ToString::to_string).collect(),
                    at: report.source_at(line),
                    verdict: String::new(),
                    found: None,
                    alike: None,
                    commit,
                    why: None,
                }
            };
            let quotes = report.quotes.iter().enumerate().map(move |(i, q)| {
                let mut e =
                    entry("quote", q.source.as_deref(), owner(q.owner), Some(&q.path), None, &q.lines, q.location.line);
                if let Some(verdict) = verdicts.and_then(|v| v.quotes.get(r)?.get(i)) {
                    quote_verdict(&mut e, verdict);
                }
                e
            });
            let citations = report.citations.iter().enumerate().map(move |(i, c)| {
                let source = c.source.as_deref();
                let mut e = entry(
                    "citation",
                    source,
                    owner(c.owner),
                    c.path.as_deref(),
                    c.section.as_deref(),
                    &c.lines,
                    c.location.line,
                );
                if let Some(verdict) = verdicts.and_then(|v| v.citations.get(r)?.get(i)) {
                    citation_verdict(&mut e, verdict);
                }
                e
            });
            quotes.chain(citations)
        })
    }
}

fn quote_verdict(e: &mut EvidenceEntry, verdict: &crate::model::QuoteVerdict) {
    use crate::model::QuoteVerdict as V;
    e.verdict = match verdict {
        V::Verified { lines } => {
            e.found = Some(lines.to_string());
            "verified"
        }
        V::Elsewhere { lines } => {
            e.found = Some(lines.to_string());
            "elsewhere"
        }
        V::NotFound { closest, alike } => {
            e.found = closest.map(|l| l.to_string());
            e.alike = Some(*alike);
            "not-found"
        }
        V::MissingFile => "missing-file",
        V::NotVerified { why } => {
            e.why = Some(why.clone());
            e.commit = None;
            "not-verified"
        }
    }
    .to_string();
}

fn citation_verdict(e: &mut EvidenceEntry, verdict: &crate::model::CitationVerdict) {
    use crate::model::CitationVerdict as V;
    e.verdict = match verdict {
        V::Verified => "verified",
        V::MissingPath => "missing-path",
        V::PastEnd { .. } => "past-end",
        V::WrongKind => "wrong-kind",
        V::WholeSource => "whole-source",
        V::NotVerified { why } => {
            e.why = Some(why.clone());
            e.commit = None;
            "not-verified"
        }
    }
    .to_string();
}

/// A finding as the manifest writes it, borrowed from the model: serialised as
/// [`FindingEntry`] is (the same keys in the same order), without copying every string.
#[derive(Serialize)]
struct FindingOut<'a> {
    system: &'a str,
    run: &'a str,
    revision: &'a str,
    record: Option<&'a str>,
    subject: &'a str,
    dimension: &'a str,
    status: &'a str,
    qualifier: Option<&'a str>,
    part: Option<&'a str>,
    statement: &'a str,
    form: &'a str,
    at: PlaceOut<'a>,
    url: String,
}

#[derive(Serialize)]
struct PlaceOut<'a> {
    file: &'a str,
    line: u32,
    report: &'a str,
    anchor: &'a str,
}

impl FindingOut<'_> {
    fn to_entry(&self) -> FindingEntry {
        FindingEntry {
            system: self.system.to_string(),
            run: self.run.to_string(),
            revision: self.revision.to_string(),
            record: self.record.map(str::to_string),
            subject: self.subject.to_string(),
            dimension: self.dimension.to_string(),
            status: self.status.to_string(),
            qualifier: self.qualifier.map(str::to_string),
            part: self.part.map(str::to_string),
            statement: self.statement.to_string(),
            form: self.form.to_string(),
            at: Place {
                file: self.at.file.to_string(),
                line: self.at.line,
                report: self.at.report.to_string(),
                anchor: self.at.anchor.to_string(),
            },
            url: self.url.clone(),
        }
    }
}

fn finding_entry<'a>(
    system: &'a System,
    run: &'a Run,
    report: &'a Report,
    finding: &'a Finding,
    base: &str,
) -> FindingOut<'a> {
    let record = match &finding.subject {
        Subject::Record(id) => Some(id.as_str()),
        Subject::Named(_) => None,
    };
    let page = urls::report(&system.slug, &run.slug, &report.slug);
    FindingOut {
        system: &system.slug,
        run: &run.slug,
        revision: run.revision.as_str(),
        record,
        subject: finding.subject.name(),
        dimension: &finding.dimension,
        status: &finding.status,
        qualifier: finding.qualifier.as_deref(),
        part: finding.part.as_deref(),
        statement: &finding.statement,
        form: finding.form.name(),
        at: PlaceOut {
            file: &report.source_path,
            line: finding.location.line,
            report: &report.slug,
            anchor: &finding.anchor,
        },
        url: format!("{base}{page}#{}", finding.anchor),
    }
}

fn entry(system: &System, run: &Run, record: &Record, base: &str) -> RecordEntry {
    let url_path = urls::record(&system.slug, &run.slug, &record.id);
    let statuses: Vec<StatusEntry> = run
        .findings_of(record)
        .map(|s| StatusEntry {
            dimension: s.dimension.to_string(),
            value: s.status.to_string(),
            qualifier: s.qualifier.as_deref().map(str::to_string),
            part: s.part.as_deref().map(str::to_string),
        })
        .collect();
    let references: Vec<String> = record.references.iter().map(ToString::to_string).collect();
    let digests = digests(run, record, &statuses, &references);
    let hash = hex(&Sha256::digest(serde_json::to_string(&digests).expect("digests serialise")));
    let (published, unpublished_in) = match &record.publication {
        Publication::Published => (true, None),
        Publication::Unpublished(set) => (false, run.unpublished.get(*set).map(|s| s.name.clone())),
    };
    RecordEntry {
        system: system.slug.to_string(),
        run: run.slug.to_string(),
        revision: run.revision.to_string(),
        id: record.id.to_string(),
        kind: record.kind.clone(),
        family: record.family.clone(),
        label: record.label.clone(),
        derived_label: record.derived_label.clone(),
        published,
        unpublished_in,
        statuses,
        parts: record.parts.clone(),
        path: url_path.trim_start_matches('/').to_string(),
        url: format!("{base}{url_path}"),
        declared: declared_places(run, record),
        references,
        hash,
        digests,
    }
}

/// Where each declaration of the record is written.
fn declared_places(run: &Run, record: &Record) -> Vec<Place> {
    record
        .declarations
        .iter()
        .map(|at| {
            let report = &run.reports[at.report];
            let d = &report.declarations[at.index];
            Place {
                file: report.source_path.clone(),
                line: d.location.line,
                report: report.slug.to_string(),
                anchor: d.anchor.clone(),
            }
        })
        .collect()
}

/// A short hash of each part of the record's content (label, statuses, parts,
/// references, each field, body, annotations), so that `diff` can say what changed.
fn digests(run: &Run, record: &Record, statuses: &[StatusEntry], references: &[String]) -> BTreeMap<String, String> {
    let mut digests = BTreeMap::new();
    let mut put = |name: String, content: &str| {
        digests.insert(name, short_hash(content));
    };
    put("label".into(), record.label.as_deref().unwrap_or(""));
    let mut sorted = statuses.to_vec();
    sorted.sort();
    put("statuses".into(), &serde_json::to_string(&sorted).expect("statuses serialise"));
    put("parts".into(), &record.parts.join("\n"));
    put("references".into(), &references.join("\n"));
    let mut body = String::new();
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    for at in &record.declarations {
        let report = &run.reports[at.report];
        let d = &report.declarations[at.index];
        let part = match &d.form {
            DeclarationForm::TableRow { part: Some(part), .. } => format!("{part}: "),
            _ => String::new(),
        };
        for field in &d.fields {
            let value = fields.entry(field.name.to_string()).or_default();
            value.push_str(&format!("{part}{}\n", field.value));
        }
        if let Some(range) = &d.body {
            body.push_str(report.markdown[range.clone()].trim());
            body.push('\n');
        }
    }
    for (name, value) in &fields {
        put(format!("field:{name}"), value);
    }
    if !body.is_empty() {
        put("body".into(), &body);
    }
    let annotations: String = record
        .annotations
        .iter()
        .map(|at| {
            let report = &run.reports[at.report];
            report.markdown[report.annotations[at.index].body.clone()].trim().to_string()
        })
        .collect::<Vec<_>>()
        .join("\n");
    if !annotations.is_empty() {
        put("annotations".into(), &annotations);
    }
    digests
}

fn short_hash(content: &str) -> String {
    hex(&Sha256::digest(content.as_bytes())[..8])
}

fn hex(bytes: &[u8]) -> String {
    hex::encode(bytes)
}

/// An array of `records.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// `records`.
    Records,
    /// `findings`.
    Findings,
    /// `evidence` (verified builds only).
    Evidence,
}

/// A run's share of one array of `records.json`: its items serialised one per line, joined
/// by `,\n` (for a site published at `base_url`, with what `verification` found in it).
/// Each run's lines are made apart from the others', so a build makes them in parallel,
/// and a later build copies the lines of the runs that did not change.
pub fn run_lines(
    system: &System,
    run: &Run,
    base_url: &str,
    verification: Option<&crate::model::Verification>,
    section: Section,
) -> Vec<u8> {
    let base = base_url.trim_end_matches('/');
    let mut lines = Vec::new();
    match section {
        Section::Records => {
            for record in run.records.values() {
                push_line(&mut lines, &entry(system, run, record, base));
            }
        }
        Section::Findings => {
            for report in &run.reports {
                for finding in &report.findings {
                    push_line(&mut lines, &finding_entry(system, run, report, finding, base));
                }
            }
        }
        Section::Evidence => {
            for evidence in verification.into_iter().flat_map(|v| run_evidence(system, run, v)) {
                push_line(&mut lines, &evidence);
            }
        }
    }
    lines
}

/// Where `records.json` takes each run's lines of a section from: for each section, every
/// run's lines in site order, each handed to `put` once (empty when it has none).
pub type Lines<'a> = dyn FnMut(Section, &mut dyn FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> + 'a;

/// Where each array's lines of a run are in a written `records.json`: an offset and a
/// length per [`Section`] (so that a later build can copy the lines of the runs that did
/// not change).
pub type Spans = [(u64, u64); 3];

/// Writes `records.json` of `site`, built for `base_url`, from its runs' lines (`lines`):
/// the JSON of [`manifest`] with each record, finding and evidence entry (`verified`
/// builds only) on a line of its own (compact, so the manifest costs little more than its
/// data, and line tools and diffs still see one item per line). Gives each run's
/// [`Spans`], in order.
pub fn write_manifest(
    site: &Site,
    base_url: &str,
    verified: bool,
    lines: &mut Lines<'_>,
    json: &mut dyn Write,
) -> std::io::Result<Vec<Spans>> {
    let mut json = Counted { inner: json, written: 0 };
    let quoted = |text: &str| serde_json::to_string(text).expect("a string serialises");
    write!(
        json,
        "{{\"schema\":{},\"title\":{},\"base_url\":{},\"records\":[",
        quoted(SCHEMA),
        quoted(&site.title),
        quoted(base_url)
    )?;
    let mut spans: Vec<Spans> = Vec::new();
    array(&mut json, Section::Records, lines, &mut spans)?;
    write!(json, ",\"findings_schema\":{},\"findings\":[", quoted(FINDINGS_SCHEMA))?;
    array(&mut json, Section::Findings, lines, &mut spans)?;
    if verified {
        write!(json, ",\"evidence_schema\":{},\"evidence\":[", quoted(EVIDENCE_SCHEMA))?;
        array(&mut json, Section::Evidence, lines, &mut spans)?;
    }
    json.write_all(b"}\n")?;
    Ok(spans)
}

/// The items of an array (the caller opened it with `[`), from each run's lines, each
/// item on a line of its own; then `]`. Notes where each run's lines are.
fn array(
    json: &mut Counted<'_>,
    section: Section,
    lines: &mut Lines<'_>,
    spans: &mut Vec<Spans>,
) -> std::io::Result<()> {
    let mut written = false;
    let mut run = 0;
    lines(section, &mut |run_lines| {
        if spans.len() <= run {
            spans.push([(0, 0); 3]);
        }
        if !run_lines.is_empty() {
            json.write_all(if written { b",\n" } else { b"\n" })?;
            spans[run][section as usize] = (json.written, run_lines.len() as u64);
            json.write_all(run_lines)?;
            written = true;
        }
        run += 1;
        Ok(())
    })?;
    json.write_all(if written { b"\n]" } else { b"]" })
}

/// A writer that counts what it wrote.
struct Counted<'a> {
    inner: &'a mut dyn Write,
    written: u64,
}

impl Write for Counted<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(bytes)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Adds `item`'s JSON to `out` as a line of its own (after `,\n` when `out` holds one).
fn push_line(out: &mut Vec<u8>, item: &impl Serialize) {
    if !out.is_empty() {
        out.extend_from_slice(b",\n");
    }
    serde_json::to_writer(&mut *out, item).expect("an entry serialises");
}

/// The records of a site, in manifest order.
#[derive(Clone, Copy)]
struct Entries<'a> {
    site: &'a Site,
    base_url: &'a str,
}

impl<'a> Entries<'a> {
    fn findings(self) -> impl Iterator<Item = FindingOut<'a>> + 'a {
        let base = self.base_url.trim_end_matches('/');
        self.site.systems.iter().flat_map(move |system| {
            system.runs.iter().flat_map(move |run| {
                run.reports.iter().flat_map(move |report| {
                    report.findings.iter().map(move |finding| finding_entry(system, run, report, finding, base))
                })
            })
        })
    }

    fn iter(self) -> impl Iterator<Item = RecordEntry> + 'a {
        let base = self.base_url.trim_end_matches('/');
        self.site.systems.iter().flat_map(move |system| {
            system
                .runs
                .iter()
                .flat_map(move |run| run.records.values().map(move |record| entry(system, run, record, base)))
        })
    }
}

impl Manifest {
    /// Reads `records.json`, checking the schema.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let manifest: Manifest = serde_json::from_str(text).map_err(|e| format!("not a casebook manifest: {e}"))?;
        if manifest.schema != SCHEMA {
            return Err(format!("manifest schema `{}` is not `{SCHEMA}`", manifest.schema));
        }
        Ok(manifest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_site_without_records_writes_the_manifest_serde_would_compactly() {
        let site = Site {
            title: "An \"empty\" site".into(),
            statuses: Vec::new(),
            kinds: BTreeMap::new(),
            families: BTreeMap::new(),
            systems: Vec::new(),
            source_url: None,
            record_pages: Default::default(),
        };
        let mut json = Vec::new();
        let spans = write_manifest(&site, "/docs/", false, &mut |_, _| Ok(()), &mut json).unwrap();
        assert!(spans.is_empty());
        let expected = serde_json::to_string(&manifest(&site, "/docs/")).unwrap() + "\n";
        assert_eq!(String::from_utf8(json).unwrap(), expected);
    }
}
