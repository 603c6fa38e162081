//! Legacy locations ("where" paths) such as `steps[1].then[0].with.amount`.
//!
//! The engine predates JSON Pointer: its paths join object keys with `.` and write
//! array positions as `[i]`. The dialects only differ in the prefix they print.

use std::fmt;

/// A location inside a workflow document (or inside a value), root first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Where(Vec<Segment>);

#[derive(Clone, Debug, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

impl Where {
    /// The empty location (the document itself).
    pub fn root() -> Self {
        Self::default()
    }

    /// This location followed by an object key.
    pub fn key(&self, key: &str) -> Self {
        let mut next = self.clone();
        next.0.push(Segment::Key(key.to_owned()));
        next
    }

    /// This location followed by an array position.
    pub fn index(&self, index: usize) -> Self {
        let mut next = self.clone();
        next.0.push(Segment::Index(index));
        next
    }

    /// This location followed by a relative one.
    pub fn join(&self, rel: &Where) -> Self {
        let mut next = self.clone();
        next.0.extend(rel.0.iter().cloned());
        next
    }
}

impl Where {
    /// Every segment joined by `.`, indexes as numbers counted from `index_base`
    /// (`steps.2.then.1` for base 1).
    pub fn dotted(&self, index_base: usize) -> String {
        self.0
            .iter()
            .map(|segment| match segment {
                Segment::Key(key) => key.clone(),
                Segment::Index(i) => (i + index_base).to_string(),
            })
            .collect::<Vec<_>>()
            .join(".")
    }
}

impl fmt::Display for Where {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (n, segment) in self.0.iter().enumerate() {
            match segment {
                Segment::Key(key) if n == 0 => write!(f, "{key}")?,
                Segment::Key(key) => write!(f, ".{key}")?,
                Segment::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_keys_and_indexes_the_legacy_way() {
        let at = Where::root()
            .key("steps")
            .index(1)
            .key("then")
            .index(0)
            .key("with")
            .key("amount");
        assert_eq!(at.to_string(), "steps[1].then[0].with.amount");
        assert_eq!(Where::root().to_string(), "");
        assert_eq!(
            Where::root()
                .key("a")
                .join(&Where::root().index(2))
                .to_string(),
            "a[2]"
        );
    }
}
