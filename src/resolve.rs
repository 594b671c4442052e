//! Resolve: turn each run's parsed reports into its record graph. Runs are independent
//! (`pipeline::load` resolves them in parallel).
//!
//! For every run: collect declarations into records (parts, labels, statuses checked
//! against the vocabulary), reject duplicate declarations, attach annotations, resolve
//! every reference (a backlink on its target, or an unpublished record, or an error with
//! a near-miss suggestion), and attach quotes and citations to their records after
//! checking their `SRC-n` against the source register. Every pass is linear in the size
//! of the run except near-miss suggestions, which compare each distinct unknown ID with
//! the run's published IDs of similar length.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use globset::{Glob, GlobMatcher};

use crate::config::{SiteConfig, SourceDef, StatusDef, UnpublishedDef};
use crate::model::color::BadgeColors;
use crate::model::{
    At, Code, DeclarationForm, Diagnostic, HttpUrl, IsoDate, LineCol, Location, Owner, Publication, Record, RecordId,
    Report, Revision, Run, Severity, Site, Source, SourcePart, Status, StatusCounts, Subject, SubjectFindings, System,
    UnpublishedSet,
};
use crate::parse::{locate, ParsedRun, ParsedSystem};
use crate::recognise::{self, IdScheme};

/// A system from its parsed `system.yaml` (whose `runs` are ignored) and its resolved runs.
pub fn system(parsed: ParsedSystem, runs: Vec<Arc<Run>>) -> (System, Vec<Diagnostic>) {
    let mut found = Vec::new();
    let repository = checked_url(parsed.meta.repository, &parsed.file, &parsed.text, &mut found);
    let system = System { slug: parsed.slug, name: parsed.meta.name, repository, summary: parsed.meta.summary, runs };
    (system, found)
}

/// The vocabulary with each status's badge colours: its own, its default, or the next of
/// the palette, taken in vocabulary order by the statuses that have neither.
fn statuses(defs: &[crate::config::StatusDef]) -> Vec<Status> {
    let mut others = 0;
    defs.iter()
        .map(|s| {
            let colors = BadgeColors::of(&s.name, others, s.color.as_deref(), s.text_color.as_deref());
            if s.color.is_none() && !BadgeColors::has_default(&s.name) {
                others += 1;
            }
            Status { name: s.name.clone(), meaning: s.meaning.clone(), colors }
        })
        .collect()
}

/// The site: its systems and what the configuration says of every run.
pub fn site(config: &SiteConfig, systems: Vec<System>) -> Site {
    Site {
        title: config.title.clone(),
        statuses: statuses(&config.statuses),
        kinds: config.ids.kinds.clone(),
        families: config.ids.families.clone(),
        systems,
        // `parse_config` refused a template that does not parse.
        source_url: config.source_url.as_deref().and_then(|t| crate::model::SourceUrl::parse(t).ok()),
        record_pages: config.record_pages,
        status_pages: config.status_pages,
        feed_entries: config.feed_entries,
        search_files: config.search,
    }
}

struct RunContext<'a> {
    file: Arc<std::path::Path>,
    text: &'a str,
    diagnostics: Vec<Diagnostic>,
}

impl RunContext<'_> {
    /// A diagnostic at the first occurrence of `needle` in run.yaml.
    fn at_key(&mut self, severity: Severity, code: Code, needle: &str, message: String, help: String) {
        let (line, col, source) = locate(self.text, needle);
        let location = Location::new(self.file.clone(), line, col);
        let d = Diagnostic::new(severity, code, location, message);
        self.diagnostics.push(d.with_source(source, needle.chars().count()).with_help(help));
    }
}

/// One run's record graph, and what is wrong in it. Runs are independent of each other.
pub fn resolve_run(parsed: ParsedRun, scheme: &IdScheme, statuses: &[StatusDef]) -> (Run, Vec<Diagnostic>) {
    let ParsedRun { slug, meta, file, text, mut reports, learned_kinds } = parsed;
    let mut cx = RunContext { file: file.clone(), text: &text, diagnostics: Vec::new() };

    let date = checked_date("date", &meta.date, &mut cx);
    let applicability_ends = checked_date("applicability_ends", &meta.applicability_ends, &mut cx);
    let revision = checked_revision(&meta.revision, &mut cx);
    let vocabulary = vocabulary_in_force(meta.vocabulary.as_deref(), statuses, &mut cx);
    let (sources, default_source) = checked_register(meta.sources, meta.default_source, &mut cx);
    let unpublished = unpublished_patterns(&meta.unpublished, &mut cx);

    let mut records: BTreeMap<RecordId, Draft> = BTreeMap::new();
    declare_records(&reports, scheme, &mut records, &mut cx.diagnostics);
    let unknown = link_references(&reports, scheme, &unpublished, &mut records);
    attach_evidence(&reports, &sources, default_source.is_some(), &mut records, &mut cx);
    let subjects = attach_findings(&reports, &vocabulary, &mut records, &mut cx.diagnostics);
    collect_statuses(&reports, &mut records);
    derive_labels(&reports, &mut records, &mut cx.diagnostics);
    report_unknown(unknown, &meta.unpublished, &mut cx.diagnostics);
    for report in &mut reports {
        report.shrink_to_fit();
    }
    share_kinds(&mut records);
    // Made again from its sorted entries: a map built that way has full nodes, one grown
    // by inserts nodes about two thirds full, and a large site holds every run's records.
    let records: BTreeMap<RecordId, Record> = records.into_iter().map(|(id, draft)| (id, draft.finish())).collect();

    let run = Run {
        name: meta.name.clone().unwrap_or_else(|| slug.to_string()),
        slug,
        file,
        revision,
        date,
        lens: meta.lens,
        applicability_ends,
        vocabulary,
        sources,
        default_source,
        unpublished: meta
            .unpublished
            .into_iter()
            .map(|set| UnpublishedSet { name: set.name, ids: set.ids, note: set.note })
            .collect(),
        status_counts: status_counts(&records, &subjects),
        learned_kinds,
        reports,
        records,
        subjects,
    };
    (run, cx.diagnostics)
}

