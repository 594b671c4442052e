//! JSON Schemas of the YAML files casebook reads, derived from the types in
//! [`crate::config`] that read them, so an editor can check and complete a file as it is
//! typed (`casebook schema`, docs/schema/). A schema denies the keys those types deny.

use std::path::Path;

use schemars::Schema;

use crate::config::{FrontMatter, Redirect, RunMeta, SiteConfig, SystemMeta};

/// One file kind that has a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaFile {
    /// `content/casebook.yaml`.
    Casebook,
    /// `content/<system>/system.yaml`.
    System,
    /// `content/<system>/<run>/run.yaml`.
    Run,
    /// A report's front matter, between `---` lines.
    FrontMatter,
    /// `content/redirects.yaml`.
    Redirects,
}

impl SchemaFile {
    /// Every kind, in the order they are listed.
    pub const ALL: [SchemaFile; 5] =
        [SchemaFile::Casebook, SchemaFile::System, SchemaFile::Run, SchemaFile::FrontMatter, SchemaFile::Redirects];

    /// The name `casebook schema` takes.
    pub fn name(self) -> &'static str {
        match self {
            SchemaFile::Casebook => "casebook",
            SchemaFile::System => "system",
            SchemaFile::Run => "run",
            SchemaFile::FrontMatter => "front-matter",
            SchemaFile::Redirects => "redirects",
        }
    }

    /// The schema's file name in docs/schema/ and in a new site's schema/ folder.
    pub fn file_name(self) -> String {
        format!("{}.schema.json", self.name())
    }

    /// The files it describes.
    pub fn describes(self) -> &'static str {
        match self {
            SchemaFile::Casebook => "content/casebook.yaml",
            SchemaFile::System => "content/<system>/system.yaml",
            SchemaFile::Run => "content/<system>/<run>/run.yaml",
            SchemaFile::FrontMatter => "the front matter of a report (content/<system>/<run>/*.md)",
            SchemaFile::Redirects => "content/redirects.yaml",
        }
    }

    /// The schema, as a JSON Schema (draft 2020-12) document.
    pub fn schema(self) -> serde_json::Value {
        let schema: Schema = match self {
            SchemaFile::Casebook => schemars::schema_for!(SiteConfig),
            SchemaFile::System => schemars::schema_for!(SystemMeta),
            SchemaFile::Run => schemars::schema_for!(RunMeta),
            SchemaFile::FrontMatter => schemars::schema_for!(FrontMatter),
            SchemaFile::Redirects => schemars::schema_for!(Vec<Redirect>),
        };
        let mut value = schema.to_value();
        value["title"] = format!("casebook: {}", self.describes()).into();
        unwrap_descriptions(&mut value);
        value
    }

    /// The schema as the text of its file: pretty JSON ending in a line break. The same
    /// bytes on every run (the JSON's keys are sorted).
    pub fn text(self) -> String {
        let mut text = serde_json::to_string_pretty(&self.schema()).expect("a schema is JSON");
        text.push('\n');
        text
    }

    /// The modeline that makes yaml-language-server (VS Code's YAML extension, Helix,
    /// Neovim…) check a file against this schema, at `schema` relative to the file.
    pub fn modeline(schema: &Path) -> String {
        format!("# yaml-language-server: $schema={}\n", schema.to_string_lossy().replace('\\', "/"))
    }
}

