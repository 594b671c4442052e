//! Record IDs, ordered the way people read them (`OBJ-2` before `OBJ-10`).

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

/// A record ID as written (`MEM-OBJ-raw`, `OBJ-03`). Cheap to clone.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct RecordId(Arc<str>);

impl RecordId {
    /// Wraps an ID that a grammar recognised.
    pub fn new(id: &str) -> Self {
        RecordId(Arc::from(id))
    }

    /// The ID text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The ID as a URL path segment and HTML anchor: characters outside
    /// `A-Z a-z 0-9 . _ -` become `_`, and a leading `.` too, so an ID can never
    /// name a parent folder.
    pub fn slug(&self) -> String {
        let mut slug: String =
            self.0.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect();
        if slug.starts_with('.') {
            slug.replace_range(0..1, "_");
        }
        slug
    }

    /// Whether the slug is the ID itself: then no other ID has the same slug.
    pub fn is_own_slug(&self) -> bool {
        // By byte: every byte of a character outside ASCII is outside ASCII too. A large
        // site asks this of every record on every build.
        !self.0.starts_with('.') && self.0.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.0)
    }
}

impl serde::Serialize for RecordId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// Read back from the build cache, which wrote what a grammar recognised.
impl<'de> serde::Deserialize<'de> for RecordId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        super::shared::arc_str(d).map(RecordId)
    }
}

impl PartialOrd for RecordId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Natural order: runs of digits compare as numbers, the rest as text; ties are broken
/// by the plain text so that the order is total.
impl Ord for RecordId {
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.0.as_bytes(), other.0.as_bytes());
        if a == b {
            return Ordering::Equal;
        }
        // Maps keyed by ID compare IDs that share long prefixes (`MEM-OBJ-…`) all the time:
        // the natural order is decided from the first difference on, or from the start of
        // the run of digits it falls in.
        let mut start = a.iter().zip(b).take_while(|(x, y)| x == y).count();
        while start > 0 && a[start - 1].is_ascii_digit() {
            start -= 1;
        }
        natural_cmp(&a[start..], &b[start..]).then_with(|| a.cmp(b))
    }
}

fn natural_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let (mut a, mut b) = (a, b);
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let da = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let db = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let (na, nb) = (trim_zeros(&a[..da]), trim_zeros(&b[..db]));
                let ord = na.len().cmp(&nb.len()).then_with(|| na.cmp(nb));
                if ord != Ordering::Equal {
                    return ord;
                }
                a = &a[da..];
                b = &b[db..];
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                a = &a[1..];
                b = &b[1..];
            }
        }
    }
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits.iter().take_while(|&&c| c == b'0').count();
    &digits[zeros.min(digits.len().saturating_sub(1))..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut ids: Vec<RecordId> = ["CONF-10", "CONF-5", "OBJ-03", "OBJ-2", "MEM-OBJ-raw", "MEM-CMP-memoire"]
            .iter()
            .map(|s| RecordId::new(s))
            .collect();
        ids.sort();
        let shown: Vec<&str> = ids.iter().map(RecordId::as_str).collect();
        assert_eq!(shown, ["CONF-5", "CONF-10", "MEM-CMP-memoire", "MEM-OBJ-raw", "OBJ-2", "OBJ-03"]);
    }

    #[test]
    fn comparing_from_the_first_difference_is_the_whole_natural_order() {
        let alphabet = ["0", "1", "9", "a", "-", "é"];
        let mut words = vec![String::new()];
        for _ in 0..3 {
            let longer: Vec<String> =
                words.iter().flat_map(|w| alphabet.iter().map(move |c| format!("{w}{c}"))).collect();
            words.extend(longer);
        }
        words.sort();
        words.dedup();
        for a in &words {
            for b in &words {
                let whole = natural_cmp(a.as_bytes(), b.as_bytes()).then_with(|| a.cmp(b));
                assert_eq!(RecordId::new(a).cmp(&RecordId::new(b)), whole, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn slugs_never_escape_a_folder() {
        assert_eq!(RecordId::new("MEM-OBJ-raw").slug(), "MEM-OBJ-raw");
        assert_eq!(RecordId::new("../x/%2f").slug(), "_._x__2f");
        assert!(RecordId::new("MEM-OBJ-raw").is_own_slug());
        assert!(!RecordId::new("OBJ:1").is_own_slug() && !RecordId::new(".x").is_own_slug());
        // Own slug exactly when the slug is the ID, whatever the characters.
        for id in ["MEM-OBJ-raw", "OBJ.1_a", "ID-é", "Ω", "a b", "x/y", ".x", "x.", "_", "ÿ-1", "CONF-6\u{200b}"] {
            let id = RecordId::new(id);
            assert_eq!(id.is_own_slug(), id.slug() == id.as_str(), "{id:?}");
        }
    }
}