/// The date of `key` (`date`, `applicability_ends`): an ISO date, else an error.
fn checked_date(key: &str, value: &Option<String>, cx: &mut RunContext<'_>) -> Option<IsoDate> {
    let value = value.as_deref()?;
    let date = IsoDate::parse(value);
    if date.is_none() {
        cx.at_key(
            Severity::Error,
            Code::BadDate,
            value,
            format!("`{key}` must be a date written YYYY-MM-DD, not `{value}`"),
            format!("write {key}: 2026-08-20"),
        );
    }
    date
}

/// The run's revision, with a warning when it does not look like a commit.
fn checked_revision(value: &str, cx: &mut RunContext<'_>) -> Revision {
    let revision = Revision::new(value);
    if !revision.is_commit() {
        let shown = value.trim();
        cx.at_key(
            Severity::Warning,
            Code::BadRevision,
            shown,
            format!("revision `{shown}` does not look like a git commit"),
            "give the full commit hash the run was frozen at (links to quoted files use it)".into(),
        );
    }
    revision
}

/// The vocabulary in force, in the site's order: the run's `vocabulary` (each name
/// checked against the site's) or the whole site vocabulary.
fn vocabulary_in_force(names: Option<&[String]>, statuses: &[StatusDef], cx: &mut RunContext<'_>) -> Vec<String> {
    let Some(names) = names else {
        return statuses.iter().map(|s| s.name.clone()).collect();
    };
    for name in names {
        if !statuses.iter().any(|s| &s.name == name) {
            let help = suggestion(name, statuses.iter().map(|s| s.name.as_str()))
                .map(|s| format!("did you mean `{s}`?"))
                .unwrap_or_else(|| "add it to `statuses` in casebook.yaml".to_string());
            cx.at_key(
                Severity::Error,
                Code::NotInSiteVocabulary,
                name,
                format!("`{name}` is not a status of the site vocabulary"),
                help,
            );
        }
    }
    statuses.iter().filter(|s| names.contains(&s.name)).map(|s| s.name.clone()).collect()
}

/// The source register, checked (repository URLs, duplicate IDs, `default_source`), and
/// the source a citation without `SRC-n` is read against.
fn checked_register(
    defs: Vec<SourceDef>,
    default_source: Option<String>,
    cx: &mut RunContext<'_>,
) -> (Vec<Source>, Option<String>) {
    let sources: Vec<Source> = defs
        .into_iter()
        .map(|def| {
            let SourceDef { id, title, repository, revision, path, note } = def;
            let repository = checked_url(repository, &cx.file, cx.text, &mut cx.diagnostics);
            Source { id, title, repository, revision: revision.map(Revision::new), path, note }
        })
        .collect();
    let mut seen_sources = std::collections::HashSet::new();
    for source in &sources {
        if !seen_sources.insert(source.id.as_str()) {
            cx.at_key(
                Severity::Error,
                Code::DuplicateSource,
                &format!("id: {}", source.id),
                format!("{} is registered twice", source.id),
                "give each source its own SRC-n".into(),
            );
        }
    }
    if let Some(d) = &default_source {
        if !sources.iter().any(|s| &s.id == d) {
            cx.at_key(
                Severity::Error,
                Code::UnknownDefaultSource,
                d,
                format!("default_source {d} is not in this run's source register"),
                "register it under `sources`".into(),
            );
        }
    }
    let default_source = default_source.or_else(|| sources.first().map(|s| s.id.clone()));
    (sources, default_source)
}

/// Each `unpublished` ID pattern compiled, with the index of its set.
struct UnpublishedPatterns(Vec<(usize, GlobMatcher)>);

impl UnpublishedPatterns {
    /// The first unpublished set whose patterns match `id`.
    fn set_of(&self, id: &RecordId) -> Option<usize> {
        self.0.iter().find(|(_, m)| m.is_match(id.as_str())).map(|(i, _)| *i)
    }
}

fn unpublished_patterns(sets: &[UnpublishedDef], cx: &mut RunContext<'_>) -> UnpublishedPatterns {
    let patterns = sets
        .iter()
        .enumerate()
        .flat_map(|(i, set)| set.ids.iter().map(move |p| (i, p)))
        .filter_map(|(i, pattern)| match Glob::new(pattern) {
            Ok(glob) => Some((i, glob.compile_matcher())),
            Err(e) => {
                cx.at_key(
                    Severity::Error,
                    Code::BadIdPattern,
                    pattern,
                    format!("`{pattern}` is not a valid ID pattern: {e}"),
                    "use `*` and `?` wildcards, e.g. RT-*".into(),
                );
                None
            }
        })
        .collect();
    UnpublishedPatterns(patterns)
}

