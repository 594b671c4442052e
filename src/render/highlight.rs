//! Syntax highlighting of quoted code with syntect, as compact class-based HTML: each run
//! of text gets one short token class (`k` keyword, `s` string, …; [`TOKEN_CLASSES`]), so
//! a quote's markup stays near the size of its text, and the colours live in one
//! stylesheet that follows light/dark mode. syntect parses; which class a token gets is
//! decided by syntect's own scope-selector matching, over a theme whose "colours" are the
//! class numbers. The colours of each class come from syntect's InspiredGitHub (light)
//! and base16-ocean.dark themes. The syntax set is bat's (through two-face: syntect's
//! defaults plus TypeScript, TOML, Dockerfile and more), loaded once per process and
//! shared by every rendering thread.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::str::FromStr;
use std::sync::{Arc, LazyLock, Mutex};

use syntect::highlighting::{
    Color, FontStyle, HighlightIterator, HighlightState, Highlighter, ScopeSelectors, Style, StyleModifier, Theme,
    ThemeItem, ThemeSet,
};
use syntect::parsing::{ParseState, Scope, ScopeStack, SyntaxSet};
use syntect::util::LinesWithEndings;

use crate::model::color::Rgb;

static SYNTAXES: LazyLock<SyntaxSet> = LazyLock::new(two_face::syntax::extra_newlines);

/// The token classes: the class written in the page, the scopes it covers (syntect's
/// selector syntax: the most specific selector matching a token's scope stack wins, as in
/// a theme), and the scope whose colour each theme gives it. A token no selector matches
/// is written without a span, in the code panel's text colour.
const TOKEN_CLASSES: &[(&str, &str, &str)] = &[
    ("c", "comment, punctuation.definition.comment", "comment.line"),
    ("s", "string, punctuation.definition.string, constant.other.symbol", "string.quoted.double"),
    ("n", "constant.numeric", "constant.numeric"),
    ("b", "constant, variable.other.constant, support.constant", "constant.language"),
    ("k", "keyword, storage", "keyword.control"),
    ("o", "keyword.operator", "keyword.operator"),
    (
        "t",
        "entity.name.class, entity.name.type, support.type, support.class, entity.other.inherited-class",
        "entity.name.class",
    ),
    ("f", "entity.name.function", "entity.name.function"),
    ("fc", "variable.function, support.function.any-method, meta.require", "variable.function"),
    ("fb", "support.function", "support.function"),
    ("v", "variable", "variable.other"),
    ("l", "variable.language", "variable.language"),
    ("g", "entity.name.tag", "entity.name.tag"),
    ("a", "entity.other.attribute-name", "entity.other.attribute-name"),
    ("h", "markup.heading, entity.name.section", "markup.heading"),
    ("mb", "markup.bold", "markup.bold"),
    ("mi", "markup.italic", "markup.italic"),
    ("x", "invalid", "invalid.illegal"),
];

/// A theme whose colour for a token is its class: red channel `i + 1` for
/// `TOKEN_CLASSES[i]`, black (0) for no class.
static CLASS_THEME: LazyLock<Theme> = LazyLock::new(|| Theme {
    scopes: TOKEN_CLASSES
        .iter()
        .enumerate()
        .map(|(i, (_, selectors, _))| ThemeItem {
            scope: ScopeSelectors::from_str(selectors).expect("the token classes' selectors parse"),
            style: StyleModifier { foreground: Some(class_colour(i + 1)), background: None, font_style: None },
        })
        .collect(),
    ..Theme::default()
});

static CLASSIFIER: LazyLock<Highlighter<'static>> = LazyLock::new(|| Highlighter::new(&CLASS_THEME));

fn class_colour(number: usize) -> Color {
    Color { r: u8::try_from(number).expect("fewer than 256 token classes"), g: 0, b: 0, a: 0xff }
}