/// Doc comments break lines where the source does; an editor's hover wraps on its own.
fn unwrap_descriptions(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match item {
                    serde_json::Value::String(text) if key == "description" => *text = text.replace('\n', " "),
                    _ => unwrap_descriptions(item),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::{json, Value};

    use super::*;

    /// A key no type accepts.
    const STRANGER: &str = "not_a_casebook_key";

    /// Parses `document` as the type behind `file`; the error's text when it fails.
    fn parse_as(file: SchemaFile, document: &Value) -> Result<(), String> {
        let text = serde_json::to_string(document).unwrap();
        let text = text.as_str();
        let result = match file {
            SchemaFile::Casebook => serde_yaml::from_str::<SiteConfig>(text).map(drop),
            SchemaFile::System => serde_yaml::from_str::<SystemMeta>(text).map(drop),
            SchemaFile::Run => serde_yaml::from_str::<RunMeta>(text).map(drop),
            SchemaFile::FrontMatter => serde_yaml::from_str::<FrontMatter>(text).map(drop),
            SchemaFile::Redirects => serde_yaml::from_str::<Vec<Redirect>>(text).map(drop),
        };
        result.map_err(|e| e.to_string())
    }

    /// The keys serde's "unknown field" error says it expected.
    fn expected_keys(error: &str) -> BTreeSet<String> {
        let start = format!("unknown field `{STRANGER}`, ");
        let at = error.find(&start).unwrap_or_else(|| panic!("not an unknown-field error: {error}"));
        let rest = &error[at + start.len()..];
        if rest.starts_with("there are no fields") {
            return BTreeSet::new();
        }
        let list = rest.strip_prefix("expected one of ").or_else(|| rest.strip_prefix("expected ")).unwrap();
        let list = list.split(" at line ").next().unwrap();
        // serde writes "`a`", "`a` or `b`", or "one of `a`, `b`, `c`".
        list.split(", ").flat_map(|part| part.split(" or ")).map(|key| key.trim_matches('`').to_string()).collect()
    }

    /// A step from a schema node to one inside it.
    #[derive(Debug, Clone)]
    enum Step {
        Key(String),
        Item,
    }

    /// A document with `leaf` at `path`.
    fn document_at(path: &[Step], leaf: Value) -> Value {
        path.iter().rev().fold(leaf, |inner, step| match step {
            Step::Key(key) => json!({ key.as_str(): inner }),
            Step::Item => json!([inner]),
        })
    }

    /// Every object node of `root` reachable from `node`, with the path to it.
    fn objects<'a>(root: &'a Value, node: &'a Value, path: Vec<Step>, found: &mut Vec<(Vec<Step>, &'a Value)>) {
        if let Some(reference) = node.get("$ref").and_then(Value::as_str) {
            let name = reference.strip_prefix("#/$defs/").expect("local references only");
            return objects(root, &root["$defs"][name], path, found);
        }
        for alternatives in ["anyOf", "oneOf"] {
            for alternative in node.get(alternatives).and_then(Value::as_array).into_iter().flatten() {
                objects(root, alternative, path.clone(), found);
            }
        }
        if let Some(items) = node.get("items") {
            objects(root, items, [path.clone(), vec![Step::Item]].concat(), found);
        }
        if let Some(properties) = node.get("properties").and_then(Value::as_object) {
            for (key, property) in properties {
                objects(root, property, [path.clone(), vec![Step::Key(key.clone())]].concat(), found);
            }
        }
        if node.get("properties").is_some() || node.get("additionalProperties").is_some() {
            found.push((path, node));
        }
    }

    #[test]
    fn every_schema_denies_exactly_the_keys_its_type_denies() {
        for file in SchemaFile::ALL {
            let schema = file.schema();
            let mut found = Vec::new();
            objects(&schema, &schema, Vec::new(), &mut found);
            assert!(!found.is_empty(), "{}: no object in the schema", file.name());
            for (path, node) in found {
                let document = document_at(&path, json!({ STRANGER: "x" }));
                let keys: BTreeSet<String> = node
                    .get("properties")
                    .and_then(Value::as_object)
                    .into_iter()
                    .flatten()
                    .map(|(k, _)| k.clone())
                    .collect();
                match node.get("additionalProperties") {
                    Some(Value::Bool(false)) => {
                        let error = parse_as(file, &document).expect_err("an unknown key is refused");
                        assert_eq!(keys, expected_keys(&error), "{}: at {path:?}", file.name());
                    }
                    // A map (family code → name): any key, with a value of the given type.
                    Some(values) => {
                        assert_eq!(values["type"], "string", "{}: at {path:?}", file.name());
                        let accepted = parse_as(file, &document);
                        // Elsewhere in the document, a required key may be missing.
                        assert!(
                            accepted.as_ref().map_or_else(|e| !e.contains("unknown field"), |()| true),
                            "{accepted:?}"
                        );
                    }
                    None => panic!("{}: the object at {path:?} accepts any key, its type does not", file.name()),
                }
            }
        }
    }

    #[test]
    fn the_test_above_sees_a_key_the_schema_lacks() {
        let error = parse_as(SchemaFile::System, &json!({ STRANGER: 1 })).unwrap_err();
        let mut keys = expected_keys(&error);
        assert_eq!(keys, BTreeSet::from(["name".to_string(), "repository".to_string(), "summary".to_string()]));
        keys.remove("summary");
        let schema = SchemaFile::System.schema();
        let in_schema: BTreeSet<String> = schema["properties"].as_object().unwrap().keys().cloned().collect();
        assert_ne!(keys, in_schema);
    }

    #[test]
    fn schema_text_is_stable_and_modelines_use_forward_slashes() {
        for file in SchemaFile::ALL {
            assert_eq!(file.text(), file.text());
            assert!(file.text().ends_with("}\n"));
            assert!(!file.text().contains("\\n"), "{}: a description keeps a line break", file.name());
        }
        let modeline = SchemaFile::modeline(Path::new("../schema/run.schema.json"));
        assert_eq!(modeline, "# yaml-language-server: $schema=../schema/run.schema.json\n");
    }
}