/// Resolves every annotation and mention: an annotation on its target, a backlink on a
/// mentioned record (and a reference on the declaration holding the mention). Returns
/// the IDs that resolved to no record, for `report_unknown`.
fn link_references(
    reports: &[Report],
    scheme: &IdScheme,
    unpublished: &UnpublishedPatterns,
    records: &mut BTreeMap<RecordId, Draft>,
) -> HashMap<RecordId, Unknown> {
    // Published IDs, for near-miss suggestions.
    let published: Vec<RecordId> = records.keys().cloned().collect();
    let published_families: std::collections::BTreeSet<String> =
        records.values().filter_map(|r| r.family.as_deref().map(str::to_string)).collect();
    let lookup = Lookup { published: &published, published_families: &published_families, unpublished, scheme };
    let mut unknown: HashMap<RecordId, Unknown> = HashMap::new();
    let mut line_parts = LineParts::default();
    for (r, report) in reports.iter().enumerate() {
        for (a, annotation) in report.annotations.iter().enumerate() {
            let at = At::new(r, a);
            if let Some(record) = target_record(
                &annotation.target,
                records,
                &lookup,
                &mut unknown,
                annotation.location,
                report,
                &mut line_parts,
            ) {
                record.annotations.push(at);
            }
        }
        for (m, mention) in report.mentions.iter().enumerate() {
            let at = At::new(r, m);
            let owner_id = owner_record(report, mention.owner);
            if owner_id.as_ref() == Some(&mention.target) {
                continue;
            }
            let known = records.get(&mention.target).is_some_and(|r| r.is_published())
                || lookup.unpublished.set_of(&mention.target).is_some();
            if mention.in_code && !known {
                continue;
            }
            let Some(record) = target_record(
                &mention.target,
                records,
                &lookup,
                &mut unknown,
                mention.location,
                report,
                &mut line_parts,
            ) else {
                continue;
            };
            record.backlinks.push(at);
            // A record's references are the IDs its own text names: its body or row, an annex
            // of it, a step it names; a note on it (`On OBJ-03`) only links to them.
            let own_text = match mention.owner {
                Some(Owner::Annotation(a)) => report.annotations[a as usize].own_text,
                _ => true,
            };
            if let Some(owner_id) = owner_id.filter(|_| own_text) {
                if let Some(owner) = records.get_mut(&owner_id) {
                    owner.references.push(mention.target.clone());
                }
            }
        }
    }
    unknown
}

/// Quotes and citations: checks the `SRC-n` each names against the register and
/// attaches each to the record whose text holds it.
fn attach_evidence(
    reports: &[Report],
    sources: &[Source],
    has_default_source: bool,
    records: &mut BTreeMap<RecordId, Draft>,
    cx: &mut RunContext<'_>,
) {
    for (r, report) in reports.iter().enumerate() {
        for (q, quote) in report.quotes.iter().enumerate() {
            if let Some(source) = &quote.source {
                check_source(source, sources, quote.location, report, &mut cx.diagnostics);
            }
            if let Some(record) = owner_record(report, quote.owner).and_then(|id| records.get_mut(&id)) {
                record.quotes.push(At::new(r, q));
            }
        }
        for (c, citation) in report.citations.iter().enumerate() {
            match &citation.source {
                Some(source) if citation.names_source => {
                    check_source(source, sources, citation.location, report, &mut cx.diagnostics)
                }
                None if !has_default_source => {
                    cx.diagnostics.push(
                        Diagnostic::warning(
                            Code::NoSourceRegister,
                            report.location(citation.location),
                            "this citation names no source and the run has no source register",
                        )
                        .with_help(format!("add `sources:` to {}", cx.file.display())),
                    );
                }
                _ => {}
            }
            if let Some(record) = owner_record(report, citation.owner).and_then(|id| records.get_mut(&id)) {
                record.citations.push(At::new(r, c));
            }
        }
    }
}

/// Each record's distinct statuses, from its findings.
fn collect_statuses(reports: &[Report], records: &mut BTreeMap<RecordId, Draft>) {
    for record in records.values_mut() {
        let mut statuses: Vec<Arc<str>> = record
            .findings
            .iter()
            .map(|at| reports[at.report as usize].findings[at.index as usize].status.clone())
            .collect();
        statuses.sort_unstable();
        statuses.dedup();
        record.statuses = statuses;
    }
}

/// The record whose text holds an item: the declaration's record or the annotated one.
fn owner_record(report: &Report, owner: Option<Owner>) -> Option<RecordId> {
    Some(owner?.record(&report.declarations, &report.annotations).clone())
}

/// Gives the records of one kind (and of one family) one string of its code: a large site
/// has hundreds of thousands of records of a few kinds.
fn share_kinds(records: &mut BTreeMap<RecordId, Draft>) {
    let mut codes: HashSet<Arc<str>> = HashSet::new();
    let mut share = |code: &mut Arc<str>| match codes.get(code) {
        Some(shared) => *code = Arc::clone(shared),
        None => {
            codes.insert(Arc::clone(code));
        }
    };
    for record in records.values_mut() {
        share(&mut record.kind);
        if let Some(family) = &mut record.family {
            share(family);
        }
    }
}

/// A record while `resolve` gathers its places: [`Record`]'s lists as vectors, boxed
/// once complete.
struct Draft {
    id: RecordId,
    kind: Arc<str>,
    family: Option<Arc<str>>,
    label: Option<String>,
    /// True when `label` is a heading's: a row's label gives way to it.
    label_from_heading: bool,
    derived_label: Option<String>,
    publication: Publication,
    declarations: Vec<At>,
    annotations: Vec<At>,
    backlinks: Vec<At>,
    references: Vec<RecordId>,
    quotes: Vec<At>,
    citations: Vec<At>,
    findings: Vec<At>,
    statuses: Vec<Arc<str>>,
    parts: Vec<String>,
}

/// A record with nothing attached, as `resolve` begins each: for tests that draw graphs
/// of records without reports.
#[cfg(test)]
pub(crate) fn bare_record(id: RecordId, kind: Arc<str>, family: Option<Arc<str>>, publication: Publication) -> Record {
    Draft::new(id, kind, family, publication).finish()
}

impl Draft {
    fn new(id: RecordId, kind: Arc<str>, family: Option<Arc<str>>, publication: Publication) -> Self {
        Draft {
            id,
            kind,
            family,
            label: None,
            label_from_heading: false,
            derived_label: None,
            publication,
            declarations: Vec::new(),
            annotations: Vec::new(),
            backlinks: Vec::new(),
            references: Vec::new(),
            quotes: Vec::new(),
            citations: Vec::new(),
            findings: Vec::new(),
            statuses: Vec::new(),
            parts: Vec::new(),
        }
    }

