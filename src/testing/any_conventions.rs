//! The promise of `check --explain`, as a property: a report that mixes the conventions
//! analysts write in (records declared by headings of every punctuation and by bold
//! run-ins; statuses as keys, per-dimension clauses, definition lists and list items;
//! key–value tables and `Dimension "x":` keys, dimensions in brackets, after a middle dot or
//! a comma, French spacing, a metadata line and a table of dimensions, a dash closing a
//! list item's key, an opinion's `Determination.`, a quoted dimension after a Spanish
//! noun, a record's fields in a YAML block, a field list (`:Read back: wired\`), trailers
//! indented as code, a Korean `| 차원 | 상태 |` table, a legend's marks (`✅ only in …`) and
//! a bold status with words after it; quotes captioned
//! before, after, in the info string, by a line that is only a place, by a path line, by
//! the block's own first line over a gutter, with middle dots, or by a place in brackets
//! under the block or right under its fence, as a diff of context, by `lines a-b of path::`
//! over a literal block, by an AsciiDoc block title, or in Korean; citations with colons, words, middle dots,
//! full-width punctuation, lines after their numbers (`12–17행`, `12〜17行`), permalinks,
//! footnotes and numbered references;
//! limits as handle lists and tables under headings of several words and languages), with
//! structure casebook cannot read mixed in (a code block nothing attributes, a status
//! key whose value is no status, an ID of a kind never declared, items led by handles
//! under a heading that does not say limits). Dimensions are in Latin, Cyrillic,
//! Japanese and Korean script, so that no form slices a multi-byte character. Every structure is
//! either recognised, as written, or listed as not understood at its line.

use proptest::prelude::*;

use super::run_of;
use crate::model::{Diagnostic, Owner, Run, Subject};

const STATUSES: [&str; 5] = ["wired", "implemented", "claimed", "absent", "afforded"];
/// The marks a legend at the top of each report makes stand for [`STATUSES`].
const MARKS: [&str; 5] = ["✅", "🟡", "📄", "❌", "🎛️"];
const DIMENSIONS: [&str; 7] = ["read back", "bounded", "persisted", "written by", "сохранение", "読み戻し", "영속화"];
const REVISION: &str = "5954a07d464feeaf6c311a9fa5ca2e54200a6794";

/// One thing a record's section holds.
#[derive(Debug, Clone)]
enum Part {
    /// A status on the whole record, in form `form`.
    Status { form: u8, status: usize },
    /// A status on a dimension, in form `form`.
    DimensionStatus { form: u8, dimension: usize, status: usize },
    /// A quote of `lines` of file `file`, attributed in form `form`.
    Quote { form: u8, file: u8, start: u32 },
    /// A citation of `lines` of file `file`, in form `form`.
    Citation { form: u8, file: u8, start: u32 },
    /// What casebook cannot read, and must list: `kind` picks which.
    Unreadable { kind: u8 },
}

#[derive(Debug, Clone)]
struct RecordPlan {
    form: u8,
    parts: Vec<Part>,
}

#[derive(Debug, Clone)]
struct Plan {
    kind: &'static str,
    records: Vec<RecordPlan>,
    limits_form: u8,
    limits_heading: usize,
    limits: usize,
    /// A list led by handles under a heading that does not say limits, to be listed.
    stray_handles: bool,
}

const LIMITS_HEADINGS: [&str; 7] = [
    "Limits of this analysis",
    "Residual risk and assumptions",
    "Unanswered questions",
    "Action items / open risks",
    "Closing: what we didn't look at",
    "Blind spots",
    "8. Limites",
];

fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        (0u8..6, 0..STATUSES.len()).prop_map(|(form, status)| Part::Status { form, status }),
        (0u8..19, 0..DIMENSIONS.len(), 0..STATUSES.len()).prop_map(|(form, dimension, status)| Part::DimensionStatus {
            form,
            dimension,
            status
        }),
        (0u8..14, 0u8..3, 1u32..400).prop_map(|(form, file, start)| Part::Quote { form, file, start }),
        (0u8..12, 0u8..3, 1u32..400).prop_map(|(form, file, start)| Part::Citation { form, file, start }),
        (0u8..3).prop_map(|kind| Part::Unreadable { kind }),
    ]
}

fn plan() -> impl Strategy<Value = Plan> {
    let record = (0u8..6, prop::collection::vec(part(), 0..6)).prop_map(|(form, parts)| RecordPlan { form, parts });
    (
        prop::sample::select(vec!["CTL", "MEM", "G", "OBJ"]),
        prop::collection::vec(record, 1..6),
        (0u8..2, 0..LIMITS_HEADINGS.len()),
        1usize..4,
        any::<bool>(),
    )
        .prop_map(|(kind, records, (limits_form, limits_heading), limits, stray_handles)| Plan {
            kind,
            records,
            limits_form,
            limits_heading,
            limits,
            stray_handles,
        })
}

