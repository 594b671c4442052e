//! An analysis's own words for the statuses, read off its legend: a table that pairs
//! each word the author writes with the vocabulary's status it stands for
//! (`| conectado | *wired* | … |`). An analysis written in another language, or in a
//! team's own terms, then states its findings in its own words.

use super::StatusWords;

/// The fewest statuses a legend names: a table that pairs fewer is more likely a short
/// table of findings than a key to the author's words.
const MIN_LEGEND_STATUSES: usize = 4;
/// The most words of one of the author's terms.
const MAX_TERM_WORDS: usize = 4;

/// The author's terms and the statuses they stand for (term lower-case, status as the
/// vocabulary names it), from every legend among the tables of `markdown`.
pub fn legend_synonyms(words: &StatusWords, markdown: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for table in tables(markdown) {
        out.extend(table_legend(words, &table));
    }
    out
}

/// True when the table `markdown` (one table, as written) is a legend of the statuses:
/// its rows are a key to words, not findings.
pub fn is_legend(words: &StatusWords, markdown: &str) -> bool {
    tables(markdown).first().is_some_and(|rows| legend_columns(words, rows).is_some())
}

/// The pairs of a legend: each row's term of the author's own and its status.
fn table_legend(words: &StatusWords, rows: &[Vec<String>]) -> Vec<(String, String)> {
    let Some((term_column, statuses)) = legend_columns(words, rows) else { return Vec::new() };
    rows.iter()
        .zip(statuses)
        .map(|(row, status)| (row[term_column].to_lowercase(), status))
        .filter(|(term, status)| status_of(words, term).is_none_or(|named| named != *status))
        .collect()
}

/// The status a cell names, when it is nothing else.
fn status_of(words: &StatusWords, cell: &str) -> Option<String> {
    words.at_start(cell).filter(|(_, len)| *len == cell.len()).map(|(s, _)| s.to_string())
}

/// Of the body rows of a table whose every row names a different status of the
/// vocabulary in one column, and a short term of the author's own in another: that
/// other column (the first such), and each row's status.
fn legend_columns(words: &StatusWords, rows: &[Vec<String>]) -> Option<(usize, Vec<String>)> {
    let columns = rows.iter().map(Vec::len).min().unwrap_or(0);
    if rows.len() < MIN_LEGEND_STATUSES {
        return None;
    }
    let (column, statuses) = (0..columns).find_map(|c| {
        let statuses: Vec<String> = rows.iter().map(|row| status_of(words, &row[c])).collect::<Option<_>>()?;
        let mut distinct = statuses.clone();
        distinct.sort();
        distinct.dedup();
        (distinct.len() == statuses.len()).then_some((c, statuses))
    })?;
    let term_column = (0..columns).filter(|c| *c != column).find(|c| {
        let mut terms: Vec<&str> = rows.iter().map(|row| row[*c].as_str()).collect();
        let shaped = terms.iter().all(|t| is_term(t));
        terms.sort_unstable();
        let before = terms.len();
        terms.dedup();
        shaped && terms.len() == before
    })?;
    Some((term_column, statuses))
}

/// A short term of words: no ID (`OBJ-01`, `SW-core`), path or number; or a mark of one
/// to three symbols that are no letters, digits or ASCII (`✅`, `🎛️`, `➖`).
fn is_term(text: &str) -> bool {
    let marks = text.chars().count();
    if (1..=3).contains(&marks) && text.chars().all(|c| !c.is_ascii() && !c.is_alphanumeric() && !c.is_whitespace()) {
        return true;
    }
    let count = text.split_whitespace().count();
    let id_like = text.contains('-')
        && text.split(['-', ' ']).next().is_some_and(|w| w.len() >= 2 && w.chars().all(|c| c.is_ascii_uppercase()));
    (1..=MAX_TERM_WORDS).contains(&count)
        && text.chars().any(char::is_alphabetic)
        && !text.chars().any(|c| c.is_ascii_digit() || "_/.:()[]#".contains(c))
        && !id_like
}

/// The body rows of each table of `markdown`, their cells without emphasis, code marks
/// and outer spaces. Tables are read off their lines (`| a | b |`), before any report is
/// parsed.
fn tables(markdown: &str) -> Vec<Vec<Vec<String>>> {
    let mut tables = Vec::new();
    let mut lines = markdown.lines().map(str::trim).peekable();
    while let Some(line) = lines.next() {
        let is_row = |l: &str| l.starts_with('|');
        let delimiter = |l: &str| l.starts_with('|') && l.chars().all(|c| "|:- \t".contains(c)) && l.contains('-');
        if !is_row(line) || !lines.peek().is_some_and(|next| delimiter(next)) {
            continue;
        }
        lines.next();
        let mut rows = Vec::new();
        while let Some(row) = lines.next_if(|l| is_row(l)) {
            rows.push(cells(row));
        }
        tables.push(rows);
    }
    tables
}