    fn is_published(&self) -> bool {
        self.publication == Publication::Published
    }

    /// The record, its references sorted and without repeats.
    fn finish(mut self) -> Record {
        self.references.sort();
        self.references.dedup();
        Record {
            id: self.id,
            kind: self.kind,
            family: self.family,
            label: self.label.map(String::into_boxed_str),
            derived_label: self.derived_label.map(String::into_boxed_str),
            publication: self.publication,
            declarations: self.declarations.into_boxed_slice(),
            annotations: self.annotations.into_boxed_slice(),
            backlinks: self.backlinks.into_boxed_slice(),
            references: self.references.into_boxed_slice(),
            quotes: self.quotes.into_boxed_slice(),
            citations: self.citations.into_boxed_slice(),
            findings: self.findings.into_boxed_slice(),
            statuses: self.statuses.into_boxed_slice(),
            parts: self.parts.into_boxed_slice(),
        }
    }
}

fn declare_records(
    reports: &[Report],
    scheme: &IdScheme,
    records: &mut BTreeMap<RecordId, Draft>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    // A table that names a record a heading declares (a summary matrix, one row per
    // dimension) is about the record: its rows are entries, never a second declaration.
    let headed: HashSet<&RecordId> = reports
        .iter()
        .flat_map(|r| &r.declarations)
        .filter(|d| matches!(d.form, DeclarationForm::Heading { .. }))
        .map(|d| &d.id)
        .collect();
    for (r, report) in reports.iter().enumerate() {
        for (d, declaration) in report.declarations.iter().enumerate() {
            let at = At::new(r, d);
            let entry_of_headed =
                headed.contains(&declaration.id) && matches!(declaration.form, DeclarationForm::TableRow { .. });
            if let Some(existing) = records.get(&declaration.id).filter(|_| !entry_of_headed) {
                if let Some(clash) = duplicate_of(existing, declaration, r, reports) {
                    diagnostics.push(
                        Diagnostic::error(Code::DuplicateRecord, report.location(declaration.location), format!("{} is declared twice", declaration.id))
                            .with_source(source_line(report, declaration.location.line), declaration.id.as_str().chars().count())
                            .with_help(format!("it is already declared at {clash}; rename one, or use `(part: …)` rows for parts of one record")),
                    );
                    continue;
                }
            }
            let record = records.entry(declaration.id.clone()).or_insert_with(|| {
                let class = scheme.classify(declaration.id.as_str());
                let (kind, family) = class.map(|c| (Arc::from(c.kind), c.family.map(Arc::from))).unwrap_or_default();
                Draft::new(declaration.id.clone(), kind, family, Publication::Published)
            });
            record.declarations.push(at);
            // A heading names its record; a row of a table above it (`| REQ-1.1 | After each
            // run, the messages shall be appended … |`) only describes it.
            let heading_label =
                matches!(declaration.form, DeclarationForm::Heading { .. }) && declaration.label.is_some();
            if record.label.is_none() || (heading_label && !record.label_from_heading) {
                record.label = declaration.label.clone();
                record.label_from_heading = heading_label;
            }
            if let DeclarationForm::TableRow { part: Some(part), .. } = &declaration.form {
                if !record.parts.contains(part) {
                    record.parts.push(part.clone());
                }
            }
        }
    }
}

