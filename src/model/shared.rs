//! Strings the model shares, read back shared.
//!
//! `resolve` hands the same record ID, anchor or file name to many places by cloning an
//! `Arc`; serde writes each place's copy and reads each back as an allocation of its own,
//! so a run read from the build cache would be a third larger than the one parsed. While
//! [`reading_shared`] runs, the model's shared strings are read through a table and each
//! text is allocated once; outside it they are read as serde reads them.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

use serde::de::{Deserializer, Error, SeqAccess, Visitor};

#[derive(Default)]
struct Table {
    strings: HashSet<Arc<str>>,
    paths: HashSet<Arc<Path>>,
}

thread_local! {
    static TABLE: RefCell<Option<Table>> = const { RefCell::new(None) };
}

/// Runs `read` (a deserialization on this thread) with one text per shared string.
pub fn reading_shared<T>(read: impl FnOnce() -> T) -> T {
    let outer = TABLE.with(|table| table.replace(Some(Table::default())));
    let read = read();
    TABLE.with(|table| table.replace(outer));
    read
}

/// `value` as an `Arc`: the one in `set` of the table when a table is in use.
fn shared<T>(value: &T, set: fn(&mut Table) -> &mut HashSet<Arc<T>>) -> Arc<T>
where
    T: ?Sized + std::hash::Hash + Eq,
    for<'a> Arc<T>: From<&'a T>,
{
    TABLE.with(|table| match table.borrow_mut().as_mut().map(set) {
        Some(set) => match set.get(value) {
            Some(shared) => Arc::clone(shared),
            None => {
                let shared = Arc::from(value);
                set.insert(Arc::clone(&shared));
                shared
            }
        },
        None => Arc::from(value),
    })
}

fn shared_str(text: &str) -> Arc<str> {
    shared(text, |table| &mut table.strings)
}

fn shared_path(text: &str) -> Arc<Path> {
    shared(Path::new(text), |table| &mut table.paths)
}

/// Reads a string, borrowed or not, into the value its function makes, without an owned
/// copy first.
struct Str<F>(F);

impl<'de, T, F: Fn(&str) -> T> Visitor<'de> for Str<F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: Error>(self, text: &str) -> Result<T, E> {
        Ok((self.0)(text))
    }
    fn visit_bytes<E: Error>(self, bytes: &[u8]) -> Result<T, E> {
        std::str::from_utf8(bytes).map(&self.0).map_err(E::custom)
    }
}

/// `#[serde(deserialize_with)]` for an `Arc<str>` the model shares.
pub(crate) fn arc_str<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<str>, D::Error> {
    d.deserialize_str(Str(shared_str))
}

/// `#[serde(deserialize_with)]` for an `Arc<Path>` the model shares (a report's file).
pub(crate) fn arc_path<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<Path>, D::Error> {
    d.deserialize_str(Str(shared_path))
}

/// `#[serde(deserialize_with)]` for an `Option<Arc<str>>` the model shares.
pub(crate) fn option_arc_str<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Arc<str>>, D::Error> {
    struct Maybe;
    impl<'de> Visitor<'de> for Maybe {
        type Value = Option<Arc<str>>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string or nothing")
        }
        fn visit_none<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            arc_str(d).map(Some)
        }
    }
    d.deserialize_option(Maybe)
}

/// `#[serde(deserialize_with)]` for a list of `Arc<str>`s the model shares (`Vec`,
/// `Box<[_]>`).
pub(crate) fn arc_strs<'de, D: Deserializer<'de>, C: FromIterator<Arc<str>>>(d: D) -> Result<C, D::Error> {
    struct List<C>(std::marker::PhantomData<C>);
    impl<'de, C: FromIterator<Arc<str>>> Visitor<'de> for List<C> {
        type Value = C;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list of strings")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<C, A::Error> {
            let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
            while let Some(SharedStr(item)) = seq.next_element()? {
                items.push(item);
            }
            Ok(items.into_iter().collect())
        }
    }
    d.deserialize_seq(List(std::marker::PhantomData))
}