/// What the written report must yield, each with the line it is written on.
#[derive(Debug, Default)]
struct Expected {
    records: Vec<(String, String)>,
    /// (record, dimension, status)
    findings: Vec<(String, String, String)>,
    /// (record, path, start, end)
    quotes: Vec<(String, String, u32, u32)>,
    citations: Vec<(String, String, u32, u32)>,
    limits: Vec<String>,
    /// Lines that must be listed as not understood.
    unreadable: Vec<u32>,
}

/// A report being written, which knows its line.
#[derive(Default)]
struct Writer {
    md: String,
    footnotes: Vec<String>,
    /// The items of a numbered list of references, in order.
    references: Vec<String>,
}

impl Writer {
    fn line(&self) -> u32 {
        u32::try_from(self.md.matches('\n').count()).unwrap() + 1
    }

    fn block(&mut self, text: &str) {
        self.md.push_str(text);
        self.md.push_str("\n\n");
    }
}

const FILES: [&str; 3] = ["src/agent/loop.py", "pkg/memory_store.rs", "lib/tools/__init__.py"];

fn write(plan: &Plan) -> (String, Expected) {
    let mut w = Writer::default();
    let mut expected = Expected::default();
    w.block("# An analysis\n\nWhat was read, and what it shows.");
    let legend: String = STATUSES.iter().zip(MARKS).map(|(s, m)| format!("| {m} | {s} |\n")).collect();
    w.block(&format!("| Mark | Status |\n|---|---|\n{}", legend.trim_end()));
    let ids: Vec<String> = (1..=plan.records.len()).map(|n| format!("{}-{n:02}", plan.kind)).collect();
    for (i, record) in plan.records.iter().enumerate() {
        let id = &ids[i];
        let label = format!("Mechanism number {}", i + 1);
        let declaration = match record.form {
            0 => format!("### {id}: {label}"),
            1 => format!("### [{id}] {label}"),
            2 => format!("### {label} ({id})"),
            3 => format!("### 2.{} {id} — {label}", i + 1),
            4 => format!("### Observation {} — {label} ({id})", i + 1),
            _ => format!("**{id} · {label}.** The mechanism as the code has it."),
        };
        w.block(&declaration);
        expected.records.push((id.clone(), label));
        if i > 0 {
            w.block(&format!("It hands over to {} when done.", ids[i - 1]));
        }
        for part in &record.parts {
            write_part(&mut w, &mut expected, id, part);
        }
    }
    if plan.stray_handles {
        w.block("## Residual matters");
        expected.unreadable.push(w.line());
        w.block("- **Q1.** The proxy was not read.\n- **Q2.** Nor the tests.");
    }
    w.block(&format!("## {}", LIMITS_HEADINGS[plan.limits_heading]));
    for n in 1..=plan.limits {
        let handle = if plan.limits_form == 0 { format!("L{n}") } else { format!("G{n}") };
        expected.limits.push(handle.clone());
        if plan.limits_form == 0 {
            w.md.push_str(&format!("- {handle} — The module {n} was not read; its bound is unknown.\n"));
        } else {
            if n == 1 {
                w.md.push_str("| # | Gap | Consequence |\n|---|---|---|\n");
            }
            w.md.push_str(&format!("| {handle} | Module {n} not read | Its bound is unknown |\n"));
        }
    }
    w.md.push('\n');
    if !w.references.is_empty() {
        w.block("## References");
        for (n, item) in std::mem::take(&mut w.references).iter().enumerate() {
            w.md.push_str(&format!("{}. {item}\n", n + 1));
        }
        w.md.push('\n');
    }
    for footnote in std::mem::take(&mut w.footnotes) {
        w.md.push_str(&footnote);
        w.md.push('\n');
    }
    (w.md, expected)
}