/// Attaches each finding about a record to it, and checks every finding's status against
/// the run's vocabulary: a status the run does not allow is an error where a record's
/// `Status` says it, and a warning where casebook read it from a table's column or a
/// sentence (it is published as written). Returns the subjects of the findings whose
/// subject is not a published record, each with its findings and statuses, in the order
/// each is first written.
fn attach_findings(
    reports: &[Report],
    vocabulary: &[String],
    records: &mut BTreeMap<RecordId, Draft>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<SubjectFindings> {
    let mut subjects: Vec<SubjectFindings> = Vec::new();
    let mut index_of: HashMap<&str, usize> = HashMap::new();
    for (r, report) in reports.iter().enumerate() {
        for (index, finding) in report.findings.iter().enumerate() {
            let record = match &finding.subject {
                Subject::Record(id) => records.get_mut(id),
                Subject::Named(_) => None,
            };
            if !record.as_ref().is_some_and(|r| r.is_published()) {
                let name = finding.subject.name();
                let slot = *index_of.entry(name).or_insert_with(|| {
                    subjects.push(SubjectFindings {
                        name: name.to_string(),
                        findings: Vec::new(),
                        statuses: Vec::new(),
                    });
                    subjects.len() - 1
                });
                subjects[slot].findings.push(At::new(r, index));
                if !subjects[slot].statuses.contains(&finding.status) {
                    subjects[slot].statuses.push(finding.status.clone());
                }
            }
            if !vocabulary.iter().any(|v| **v == *finding.status) {
                let message = format!("status `{}` is not in this run's vocabulary", finding.status);
                let on_record = record.as_ref().is_some_and(|r| r.is_published());
                let d = if on_record && finding.form.is_explicit() {
                    Diagnostic::error(Code::StatusOutsideVocabulary, report.location(finding.location), message)
                } else {
                    Diagnostic::warning(
                        Code::StatusOutsideVocabulary,
                        report.location(finding.location),
                        format!("{message}; it is published as written"),
                    )
                };
                diagnostics.push(
                    d.with_source(source_line(report, finding.location.line), finding.status.chars().count())
                        .with_help(format!(
                            "this run allows: {}; or add it to `vocabulary` in run.yaml",
                            vocabulary.join(", ")
                        )),
                );
            }
            if let Some(record) = record {
                record.findings.push(At::new(r, index));
            }
        }
    }
    for subject in &mut subjects {
        subject.statuses.sort_unstable();
    }
    subjects
}

/// Per status, the run's published records that carry it and its subjects without a
/// record that have a finding of it.
fn status_counts(
    records: &BTreeMap<RecordId, Record>,
    subjects: &[SubjectFindings],
) -> BTreeMap<Arc<str>, StatusCounts> {
    let mut counts: BTreeMap<Arc<str>, StatusCounts> = BTreeMap::new();
    for record in records.values().filter(|r| r.is_published()) {
        for status in &record.statuses {
            counts.entry(status.clone()).or_default().records += 1;
        }
    }
    for subject in subjects {
        for status in &subject.statuses {
            counts.entry(status.clone()).or_default().subjects += 1;
        }
    }
    counts
}

/// The longest derived label, in characters.
const DERIVED_LABEL_CHARS: usize = 80;

/// Words of a column header that say its cells describe the row's record.
const DESCRIBING_HEADERS: [&str; 7] = ["description", "label", "name", "title", "summary", "what", "describes"];

/// Gives each published record without a label a derived one, and says so: its parts;
/// else the first cell of its declaring row that describes it (`Delivers: OBJ-02 …`),
/// neither a status nor a placeholder; else the first sentence of its body.
fn derive_labels(reports: &[Report], records: &mut BTreeMap<RecordId, Draft>, diagnostics: &mut Vec<Diagnostic>) {
    for record in records.values_mut().filter(|r| r.is_published() && r.label.is_none()) {
        let Some(at) = record.declarations.first() else { continue };
        let report = &reports[at.report as usize];
        let declaration = &report.declarations[at.index as usize];
        let (derived, from) = if !record.parts.is_empty() {
            (Some(record.parts.join(", ")), "its parts".to_string())
        } else if let Some(body) = &declaration.body {
            (first_sentence(&report.markdown[body.clone()]), "the first sentence of its text".to_string())
        } else {
            let describes = |f: &&crate::model::Field| {
                let plain = plain(report.text(&f.value));
                !f.name.trim().to_lowercase().ends_with("status")
                    && !recognise::is_placeholder(&plain)
                    && !plain.eq_ignore_ascii_case("yes")
                    && !plain.eq_ignore_ascii_case("no")
            };
            // A column that says it describes (`Proposed description`, `Name`) gives its
            // first sentence; else the first cell that describes at all, with its header.
            let named = declaration.fields.iter().filter(describes).find(|f| {
                let header = f.name.to_lowercase();
                DESCRIBING_HEADERS.iter().any(|h| header.split(|c: char| !c.is_alphanumeric()).any(|w| w == *h))
            });
            match (named, declaration.fields.iter().find(describes)) {
                (Some(f), _) => (first_sentence(report.text(&f.value)), format!("its `{}` cell", f.name)),
                (None, Some(f)) => {
                    (Some(format!("{}: {}", f.name, plain(report.text(&f.value)))), format!("its `{}` cell", f.name))
                }
                (None, None) => (None, String::new()),
            }
        };
        let Some(derived) = derived.map(|d| shorten(&d, DERIVED_LABEL_CHARS)).filter(|d| !d.is_empty()) else {
            continue;
        };
        diagnostics.push(
            Diagnostic::note(
                Code::DerivedTitle,
                report.location(declaration.location),
                format!("{} has no label; its title is derived from {from}: {derived}", record.id),
            )
            .with_help("give it a label: text after the ID in its heading or first cell, or a `Label:` field"),
        );
        record.derived_label = Some(derived);
    }
}

/// Markdown source as plain text: escapes, emphasis and code marks dropped, spaces collapsed.
fn plain(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut chars = markdown.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(|n| n.is_ascii_punctuation()) => out.push(chars.next().unwrap()),
            '*' | '`' => {}
            _ => out.push(c),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first sentence of a record's body that is not a field, in plain text.
fn first_sentence(markdown: &str) -> Option<String> {
    let paragraph = markdown
        .split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty() && !p.starts_with(['#', '|', '`', '-', '>']) && recognise::field(p).is_none())?;
    let text = plain(paragraph);
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    Some(text[..end].to_string())
}

/// At most `max` characters of `text`, cut at a word, with `…` when cut.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{}…", cut.rsplit_once(' ').map_or(cut.as_str(), |(head, _)| head).trim_end_matches([',', ';', ':']))
}

/// Where an earlier declaration clashes with `new`: two headings of one ID clash, and a
/// row may repeat an ID only as another part, or in another table.
fn duplicate_of(
    existing: &Draft,
    new: &crate::model::Declaration,
    new_report: usize,
    reports: &[Report],
) -> Option<Location> {
    for at in &existing.declarations {
        let old = &reports[at.report as usize].declarations[at.index as usize];
        // A record's row in a table after its heading (a summary, a findings table) is
        // another entry of it, as a row in another table is.
        let clash = match (&old.form, &new.form) {
            (DeclarationForm::Heading { .. }, DeclarationForm::Heading { .. }) => true,
            (DeclarationForm::Heading { .. }, _) | (_, DeclarationForm::Heading { .. }) => false,
            (DeclarationForm::TableRow { table: t1, part: p1 }, DeclarationForm::TableRow { table: t2, part: p2 }) => {
                at.report as usize == new_report && t1 == t2 && p1 == p2
            }
        };
        if clash {
            return Some(reports[at.report as usize].location(old.location));
        }
    }
    None
}

/// An unknown ID, gathered so that each is reported once per run.
struct Unknown {
    first: Location,
    /// The part of its line a diagnostic shows (never the whole line: a long line can
    /// hold thousands of unknown IDs).
    first_line: SourcePart,
    count: usize,
    near: Option<RecordId>,
    /// Its family, when that family is published in this run.
    family: Option<String>,
    set: Option<usize>,
    /// Its kind, when the run's reports taught it rather than the configuration.
    learned_kind: Option<String>,
}

/// What a reference is resolved against.
struct Lookup<'a> {
    published: &'a [RecordId],
    published_families: &'a std::collections::BTreeSet<String>,
    unpublished: &'a UnpublishedPatterns,
    scheme: &'a IdScheme,
}

