//! The hostile fixture (`tests/sites/hostile/`): every field a user writes carries a
//! script, an event handler, a `javascript:` or `data:` URL, template syntax or a
//! breakout. The build succeeds, writes nothing outside its output folder, and no page
//! holds an element that could run any of it; the payloads are shown as text. The same
//! pages are loaded in Chromium by `.ci/browser/hostile.test.mjs`.

mod common;

use std::cell::RefCell;

use lol_html::{element, HtmlRewriter, Settings};

use common::{files_below, repo};

/// Every element or attribute of `html` that could run script, as a description.
fn active_content(html: &str) -> Vec<String> {
    let found = RefCell::new(Vec::new());
    let mut rewriter = HtmlRewriter::new(
        Settings {
            element_content_handlers: vec![element!("*", |el| {
                let tag = el.tag_name();
                if matches!(tag.as_str(), "iframe" | "object" | "embed" | "frame" | "base") {
                    found.borrow_mut().push(format!("<{tag}>"));
                }
                if tag == "script" && !el.get_attribute("src").is_some_and(|s| s.starts_with('/')) {
                    found.borrow_mut().push("inline <script>".to_string());
                }
                for attribute in el.attributes() {
                    let name = attribute.name();
                    let value: String = attribute
                        .value()
                        .chars()
                        .filter(|c| !c.is_ascii_whitespace())
                        .collect::<String>()
                        .to_lowercase();
                    if name.starts_with("on") {
                        found.borrow_mut().push(format!("<{tag} {name}=…>"));
                    }
                    let url_attribute =
                        matches!(name.as_str(), "href" | "src" | "action" | "formaction" | "data" | "srcdoc");
                    if url_attribute
                        && (value.starts_with("javascript:")
                            || value.starts_with("data:")
                            || value.starts_with("vbscript:"))
                    {
                        found.borrow_mut().push(format!("<{tag} {name}={value}>"));
                    }
                }
                Ok(())
            })],
            ..Settings::new()
        },
        |_: &[u8]| {},
    );
    rewriter.write(html.as_bytes()).unwrap();
    rewriter.end().unwrap();
    found.into_inner()
}

#[test]
fn no_payload_can_run_and_nothing_is_written_outside_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut options = casebook::pipeline::BuildOptions::new(repo().join("tests/sites/hostile"));
    options.output = out.clone();
    let outcome = casebook::pipeline::build(&options).unwrap();
    let errors: Vec<String> = outcome.diagnostics.iter().filter(|d| d.is_error()).map(ToString::to_string).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let siblings: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(siblings, vec![std::ffi::OsString::from("out")], "nothing beside the output");

    let pages: Vec<_> = files_below(&out).into_iter().filter(|f| f.extension().is_some_and(|e| e == "html")).collect();
    assert!(pages.len() > 10);
    for page in &pages {
        let html = std::fs::read_to_string(out.join(page)).unwrap();
        let active = active_content(&html);
        assert!(active.is_empty(), "{}: {active:?}", page.display());
    }

    // The payloads are there, as text.
    let report = std::fs::read_to_string(out.join("evil/run-1/report/index.html")).unwrap();
    for shown in [
        "&lt;script&gt;window.__pwned = 'script block'&lt;/script&gt;",
        "&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;window.__pwned = &#39;field&#39;&lt;/script&gt;",
        "{{ site.title }} {% for x in range(3) %}loop{% endfor %}",
        "&lt;/title&gt;&lt;script&gt;window.__pwned = &#39;report title&#39;&lt;/script&gt;",
        "evil/&lt;script&gt;.py:1",
    ] {
        assert!(report.contains(shown), "not shown as text: {shown}");
    }
    // Unsafe links keep their text, lose their target; comments are dropped.
    assert!(
        report.contains("<span class=\"unsafe-link\" title=\"link removed: javascript:window.__pwned=1\">js</span>"),
        "{report}"
    );
    assert!(report
        .contains("<span class=\"unsafe-link\" title=\"link removed: JaVaScRiPt:window.__pwned=2\">spaced</span>"));
    assert!(!report.contains("'comment'"));
    let system = std::fs::read_to_string(out.join("evil/index.html")).unwrap();
    assert!(system.contains("{{ site.title }} {% if true %}template{% endif %}"), "templates in content are not run");
    assert!(
        system.contains("href=\"https://example.org/evil&quot;&gt;&lt;script&gt;"),
        "a quote cannot end the attribute"
    );
}

