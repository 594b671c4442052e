//! The module graph of `src/` has no circles: a module that a stage uses never uses that
//! stage back. Checked on the source text, at two levels: the crate's top-level modules,
//! and the sibling files of each folder module (`render/markdown.rs`, `render/highlight.rs`).
//! A file's use of its own folder's `mod.rs` (`super::X`) is not counted: that is where a
//! folder module keeps what its files share.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// `module → modules it names`, for the modules of one level.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The source of a file without its `#[cfg(test)] mod tests { … }` block (tests may use
/// anything) and without comments.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    text.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Every path named after `prefix` (`crate::`, `super::`), including each path of a
/// grouped `use prefix{a::b, c}`: the first segment of each.
fn first_segments(code: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = code;
    while let Some(at) = rest.find(prefix) {
        let after = &rest[at + prefix.len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find(';').unwrap_or(group.len());
            let mut depth = 0;
            let mut item = String::new();
            for c in group[..end].chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.extend(segment(&item));
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    item.push(c);
                }
            }
            out.extend(segment(&item));
        } else {
            out.extend(segment(after));
        }
        rest = after;
    }
    out
}

fn segment(text: &str) -> Option<String> {
    let name: String = text.trim().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    (!name.is_empty() && name != "self").then_some(name)
}

fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The graphs: the top-level modules, then one per folder module.
fn graphs(src: &Path) -> BTreeMap<String, Graph> {
    let mut graphs: BTreeMap<String, Graph> = BTreeMap::new();
    let top_level: BTreeSet<String> = std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .filter(|name| name != "lib" && name != "main")
        .collect();
    for file in rust_files(src) {
        let relative = file.strip_prefix(src).unwrap();
        let parts: Vec<String> =
            relative.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
        if parts[0] == "lib" || parts[0] == "main" {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(&file).unwrap());
        let named: BTreeSet<String> =
            first_segments(&code, "crate::").into_iter().filter(|m| top_level.contains(m) && *m != parts[0]).collect();
        graphs.entry("crate".into()).or_default().entry(parts[0].clone()).or_default().extend(named);
        if parts.len() == 2 && parts[1] != "mod" {
            let folder = src.join(&parts[0]);
            let siblings: BTreeSet<String> = rust_files(&folder)
                .iter()
                .filter(|p| p.parent() == Some(folder.as_path()))
                .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
                .filter(|name| name != "mod")
                .collect();
            let mut named: BTreeSet<String> = first_segments(&code, "super::");
            named.extend(
                first_segments(&code, &format!("crate::{}::", parts[0])).into_iter().filter(|m| siblings.contains(m)),
            );
            named.retain(|m| siblings.contains(m) && *m != parts[1]);
            graphs.entry(parts[0].clone()).or_default().entry(parts[1].clone()).or_default().extend(named);
        }
    }
    graphs
}

/// A circle through `start`, if any, as the modules along it.
fn circle_from(graph: &Graph, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in graph.get(&node).into_iter().flatten() {
            if next == start {
                let mut circle = path.clone();
                circle.push(start.to_string());
                return Some(circle);
            }
            if seen.insert(next.clone()) {
                let mut longer = path.clone();
                longer.push(next.clone());
                stack.push((next.clone(), longer));
            }
        }
    }
    None
}

fn circles(graphs: &BTreeMap<String, Graph>) -> Vec<String> {
    let mut found = Vec::new();
    for (level, graph) in graphs {
        let mut reported = BTreeSet::new();
        for module in graph.keys() {
            if let Some(circle) = circle_from(graph, module) {
                let key: BTreeSet<String> = circle.iter().cloned().collect();
                if reported.insert(key.into_iter().collect::<Vec<_>>()) {
                    found.push(format!("{level}: {}", circle.join(" → ")));
                }
            }
        }
    }
    found
}

