//! Conversion of the engine's location strings into RFC 6901 JSON Pointers.
//!
//! Engines name the offending node in their own path syntax; Pilotage diagnostics
//! carry a JSON Pointer. Each rule file declares which syntax its engine dialect uses
//! (`location_syntax` at the top of the file), so adapting a new engine is a TOML edit.

use serde::{Deserialize, Serialize};

/// The path syntax an engine dialect uses in its location field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LocationSyntax {
    /// Dotted members and bracketed indexes without a root marker:
    /// `steps[1].then[0].with.amount`.
    #[default]
    Legacy,
    /// The same, prefixed with the JSONPath root: `$.steps[1].then[0].with.amount`.
    /// Bracketed quoted members (`$['odd.key']`) are understood too.
    Jsonpath,
}

impl LocationSyntax {
    /// Converts an engine location into a JSON Pointer (`/steps/1/then/0/with/amount`).
    ///
    /// Returns `None` when the location does not follow the syntax, so the rule's
    /// locator chain can fall through to its next source instead of inventing
    /// coordinates. An empty location (or a bare `$`) is the document root, `""`.
    pub fn to_pointer(self, location: &str) -> Option<String> {
        let members = match self {
            LocationSyntax::Legacy => legacy_members(location)?,
            LocationSyntax::Jsonpath => members_after_root(location.strip_prefix('$')?)?,
        };
        Some(members.iter().map(|m| format!("/{}", escape(m))).collect())
    }
}

/// Escapes one reference token per RFC 6901 (`~` first, so `/` → `~1` stays intact).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The legacy syntax starts with a bare member name; a leading `.` makes it
/// identical to the part of a JSONPath that follows `$`.
fn legacy_members(location: &str) -> Option<Vec<String>> {
    if location.is_empty() || location.starts_with('[') {
        members_after_root(location)
    } else {
        members_after_root(&format!(".{location}"))
    }
}

/// Parses a sequence of `.name`, `[index]` and `['quoted name']` segments.
fn members_after_root(mut rest: &str) -> Option<Vec<String>> {
    let mut members = Vec::new();
    while !rest.is_empty() {
        let (member, tail) = if let Some(after_dot) = rest.strip_prefix('.') {
            dotted_member(after_dot)?
        } else if let Some(after_bracket) = rest.strip_prefix('[') {
            bracketed_member(after_bracket)?
        } else {
            return None;
        };
        members.push(member);
        rest = tail;
    }
    Some(members)
}

/// A member name runs to the next `.` or `[`; an empty name is malformed.
fn dotted_member(text: &str) -> Option<(String, &str)> {
    let end = text.find(['.', '[']).unwrap_or(text.len());
    if end == 0 {
        return None;
    }
    Some((text[..end].to_owned(), &text[end..]))
}

/// `[0]` is an array index; `['x']` / `["x"]` a member whose name may hold dots.
fn bracketed_member(text: &str) -> Option<(String, &str)> {
    if let Some(quote) = text.chars().next().filter(|c| *c == '\'' || *c == '"') {
        let body = &text[1..];
        let close = body.find(quote)?;
        let tail = body[close + 1..].strip_prefix(']')?;
        return Some((body[..close].to_owned(), tail));
    }
    let close = text.find(']')?;
    let index = &text[..close];
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((index.to_owned(), &text[close + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_paths_become_pointers() {
        let legacy = LocationSyntax::Legacy;
        assert_eq!(
            legacy.to_pointer("steps[1].then[0].with.amount").as_deref(),
            Some("/steps/1/then/0/with/amount")
        );
        assert_eq!(legacy.to_pointer("steps[0]").as_deref(), Some("/steps/0"));
        assert_eq!(
            legacy.to_pointer("steps[1].when.and[0]").as_deref(),
            Some("/steps/1/when/and/0")
        );
        assert_eq!(legacy.to_pointer("").as_deref(), Some(""));
    }

    #[test]
    fn jsonpath_paths_become_pointers() {
        let jsonpath = LocationSyntax::Jsonpath;
        assert_eq!(
            jsonpath
                .to_pointer("$.steps[1].then[0].with.amount")
                .as_deref(),
            Some("/steps/1/then/0/with/amount")
        );
        assert_eq!(jsonpath.to_pointer("$").as_deref(), Some(""));
        assert_eq!(
            jsonpath.to_pointer("$.steps[0].with['a.b']").as_deref(),
            Some("/steps/0/with/a.b")
        );
        assert_eq!(
            jsonpath.to_pointer("steps[0]"),
            None,
            "root marker required"
        );
    }

    #[test]
    fn tokens_are_escaped_per_rfc_6901() {
        assert_eq!(
            LocationSyntax::Legacy
                .to_pointer("steps[0].with.a/b~c")
                .as_deref(),
            Some("/steps/0/with/a~1b~0c")
        );
        assert_eq!(escape("~1"), "~01");
    }

    #[test]
    fn malformed_locations_do_not_resolve() {
        let legacy = LocationSyntax::Legacy;
        for bad in [
            "steps[",
            "steps[x]",
            "steps..with",
            "steps[0]with",
            "steps[]",
        ] {
            assert_eq!(legacy.to_pointer(bad), None, "{bad}");
        }
    }
}
