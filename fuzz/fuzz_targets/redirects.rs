//! `content/redirects.yaml` to Netlify's `_redirects`: whatever the file holds, every rule
//! written is one line of exactly `from to 301`, a path under the base path to a path
//! under it or an http(s) URL, with no whitespace or control character of its own, so
//! content can never add a rule (a forced proxy, say) to the host's configuration. Each
//! entry is either written or named by a diagnostic.
#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;

use casebook::discover::SourceTree;
use casebook::model::{RecordPages, StatusPages};
use casebook::parse::parse_redirects;
use casebook::publish::netlify_redirects;
use libfuzzer_sys::fuzz_target;

struct Site {
    _dir: tempfile::TempDir,
    tree: SourceTree,
}

static SITE: LazyLock<Site> = LazyLock::new(|| {
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() { tempfile::tempdir_in(shm) } else { tempfile::tempdir() }.unwrap();
    let root = dir.path().to_path_buf();
    std::fs::create_dir_all(root.join("content")).unwrap();
    let redirects = root.join("content/redirects.yaml");
    let tree = SourceTree { root, config: None, redirects: Some(redirects), systems: Vec::new() };
    Site { _dir: dir, tree }
});

const BASE: &str = "/analyses/";

fuzz_target!(|data: &[u8]| {
    let site = &*SITE;
    let file: &PathBuf = site.tree.redirects.as_ref().unwrap();
    std::fs::write(file, data).unwrap();
    let mut diagnostics = Vec::new();
    let redirects = parse_redirects(&site.tree, 1 << 20, &mut diagnostics);
    let written = netlify_redirects(&redirects.entries, BASE, RecordPages::Separate, StatusPages::Separate);
    let text = String::from_utf8(written.bytes).expect("_redirects is UTF-8");
    let rules: Vec<&str> = text.lines().filter(|line| !line.starts_with('#')).collect();
    assert_eq!(rules.len(), redirects.entries.len(), "one line per entry: {text:?}");
    for rule in rules {
        let fields: Vec<&str> = rule.split(' ').collect();
        assert!(
            matches!(fields[..], [from, to, "301"]
                if from.starts_with(BASE)
                    && (to.starts_with(BASE) || to.starts_with("http://") || to.starts_with("https://"))),
            "not a rule of the site's own: {rule:?}"
        );
        assert!(!rule.chars().any(|c| c.is_control() || (c.is_whitespace() && c != ' ')), "{rule:?}");
    }
    for d in &diagnostics {
        assert!(d.location.line >= 1, "{d} has no line");
    }
});
