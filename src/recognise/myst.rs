//! MyST markup written as lines of Markdown (Jupyter Book, Sphinx): a target above a
//! heading (`(mem-obj-state)=`) and a colon fence around an admonition (`:::{note}` …
//! `:::`, with options such as `:class: tip`); and an Obsidian block's ID at the end of its
//! last line (` ^summary`). CommonMark reads them as text, and a fence's colons even as a
//! definition list; they are no text of the analysis. [`plain_markdown`]
//! blanks them before the report is read, keeping every byte offset, line and column: a
//! fence's title stays, in bold.

use super::learned::in_fence;

/// What a line of MyST markup shows, when the line is one: nothing for a target
/// (`(mem-obj-state)=`), a colon fence's end (`:::`) or a directive's option
/// (`:class: tip`, only where `options` says one may follow); the title for a colon
/// fence's start (`:::{note}` → `Note`, `:::{admonition} What bounds it` → `What bounds
/// it`). None for any other line.
fn myst_marker(line: &str, options: bool) -> Option<Option<String>> {
    let line = line.trim();
    let target = line
        .strip_prefix('(')
        .and_then(|rest| rest.strip_suffix(")="))
        .is_some_and(|name| !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || "-_.:".contains(c)));
    if target || (line.len() >= 3 && line.chars().all(|c| c == ':')) {
        return Some(None);
    }
    if options {
        let option = line
            .strip_prefix(':')
            .and_then(|rest| rest.split_once(':'))
            .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '-'));
        if option {
            return Some(None);
        }
    }
    let fence = line.trim_start_matches(':');
    if line.len() - fence.len() < 3 {
        return None;
    }
    let (name, title) = fence.strip_prefix('{')?.split_once('}')?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c == '-') {
        return None;
    }
    let title = title.trim();
    Some(Some(if title.is_empty() {
        let mut letters = name.chars();
        letters.next().map(|c| c.to_ascii_uppercase()).into_iter().chain(letters).collect()
    } else {
        title.to_string()
    }))
}

/// `markdown` with its MyST markup lines blanked (spaces of the same length) and each
/// colon fence's start written as its title in bold (padded to the same length), outside
/// code blocks; none when it has no such line.
pub(super) fn plain_markdown(markdown: &str) -> Option<String> {
    if !markdown.contains(")=") && !markdown.contains(":::") && !markdown.contains(" ^") {
        return None;
    }
    let mut out = String::with_capacity(markdown.len());
    let (mut fence, mut options, mut changed) = (None, false, false);
    for line in markdown.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let marker = (!in_fence(body.trim_start(), &mut fence)).then(|| myst_marker(body, options)).flatten();
        options = matches!(marker, Some(Some(_))) || (options && marker.is_some());
        let shown = match marker {
            None => {
                match block_id_at(body) {
                    // An Obsidian block's ID ends its last line (` ^summary`).
                    Some(at) => {
                        changed = true;
                        out.push_str(&body[..at]);
                        out.extend(std::iter::repeat_n(' ', body.len() - at));
                        out.push_str(&line[body.len()..]);
                    }
                    None => out.push_str(line),
                }
                continue;
            }
            Some(Some(title)) if title.len() + 4 <= body.len() => format!("**{title}**"),
            Some(_) => String::new(),
        };
        changed = true;
        out.push_str(&shown);
        out.extend(std::iter::repeat_n(' ', body.len() - shown.len()));
        out.push_str(&line[body.len()..]);
    }
    changed.then_some(out)
}

/// Where an Obsidian block ID (` ^summary`) ends `line`, if one does.
fn block_id_at(line: &str) -> Option<usize> {
    let (before, id) = line.rsplit_once(" ^")?;
    let named = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    (named && !before.trim().is_empty()).then_some(before.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_myst_markup_show_only_a_fence_s_title() {
        assert_eq!(myst_marker("(mem-obj-state)=", false), Some(None));
        assert_eq!(myst_marker(":::", false), Some(None));
        assert_eq!(myst_marker(":::{note}", false), Some(Some("Note".into())));
        assert_eq!(myst_marker("::::{admonition} What bounds it", false), Some(Some("What bounds it".into())));
        assert_eq!(myst_marker(":class: important", true), Some(None));
        assert_eq!(myst_marker(":class: important", false), None, "an option only right after a fence");
        assert_eq!(myst_marker("(see above)", false), None);
        assert_eq!(myst_marker("Status: wired", true), None);
    }

    #[test]
    fn myst_markup_is_blanked_keeping_every_offset() {
        let md = "(limits)=\n## Limits\n\n:::{warning}\n:class: tip\nIt grows.\n:::\n\n```md\n:::\n(x)=\n```\n";
        let plain = plain_markdown(md).unwrap();
        assert_eq!(plain.len(), md.len());
        assert_eq!(plain.lines().count(), md.lines().count());
        assert_eq!(
            plain.lines().map(str::trim_end).collect::<Vec<_>>(),
            ["", "## Limits", "", "**Warning**", "", "It grows.", "", "", "```md", ":::", "(x)=", "```"]
        );
        assert_eq!(plain_markdown("# A report\n\nNo markup: f(x)= 1.\n"), None);
        assert_eq!(
            plain_markdown("It has no valid_at. ^summary\nx ^ y\n").unwrap(),
            "It has no valid_at.         \nx ^ y\n"
        );
    }
}
