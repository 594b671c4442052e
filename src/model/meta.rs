//! The checked forms of what YAML gives as text: dates, revisions, repository URLs and the
//! site's base URL. Each is checked once, where it is read (`resolve`, `pipeline`); a
//! stage holding one need not check it again.

use std::fmt;

/// A folder or file name that is safe as a URL segment and folder name: ASCII letters,
/// digits, `.`, `_` and `-`, not starting with `.`. Systems, runs and reports are named
/// by one (checked by `discover`), so a URL made of slugs needs no escaping.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Slug(String);

impl Slug {
    /// `text` when it is a valid slug.
    pub fn parse(text: &str) -> Option<Self> {
        let valid = !text.is_empty()
            && !text.starts_with('.')
            && text.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        valid.then(|| Slug(text.to_string()))
    }

    /// The slug a file or folder named `name` is published at: the name itself when it is
    /// a slug; a name with letters of other scripts or accents transliterated to ASCII,
    /// lower-case, runs of anything else made one hyphen (`agentscope-技术评审` →
    /// `agentscope-ji-shu-ping-shen`, `Café` → `cafe`). An ASCII name that is no slug
    /// (`bad slug`) stays none: its author is asked to rename it.
    pub fn of_name(name: &str) -> Option<Self> {
        if let Some(slug) = Slug::parse(name) {
            return Some(slug);
        }
        if name.is_ascii() || name.starts_with('.') {
            return None;
        }
        let mut derived = String::new();
        for c in deunicode::deunicode(name).chars() {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                derived.push(c.to_ascii_lowercase());
            } else if !derived.ends_with('-') {
                derived.push('-');
            }
        }
        Slug::parse(derived.trim_matches('-'))
    }

    /// The slug.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Slug {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Slug {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq<str> for Slug {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Slug {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl fmt::Display for Slug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A date written `YYYY-MM-DD` (month 1–12, day 1–31).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct IsoDate(String);

impl IsoDate {
    /// `text` when it is an ISO date.
    pub fn parse(text: &str) -> Option<Self> {
        let parts: Vec<&str> = text.split('-').collect();
        let valid = matches!(parts.as_slice(), [y, m, d]
            if y.len() == 4 && m.len() == 2 && d.len() == 2
            && y.chars().chain(m.chars()).chain(d.chars()).all(|c| c.is_ascii_digit())
            && (1..=12).contains(&m.parse::<u32>().unwrap_or(0))
            && (1..=31).contains(&d.parse::<u32>().unwrap_or(0)));
        valid.then(|| IsoDate(text.to_string()))
    }

    /// The date as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for IsoDate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A git revision as the analysis gives it: normally a commit hash. One that does not look
/// like a commit is kept (with a warning where it is read), since links still use it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Revision(String);

impl Revision {
    /// The revision `text`.
    pub fn new(text: impl Into<String>) -> Self {
        Revision(text.into())
    }

    /// The revision as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when it looks like a git commit: 7 to 64 hexadecimal digits.
    pub fn is_commit(&self) -> bool {
        let text = self.0.trim();
        (7..=64).contains(&text.len()) && text.chars().all(|c| c.is_ascii_hexdigit())
    }

    /// Its first seven characters, as pages show a commit.
    pub fn short(&self) -> &str {
        self.0.get(..7).unwrap_or(&self.0)
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// An `http://` or `https://` URL: safe as a link's `href`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct HttpUrl(String);

impl HttpUrl {
    /// A repository URL as YAML gives it: `https://…` or `http://…` as written, a bare
    /// `github.com/owner/repo` with `https://` added. `None` for any other scheme
    /// (`javascript:`, `data:`, `file:`), an empty value or one with spaces.
    pub fn parse(text: &str) -> Option<Self> {
        let value = text.trim();
        let lower = value.to_ascii_lowercase();
        if lower.starts_with("https://") || lower.starts_with("http://") {
            return Some(HttpUrl(value.to_string()));
        }
        let scheme = value.split_once(':').map(|(s, _)| s).filter(|s| !s.contains(['/', '.']));
        (scheme.is_none() && !value.is_empty() && !value.contains(char::is_whitespace))
            .then(|| HttpUrl(format!("https://{value}")))
    }

    /// The URL.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Where a site's own files can be read (`source_url` of casebook.yaml): an `http(s)` URL
/// with `{path}` (a file's path from the site's root) and, if it likes, `{line}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceUrl(String);

impl SourceUrl {
    /// The template, or what is wrong with it.
    pub fn parse(text: &str) -> Result<Self, &'static str> {
        let value = text.trim();
        let lower = value.to_ascii_lowercase();
        if !(lower.starts_with("https://") || lower.starts_with("http://")) {
            return Err("it must start with https:// or http://");
        }
        if !value.contains("{path}") {
            return Err("it has no `{path}`, where each file's path goes");
        }
        if value.contains(char::is_whitespace) || value.contains(['"', '<', '>']) {
            return Err("it has a space, a quote or an angle bracket");
        }
        Ok(SourceUrl(value.to_string()))
    }

    /// The URL of `path` (from the site's root), at `line`.
    pub fn link(&self, path: &str, line: u32) -> String {
        use percent_encoding::{utf8_percent_encode, AsciiSet, CONTROLS};
        // A path's own `/` stay; what could end or change the URL is escaped.
        const PATH: &AsciiSet = &CONTROLS.add(b' ').add(b'"').add(b'#').add(b'<').add(b'>').add(b'?').add(b'%');
        self.0.replace("{path}", &utf8_percent_encode(path, PATH).to_string()).replace("{line}", &line.to_string())
    }
}

/// The URL the site is published under, as given (`/`, `/docs`, or
/// `https://example.org/preview/pr-12`), with its parts worked out once.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BaseUrl {
    given: String,
    /// The path part, starting and ending with `/`.
    path: String,
    /// The origin and path without the final `/`, when the base is absolute.
    absolute: Option<String>,
}

impl BaseUrl {
    /// The base URL `given`.
    pub fn new(given: &str) -> Self {
        let without_scheme = match given.split_once("://") {
            Some((_, rest)) => rest.split_once('/').map(|(_, path)| path).unwrap_or(""),
            None => given,
        };
        let trimmed = without_scheme.trim_matches('/');
        let path = if trimmed.is_empty() { "/".to_string() } else { format!("/{trimmed}/") };
        let absolute = (given.starts_with("https://") || given.starts_with("http://"))
            .then(|| given.trim_end_matches('/').to_string());
        BaseUrl { given: given.to_string(), path, absolute }
    }

