//! The record manifest: every record and finding of the site as data, for other tools,
//! agents and `casebook diff`: `records.json` lists the runs, and each run's records,
//! findings and evidence are in its own `records.json` (in its run's folder). The schema
//! is versioned and documented in docs/manifest.md; fields are only ever added within a
//! version.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::model::{DeclarationForm, Finding, Publication, Record, Report, Run, Site, Subject, System};
use crate::urls;

/// The schema name and version of the site's `records.json` (the list of runs).
pub const SCHEMA: &str = "casebook.records/2";

/// The schema of a run's `records.json` (its records, findings and evidence).
pub const RUN_SCHEMA: &str = "casebook.run-records/2";

/// The schema of the manifests written until December 2026: one `records.json` holding
/// every run's items; still read (an old site's manifest for the anchor contract or a diff).
const SCHEMA_1: &str = "casebook.records/1";

/// The name of the site's manifest file, and of each run's, in its run's folder.
pub const FILE: &str = "records.json";

/// The schema name and version of the manifest's findings section.
pub const FINDINGS_SCHEMA: &str = "casebook.findings/1";

/// The schema name and version of the manifest's evidence section (a verified build's).
pub const EVIDENCE_SCHEMA: &str = "casebook.evidence/1";

/// The whole manifest: the site's runs' items together, as `casebook diff` and the anchor
/// contract read them (from the files of [`Manifest::read`], or made by [`manifest`]).
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
    /// How it is written: `status-column`, `dimension-column`, `status-key`, `key-value`, `sentence`.
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
        statement: report.text(&finding.statement),
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
        kind: record.kind.to_string(),
        family: record.family.as_deref().map(str::to_string),
        label: record.label.as_deref().map(str::to_string),
        derived_label: record.derived_label.as_deref().map(str::to_string),
        published,
        unpublished_in,
        statuses,
        parts: record.parts.to_vec(),
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
            let report = &run.reports[at.report as usize];
            let d = &report.declarations[at.index as usize];
            Place {
                file: report.source_path.clone(),
                line: d.location.line,
                report: report.slug.to_string(),
                anchor: d.anchor.to_string(),
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
        let report = &run.reports[at.report as usize];
        let d = &report.declarations[at.index as usize];
        let part = match &d.form {
            DeclarationForm::TableRow { part: Some(part), .. } => format!("{part}: "),
            _ => String::new(),
        };
        for field in &d.fields {
            let value = fields.entry(field.name.to_string()).or_default();
            value.push_str(&format!("{part}{}\n", report.text(&field.value)));
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
            let report = &run.reports[at.report as usize];
            report.markdown[report.annotations[at.index as usize].body.clone()].trim().to_string()
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

/// An array of a run's `records.json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Section {
    /// `records`.
    Records,
    /// `findings`.
    Findings,
    /// `evidence` (verified builds only).
    Evidence,
}

/// A run's items of one array: serialised one per line, joined by `,\n` (for a site
/// published at `base_url`, with what `verification` found in it).
fn run_lines(
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

/// A run as the site's `records.json` lists it: where its file is, and how many items of
/// each kind that file holds.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct RunEntry {
    /// System slug.
    pub system: String,
    /// Run slug.
    pub run: String,
    /// The run's frozen revision.
    pub revision: String,
    /// The run's file below the base URL (and beside the site's `records.json`):
    /// `<system>/<run>/records.json`.
    pub path: String,
    /// How many records the run's file lists (published or only referenced).
    pub records: usize,
    /// How many findings it lists.
    pub findings: usize,
}

/// The path of a run's manifest file in the output (`<system>/<run>/records.json`).
pub fn run_path(system: &System, run: &Run) -> String {
    format!("{}{FILE}", urls::run(&system.slug, &run.slug).trim_start_matches('/'))
}

/// `text` as a JSON string.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).expect("a string serialises")
}

/// The site's `records.json`: its title and base URL, the schemas of the runs' files, and a
/// line per run saying where its file is. Small, whatever the size of the site: a build
/// that changed one run rewrites this and that run's file.
pub fn site_file(site: &Site, base_url: &str, verified: bool) -> Vec<u8> {
    let mut json = format!(
        "{{\"schema\":{},\"title\":{},\"base_url\":{},\"findings_schema\":{}",
        quoted(SCHEMA),
        quoted(&site.title),
        quoted(base_url),
        quoted(FINDINGS_SCHEMA)
    )
    .into_bytes();
    if verified {
        json.extend_from_slice(format!(",\"evidence_schema\":{}", quoted(EVIDENCE_SCHEMA)).as_bytes());
    }
    let mut lines = Vec::new();
    for system in &site.systems {
        for run in &system.runs {
            let entry = RunEntry {
                system: system.slug.to_string(),
                run: run.slug.to_string(),
                revision: run.revision.to_string(),
                path: run_path(system, run),
                records: run.records.len(),
                findings: run.reports.iter().map(|r| r.findings.len()).sum(),
            };
            push_line(&mut lines, &entry);
        }
    }
    json.extend_from_slice(b",\"runs\":[");
    array(&mut json, &lines);
    json.extend_from_slice(b"}\n");
    json
}

