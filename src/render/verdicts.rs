//! What verification found of a quote or citation, in the words and links a page shows.

use super::views::VerdictView;
use crate::model::LineRange;

/// A quote's verdict in words, linked to the lines found (or most like it); `commit` is
/// the short commit its source was read at.
pub(super) fn quote_verdict(
    verdict: &crate::model::QuoteVerdict,
    commit: Option<&str>,
    link: impl Fn(LineRange) -> Option<String>,
) -> VerdictView {
    use crate::model::QuoteVerdict as V;
    let at = commit.map(|c| format!(" at {c}")).unwrap_or_default();
    let (class, text, url) = match verdict {
        V::Verified { lines } => ("verified", format!("verified{at}, {}", lines.words()), link(*lines)),
        V::Elsewhere { lines } => {
            ("elsewhere", format!("found{at} at {}, not where cited", lines.words()), link(*lines))
        }
        V::NotFound { closest: Some(lines), alike } => {
            ("not-found", format!("not found{at}; most like {} ({}% alike)", lines.words(), alike / 10), link(*lines))
        }
        V::NotFound { closest: None, .. } => ("not-found", format!("not found{at}"), None),
        V::MissingFile => ("missing", format!("the file is not in the source{at}"), None),
        V::NotVerified { why } => ("not-verified", format!("not verified: {why}"), None),
    };
    VerdictView { class, text, url }
}

/// A citation's verdict in words; none for a citation of a whole source.
pub(super) fn citation_verdict(verdict: &crate::model::CitationVerdict, commit: Option<&str>) -> Option<VerdictView> {
    use crate::model::CitationVerdict as V;
    let at = commit.map(|c| format!(" at {c}")).unwrap_or_default();
    let (class, text) = match verdict {
        V::Verified => ("verified", format!("verified{at}")),
        V::MissingPath => ("missing", format!("not in the source{at}")),
        V::PastEnd { file_lines } => ("missing", format!("past the file's end{at} (it has {file_lines} lines)")),
        V::WrongKind => ("missing", format!("a folder cited as a file, or a file as a folder{at}")),
        V::NotVerified { why } => ("not-verified", format!("not verified: {why}")),
        V::WholeSource => return None,
    };
    Some(VerdictView { class, text, url: None })
}
