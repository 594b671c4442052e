//! The theme: minijinja templates and static assets. The default theme is compiled into
//! the binary from `themes/default/`, so casebook works with no theme folder; a site's
//! `themes/<name>/templates/*.html` and `themes/<name>/assets/*` override it file by file.

use std::collections::BTreeMap;
use std::path::Path;

use minijinja::{AutoEscape, Environment, UndefinedBehavior, Value};

use crate::model::{Code, Diagnostic, Location};

const BUILT_IN_TEMPLATES: [(&str, &str); 19] = [
    ("search.html", include_str!("../../themes/default/templates/search.html")),
    ("404.html", include_str!("../../themes/default/templates/404.html")),
    ("base.html", include_str!("../../themes/default/templates/base.html")),
    ("home.html", include_str!("../../themes/default/templates/home.html")),
    ("system.html", include_str!("../../themes/default/templates/system.html")),
    ("runs-table.html", include_str!("../../themes/default/templates/runs-table.html")),
    ("graph.html", include_str!("../../themes/default/templates/graph.html")),
    ("status-counts.html", include_str!("../../themes/default/templates/status-counts.html")),
    ("run.html", include_str!("../../themes/default/templates/run.html")),
    ("report.html", include_str!("../../themes/default/templates/report.html")),
    ("record.html", include_str!("../../themes/default/templates/record.html")),
    ("record-body.html", include_str!("../../themes/default/templates/record-body.html")),
    ("records.html", include_str!("../../themes/default/templates/records.html")),
    ("statuses.html", include_str!("../../themes/default/templates/statuses.html")),
    ("status.html", include_str!("../../themes/default/templates/status.html")),
    ("system-status.html", include_str!("../../themes/default/templates/system-status.html")),
    ("system-statuses.html", include_str!("../../themes/default/templates/system-statuses.html")),
    ("system-status-lists.html", include_str!("../../themes/default/templates/system-status-lists.html")),
    ("changes.html", include_str!("../../themes/default/templates/changes.html")),
];

const BUILT_IN_ASSETS: [(&str, &[u8]); 4] = [
    ("search.js", include_bytes!("../../themes/default/assets/search.js")),
    ("moved.js", include_bytes!("../../themes/default/assets/moved.js")),
    ("favicon.svg", include_bytes!("../../themes/default/assets/favicon.svg")),
    ("style.css", include_bytes!("../../themes/default/assets/style.css")),
];

/// Templates and assets, by file name.
#[derive(Debug, Clone)]
pub struct Theme {
    templates: BTreeMap<String, String>,
    assets: BTreeMap<String, Vec<u8>>,
}

impl Theme {
    /// A hash of every template and asset: two themes with the same fingerprint render
    /// the same pages.
    pub fn fingerprint(&self) -> [u8; 32] {
        use sha2::Digest;
        let mut hasher = sha2::Sha256::new();
        for (name, text) in &self.templates {
            hasher.update((name.len() as u64).to_le_bytes());
            hasher.update(name.as_bytes());
            hasher.update((text.len() as u64).to_le_bytes());
            hasher.update(text.as_bytes());
        }
        for (name, bytes) in &self.assets {
            hasher.update((name.len() as u64).to_le_bytes());
            hasher.update(name.as_bytes());
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        }
        hasher.finalize().into()
    }

    /// The built-in default theme.
    pub fn built_in() -> Self {
        Theme {
            templates: BUILT_IN_TEMPLATES.iter().map(|(n, s)| (n.to_string(), s.to_string())).collect(),
            assets: BUILT_IN_ASSETS.iter().map(|(n, b)| (n.to_string(), b.to_vec())).collect(),
        }
    }

    /// The theme `name` of the site at `root`: the built-in theme overridden by the files
    /// of `root/themes/name/`. A theme other than `default` must exist on disk.
    pub fn load(root: &Path, name: &str) -> Result<Self, Diagnostic> {
        let mut theme = Theme::built_in();
        let dir = root.join("themes").join(name);
        if !dir.is_dir() {
            if name == "default" {
                return Ok(theme);
            }
            return Err(Diagnostic::error(
                Code::NoTheme,
                Location::file(&dir),
                format!("theme `{name}` does not exist"),
            )
            .with_help("create the folder, or set `theme: default` in casebook.yaml"));
        }
        for (sub, is_template) in [("templates", true), ("assets", false)] {
            let folder = dir.join(sub);
            if !folder.is_dir() {
                continue;
            }
            for entry in walkdir::WalkDir::new(&folder).min_depth(1).max_depth(1).sort_by_file_name() {
                let entry = entry.map_err(|e| {
                    Diagnostic::error(Code::Unreadable, Location::file(&folder), format!("cannot read: {e}"))
                })?;
                if !entry.file_type().is_file() {
                    continue;
                }
                let name = entry.file_name().to_string_lossy().into_owned();
                let bytes = std::fs::read(entry.path()).map_err(|e| {
                    Diagnostic::error(Code::Unreadable, Location::file(entry.path()), format!("cannot read: {e}"))
                })?;
                if is_template {
                    let text = String::from_utf8(bytes).map_err(|_| {
                        Diagnostic::error(Code::NotUtf8, Location::file(entry.path()), "template is not valid UTF-8")
                    })?;
                    theme.templates.insert(name, text);
                } else {
                    theme.assets.insert(name, bytes);
                }
            }
        }
        Ok(theme)
    }

    /// A template environment: autoescaping for `.html`, and strict undefined values so
    /// that a misspelt variable is an error rather than an empty string.
    pub fn environment(&self) -> Result<Environment<'static>, minijinja::Error> {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        // minijinja's HTML escaping also writes `/` as `&#x2f;`; URLs stay readable (and
        // matchable by `postprocess`) when only `& < > "` are escaped, which is enough
        // for text and double-quoted attributes.
        env.set_formatter(|out, state, value| match (state.auto_escape(), value.as_str()) {
            (AutoEscape::Html, Some(text)) if !value.is_safe() => {
                // Escaped straight into the output: no string per value.
                pulldown_cmark_escape::escape_html(pulldown_cmark_escape::FmtWriter(out), text)
                    .map_err(minijinja::Error::from)
            }
            _ => minijinja::escape_formatter(out, state, value),
        });
        // What the default theme's templates write for a heading's self-link and an
        // external link: the same markup casebook writes in rendered Markdown.
        env.add_function("anchor", |id: &str| Value::from_safe_string(crate::markup::heading_anchor(id)));
        env.add_filter("external", |url: &str| Value::from_safe_string(crate::markup::external_attributes(url).into()));
        for (name, source) in &self.templates {
            env.add_template_owned(name.clone(), source.clone())?;
        }
        Ok(env)
    }

    /// Template sources by name.
    pub fn templates(&self) -> &BTreeMap<String, String> {
        &self.templates
    }

    /// Asset files by name.
    pub fn assets(&self) -> &BTreeMap<String, Vec<u8>> {
        &self.assets
    }
}