/// The record a reference or annotation points at: a published one, or an unpublished
/// one created on first reference. `None` (and an entry in `unknown`) when the ID is a
/// near miss of a published ID, belongs to a published family, or matches no
/// `unpublished` pattern.
fn target_record<'r>(
    id: &RecordId,
    records: &'r mut BTreeMap<RecordId, Draft>,
    lookup: &Lookup<'_>,
    unknown: &mut HashMap<RecordId, Unknown>,
    at: LineCol,
    report: &Report,
    parts: &mut LineParts,
) -> Option<&'r mut Draft> {
    let location = &report.location(at);
    if records.get(id).is_some_and(|r| r.is_published()) {
        return records.get_mut(id);
    }
    let entry = unknown.entry(id.clone()).or_insert_with(|| {
        let set = lookup.unpublished.set_of(id);
        let kind_of = |id: &str| lookup.scheme.classify(id).map(|c| c.kind);
        let near = lookup
            .published
            .iter()
            .filter(|p| recognise::is_near_miss(id.as_str(), p.as_str()))
            // `N-04` of an unpublished set is no misspelling of a published `G-04`: a near
            // miss of another kind counts only for an ID no set names.
            .filter(|p| set.is_none() || kind_of(p.as_str()) == kind_of(id.as_str()))
            .min_by_key(|p| strsim::damerau_levenshtein(&id.as_str().to_lowercase(), &p.as_str().to_lowercase()));
        Unknown {
            first: location.clone(),
            first_line: parts.part(report, location, id.as_str().chars().count()),
            count: 0,
            near: near.cloned(),
            family: lookup
                .scheme
                .classify(id.as_str())
                .and_then(|c| c.family)
                .filter(|f| lookup.published_families.contains(f)),
            set,
            learned_kind: lookup
                .scheme
                .classify(id.as_str())
                .map(|c| c.kind)
                .filter(|k| lookup.scheme.is_learned_kind(k)),
        }
    });
    entry.count += 1;
    if *location < entry.first {
        entry.first = location.clone();
        entry.first_line = parts.part(report, location, id.as_str().chars().count());
    }
    if entry.near.is_some() || entry.family.is_some() {
        return None;
    }
    let set = entry.set?;
    Some(records.entry(id.clone()).or_insert_with(|| {
        let class = lookup.scheme.classify(id.as_str());
        let (kind, family) = class.map(|c| (Arc::from(c.kind), c.family.map(Arc::from))).unwrap_or_default();
        Draft::new(id.clone(), kind, family, Publication::Unpublished(set))
    }))
}

fn report_unknown(unknown: HashMap<RecordId, Unknown>, sets: &[UnpublishedDef], diagnostics: &mut Vec<Diagnostic>) {
    for (id, u) in unknown {
        let len = id.as_str().chars().count();
        let more = match u.count {
            1 => String::new(),
            n => format!(" ({n} references; the first is here)"),
        };
        let d = if let Some(near) = &u.near {
            Diagnostic::error(Code::UnknownRecord, u.first, format!("unknown record {id}; did you mean {near}?{more}"))
                .with_help(format!("{near} is declared in this run; fix the spelling"))
        } else if let Some(family) = &u.family {
            Diagnostic::error(
                Code::UnknownRecord,
                u.first,
                format!(
                    "unknown record {id}: family {family} is published in this run, but {id} is not declared{more}"
                ),
            )
            .with_help("declare it or fix the spelling; records of a published family must all be published")
        } else if let Some(set) = u.set {
            Diagnostic::warning(
                Code::UnpublishedReference,
                u.first,
                format!("reference to unpublished record {id} ({}){more}", sets[set].name),
            )
        } else if let Some(kind) = &u.learned_kind {
            // The kind is casebook's reading of the reports' headings, not the author's
            // configuration: the word may be no record at all (`UFO-2026-06-a`, a run's
            // name, beside records `UFO-BIL-01`).
            Diagnostic::warning(
                Code::UnknownRecord,
                u.first,
                format!("{id} is written like a record of kind {kind}, but no record {id} is declared in this run{more}"),
            )
            .with_help(format!(
                "if it is a record, declare it or fix the spelling; if it is no record, leave it: the kind {kind} was read off this run's headings, not configured, so this is no error"
            ))
        } else {
            Diagnostic::error(
                Code::UnknownRecord,
                u.first,
                format!("unknown record {id}: it is not declared in this run{more}"),
            )
            .with_help("declare it, fix the spelling, or list the report it belongs to under `unpublished` in run.yaml")
        };
        diagnostics.push(d.with_source_part(u.first_line, len));
    }
}

fn check_source(source: &str, register: &[Source], at: LineCol, report: &Report, diagnostics: &mut Vec<Diagnostic>) {
    let location = report.location(at);
    if register.iter().any(|s| s.id == source) {
        return;
    }
    let help = if register.is_empty() {
        "this run has no source register; add `sources:` to its run.yaml".to_string()
    } else {
        format!(
            "register it under `sources` in run.yaml (registered: {})",
            register.iter().map(|s| s.id.as_str()).collect::<Vec<_>>().join(", ")
        )
    };
    diagnostics.push(
        Diagnostic::error(Code::UnknownSource, location, format!("{source} is not in this run's source register"))
            .with_source(source_line(report, at.line), source.chars().count())
            .with_help(help),
    );
}

