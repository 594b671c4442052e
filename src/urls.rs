//! The one mapping from model objects to output paths and site-absolute URLs.
//!
//! URLs are written root-relative (`/fractal/…/`); `postprocess` prefixes the base path,
//! so a site can be served under any sub-path. A record's URL depends only on its system,
//! run and ID, never on heading text, so links to it survive edits of the prose.

use crate::model::RecordId;

/// The home page.
pub fn home() -> String {
    "/".to_string()
}

/// A system's page.
pub fn system(system: &str) -> String {
    format!("/{system}/")
}

/// A run's page.
pub fn run(system: &str, run: &str) -> String {
    format!("/{system}/{run}/")
}

/// A report's page.
pub fn report(system: &str, run: &str, report: &str) -> String {
    format!("/{system}/{run}/{report}/")
}

/// A record's page.
pub fn record(system: &str, run: &str, id: &RecordId) -> String {
    format!("/{system}/{run}/records/{}.html", id.slug())
}

/// The page listing records by status.
pub fn statuses() -> String {
    "/statuses/".to_string()
}

/// The page of one status.
pub fn status(name: &str) -> String {
    format!("/statuses/{}/", crate::recognise::slugify(name))
}

/// The records of one system with one status.
pub fn system_status(system: &str, name: &str) -> String {
    format!("/{system}/statuses/{}/", crate::recognise::slugify(name))
}

/// The search page.
pub fn search() -> String {
    "/search/".to_string()
}

/// A file of the theme's assets.
pub fn asset(name: &str) -> String {
    format!("/assets/{name}")
}

/// The output file of a page URL: `/a/b/` → `a/b/index.html`.
pub fn output_path(url: &str) -> std::path::PathBuf {
    let trimmed = url.trim_start_matches('/');
    if trimmed.is_empty() || trimmed.ends_with('/') {
        std::path::PathBuf::from(format!("{trimmed}index.html"))
    } else {
        std::path::PathBuf::from(trimmed)
    }
}

/// A link to `path` (and lines) in a repository at a revision, for the forges whose URL
/// scheme is known (GitHub, GitLab, Codeberg/Gitea). `None` for other hosts.
pub fn repository_file(repository: &str, revision: &str, path: &str, lines: Option<(u32, u32)>) -> Option<String> {
    let base = repository.trim_end_matches('/').trim_end_matches(".git");
    let base = if base.starts_with("http://") || base.starts_with("https://") {
        base.to_string()
    } else {
        format!("https://{base}")
    };
    let host = base.split('/').nth(2)?;
    let path = path.trim_start_matches("./").trim_start_matches('/');
    let (blob, fragment) = match host {
        "github.com" => ("blob", lines.map(|(a, b)| if a == b { format!("#L{a}") } else { format!("#L{a}-L{b}") })),
        "gitlab.com" => ("-/blob", lines.map(|(a, b)| if a == b { format!("#L{a}") } else { format!("#L{a}-{b}") })),
        "codeberg.org" => {
            ("src/commit", lines.map(|(a, b)| if a == b { format!("#L{a}") } else { format!("#L{a}-L{b}") }))
        }
        _ => return None,
    };
    Some(format!("{base}/{blob}/{revision}/{path}{}", fragment.unwrap_or_default()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_paths() {
        assert_eq!(output_path("/"), std::path::PathBuf::from("index.html"));
        assert_eq!(output_path("/a/b/"), std::path::PathBuf::from("a/b/index.html"));
        assert_eq!(output_path("/assets/style.css"), std::path::PathBuf::from("assets/style.css"));
    }

    #[test]
    fn github_links_pin_the_revision_and_lines() {
        assert_eq!(
            repository_file(
                "https://github.com/Trampoline-AI/fractal",
                "5954a07",
                "src/fractal/session.py",
                Some((368, 390))
            )
            .as_deref(),
            Some("https://github.com/Trampoline-AI/fractal/blob/5954a07/src/fractal/session.py#L368-L390")
        );
        assert_eq!(
            repository_file("github.com/o/r.git", "abc", "a.py", None).as_deref(),
            Some("https://github.com/o/r/blob/abc/a.py")
        );
        assert_eq!(repository_file("https://example.org/o/r", "abc", "a.py", None), None);
    }
}