/// `#[serde(deserialize_with)]` for a map whose values are `Arc<str>`s the model shares
/// (a report's anchors, which its findings name too).
pub(crate) fn arc_str_values<'de, D, K>(d: D) -> Result<std::collections::BTreeMap<K, Arc<str>>, D::Error>
where
    D: Deserializer<'de>,
    K: serde::Deserialize<'de> + Ord,
{
    struct Entries<K>(std::marker::PhantomData<K>);
    impl<'de, K: serde::Deserialize<'de> + Ord> Visitor<'de> for Entries<K> {
        type Value = std::collections::BTreeMap<K, Arc<str>>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map of strings")
        }
        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut entries = std::collections::BTreeMap::new();
            while let Some((key, SharedStr(value))) = map.next_entry()? {
                entries.insert(key, value);
            }
            Ok(entries)
        }
    }
    d.deserialize_map(Entries(std::marker::PhantomData))
}

/// One shared string, as an element of a list or a map.
struct SharedStr(Arc<str>);

impl<'de> serde::Deserialize<'de> for SharedStr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        arc_str(d).map(SharedStr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize)]
    struct Shares {
        #[serde(deserialize_with = "arc_str")]
        one: Arc<str>,
        #[serde(deserialize_with = "option_arc_str")]
        maybe: Option<Arc<str>>,
        #[serde(deserialize_with = "arc_strs")]
        many: Box<[Arc<str>]>,
        #[serde(deserialize_with = "arc_path")]
        file: Arc<Path>,
        #[serde(deserialize_with = "arc_path")]
        same_file: Arc<Path>,
        #[serde(deserialize_with = "option_arc_str")]
        none: Option<Arc<str>>,
        #[serde(deserialize_with = "arc_str_values")]
        anchors: std::collections::BTreeMap<usize, Arc<str>>,
    }

    fn written() -> Vec<u8> {
        let id: Arc<str> = "MEM-OBJ-raw".into();
        let file: Arc<Path> = Path::new("content/a/b/r.md").into();
        let shares = Shares {
            one: Arc::clone(&id),
            maybe: Some(Arc::clone(&id)),
            many: vec![Arc::clone(&id), "OBJ-2".into()].into(),
            file: Arc::clone(&file),
            same_file: file,
            none: None,
            anchors: [(3, Arc::clone(&id)), (5, "r-2".into())].into(),
        };
        bincode::serialize(&shares).unwrap()
    }

    #[test]
    fn a_text_written_many_times_is_read_back_once_while_reading_shared() {
        let bytes = written();
        let read: Shares = reading_shared(|| bincode::deserialize(&bytes).unwrap());
        assert!(Arc::ptr_eq(&read.one, read.maybe.as_ref().unwrap()));
        assert!(Arc::ptr_eq(&read.one, &read.many[0]));
        assert!(Arc::ptr_eq(&read.file, &read.same_file));
        assert!(Arc::ptr_eq(&read.one, &read.anchors[&3]));
        assert_eq!(&*read.many[1], "OBJ-2");
        assert_eq!(&*read.anchors[&5], "r-2");
        assert_eq!(read.none, None);
        // The table is gone once the read is done: nothing outlives it.
        TABLE.with(|table| assert!(table.borrow().is_none()));
    }

    #[test]
    fn outside_reading_shared_each_place_has_its_own_text() {
        let bytes = written();
        let read: Shares = bincode::deserialize(&bytes).unwrap();
        assert_eq!(read.one, read.maybe.clone().unwrap());
        assert!(!Arc::ptr_eq(&read.one, read.maybe.as_ref().unwrap()));
        assert!(!Arc::ptr_eq(&read.file, &read.same_file));
    }

    #[test]
    fn json_reads_the_same_values() {
        let bytes = written();
        let read: Shares = bincode::deserialize(&bytes).unwrap();
        let json = serde_json::to_string(&read).unwrap();
        let again: Shares = reading_shared(|| serde_json::from_str(&json).unwrap());
        assert_eq!(
            (&*again.one, &*again.many[1], &*again.file),
            ("MEM-OBJ-raw", "OBJ-2", Path::new("content/a/b/r.md"))
        );
        assert!(Arc::ptr_eq(&again.one, &again.many[0]));
    }
}