#[test]
fn the_modules_of_src_form_no_circle() {
    let graphs = graphs(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(graphs["crate"].len() > 10, "the scan found the crate's modules: {:?}", graphs["crate"].keys());
    let found = circles(&graphs);
    assert!(found.is_empty(), "import circles (a module must not use a module that uses it):\n{}", found.join("\n"));
}

#[test]
fn the_scan_sees_grouped_uses_and_finds_a_circle() {
    let code = "use crate::{model::{A, B}, urls};\nfn f() { crate::render::x(); }\n";
    assert_eq!(first_segments(code, "crate::"), ["model", "render", "urls"].map(String::from).into_iter().collect());
    let mut graph = Graph::new();
    graph.entry("a".into()).or_default().insert("b".into());
    graph.entry("b".into()).or_default().insert("c".into());
    graph.entry("c".into()).or_default().insert("a".into());
    assert_eq!(circle_from(&graph, "a"), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    graph.get_mut("c").unwrap().clear();
    assert_eq!(circle_from(&graph, "a"), None);
}

/// The longest a function may be without a written reason: a `// Long: why` comment
/// among the lines just above it.
const MAX_FUNCTION_LINES: usize = 80;

/// `(file:line name, lines)` of every function in `text` over the limit without a
/// `// Long:` reason. Relies on rustfmt's layout: a function ends at the first `}` line
/// indented as its `fn` line.
fn long_functions(file: &str, text: &str) -> Vec<(String, usize)> {
    let code = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    let lines: Vec<&str> = code.lines().collect();
    let mut long = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let body = line.trim_start();
        let indent = line.len() - body.len();
        let after_qualifiers = ["pub(crate) ", "pub(super) ", "pub ", "const ", "async ", "unsafe "]
            .iter()
            .fold(body, |rest, q| rest.strip_prefix(q).unwrap_or(rest));
        let Some(signature) = after_qualifiers.strip_prefix("fn ") else { continue };
        if body.ends_with(';') {
            continue; // a declaration in a trait
        }
        let close = format!("{}}}", " ".repeat(indent));
        let Some(length) = lines[i..].iter().position(|l| *l == close) else { continue };
        let length = length + 1;
        let reasoned = lines[..i]
            .iter()
            .rev()
            .take_while(|l| {
                let l = l.trim_start();
                l.starts_with("//") || l.starts_with("#[")
            })
            .any(|l| l.trim_start().starts_with("// Long:"));
        if length > MAX_FUNCTION_LINES && !reasoned {
            let name: String = signature.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            long.push((format!("{file}:{} {name}", i + 1), length));
        }
    }
    long
}

#[test]
fn long_functions_say_why() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut long = Vec::new();
    for path in rust_files(&src) {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.strip_prefix(&src).unwrap().display().to_string();
        long.extend(long_functions(&file, &text));
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines without a `// Long: why` comment above them \
         (split them, or say why they are one piece):\n{}",
        long.iter().map(|(at, n)| format!("  {at}: {n} lines")).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_length_check_sees_a_long_function_and_its_reason() {
    let body = "    x();\n".repeat(MAX_FUNCTION_LINES);
    let long = format!("/// Doc.\npub fn f() {{\n{body}}}\n");
    assert_eq!(long_functions("a.rs", &long), vec![("a.rs:2 f".to_string(), MAX_FUNCTION_LINES + 2)]);
    let reasoned = format!("// Long: one match over every event.\n#[inline]\n{long}");
    assert!(long_functions("a.rs", &reasoned).is_empty());
    let short = "fn g() {\n    x();\n}\n";
    assert!(long_functions("a.rs", short).is_empty());
}

/// What a code name written in backticks in docs/architecture.md names, if it exists: a
/// file or folder of the repository (`src/render/record.rs`, `.ci/test`), a module path
/// (`render::record`), an item and its module (`pipeline::run`, `Run::records`), or a type,
/// trait or other item of `src/` (`SourceTree`). Words that are no code names (commands,
/// placeholders, Rust's own types) are skipped.
fn code_name_exists(name: &str, repo: &Path, items: &BTreeSet<String>, modules: &BTreeSet<String>) -> Option<bool> {
    let name = name.trim_end_matches("()").trim_end_matches('!');
    // (Commands, placeholders and routes, `/api/search`, are no code names.)
    if name.contains(['<', ' ', '*', '=', '#', '"']) || name.starts_with(['-', '/']) {
        return None;
    }
    // A file or folder named alone (`load.rs`, `report/`) on the line of its folder.
    let alone = name.trim_end_matches('/');
    if !alone.contains('/') && (name.ends_with(".rs") || name.ends_with('/')) {
        let in_repo = repo.join(alone).exists() || repo.join("tests").join(alone).exists();
        return Some(modules.contains(alone.trim_end_matches(".rs")) || in_repo);
    }
    if name.contains('/') || name.ends_with(".md") || name.starts_with('.') {
        let path = name.trim_end_matches('/');
        let candidates = [repo.join(path), repo.join("src").join(path), repo.join("tests").join(path)];
        return Some(candidates.iter().any(|p| p.exists()));
    }
    if name.contains("::") {
        let segments: Vec<&str> = name.split("::").collect();
        return Some(segments.iter().all(|s| modules.contains(*s) || items.contains(*s)));
    }
    let is_item = name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if is_item {
        const STD: [&str; 8] = ["BTreeMap", "HashMap", "Vec", "String", "Option", "Result", "Arc", "PathBuf"];
        return (!STD.contains(&name)).then(|| items.contains(name));
    }
    None
}

/// The names `src/` defines: items (`struct X`, `fn x`, `enum`, `trait`, `type`, `const`,
/// `static`, macros, enum variants and fields are not told apart from words, so every
/// identifier is taken) and its modules (files and folders).
fn names_in_src(src: &Path) -> (BTreeSet<String>, BTreeSet<String>) {
    let mut items = BTreeSet::new();
    let mut modules = BTreeSet::new();
    for file in rust_files(src) {
        let relative = file.strip_prefix(src).unwrap();
        for part in relative.iter() {
            let part = part.to_string_lossy();
            modules.insert(part.trim_end_matches(".rs").to_string());
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let mut word = String::new();
        for c in text.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
            } else if !word.is_empty() {
                items.insert(std::mem::take(&mut word));
            }
        }
    }
    (items, modules)
}

#[test]
fn every_code_name_in_the_architecture_map_exists() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let doc = std::fs::read_to_string(repo.join("docs/architecture.md")).unwrap();
    let words = doc.split_whitespace().count();
    assert!(words <= 1_500, "docs/architecture.md is a map of one screen: {words} words, at most 1,500");
    let (items, modules) = names_in_src(&repo.join("src"));
    let mut missing = Vec::new();
    let mut checked = 0;
    for (i, span) in doc.split('`').enumerate() {
        if i % 2 == 0 {
            continue;
        }
        match code_name_exists(span, repo, &items, &modules) {
            Some(true) => checked += 1,
            Some(false) => missing.push(span.to_string()),
            None => {}
        }
    }
    assert!(checked > 50, "the check reads the map's names: {checked}");
    assert!(missing.is_empty(), "docs/architecture.md names what does not exist: {missing:?}");
}