/// The class of a token styled by [`CLASSIFIER`], or `None` for plain text.
fn class_of(style: Style) -> Option<&'static str> {
    let number = usize::from(style.foreground.r);
    number.checked_sub(1).map(|i| TOKEN_CLASSES[i].0)
}

/// True when `language` (a fence name or extension) has a grammar.
pub(super) fn knows_language(language: &str) -> bool {
    SYNTAXES.find_syntax_by_token(language).is_some() || is_plain_text(language)
}

/// True for the fence languages that ask for no colours (`text`, `plain`, `txt`,
/// `plaintext`, `none`): shown plain as asked, with nothing to warn about.
fn is_plain_text(language: &str) -> bool {
    ["text", "plain", "txt", "plaintext", "none", "nohighlight"].iter().any(|l| language.eq_ignore_ascii_case(l))
}

/// Highlighted, escaped HTML for `code` (the inside of a `<code>` element). Unknown or
/// absent languages are escaped without colours.
pub(super) fn highlight(code: &str, language: Option<&str>) -> String {
    let syntax = language.and_then(|l| SYNTAXES.find_syntax_by_token(l));
    let Some(syntax) = syntax else {
        return crate::markup::escape(code);
    };
    let mut parser = ParseState::new(syntax);
    let mut state = HighlightState::new(&CLASSIFIER, ScopeStack::new());
    let mut html = Spans::with_capacity(code.len() + code.len() / 2);
    for line in LinesWithEndings::from(code) {
        let Ok(ops) = parser.parse_line(line, &SYNTAXES) else {
            // A grammar failure must not lose the quote: show it plain.
            return crate::markup::escape(code);
        };
        for (style, text) in HighlightIterator::new(&mut state, &ops, line, &CLASSIFIER) {
            html.push(class_of(style), text);
        }
        html.end_line();
    }
    html.out
}

/// HTML of highlighted tokens, written as they come: a run of one class is one span, white
/// space joins the span before it, and no span crosses a line.
struct Spans {
    out: String,
    open: Option<&'static str>,
}

impl Spans {
    fn with_capacity(capacity: usize) -> Self {
        Spans { out: String::with_capacity(capacity), open: None }
    }

    fn push(&mut self, class: Option<&'static str>, text: &str) {
        let body = text.trim_end_matches(['\n', '\r']);
        if !body.is_empty() {
            let blank = body.bytes().all(|b| b == b' ' || b == b'\t');
            if class != self.open && !(blank && self.open.is_some()) {
                self.close();
                if let Some(class) = class {
                    let _ = write!(self.out, "<span class=\"{class}\">");
                }
                self.open = class;
            }
            pulldown_cmark_escape::escape_html_body_text(&mut self.out, body).expect("writing to a String cannot fail");
        }
        if body.len() < text.len() {
            self.close();
            self.out.push_str(&text[body.len()..]);
        }
    }

    /// The end of a line: its span closes.
    fn end_line(&mut self) {
        self.close();
    }

    fn close(&mut self) {
        if self.open.take().is_some() {
            self.out.push_str("</span>");
        }
    }
}

/// The highlighted code of one run while its pages render. A quote shows on its report's
/// page and again on its record's page; with the memo it is highlighted once (syntect is
/// most of the CPU of rendering). Emptied when the run's last page is done, so the memos
/// never hold more than the runs being rendered.
#[derive(Default)]
pub(super) struct RunMemo {
    entries: Mutex<Highlighted>,
}

/// Highlighted HTML by language and code.
type Highlighted = HashMap<(Option<Box<str>>, Box<str>), Arc<str>>;

impl RunMemo {
    /// [`highlight`], computed once per distinct code and language of the run.
    pub(super) fn highlight(&self, code: &str, language: Option<&str>) -> Arc<str> {
        let key = (language.map(Box::from), Box::from(code));
        if let Some(html) = self.lock().get(&key) {
            return html.clone();
        }
        // Highlighted outside the lock: another thread may do the same work at worst.
        let html: Arc<str> = highlight(code, language).into();
        self.lock().entry(key).or_insert(html).clone()
    }

