//! AsciiDoc's habits written in Markdown, as an author long used to Antora writes: block
//! attribute lines (`[source,python]`, `[cols="1,3"]`, `[horizontal]`) above a block, and
//! cross-references `<<KRN-01>>` (CommonMark reads `<KRN-01>` as an HTML tag, which a
//! sanitised page drops, and no reference would be found). [`asciidoc_plain`] blanks the
//! attribute lines and writes each cross-reference as its target's words, keeping every
//! byte offset, line and column. (A block title, `.Queue read helper (a.py, lines 7-8)`,
//! is read as a caption by `captions::set_apart`.)

use std::sync::LazyLock;

use regex::Regex;

use super::learned::in_fence;

/// A line that is only a block's attributes: `[source,python]`, `[cols="1,3,2"]`,
/// `[horizontal]`; a word in brackets alone (`[TODO]`) is text, unless AsciiDoc names a
/// block style by it.
static ATTRIBUTES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"^ {0,3}\[(?:(?:source|horizontal|listing|literal|quote|verse|example|sidebar|NOTE|TIP|WARNING|IMPORTANT|CAUTION|abstract|appendix|glossary|bibliography|discrete|%[a-z]+|\.[a-z][\w-]*|#[\w-]+)(?:[,=][^\]\n]*)?|[A-Za-z][\w-]*[,=][^\]\n]*)\][ \t]*$"#,
    )
    .unwrap()
});

/// A cross-reference: `<<KRN-01>>`, `<<sec-limits,the limits>>`.
static XREF: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"<<([A-Za-z][\w.:-]*)(,[^<>\n]{0,80})?>>").unwrap());

/// `markdown` with AsciiDoc's attribute lines blanked and its cross-references written
/// as plain words (`<<KRN-01>>` → `  KRN-01  `, `<<a,the limits>>` → `  a the limits  `),
/// outside code blocks; none when it has neither.
pub(super) fn asciidoc_plain(markdown: &str) -> Option<String> {
    if !markdown.contains("<<") && !markdown.contains("\n[") && !markdown.starts_with('[') {
        return None;
    }
    let mut out = String::with_capacity(markdown.len());
    let (mut fence, mut changed) = (None, false);
    for line in markdown.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if in_fence(body.trim_start(), &mut fence) {
            out.push_str(line);
            continue;
        }
        if ATTRIBUTES.is_match(body) {
            out.extend(std::iter::repeat_n(' ', body.len()));
            out.push_str(&line[body.len()..]);
            changed = true;
            continue;
        }
        let plain = XREF.replace_all(line, |caps: &regex::Captures<'_>| {
            let text = caps.get(2).map_or(String::new(), |t| format!(" {}", &t.as_str()[1..]));
            format!("  {}{text}  ", &caps[1])
        });
        // (Each mark is written as as many spaces, so the line keeps its length.)
        if plain.len() == line.len() && plain != line {
            changed = true;
            out.push_str(&plain);
        } else {
            out.push_str(line);
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_lines_are_blanked_and_cross_references_become_words() {
        let md = "See <<SCH-03>> and <<sec-x,the limits>>.\n\n.Queue helper (a.py, lines 7-8)\n[source,python]\n```python\nq = <<X>>\n```\n";
        let plain = asciidoc_plain(md).unwrap();
        assert_eq!(plain.len(), md.len());
        assert!(plain.starts_with("See   SCH-03   and   sec-x the limits  ."));
        assert!(plain.contains("\n.Queue helper (a.py, lines 7-8)\n               \n```python\nq = <<X>>\n"));
    }

    #[test]
    fn links_footnotes_and_prose_in_brackets_stay() {
        assert_eq!(asciidoc_plain("x\n[ref]: https://example.org\n"), None);
        assert_eq!(asciidoc_plain("x\n[^1]\n"), None);
        assert_eq!(asciidoc_plain("x\n[a bracketed aside]\n"), None);
        assert_eq!(asciidoc_plain("x\n[TODO]\n"), None);
        assert_eq!(asciidoc_plain("a << b >> c\n"), None);
    }
}