#[test]
fn ids_and_slugs_cannot_leave_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    let run = site.join("content/lab/r1");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(site.join("content/lab/system.yaml"), "name: Lab\n").unwrap();
    std::fs::write(run.join("run.yaml"), "revision: 0123456789abcdef\n").unwrap();
    let long = "a".repeat(10_000);
    std::fs::write(
        run.join("r.md"),
        format!("# MEM-OBJ-{long}\n\nSee ../../etc and %2f..%2f and MEM-OBJ-ok.\n\n## MEM-OBJ-ok\n"),
    )
    .unwrap();
    // Hidden folders (`.git`, `..%2f..`) are skipped; any other unsafe name is an error.
    std::fs::create_dir_all(site.join("content/lab/%2e%2e%2fx")).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_casebook"))
        .args(["build", "--root", site.to_str().unwrap(), "-o", dir.path().join("out").to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(err.contains("`%2e%2e%2fx` cannot be used as a URL segment"), "{err}");
    assert!(!dir.path().join("out").exists());
}

#[test]
fn symbolic_links_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("content/lab/r1");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(dir.path().join("content/lab/system.yaml"), "name: Lab\n").unwrap();
    std::fs::write(run.join("run.yaml"), "revision: 0123456789abcdef\n").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", run.join("passwd.md")).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_casebook"))
        .args(["check", "--root", "."])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{err}");
    assert!(
        err.contains("content/lab/r1/passwd.md:1:1: error[symlink]: symbolic links are not read in content/"),
        "{err}"
    );
}

/// What `casebook search` and `casebook diff` print from content reaches a terminal with
/// its control characters escaped: an escape sequence, a bell, a bidirectional override or
/// a line feed in a label can neither drive the terminal nor forge a line.
#[test]
fn search_and_diff_print_no_control_character_from_content() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    common::copy_tree(&common::repo().join("tests/sites/readme"), &site);
    let report = site.join("content/fractal/aas-2026-08-20-fractal-01/memory.md");
    let old = site.join("old-records");
    let run = |args: &[&str]| {
        let output =
            std::process::Command::new(env!("CARGO_BIN_EXE_casebook")).args(args).current_dir(&site).output().unwrap();
        assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8(output.stdout).unwrap()
    };
    run(&["build", "--quiet", "--output", old.to_str().unwrap()]);
    let text = std::fs::read_to_string(&report).unwrap();
    let hostile = "### OBJ-09 Pwned \u{1b}]0;owned\u{7}\u{1b}[2J \u{202e}txt.exe\u{0} label\n\nA record pwnedword.\n";
    std::fs::write(&report, format!("{text}\n{hostile}")).unwrap();
    run(&["build", "--quiet"]);
    let search = run(&["search", "--index", "public", "pwnedword"]);
    let diff = run(&["diff", old.to_str().unwrap(), "public"]);
    for (what, printed) in [("search", &search), ("diff", &diff)] {
        assert!(printed.contains("OBJ-09"), "{what} shows the record:\n{printed}");
        let raw: Vec<char> =
            printed.chars().filter(|&c| (c.is_control() && c != '\n') || casebook::model::is_unshown(c)).collect();
        assert!(raw.is_empty(), "{what} printed {raw:?}:\n{printed}");
        assert!(printed.contains("\\u{1b}"), "{what} shows the escape as an escape:\n{printed}");
    }
}
