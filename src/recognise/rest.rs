//! reStructuredText's field lists written in Markdown (`:Status: wired`, `:Source: SRC-1,
//! a.py, lines 3-9`), as an author long used to Sphinx writes a record's fields. CommonMark
//! reads the colon before the key as text, so no key would be found.
//! [`field_lists_plain`] writes that colon as a space (and a key's first letter as a
//! capital), keeping every byte offset, line and column, so each line is read as a
//! `Key: value` line is.

use std::sync::LazyLock;

use regex::Regex;

use super::learned::in_fence;

/// A field of a field list: a colon, a key of one to six words, a colon, then a space or
/// the line's end. (`:ref:` of a role has no space after it; `:::` is a MyST fence.)
static FIELD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ {0,3}:[\p{L}\p{N}][\p{L}\p{N}_'’-]*(?: [\p{L}\p{N}_'’-]+){0,5}:(?: |\\?$)").unwrap()
});

/// `markdown` with the colon that opens each field of a field list written as a space,
/// outside code blocks; none when it has no field list.
pub(super) fn field_lists_plain(markdown: &str) -> Option<String> {
    if !markdown.contains("\n:") && !markdown.starts_with(':') {
        return None;
    }
    let mut out = String::with_capacity(markdown.len());
    let (mut fence, mut changed) = (None, false);
    for line in markdown.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if !in_fence(body.trim_start(), &mut fence) && FIELD.is_match(body) {
            let colon = body.find(':').expect("a field opens with a colon");
            out.push_str(&line[..colon]);
            out.push(' ');
            // A key in lower case (`:bounded: absent`) is written with a capital, as a
            // field's key is read; one byte for one.
            let key_first = line[colon + 1..].chars().next().filter(char::is_ascii_lowercase);
            match key_first {
                Some(c) => {
                    out.push(c.to_ascii_uppercase());
                    out.push_str(&line[colon + 2..]);
                }
                None => out.push_str(&line[colon + 1..]),
            }
            changed = true;
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
    fn a_field_s_opening_colon_becomes_a_space() {
        let md = "### OBJ-01 — Row\n\n:Status: wired\\\n:Timestamp recorded: wired (default)\\\n:Source: SRC-1, a.py, lines 3-9\n";
        let plain = field_lists_plain(md).unwrap();
        assert_eq!(plain.len(), md.len());
        assert!(plain.contains("\n Status: wired\\\n Timestamp recorded: wired (default)\\\n Source: SRC-1"));
        assert_eq!(field_lists_plain("x\n:bounded: absent\n").unwrap(), "x\n Bounded: absent\n");
    }

    #[test]
    fn roles_fences_and_code_are_left_alone() {
        assert_eq!(field_lists_plain("x\n:ref:`target` is a role\n"), None);
        assert_eq!(field_lists_plain("x\n:::{note}\n:::\n"), None);
        assert_eq!(field_lists_plain("```\n:Status: wired\n```\n"), None);
        assert_eq!(field_lists_plain("x\n: a definition\n"), None);
    }
}