fn write_part(w: &mut Writer, expected: &mut Expected, id: &str, part: &Part) {
    let (status_of, id) = (|s: usize| STATUSES[s].to_string(), id.to_string());
    match *part {
        Part::Status { form, status } => {
            let s = STATUSES[status];
            w.block(&match form {
                0 => format!("Status: **{s}** (on the default path)"),
                1 => format!("Overall status: **{s}**"),
                2 => format!("**Labels:** `core` · **Priority:** P1 · **Status:** {s} (default config)"),
                3 => format!("*Status* — overall: **{s}**."),
                4 => format!("4.1.2 *Determination.* **{s}.** As the code has it."),
                _ => format!("```yaml\nid: {id}\nstatus: {s}  # on the default path\n```"),
            });
            expected.findings.push((id, String::new(), status_of(status)));
        }
        Part::DimensionStatus { form, dimension, status } => {
            let (d, s) = (DIMENSIONS[dimension], STATUSES[status]);
            let mut letters = d.chars();
            let capitalised: String = letters.next().into_iter().flat_map(char::to_uppercase).chain(letters).collect();
            w.block(&match form {
                0 => format!("**Component:** the loop\n**Status:** {d}: **{s}**."),
                1 => format!("{capitalised}\n: **{s}** (as far as read)"),
                2 => format!("- {d}: **{s}**\n- note: nothing more"),
                3 => format!("Status ({d}): {s}"),
                4 => format!("| Field | Value |\n|---|---|\n| **Kind** | component |\n| **Status ({d})** | {s} |"),
                5 => format!("*Dimension \"{d}\":* {s} (as read)"),
                6 => format!("- **Status [{d}]:** **{s}** (as read)"),
                7 => format!("- Verdict · {d}: **{}** (as read)", s.to_uppercase()),
                8 => format!("Status, {d}: **{s}** (as read)."),
                9 => format!("- **{d}** : {s} (tel que lu)"),
                10 => format!("| Dimension | Finding |\n|---|---|\n| {d} | **{s}** — as read |"),
                11 => format!("- {d} — **{s}** (as read)"),
                12 => format!("Dictamen «{d}»: **{s}**."),
                13 => format!("```yaml\nstatus:\n  {d}: {s}  # as read\ncitations: []\n```"),
                14 => format!(":{capitalised}: {s}\\\n:Note: as read"),
                15 => format!("    Status: {d}: {s}\n    Reviewed-by: a reviewer"),
                16 => format!("- {d}: {} only in the default mode", MARKS[status]),
                17 => format!("- {d}: **{s}** to the operator, as read"),
                _ => format!("| 차원 | 상태 |\n|---|---|\n| {d} | {s} |"),
            });
            let dimension = if matches!(form, 1 | 14) { capitalised } else { d.to_string() };
            expected.findings.push((id, dimension, status_of(status)));
        }
        Part::Quote { form, file, start } => write_quote(w, expected, id, form, file, start),
        Part::Citation { form, file, start } => write_citation(w, expected, id, form, file, start),
        Part::Unreadable { kind } => {
            expected.unreadable.push(w.line());
            match kind {
                0 => w.block("```\nsome output nobody attributed\n```"),
                1 => w.block("Status: partly wired in tests, partly not"),
                _ => w.block("The queue is XQZW-12 in the notes."),
            }
        }
    }
}

/// A quote of three lines of `file` from line `start`, attributed in form `form`.
fn write_quote(w: &mut Writer, expected: &mut Expected, id: String, form: u8, file: u8, start: u32) {
    let (path, end) = (FILES[file as usize], start + 2);
    let code = "```python\nx = compute()\ny = x + 1\nreturn y\n```";
    match form {
        0 => w.block(&format!("From {path}, lines {start}–{end} (SRC-1):\n{code}")),
        1 => w.block(&format!("{code}\n*Source: SRC-1, {path}:L{start}-L{end}*")),
        2 => w.block(&format!("```python title=\"{path}:{start}-{end}\"\nx = compute()\n```")),
        3 => w.block(&format!("`{path}` ({start}–{end})\n\n{code}")),
        4 => w.block(&format!("{code}\n--- {path}:{start}-{end}")),
        5 => w.block(&format!(
            "```python\n# SRC-1 {path} L{start}–{end}\n {start} | x = compute()\n {} | y = x + 1\n {end} | return y\n```",
            start + 1
        )),
        6 => w.block(&format!("*Excerpt: SRC-1 · `{path}` · lines {start}–{end}*\n{code}")),
        7 => w.block(&format!("The loop:\n\n{code}\n`{path}`, líneas {start}-{end} (SRC-1)")),
        8 => w.block(&format!("The loop:\n\n{code}\n> `{path}`, lines {start}–{end} (SRC-1)")),
        9 => w.block(&format!("The loop, as the notes have it:\n\n{code}\n\n(`{path}`, lines {start}–{end})")),
        10 => w.block(&format!(
            "The loop (SRC-1 {path}:1-2) ends here:\n\n```diff\n--- a/{path}\n+++ b/{path}\n@@ -{start},3 +{start},3 @@ def run():\n x = compute()\n y = x + 1\n return y\n```"
        )),
        11 => w.block(&format!(
            "It ends (SRC-1, {path}, line 1), as lines {start}-{end} of `{path}` show::\n\n    x = compute()\n    y = x + 1\n    return y"
        )),
        12 => w.block(&format!("출처: SRC-1 `{path}` {start}–{end}행\n{code}")),
        _ => w.block(&format!(".The loop ({path}, lines {start}-{end})\n[source,python]\n{code}")),
    }
    expected.quotes.push((id, path.to_string(), start, end));
}