/// A run's `records.json`: its records, findings and (in a verified build, with what
/// `verification` found) evidence, each item on a line of its own (compact, so the
/// manifest costs little more than its data, and line tools and diffs still see one item
/// per line), for a site published at `base_url`. Made from the run alone, so a build
/// makes the runs' files in parallel and a later one keeps those of unchanged runs.
pub fn run_file(
    system: &System,
    run: &Run,
    base_url: &str,
    verification: Option<&crate::model::Verification>,
) -> Vec<u8> {
    let mut json = format!(
        "{{\"schema\":{},\"system\":{},\"run\":{},\"revision\":{},\"records\":[",
        quoted(RUN_SCHEMA),
        quoted(&system.slug),
        quoted(&run.slug),
        quoted(run.revision.as_str())
    )
    .into_bytes();
    array(&mut json, &run_lines(system, run, base_url, verification, Section::Records));
    json.extend_from_slice(b",\"findings\":[");
    array(&mut json, &run_lines(system, run, base_url, verification, Section::Findings));
    if verification.is_some() {
        json.extend_from_slice(b",\"evidence\":[");
        array(&mut json, &run_lines(system, run, base_url, verification, Section::Evidence));
    }
    json.extend_from_slice(b"}\n");
    json
}

/// An array's items (the caller opened it with `[`), each on a line of its own; then `]`.
fn array(json: &mut Vec<u8>, lines: &[u8]) {
    if !lines.is_empty() {
        json.push(b'\n');
        json.extend_from_slice(lines);
        json.push(b'\n');
    }
    json.push(b']');
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

/// The site's `records.json` as read.
#[derive(Deserialize)]
struct SiteFile {
    title: String,
    base_url: String,
    #[serde(default)]
    findings_schema: Option<String>,
    #[serde(default)]
    evidence_schema: Option<String>,
    runs: Vec<RunEntry>,
}

/// A run's `records.json` as read.
#[derive(Deserialize)]
struct RunFile {
    schema: String,
    records: Vec<RecordEntry>,
    findings: Vec<FindingEntry>,
    #[serde(default)]
    evidence: Vec<EvidenceEntry>,
}

impl Manifest {
    /// Reads a site's manifest: its `records.json` (`file`) and each run's file it lists
    /// (beside it, read in parallel); a manifest of schema 1 is `file` alone. Errors say
    /// what is wrong, and which run's file when it is one (the caller names `file`).
    pub fn read(file: &Path) -> Result<Self, String> {
        #[derive(Deserialize)]
        struct Schema {
            schema: String,
        }
        let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read it: {e}"))?;
        let not_manifest = |e: serde_json::Error| format!("not a casebook manifest: {e}");
        let schema = serde_json::from_str::<Schema>(&text).map_err(not_manifest)?.schema;
        match schema.as_str() {
            SCHEMA => {
                let site: SiteFile = serde_json::from_str(&text).map_err(not_manifest)?;
                Self::from_runs(file.parent().unwrap_or(Path::new("")), site)
            }
            SCHEMA_1 => serde_json::from_str(&text).map_err(not_manifest),
            other => Err(format!("manifest schema `{other}` is neither `{SCHEMA}` nor `{SCHEMA_1}`")),
        }
    }

    /// The manifest of the site whose `records.json` (in `dir`) is `site`: each run's
    /// items, read from its file, in the site's order.
    fn from_runs(dir: &Path, site: SiteFile) -> Result<Self, String> {
        use rayon::prelude::*;
        let runs: Vec<RunFile> = site.runs.par_iter().map(|entry| read_run(dir, entry)).collect::<Result<_, _>>()?;
        let mut manifest = Manifest {
            schema: SCHEMA.to_string(),
            title: site.title,
            base_url: site.base_url,
            records: Vec::new(),
            findings_schema: site.findings_schema,
            findings: Vec::new(),
            evidence_schema: site.evidence_schema,
            evidence: Vec::new(),
        };
        for run in runs {
            manifest.records.extend(run.records);
            manifest.findings.extend(run.findings);
            manifest.evidence.extend(run.evidence);
        }
        Ok(manifest)
    }
}

/// A run's file as the site's `records.json` lists it (`entry`), checked against it: a
/// file of another build (a site copied in part) is an error, not a silent mix.
fn read_run(dir: &Path, entry: &RunEntry) -> Result<RunFile, String> {
    let relative = Path::new(&entry.path);
    if !relative.components().all(|c| matches!(c, std::path::Component::Normal(_))) {
        return Err(format!("it lists `{}` as a run's file, which is not a path inside its folder", entry.path));
    }
    let path = dir.join(relative);
    let whole = "the run files are read from beside records.json: copy the whole built site, not records.json alone";
    let text =
        std::fs::read_to_string(&path).map_err(|e| format!("{}: cannot read it ({e}); {whole}", path.display()))?;
    let run: RunFile =
        serde_json::from_str(&text).map_err(|e| format!("{}: not a run's manifest: {e}", path.display()))?;
    if run.schema != RUN_SCHEMA {
        return Err(format!("{}: schema `{}` is not `{RUN_SCHEMA}`", path.display(), run.schema));
    }
    if (run.records.len(), run.findings.len()) != (entry.records, entry.findings) {
        return Err(format!(
            "{}: holds {} records and {} findings where records.json says {} and {}: the files are of different builds; build the site again",
            path.display(),
            run.records.len(),
            run.findings.len(),
            entry.records,
            entry.findings
        ));
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_site() -> Site {
        Site {
            title: "An \"empty\" site".into(),
            statuses: Vec::new(),
            kinds: BTreeMap::new(),
            families: BTreeMap::new(),
            systems: Vec::new(),
            source_url: None,
            record_pages: Default::default(),
            status_pages: Default::default(),
            feed_entries: crate::config::DEFAULT_FEED_ENTRIES,
            search_files: Default::default(),
        }
    }

    #[test]
    fn a_site_without_runs_writes_a_records_json_that_reads_back_as_its_manifest() {
        let site = empty_site();
        let json = String::from_utf8(site_file(&site, "/docs/", false)).unwrap();
        assert_eq!(
            json,
            "{\"schema\":\"casebook.records/2\",\"title\":\"An \\\"empty\\\" site\",\"base_url\":\"/docs/\",\"findings_schema\":\"casebook.findings/1\",\"runs\":[]}\n"
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), json).unwrap();
        assert_eq!(Manifest::read(&dir.path().join(FILE)).unwrap(), manifest(&site, "/docs/"));
    }

    /// A site's `records.json` listing one run, whose file holds `records` records.
    fn site_listing_a_run(dir: &Path, path: &str, records: usize) -> std::path::PathBuf {
        let site = format!(
            "{{\"schema\":\"{SCHEMA}\",\"title\":\"T\",\"base_url\":\"/\",\"runs\":[\n{{\"system\":\"s\",\"run\":\"r\",\"revision\":\"abc\",\"path\":\"{path}\",\"records\":{records},\"findings\":0}}\n]}}\n"
        );
        std::fs::write(dir.join(FILE), site).unwrap();
        dir.join(FILE)
    }

    #[test]
    fn a_run_file_missing_or_of_another_build_is_an_error_saying_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        let file = site_listing_a_run(dir.path(), "s/r/records.json", 0);
        let missing = Manifest::read(&file).unwrap_err();
        assert!(missing.contains("s/r/records.json") && missing.contains("copy the whole built site"), "{missing}");

        std::fs::create_dir_all(dir.path().join("s/r")).unwrap();
        let run = format!("{{\"schema\":\"{RUN_SCHEMA}\",\"system\":\"s\",\"run\":\"r\",\"revision\":\"abc\",\"records\":[],\"findings\":[]}}\n");
        std::fs::write(dir.path().join("s/r/records.json"), run).unwrap();
        let read = Manifest::read(&file).unwrap();
        assert!(read.records.is_empty() && read.findings.is_empty() && read.title == "T");

        let file = site_listing_a_run(dir.path(), "s/r/records.json", 2);
        let mixed = Manifest::read(&file).unwrap_err();
        assert!(mixed.contains("holds 0 records") && mixed.contains("says 2"), "{mixed}");

        let file = site_listing_a_run(dir.path(), "../r/records.json", 0);
        let outside = Manifest::read(&file).unwrap_err();
        assert!(outside.contains("not a path inside its folder"), "{outside}");
    }

    #[test]
    fn a_manifest_of_an_unknown_schema_is_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), "{\"schema\":\"casebook.records/9\"}").unwrap();
        let refused = Manifest::read(&dir.path().join(FILE)).unwrap_err();
        assert!(refused.contains("casebook.records/9") && refused.contains(SCHEMA), "{refused}");
    }

    #[test]
    fn a_manifest_of_schema_1_is_read_from_its_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut old = manifest(&empty_site(), "/docs/");
        old.schema = SCHEMA_1.to_string();
        old.findings_schema = None;
        old.records.push(RecordEntry {
            system: "s".into(),
            run: "r".into(),
            revision: "abc".into(),
            id: "OBJ-01".into(),
            kind: "OBJ".into(),
            family: None,
            label: Some("An object".into()),
            derived_label: None,
            published: true,
            unpublished_in: None,
            statuses: Vec::new(),
            parts: Vec::new(),
            path: "s/r/records/OBJ-01.html".into(),
            url: "/docs/s/r/records/OBJ-01.html".into(),
            declared: Vec::new(),
            references: Vec::new(),
            hash: "0".repeat(64),
            digests: BTreeMap::new(),
        });
        std::fs::write(dir.path().join(FILE), serde_json::to_string(&old).unwrap()).unwrap();
        assert_eq!(Manifest::read(&dir.path().join(FILE)).unwrap(), old);
    }
}