    /// Empties the memo, its table included.
    pub(super) fn release(&self) {
        *self.lock() = Highlighted::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Highlighted> {
        // A panic while holding the lock leaves the map consistent (insertions are whole).
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The stylesheet for the highlight classes: a light theme, and a dark one under
/// `prefers-color-scheme: dark`. Made once per process: loading syntect's themes takes
/// longer than rendering an edited report's pages.
pub(super) fn stylesheet() -> String {
    STYLESHEET.clone()
}

/// The background of quoted code (`pre.code`): the default stylesheet's `--panel`, in the
/// light and the dark scheme.
const LIGHT_CODE_BACKGROUND: Rgb = Rgb(0xf6, 0xf8, 0xfa);
const DARK_CODE_BACKGROUND: Rgb = Rgb(0x1e, 0x21, 0x25);

static STYLESHEET: LazyLock<String> = LazyLock::new(|| {
    let themes = ThemeSet::load_defaults();
    let light = class_rules(&themes.themes["InspiredGitHub"], LIGHT_CODE_BACKGROUND);
    let dark = class_rules(&themes.themes["base16-ocean.dark"], DARK_CODE_BACKGROUND);
    // Each theme under its own scheme: a class only the light theme colours must not keep
    // its light colour on the dark panel.
    format!(
        "/* Generated by casebook from syntect's InspiredGitHub and base16-ocean.dark themes. */\n\
         @media (prefers-color-scheme: light) {{\n{light}}}\n@media (prefers-color-scheme: dark) {{\n{dark}}}\n"
    )
});

/// A rule per token class that `theme` shows unlike plain text: the colour (made
/// readable on `background`) and font style it gives the class's scope.
fn class_rules(theme: &Theme, background: Rgb) -> String {
    let theme = readable(theme.clone(), background);
    let highlighter = Highlighter::new(&theme);
    let plain = highlighter.get_default();
    let mut css = String::new();
    for (class, _, scope) in TOKEN_CLASSES {
        let style = highlighter.style_for_stack(&[Scope::new(scope).expect("the token classes' scopes parse")]);
        if style.foreground == plain.foreground && style.font_style == plain.font_style {
            continue;
        }
        let Color { r, g, b, .. } = style.foreground;
        let _ = write!(css, "pre.code .{class} {{ color: #{r:02x}{g:02x}{b:02x};");
        for (flag, declaration) in [
            (FontStyle::BOLD, " font-weight: bold;"),
            (FontStyle::ITALIC, " font-style: italic;"),
            (FontStyle::UNDERLINE, " text-decoration: underline;"),
        ] {
            if style.font_style.contains(flag) {
                css.push_str(declaration);
            }
        }
        css.push_str(" }\n");
    }
    css
}

/// `theme` with every text colour at least 4.5:1 against `background` (WCAG AA): some of
/// syntect's colours (comments, numbers) are lighter than that on a light panel.
fn readable(mut theme: Theme, background: Rgb) -> Theme {
    let fix = |color: &mut Color| {
        let Rgb(r, g, b) = Rgb(color.r, color.g, color.b).readable_on(background);
        *color = Color { r, g, b, a: 0xff };
    };
    if let Some(color) = theme.settings.foreground.as_mut() {
        fix(color);
    }
    for item in &mut theme.scopes {
        if let Some(color) = item.style.foreground.as_mut() {
            fix(color);
        }
    }
    theme
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_highlight_colour_is_readable_on_the_code_panel_in_both_schemes() {
        let css = stylesheet();
        let (light, dark) = css.split_once("@media (prefers-color-scheme: dark)").unwrap();
        for (part, background) in [(light, LIGHT_CODE_BACKGROUND), (dark, DARK_CODE_BACKGROUND)] {
            let colours: Vec<Rgb> = part
                .split(" color: ")
                .skip(1)
                .filter_map(|rest| Rgb::parse(&rest[..rest.find(';').unwrap()]))
                .collect();
            assert!(colours.len() > 8, "{part}");
            for colour in colours {
                assert!(colour.contrast(background) >= 4.5, "{colour} on {background}");
            }
            // The classes a reader meets in every quote are coloured in both schemes.
            for class in ["c", "s", "n", "k", "f"] {
                assert!(part.contains(&format!("pre.code .{class} {{")), "no rule for .{class}: {part}");
            }
        }
        // The panel colours are the stylesheet's.
        let style = include_str!("../../themes/default/assets/style.css");
        assert!(style.contains(&format!("--panel: {LIGHT_CODE_BACKGROUND};")), "light --panel");
        assert!(style.contains(&format!("--panel: {DARK_CODE_BACKGROUND};")), "dark --panel");
    }

    #[test]
    fn python_is_highlighted_with_one_short_class_per_run_and_escaped() {
        let html = highlight("def f(x):\n    return \"<script>\"  # note\n", Some("python"));
        assert_eq!(
            html,
            "<span class=\"k\">def </span><span class=\"f\">f</span>(<span class=\"v\">x</span>):\n    \
             <span class=\"k\">return </span><span class=\"s\">\"&lt;script&gt;\"  </span><span class=\"c\"># note</span>\n"
        );
    }

    #[test]
    fn every_class_a_quote_can_get_has_a_selector_and_a_scope_that_parse() {
        let mut seen = std::collections::HashSet::new();
        for (i, (class, selectors, scope)) in TOKEN_CLASSES.iter().enumerate() {
            assert!(seen.insert(class), "{class} twice");
            assert!(ScopeSelectors::from_str(selectors).is_ok(), "{selectors}");
            assert!(Scope::new(scope).is_ok(), "{scope}");
            // The representative scope is of its own class.
            let style = CLASSIFIER.style_for_stack(&[Scope::new(scope).unwrap()]);
            assert_eq!(class_of(style), Some(*class), "{scope}");
            assert_eq!(class_of(Style { foreground: class_colour(i + 1), ..style }), Some(*class));
        }
    }

    #[test]
    fn lines_keep_their_endings_outside_spans_and_nothing_is_lost() {
        let code = "fn main() {\r\n    let s = \"a\\nb\";\r\n}\n";
        let html = highlight(code, Some("rust"));
        assert!(!html.contains("\n</span>") && !html.contains("\r</span>"), "{html}");
        let text: String = html.split('<').map(|part| part.split_once('>').map_or(part, |(_, text)| text)).collect();
        assert_eq!(text.replace("&quot;", "\""), code);
    }

    #[test]
    fn the_memo_gives_the_same_html_until_released() {
        let memo = RunMemo::default();
        let once = memo.highlight("def f():\n    return 1\n", Some("python"));
        assert_eq!(&*once, highlight("def f():\n    return 1\n", Some("python")));
        assert!(Arc::ptr_eq(&once, &memo.highlight("def f():\n    return 1\n", Some("python"))));
        // Same code, another language: another entry.
        assert_eq!(&*memo.highlight("def f():\n    return 1\n", None), "def f():\n    return 1\n");
        assert_eq!(memo.lock().len(), 2);
        memo.release();
        assert!(memo.lock().is_empty());
    }

    #[test]
    fn unknown_language_is_plain_but_escaped() {
        assert_eq!(highlight("<b>", Some("no-such-language")), "&lt;b&gt;");
        assert!(!knows_language("no-such-language"));
        for language in ["python", "rust", "bash", "sh", "typescript", "ts", "javascript", "toml", "yaml", "json"] {
            assert!(knows_language(language), "{language}");
        }
        assert!(knows_language("text") && knows_language("Plaintext"), "plain text is asked for: no warning");
        assert_eq!(highlight("<b>", Some("text")), "&lt;b&gt;");
    }
}