/// The cells of a table row, plain.
fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|');
    let inner = inner.strip_suffix('|').unwrap_or(inner);
    inner.split('|').map(|cell| cell.trim().trim_matches(['*', '_', '`', ' ']).trim().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn words() -> StatusWords {
        let names = ["absent", "claimed", "implemented", "wired", "afforded", "observed", "causally supported"];
        StatusWords::new(names.map(String::from), &BTreeMap::new())
    }

    #[test]
    fn a_legend_teaches_the_author_s_words_for_the_statuses() {
        let md = "| Dictamen | Término original | Significado |\n|---|---|---|\n\
                  | ausente | *absent* | buscado y no encontrado |\n\
                  | declarado | *claimed* | lo afirma la documentación |\n\
                  | implementado | *implemented* | presente en el código |\n\
                  | conectado | *wired* | enlazado en la ruta por defecto |\n\
                  | con soporte causal | *causally supported* | demostrado |\n";
        let learned = legend_synonyms(&words(), md);
        assert_eq!(
            learned,
            [
                ("ausente".to_string(), "absent".to_string()),
                ("declarado".into(), "claimed".into()),
                ("implementado".into(), "implemented".into()),
                ("conectado".into(), "wired".into()),
                ("con soporte causal".into(), "causally supported".into()),
            ]
        );
    }

    #[test]
    fn a_legend_of_marks_makes_each_mark_a_status() {
        let md = "| Mark | Status | Meaning |\n|---|---|---|\n| ✅ | wired | on the default path |\n\
                  | 🟡 | implemented | in the code |\n| 🎛️ | afforded | made available |\n| ❌ | absent | not found |\n";
        let learned = legend_synonyms(&words(), md);
        let marks: Vec<&str> = learned.iter().map(|(mark, _)| mark.as_str()).collect();
        assert_eq!(marks, ["✅", "🟡", "🎛️", "❌"]);
        let mut synonyms = BTreeMap::new();
        synonyms.extend(learned);
        let names = ["absent", "implemented", "wired", "afforded"].map(String::from);
        let words = StatusWords::new(names, &synonyms);
        let read = |value: &str| {
            let found = super::super::stated(&words, value, super::super::Reading::KeyValue);
            found.into_iter().map(|s| (s.status, s.qualifier)).collect::<Vec<_>>()
        };
        assert_eq!(read("✅ only in `all` mode"), [("wired".to_string(), Some("only in `all` mode".to_string()))]);
        assert_eq!(read("🎛️ afforded — the user may pause"), [("afforded".to_string(), None)]);
        assert_eq!(read("❌"), [("absent".to_string(), None)]);
    }

    #[test]
    fn a_table_of_findings_is_no_legend() {
        // A status repeats: findings, not a key to words.
        let findings =
            "| ID | Label | Status |\n|---|---|---|\n| OBJ-01 | Cache | wired |\n| OBJ-02 | Log | absent |\n\
                        | OBJ-03 | Index | wired |\n| OBJ-04 | Queue | claimed |\n| OBJ-05 | Lock | observed |\n";
        assert!(legend_synonyms(&words(), findings).is_empty());
        // Three statuses only, and a legend of meanings (long cells) teaches no words.
        let short = "| Mine | Status |\n|---|---|\n| on | wired |\n| off | absent |\n| maybe | claimed |\n";
        assert!(legend_synonyms(&words(), short).is_empty());
        let meanings = "| Status | Meaning |\n|---|---|\n| absent | looked for and not found here |\n\
                        | claimed | stated by the documentation only |\n| wired | reached by a default call path |\n\
                        | observed | seen to happen in a trace of a run |\n";
        assert!(legend_synonyms(&words(), meanings).is_empty());
        // Distinct statuses of records: the other column names records, not words.
        let records = "| Record | Status |\n|---|---|\n| OBJ-01 | wired |\n| OBJ-02 | absent |\n\
                       | OBJ-03 | claimed |\n| OBJ-04 | observed |\n";
        assert!(legend_synonyms(&words(), records).is_empty());
    }
}
