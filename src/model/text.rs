//! Text of a report that the model keeps beside the report's Markdown.

use std::ops::Range;

/// A piece of a report's text (a field's value, the sentence around a reference): where
/// the report's Markdown holds it as it is, which is most of the time, its byte range
/// there; else a string of its own. A large site holds every report at once, so its text
/// is not copied out of the Markdown. Read it with [`super::Report::text`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Text {
    /// Bytes `start..end` of the report's Markdown.
    InMarkdown {
        /// First byte.
        start: u32,
        /// Byte after the last.
        end: u32,
    },
    /// Written otherwise than the Markdown has it (without its markup, or cut short).
    Own(Box<str>),
}

impl Text {
    /// `part`, a slice of `markdown`, by its place there; a copy when it is not a slice of
    /// it.
    pub fn of(markdown: &str, part: &str) -> Text {
        let whole = markdown.as_bytes().as_ptr_range();
        let (start, end) = (part.as_ptr() as usize, part.as_ptr() as usize + part.len());
        if start < whole.start as usize || end > whole.end as usize {
            return Text::Own(part.into());
        }
        let offset = start - whole.start as usize;
        Text::range(offset..offset + part.len()).unwrap_or_else(|| Text::Own(part.into()))
    }

    /// `text` where `markdown[within]` holds it, else a copy.
    pub fn found(markdown: &str, within: Option<Range<usize>>, text: &str) -> Text {
        within
            .and_then(|within| {
                let at = markdown.get(within.clone())?.find(text)?;
                Text::range(within.start + at..within.start + at + text.len())
            })
            .unwrap_or_else(|| Text::Own(text.into()))
    }

    /// The text, out of the Markdown it was made from.
    pub fn get<'a>(&'a self, markdown: &'a str) -> &'a str {
        match self {
            Text::InMarkdown { start, end } => &markdown[*start as usize..*end as usize],
            Text::Own(text) => text,
        }
    }

    fn range(range: Range<usize>) -> Option<Text> {
        Some(Text::InMarkdown { start: u32::try_from(range.start).ok()?, end: u32::try_from(range.end).ok()? })
    }
}

#[cfg(test)]
mod tests {
    use super::Text;

    #[test]
    fn a_slice_of_the_markdown_is_kept_as_its_place() {
        let markdown = "Status: wired\n\nKept by OBJ-02.\n";
        let text = Text::of(markdown, &markdown[8..13]);
        assert_eq!(text, Text::InMarkdown { start: 8, end: 13 });
        assert_eq!(text.get(markdown), "wired");
        assert_eq!(Text::of(markdown, &markdown[markdown.len()..]).get(markdown), "");
    }

    #[test]
    fn text_from_elsewhere_is_its_own() {
        let markdown = "Kept by **OBJ-02**.";
        let elsewhere = String::from("Kept by OBJ-02.");
        assert_eq!(Text::of(markdown, &elsewhere), Text::Own("Kept by OBJ-02.".into()));
        assert_eq!(Text::found(markdown, Some(0..markdown.len()), &elsewhere), Text::Own("Kept by OBJ-02.".into()));
        assert_eq!(Text::found(markdown, None, "OBJ-02"), Text::Own("OBJ-02".into()));
    }

    #[test]
    fn found_text_is_looked_for_only_where_it_is_said_to_be() {
        let markdown = "OBJ-02 here. Then OBJ-02 again.";
        let text = Text::found(markdown, Some(13..markdown.len()), "OBJ-02");
        assert_eq!(text, Text::InMarkdown { start: 18, end: 24 });
        assert_eq!(text.get(markdown), "OBJ-02");
        assert_eq!(Text::found(markdown, Some(40..50), "OBJ-02"), Text::Own("OBJ-02".into()));
    }

    #[test]
    fn it_is_no_larger_than_a_slice() {
        assert_eq!(std::mem::size_of::<Text>(), 16);
    }
}