    /// The base URL as given.
    pub fn as_str(&self) -> &str {
        &self.given
    }

    /// The path part, starting and ending with `/`:
    /// `https://example.org/preview/pr-12` → `/preview/pr-12/`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The origin and path (`https://x.org/pr-12/` → `https://x.org/pr-12`), or `None`
    /// when the base URL is only a path.
    pub fn absolute(&self) -> Option<&str> {
        self.absolute.as_deref()
    }

    /// What site paths (`/fractal/…`) are prefixed with in sitemap, feeds and manifest: the
    /// absolute base when there is one, else the base path, without its final `/`.
    pub fn prefix(&self) -> &str {
        self.absolute().unwrap_or_else(|| self.path.trim_end_matches('/'))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_source_url_needs_a_web_scheme_and_a_path_and_links_each_line() {
        let url = SourceUrl::parse("https://github.com/o/a/blob/main/{path}#L{line}").unwrap();
        assert_eq!(
            url.link("content/lab/r1/memory.md", 12),
            "https://github.com/o/a/blob/main/content/lab/r1/memory.md#L12"
        );
        assert_eq!(url.link("content/a b/#x?.md", 1), "https://github.com/o/a/blob/main/content/a%20b/%23x%3F.md#L1");
        let no_line = SourceUrl::parse("https://example.org/src/{path}").unwrap();
        assert_eq!(no_line.link("content/x.md", 3), "https://example.org/src/content/x.md");
        for bad in
            ["javascript:alert(1)//{path}", "https://example.org/src/", "https://example.org/{path} x", "/local/{path}"]
        {
            assert!(SourceUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn slugs_are_url_segments() {
        assert_eq!(Slug::parse("aas-2026-08-20_fractal.01").unwrap(), "aas-2026-08-20_fractal.01");
        for bad in ["", ".hidden", "a b", "a/b", "%2e%2e", "é"] {
            assert!(Slug::parse(bad).is_none(), "{bad}");
        }
        for bad in ["", ".hidden", "a b", "a/b", "%2e%2e", ".技术"] {
            assert!(Slug::of_name(bad).is_none(), "an ASCII or hidden name is renamed by its author: {bad}");
        }
        let derived = |name: &str| Slug::of_name(name).map(|s| s.to_string());
        assert_eq!(derived("agentscope-技术评审").as_deref(), Some("agentscope-ji-shu-ping-shen"));
        assert_eq!(derived("Café Notes").as_deref(), Some("cafe-notes"));
        assert_eq!(derived("отчёт").as_deref(), Some("otchiot"));
        assert_eq!(derived("r1").as_deref(), Some("r1"), "a slug is kept as written");
    }

    #[test]
    fn dates_are_year_month_day() {
        assert!(IsoDate::parse("2026-08-20").is_some());
        for bad in ["20 August 2026", "2026-13-01", "2026-02-00", "2026-8-20", "2026-02-30x", ""] {
            assert!(IsoDate::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn revisions_are_commits_or_kept_with_a_warning() {
        let commit = Revision::new("5954a07d464feeaf6c311a9fa5ca2e54200a6794");
        assert!(commit.is_commit());
        assert_eq!(commit.short(), "5954a07");
        assert!(!Revision::new("main").is_commit());
        assert_eq!(Revision::new("main").short(), "main");
    }

    #[test]
    fn repository_urls_are_http_or_a_bare_host() {
        assert_eq!(HttpUrl::parse("github.com/o/r").unwrap().as_str(), "https://github.com/o/r");
        assert_eq!(HttpUrl::parse(" HTTP://x.org/r ").unwrap().as_str(), "HTTP://x.org/r");
        for bad in ["javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "", "a b"] {
            assert!(HttpUrl::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn base_urls_give_their_path_and_prefix() {
        for (given, path, prefix) in [
            ("/", "/", ""),
            ("https://example.org", "/", "https://example.org"),
            ("https://example.org/preview/pr-12/", "/preview/pr-12/", "https://example.org/preview/pr-12"),
            ("docs", "/docs/", "/docs"),
        ] {
            let base = BaseUrl::new(given);
            assert_eq!((base.path(), base.prefix()), (path, prefix), "{given}");
        }
        assert_eq!(BaseUrl::new("/docs/").absolute(), None);
    }
}
