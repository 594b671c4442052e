//! The recognisers of `recognise/` on any text: IDs (the default grammars, and a
//! grammar taken from the input's first line), citations and their line ranges, quote
//! path lines, fields, status keys and stated statuses, labels, citing sentences, near
//! misses and slugs. Every range they return
//! must slice the text it came from.
#![no_main]

use std::sync::LazyLock;

use casebook::config::{IdConfig, SiteConfig};
use casebook::model::RecordId;
use casebook::recognise::{self, Conventions, IdScheme, Reading, MAX_ID_LEN};
use libfuzzer_sys::fuzz_target;

static SCHEME: LazyLock<IdScheme> = LazyLock::new(|| IdScheme::new(&IdConfig::default()).unwrap());
static CONVENTIONS: LazyLock<Conventions> = LazyLock::new(|| Conventions::new(&SiteConfig::default()).unwrap());

fn check_ids(scheme: &IdScheme, text: &str) {
    let ids = scheme.find_ids(text);
    let mut last_end = 0;
    for m in &ids {
        let id = text.get(m.range.clone()).expect("an ID range slices the text");
        assert!(m.range.start >= last_end, "IDs do not overlap");
        assert!(id.len() <= MAX_ID_LEN);
        last_end = m.range.end;
        let slug = RecordId::new(id).slug();
        assert!(!slug.starts_with('.') && !slug.contains('/'), "slug {slug:?} could leave its folder");
        let _ = scheme.classify(id);
        let _ = recognise::sentence_around(text, m.range.clone(), 160);
    }
    let _ = scheme.leading_id(text);
    let _ = recognise::annotation_target(scheme, text);
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    check_ids(&SCHEME, text);
    // A site's own grammar: the first line, when it compiles, over the rest.
    if let Some((grammar, rest)) = text.split_once('\n') {
        let config = IdConfig { grammars: vec![grammar.to_string()], ..IdConfig::default() };
        if let Ok(scheme) = IdScheme::new(&config) {
            check_ids(&scheme, rest);
        }
    }
    let mut last_end = 0;
    for c in CONVENTIONS.citations.find(text) {
        assert!(text.get(c.range.clone()).is_some(), "a citation range slices the text");
        assert!(c.range.start >= last_end, "citations do not overlap");
        last_end = c.range.end;
        if let Some(source) = &c.source_range {
            assert!(text.get(source.clone()).is_some());
        }
        assert_eq!(c.lines.len(), c.line_spans.len(), "each range has its span");
        for span in &c.line_spans {
            assert!(text.get(span.clone()).is_some(), "a line range's span slices the text");
        }
    }
    for (source, follower) in CONVENTIONS.citations.find_with_unread(text).1 {
        assert!(text.get(source).is_some() && text.get(follower).is_some(), "unread paths slice the text");
    }
    let (ids, undeclared) = CONVENTIONS.find_ids_and_undeclared(text);
    for m in ids.iter().chain(&undeclared) {
        assert!(text.get(m.range.clone()).is_some(), "an ID-shaped word slices the text");
    }
    for key in recognise::status_keys(text) {
        assert!(key.start <= key.value_start && key.value_start <= key.value_end);
        let value = text.get(key.value_start..key.value_end).expect("a status key's value slices the text");
        for stated in recognise::stated(&CONVENTIONS.statuses, value, Reading::Explicit) {
            assert!(value.get(stated.range.clone()).is_some(), "a status's range slices its value");
        }
    }
    for line in text.lines() {
        let _ = CONVENTIONS.citations.quote_path(line);
        let _ = CONVENTIONS.field(line);
        if let Some((_, value_at)) = recognise::field(line) {
            assert!(line.get(value_at..).is_some(), "a field value starts on a character boundary");
        }
        for reading in [Reading::Explicit, Reading::Column, Reading::KeyValue] {
            for stated in recognise::stated(&CONVENTIONS.statuses, line, reading) {
                assert!(line.get(stated.range.clone()).is_some(), "a status's range slices the line");
            }
        }
        let _ = CONVENTIONS.statuses.near_miss(line);
        let _ = CONVENTIONS.statuses.mentions_any(line);
        let _ = recognise::is_placeholder(line);
        let _ = recognise::label_and_part(line);
        let _ = recognise::parse_line_ranges(line);
        let _ = recognise::language_for_path(line);
        assert!(!recognise::slugify(line).is_empty());
    }
    if let Some((a, b)) = text.split_once('\t') {
        let _ = recognise::is_near_miss(a, b);
    }
});