/// A repository URL from YAML: `https://…` or `http://…` as given, a bare
/// `github.com/owner/repo` with `https://` added; any other scheme (`javascript:`,
/// `data:`, `file:`) is an error, since the URL becomes a link on the pages.
fn checked_url(
    value: Option<String>,
    file: &Arc<std::path::Path>,
    text: &str,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<HttpUrl> {
    let value = value?;
    if let Some(url) = HttpUrl::parse(&value) {
        return Some(url);
    }
    let value = value.trim();
    let (line, col, source) = locate(text, value);
    diagnostics.push(
        Diagnostic::error(
            Code::BadUrl,
            Location::new(file.clone(), line, col),
            format!("`{value}` is not an http(s) repository URL"),
        )
        .with_source(source, value.chars().count())
        .with_help("write the repository as https://host/owner/name"),
    );
    None
}

/// The closest name within edit distance 2.
fn suggestion<'a>(wanted: &str, names: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let len = wanted.chars().count();
    names
        .filter(|n| n.chars().count().abs_diff(len) <= 2)
        .map(|n| (strsim::damerau_levenshtein(wanted, n), n))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, n)| n)
}

/// Cuts the part of a report's line that a diagnostic shows. The first character shown
/// is found from the last one found on the same line: mentions come in source order, so
/// a long line with thousands of unknown IDs is read once, not once per ID.
#[derive(Default)]
struct LineParts {
    /// The report (its Markdown's address), file line, character and byte last found.
    last: Option<(usize, u32, usize, usize)>,
}

impl LineParts {
    fn part(&mut self, report: &Report, location: &Location, span_chars: usize) -> SourcePart {
        let line = source_line(report, location.line);
        let from = SourcePart::first_shown(location.col);
        let here = (Arc::as_ptr(&report.markdown) as *const u8 as usize, location.line);
        let start = match self.last {
            Some((markdown, number, chars, byte)) if (markdown, number) == here && chars <= from => {
                line[byte..].char_indices().nth(from - chars).map(|(i, _)| byte + i)
            }
            _ => line.char_indices().nth(from).map(|(i, _)| i),
        };
        if let Some(byte) = start {
            self.last = Some((here.0, here.1, from, byte));
        }
        SourcePart::from_byte(line, start, from, location.col, span_chars)
    }
}