/// A citation of `file` from line `start`, in form `form`.
fn write_citation(w: &mut Writer, expected: &mut Expected, id: String, form: u8, file: u8, start: u32) {
    let (path, end) = (FILES[file as usize], start + 5);
    match form {
        0 => w.block(&format!("The loop stops there (SRC-1 {path}:{start}-{end}).")),
        1 => w.block(&format!("The loop stops there [SRC-1, {path}, ll. {start}–{end}].")),
        2 => w.block(&format!("The loop stops there [SRC-1: {path}, L{start}-{end}].")),
        3 => {
            w.block(&format!("The loop stops [there](https://github.com/o/r/blob/{REVISION}/{path}#L{start}-L{end})."))
        }
        5 => w.block(&format!("The loop stops there ⟨SRC-1 · {path} · L{start}–{end}⟩.")),
        6 => w.block(&format!("Die Schleife endet dort [SRC-1 · {path} · Z. {start}–{end}].")),
        7 => w.block(&format!("循环在此结束〔SRC-1，`{path}`，L{start}–{end}〕。")),
        8 => w.block(&format!("The loop stops there [SRC-1, {path}, at ll. {start}-{end}].")),
        10 => w.block(&format!("루프는 여기서 끝난다 [SRC-1: {path} {start}–{end}행].")),
        11 => w.block(&format!("ループはここで終わる（{path}、{start}〜{end}行）。")),
        9 => {
            w.references.push(format!("SRC-1, `{path}`, lines {start}-{end}."));
            w.block(&format!("The loop stops there.<sup>[{}]</sup>", w.references.len()));
        }
        _ => {
            let label = w.footnotes.len() + 1;
            w.block(&format!("The loop stops there.[^{label}]"));
            w.footnotes.push(format!("[^{label}]: SRC-1, `{path}` L{start}–L{end}"));
        }
    }
    expected.citations.push((id, path.to_string(), start, end));
}

fn owner_id(run: &Run, report: usize, owner: Option<Owner>) -> String {
    match owner {
        Some(Owner::Declaration(i)) => run.reports[report].declarations[i as usize].id.as_str().to_string(),
        Some(Owner::Annotation(i)) => run.reports[report].annotations[i as usize].target.as_str().to_string(),
        None => String::new(),
    }
}

fn check(md: &str, expected: &Expected, run: &Run, diagnostics: &[Diagnostic]) -> Result<(), TestCaseError> {
    let errors: Vec<String> = diagnostics.iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
    prop_assert!(errors.is_empty(), "errors:\n{}\n---\n{md}", errors.join("\n"));
    for (id, label) in &expected.records {
        let record = run.records.get(&crate::model::RecordId::new(id));
        prop_assert!(record.is_some_and(|r| r.is_published()), "{id} not declared\n---\n{md}");
        prop_assert_eq!(record.unwrap().label.as_deref(), Some(label.as_str()), "{}", md);
    }
    let report = &run.reports[0];
    for (id, dimension, status) in &expected.findings {
        let found = report.findings.iter().any(|f| {
            matches!(&f.subject, Subject::Record(r) if r.as_str() == id)
                && &*f.dimension == dimension.as_str()
                && &*f.status == status.as_str()
        });
        prop_assert!(found, "finding {id} {dimension:?} {status} missed\n---\n{md}");
    }
    for (id, path, start, end) in &expected.quotes {
        let found = report.quotes.iter().any(|q| {
            owner_id(run, 0, q.owner) == *id
                && q.path == *path
                && q.lines.first().map(|l| (l.start, l.end)) == Some((*start, *end))
        });
        prop_assert!(found, "quote {id} {path}:{start} missed\n---\n{md}");
    }
    for (id, path, start, end) in &expected.citations {
        let found = report.citations.iter().any(|c| {
            owner_id(run, 0, c.owner) == *id
                && c.path.as_deref() == Some(path.as_str())
                && c.lines.first().map(|l| (l.start, l.end)) == Some((*start, *end))
        });
        prop_assert!(found, "citation {id} {path}:{start} missed\n---\n{md}");
    }
    for handle in &expected.limits {
        prop_assert!(report.limits.iter().any(|l| l.handle == *handle), "limit {handle} missed\n---\n{md}");
    }
    let listed: Vec<u32> = diagnostics.iter().filter(|d| d.is_not_understood()).map(|d| d.location.line).collect();
    for line in &expected.unreadable {
        prop_assert!(listed.contains(line), "line {line} not listed (listed: {listed:?})\n---\n{md}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_structure_of_a_report_in_mixed_conventions_is_recognised_or_listed(plan in plan()) {
        let (md, expected) = write(&plan);
        let run_yaml = format!(
            "revision: {REVISION}\nsources:\n  - id: SRC-1\n    title: The repository\n    repository: https://github.com/o/r\n"
        );
        let (run, diagnostics) = run_of(&run_yaml, &[("report", md.as_str())]);
        check(&md, &expected, &run, &diagnostics)?;
    }
}
