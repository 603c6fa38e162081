//! The text-range locator dialect (Part II §5.5) as the gateway carries it:
//! inside, a locator is a string, so diagnostics, step locators and the
//! classifier's tables treat every dialect alike; a text range is written
//! `@LINE:COLUMN-LINE:COLUMN` (1-based, end inclusive of its column), which no
//! JSON Pointer can be (a pointer is empty or starts with `/`). On the wire
//! it becomes the spec's `{start: {line, column}, end: {line, column}}`.

use serde::de::{Deserializer, Error as _};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// One position: 1-based line and column (columns count characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// A span of a text program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextRange {
    pub start: Position,
    pub end: Position,
}

impl TextRange {
    /// The locator string of this range.
    pub fn encode(&self) -> String {
        format!(
            "@{}:{}-{}:{}",
            self.start.line, self.start.column, self.end.line, self.end.column
        )
    }

    /// The range a locator string names, when it is a text range.
    pub fn decode(locator: &str) -> Option<TextRange> {
        let body = locator.strip_prefix('@')?;
        let (start, end) = body.split_once('-')?;
        let position = |s: &str| {
            let (line, column) = s.split_once(':')?;
            let p = Position {
                line: line.parse().ok()?,
                column: column.parse().ok()?,
            };
            (p.line >= 1 && p.column >= 1).then_some(p)
        };
        let range = TextRange {
            start: position(start)?,
            end: position(end)?,
        };
        (range.start <= range.end).then_some(range)
    }

    /// The whole of `text`: from 1:1 to the last character (1:1 when empty).
    pub fn whole(text: &str) -> TextRange {
        let mut end = Position { line: 1, column: 1 };
        let body = text.strip_suffix('\n').unwrap_or(text);
        for (i, line) in body.split('\n').enumerate() {
            end = Position {
                line: i + 1,
                column: line.chars().count().max(1),
            };
        }
        TextRange {
            start: Position { line: 1, column: 1 },
            end,
        }
    }

    /// The spec's JSON form.
    pub fn to_json(&self) -> Value {
        json!({
            "start": {"line": self.start.line, "column": self.start.column},
            "end": {"line": self.end.line, "column": self.end.column},
        })
    }

    fn from_json(value: &Value) -> Option<TextRange> {
        let position = |v: &Value| {
            Some(Position {
                line: v.get("line")?.as_u64()? as usize,
                column: v.get("column")?.as_u64()? as usize,
            })
        };
        Some(TextRange {
            start: position(value.get("start")?)?,
            end: position(value.get("end")?)?,
        })
    }
}

/// Serializes a locator string: a text range as its JSON object, anything
/// else (a JSON Pointer) as the string it is.
pub fn serialize_locator<S: Serializer>(locator: &str, s: S) -> Result<S::Ok, S::Error> {
    match TextRange::decode(locator) {
        Some(range) => range.to_json().serialize(s),
        None => s.serialize_str(locator),
    }
}

/// Reads a locator written by [`serialize_locator`] back into its string.
pub fn deserialize_locator<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => Ok(s),
        other => TextRange::from_json(&other)
            .map(|r| r.encode())
            .ok_or_else(|| D::Error::custom("a locator is a string or a text range")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_round_trips_and_pointers_stay_strings() {
        let r = TextRange {
            start: Position { line: 3, column: 5 },
            end: Position {
                line: 4,
                column: 20,
            },
        };
        assert_eq!(r.encode(), "@3:5-4:20");
        assert_eq!(TextRange::decode("@3:5-4:20"), Some(r));
        assert_eq!(TextRange::from_json(&r.to_json()), Some(r));
        for not_a_range in ["", "/steps/0", "@0:1-1:1", "@2:1-1:1", "@x", "@1:1"] {
            assert_eq!(TextRange::decode(not_a_range), None, "{not_a_range}");
        }
    }

    #[test]
    fn the_whole_document_ends_at_its_last_character() {
        let w = TextRange::whole("ab\ncdef\n");
        assert_eq!(w.encode(), "@1:1-2:4");
        assert_eq!(TextRange::whole("").encode(), "@1:1-1:1");
    }
}