/// The text of a file line of a report.
fn source_line(report: &Report, line: u32) -> &str {
    report.line_text(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_urls_must_be_http() {
        let file: Arc<std::path::Path> = Arc::from(std::path::Path::new("system.yaml"));
        let mut diagnostics = Vec::new();
        let text = "name: X\nrepository: javascript:alert(1)\n";
        assert_eq!(checked_url(Some("javascript:alert(1)".into()), &file, text, &mut diagnostics), None);
        assert_eq!(diagnostics[0].location.line, 2);
        assert_eq!(diagnostics[0].code, Code::BadUrl);
        assert_eq!(checked_url(Some(" data:text/html,x".into()), &file, text, &mut diagnostics), None);
        assert_eq!(
            checked_url(Some("github.com/Trampoline-AI/fractal".into()), &file, text, &mut diagnostics)
                .as_ref()
                .map(HttpUrl::as_str),
            Some("https://github.com/Trampoline-AI/fractal")
        );
        assert_eq!(
            checked_url(Some("https://x.org/r".into()), &file, text, &mut diagnostics).as_ref().map(HttpUrl::as_str),
            Some("https://x.org/r")
        );
        assert_eq!(diagnostics.len(), 2);
    }

    fn resolved(run_yaml: &str, reports: &[(&str, &str)]) -> (Run, Vec<Diagnostic>) {
        crate::testing::run_of(run_yaml, reports)
    }

    const RUN: &str = "revision: 0123456789abcdef0123456789abcdef01234567\n";

    fn codes(diagnostics: &[Diagnostic]) -> Vec<(u32, Code)> {
        diagnostics.iter().map(|d| (d.location.line, d.code)).collect()
    }

    #[test]
    fn a_reference_is_a_backlink_on_its_target_and_a_reference_of_its_owner() {
        let (run, diagnostics) = resolved(
            RUN,
            &[
                ("a", "# Records\n\n### OBJ-01 Cache\n\nFeeds OBJ-02.\n\n### OBJ-02 Index\n\nStands alone.\n"),
                ("b", "# More\n\nOBJ-02 is read back (see OBJ-01).\n"),
            ],
        );
        assert_eq!(codes(&diagnostics), []);
        let index = &run.records[&RecordId::new("OBJ-02")];
        assert_eq!(index.label.as_deref(), Some("Index"));
        let from: Vec<u32> = index.backlinks.iter().map(|at| at.report).collect();
        assert_eq!(from, [0, 1], "a backlink from each report that mentions it");
        assert_eq!(run.records[&RecordId::new("OBJ-01")].references[..], [RecordId::new("OBJ-02")]);
        // A mention outside any record's text is a backlink but nobody's reference.
        assert!(index.references.is_empty());
    }

    #[test]
    fn a_record_declared_twice_by_headings_is_an_error_and_rows_are_further_entries() {
        let (_, diagnostics) =
            resolved(RUN, &[("a", "# R\n\n### OBJ-01 Cache\n\nOne.\n\n### OBJ-01 Cache again\n\nTwo.\n")]);
        assert_eq!(codes(&diagnostics), [(7, Code::DuplicateRecord)]);

        let table = "| ID | Status |\n|---|---|\n| OBJ-01 Cache | implemented |\n";
        let (run, diagnostics) = resolved(RUN, &[("a", &format!("# R\n\n### OBJ-01 Cache\n\nOne.\n\n{table}"))]);
        assert_eq!(codes(&diagnostics), []);
        assert_eq!(run.records[&RecordId::new("OBJ-01")].declarations.len(), 2);
        let (_, diagnostics) = resolved(RUN, &[("a", &format!("# R\n\n{table}| OBJ-01 Cache | absent |\n"))]);
        assert_eq!(codes(&diagnostics), [(6, Code::DuplicateRecord)], "twice in one table with the same part");
        let matrix =
            "| ID | Dimension | Status |\n|---|---|---|\n| OBJ-01 | overall | wired |\n| OBJ-01 | bounded | absent |\n";
        let (run, diagnostics) = resolved(RUN, &[("a", &format!("# R\n\n{matrix}\n### OBJ-01 Cache\n\nOne.\n"))]);
        assert_eq!(codes(&diagnostics), [], "a matrix naming a headed record in two rows is about it");
        assert_eq!(run.records[&RecordId::new("OBJ-01")].declarations.len(), 3);
    }

    #[test]
    fn rows_of_parts_make_one_record_with_its_parts() {
        let table =
            "| ID | Status |\n|---|---|\n| OBJ-06 (part: tokens) | implemented |\n| OBJ-06 (part: cost) | absent |\n";
        let (run, diagnostics) = resolved(RUN, &[("a", table)]);
        assert_eq!(codes(&diagnostics), [(3, Code::DerivedTitle)]);
        let record = &run.records[&RecordId::new("OBJ-06")];
        assert_eq!(record.parts[..], ["tokens", "cost"]);
        assert_eq!(record.declarations.len(), 2);
        assert_eq!(run.statuses_of(record).collect::<Vec<_>>(), ["absent", "implemented"]);
        assert_eq!(
            record.derived_label.as_deref(),
            Some("tokens, cost"),
            "a record without a label is named by its parts"
        );
    }

    #[test]
    fn an_annotation_attaches_to_its_record_published_or_not() {
        let run_yaml = format!("{RUN}unpublished:\n  - name: runtime report\n    ids: [\"RT-*\"]\n");
        let markdown = "# R\n\n### OBJ-01 Cache\n\nOne.\n\n### On OBJ-01\n\nMore about it.\n\n### On RT-RTE-delivery\n\nRead back later.\n";
        let (run, diagnostics) = resolved(&run_yaml, &[("a", markdown)]);
        assert_eq!(codes(&diagnostics), [(11, Code::UnpublishedReference)]);
        assert_eq!(run.records[&RecordId::new("OBJ-01")].annotations.len(), 1);
        let unpublished = &run.records[&RecordId::new("RT-RTE-delivery")];
        assert_eq!(unpublished.publication, Publication::Unpublished(0));
        assert_eq!(unpublished.annotations.len(), 1);
        assert!(run.publishes(&RecordId::new("OBJ-01")) && !run.publishes(&RecordId::new("RT-RTE-delivery")));
    }

    #[test]
    fn an_undeclared_word_of_a_learned_kind_is_a_warning() {
        let markdown =
            "# R\n\nRun UFO-2026-06-a.\n\n### UFO-BIL-01 — Screens\n\nOne.\n\n### UFO-BIL-02 — Windows\n\nTwo.\n";
        let (_, diagnostics) = resolved(RUN, &[("a", markdown)]);
        let unknown: Vec<_> = diagnostics.iter().filter(|d| d.code == Code::UnknownRecord).collect();
        assert_eq!(unknown.len(), 1, "{diagnostics:?}");
        assert!(!unknown[0].is_error() && unknown[0].message.contains("kind UFO"), "{:?}", unknown[0]);
        // Of a configured kind, the same is an error.
        let (_, diagnostics) = resolved(RUN, &[("a", "# R\n\n### OBJ-01 Cache\n\nSee OBJ-09.\n")]);
        assert!(diagnostics.iter().any(|d| d.code == Code::UnknownRecord && d.is_error()));
    }

    #[test]
    fn unknown_references_are_near_misses_unpublished_or_undeclared_each_reported_once() {
        let run_yaml = format!("{RUN}unpublished:\n  - name: runtime report\n    ids: [\"RT-*\"]\n");
        let markdown = "# R\n\n### MEM-OBJ-raw\n\nLabel: Raw\n\nSee MEM-OBJ-rw, RT-RTE-x and OBJ-09.\n\nOBJ-09 again, RT-RTE-x again.\n";
        let (run, diagnostics) = resolved(&run_yaml, &[("a", markdown)]);
        assert_eq!(
            codes(&diagnostics),
            [(7, Code::UnknownRecord), (7, Code::UnpublishedReference), (7, Code::UnknownRecord)]
        );
        assert!(diagnostics[0].message.contains("did you mean MEM-OBJ-raw?"), "{}", diagnostics[0]);
        assert!(diagnostics[2].message.contains("2 references"), "{}", diagnostics[2]);
        // An unpublished record is in the graph, with its backlinks; an unknown one is not.
        assert_eq!(run.records[&RecordId::new("RT-RTE-x")].backlinks.len(), 2);
        assert!(!run.records.contains_key(&RecordId::new("OBJ-09")));
    }

    #[test]
    fn findings_outside_the_run_vocabulary_are_errors_on_records_and_warnings_elsewhere() {
        let run_yaml = format!("{RUN}vocabulary: [absent, implemented]\n");
        let markdown = "# R\n\n| ID | Status |\n|---|---|\n| OBJ-01 Cache | wired |\n\n| Operation | Status |\n|---|---|\n| Promotion | wired |\n";
        let (run, diagnostics) = resolved(&run_yaml, &[("a", markdown)]);
        let severities: Vec<(u32, Code, Severity)> =
            diagnostics.iter().map(|d| (d.location.line, d.code, d.severity)).collect();
        assert_eq!(
            severities,
            [
                (5, Code::StatusOutsideVocabulary, Severity::Error),
                (9, Code::StatusOutsideVocabulary, Severity::Warning)
            ]
        );
        assert_eq!(run.vocabulary, ["absent", "implemented"], "in the site's order");
        assert_eq!(run.subjects.len(), 1, "Promotion is a subject without a record");
    }

    #[test]
    fn suggestions_are_close_names_only() {
        let names = ["implemented", "absent", "wired"];
        assert_eq!(suggestion("implmented", names.iter().copied()), Some("implemented"));
        assert_eq!(suggestion("observed", names.iter().copied()), None);
    }
}
