//! `casebook schema`: the JSON Schemas an editor checks the YAML files against. Every
//! bundled YAML file validates against the schema the command prints, the schemas in
//! docs/schema/ are the command's, and what a schema refuses casebook refuses too.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const NAMES: [&str; 5] = ["casebook", "system", "run", "front-matter", "redirects"];

fn casebook(arguments: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_casebook")).args(arguments).output().expect("casebook runs")
}

fn schema(name: &str) -> Value {
    let output = casebook(&["schema", name]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("the schema is JSON")
}

fn validator(name: &str) -> jsonschema::Validator {
    jsonschema::validator_for(&schema(name)).expect("the schema is a valid JSON Schema")
}

/// A YAML document as JSON; an empty one is the empty mapping casebook takes it for.
fn yaml(text: &str) -> Value {
    match serde_yaml::from_str::<Value>(text).expect("the file is YAML") {
        Value::Null => Value::Object(Default::default()),
        value => value,
    }
}

/// The errors `name`'s schema finds in `document`, one line each.
fn schema_errors(name: &str, document: &Value) -> Vec<String> {
    validator(name).iter_errors(document).map(|e| format!("{} at {}", e, e.instance_path())).collect()
}

/// The schema a YAML or Markdown file of a content folder is checked against.
fn schema_of(path: &Path) -> Option<&'static str> {
    match path.file_name()?.to_str()? {
        "casebook.yaml" => Some("casebook"),
        "system.yaml" => Some("system"),
        "run.yaml" => Some("run"),
        "redirects.yaml" => Some("redirects"),
        name if name.ends_with(".md") => Some("front-matter"),
        _ => None,
    }
}

fn front_matter(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("---\n")?;
    Some(&rest[..rest.find("\n---")?])
}

fn content_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut folders = vec![root.join("content")];
    for site in std::fs::read_dir(root.join("tests/sites")).unwrap() {
        folders.push(site.unwrap().path().join("content"));
    }
    let mut files = Vec::new();
    for folder in folders {
        for entry in walkdir::WalkDir::new(folder).sort_by_file_name() {
            let entry = entry.unwrap();
            if entry.file_type().is_file() && schema_of(entry.path()).is_some() {
                files.push(entry.into_path());
            }
        }
    }
    files
}

#[test]
fn every_bundled_yaml_file_and_front_matter_validates_against_its_schema() {
    let mut checked = std::collections::BTreeMap::<&str, usize>::new();
    for path in content_files() {
        let name = schema_of(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let document = if name == "front-matter" {
            match front_matter(&text) {
                Some(front) => yaml(front),
                None => continue,
            }
        } else {
            yaml(&text)
        };
        let errors = schema_errors(name, &document);
        assert!(errors.is_empty(), "{}: {}", path.display(), errors.join("; "));
        *checked.entry(name).or_default() += 1;
    }
    // The folders hold every kind but redirects.yaml, several times over.
    for name in ["casebook", "system", "run", "front-matter"] {
        assert!(checked.get(name).copied().unwrap_or(0) >= 3, "only {checked:?} files were checked");
    }
}

#[test]
fn the_schemas_in_docs_are_those_the_command_prints() {
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
    for name in NAMES {
        let printed = casebook(&["schema", name]).stdout;
        let committed = std::fs::read(docs.join(format!("{name}.schema.json"))).unwrap();
        assert!(
            printed == committed,
            "docs/schema/{name}.schema.json is not what `casebook schema {name}` prints; \
             write them again with `cargo run -- schema --write docs/schema`"
        );
    }
    let listing = String::from_utf8(casebook(&["schema"]).stdout).unwrap();
    for name in NAMES {
        assert!(listing.lines().any(|line| line.starts_with(name)), "{listing}");
    }
}

#[test]
fn each_bundled_file_s_modeline_names_its_own_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut named = 0;
    for path in content_files().into_iter().filter(|path| path.starts_with(root.join("content"))) {
        let text = std::fs::read_to_string(&path).unwrap();
        let Some(target) = text.lines().next().and_then(|l| l.strip_prefix("# yaml-language-server: $schema=")) else {
            continue;
        };
        let schema_file = path.parent().unwrap().join(target);
        let name = schema_of(&path).unwrap();
        assert!(schema_file.ends_with(format!("{name}.schema.json")), "{}: names {target}", path.display());
        assert!(schema_file.is_file(), "{}: {} does not exist", path.display(), schema_file.display());
        named += 1;
    }
    assert!(named >= 3, "only {named} bundled YAML files name their schema");
}

/// What a schema refuses, `casebook check` refuses, and the other way round for keys.
#[test]
fn a_misspelt_key_a_bad_date_and_a_wrong_type_are_refused_by_schema_and_check() {
    let cases: [(&str, &str, &str); 4] = [
        ("run", "revision: abc1234\nlense: memory\n", "lense"),
        ("run", "revision: abc1234\ndate: 1 March 2026\n", "date"),
        ("system", "name: [a, b]\n", "name"),
        ("casebook", "ids:\n  grammar: []\n", "grammar"),
    ];
    for (name, text, key) in cases {
        let errors = schema_errors(name, &yaml(text));
        assert!(!errors.is_empty(), "the {name} schema accepts {text:?}");

        let site = tempfile::tempdir().unwrap();
        let content = site.path().join("content");
        let run = content.join("s/r");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(content.join("s/system.yaml"), "name: S\n").unwrap();
        std::fs::write(run.join("run.yaml"), "revision: abc1234\n").unwrap();
        std::fs::write(run.join("report.md"), "# Report\n").unwrap();
        let file = match name {
            "run" => run.join("run.yaml"),
            "system" => content.join("s/system.yaml"),
            _ => content.join("casebook.yaml"),
        };
        std::fs::write(&file, text).unwrap();
        let output = casebook(&["check", "--root", site.path().to_str().unwrap()]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "check accepts {text:?}: {stderr}");
        assert!(stderr.contains(key), "check's error does not name `{key}`: {stderr}");
    }
}

#[test]
fn init_writes_the_schemas_and_each_yaml_file_names_its_own() {
    let site = tempfile::tempdir().unwrap();
    assert!(casebook(&["init", site.path().to_str().unwrap()]).status.success());
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
    for name in NAMES {
        let written = std::fs::read(site.path().join(format!("schema/{name}.schema.json"))).unwrap();
        assert_eq!(written, std::fs::read(docs.join(format!("{name}.schema.json"))).unwrap(), "{name}");
    }
    let mut named = 0;
    for entry in walkdir::WalkDir::new(site.path().join("content")) {
        let path = entry.unwrap().into_path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.lines().next().unwrap();
        let target = first.strip_prefix("# yaml-language-server: $schema=").unwrap_or_else(|| panic!("{first}"));
        let schema_file = path.parent().unwrap().join(target);
        assert!(schema_file.is_file(), "{} names {target}, which is not there", path.display());
        let name = schema_of(&path).unwrap();
        assert!(target.ends_with(&format!("/{name}.schema.json")));
        assert!(schema_errors(name, &yaml(&text)).is_empty(), "{}", path.display());
        assert_eq!(text.matches("yaml-language-server").count(), 1, "{}", path.display());
        named += 1;
    }
    assert_eq!(named, 3, "casebook.yaml, system.yaml and run.yaml");
}
