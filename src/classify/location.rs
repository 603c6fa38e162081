//! Conversion of the engine's location strings into RFC 6901 JSON Pointers.
//!
//! Engines name the offending node in their own path syntax; Pilotage diagnostics
//! carry a JSON Pointer. Each rule file declares which syntax its engine dialect uses
//! (`location_syntax` at the top of the file), so adapting a new engine is a TOML edit:
//!
//! ```toml
//! location_syntax = "legacy"      # steps[1].then[0].with.amount
//! location_syntax = "jsonpath"    # $.steps[1].then[0].with.amount
//! # described by its parts: flow.steps.1.then.0.with.amount
//! location_syntax = { root = "flow", separator = ".", index = "segment", index_base = 0 }
//! # or a pattern whose named captures fill a pointer template
//! location_syntax = { pattern = '^node (?P<i>\d+) arg (?P<arg>\w+)$', pointer = "/steps/{i}/with/{arg}" }
//! # a text language, whose adapter already hands over `@LINE:COL-LINE:COL`
//! location_syntax = "text-range"
//! # a JSON language, whose adapter already hands over JSON Pointers
//! location_syntax = "json-pointer"
//! ```

use regex::Regex;
use serde::Deserialize;

/// How indexes are written in a parts-described syntax.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexForm {
    /// `steps[1]` (quoted members `['a.b']` too).
    Bracket,
    /// `steps.1`: an all-digit segment is an index.
    Segment,
    /// Either form.
    Both,
}

/// A location syntax described by its parts.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LocationParts {
    /// A leading root segment to strip (`$`, `flow`); empty: none. When set, a
    /// location without it does not resolve.
    #[serde(default)]
    pub root: String,
    /// What separates members (usually `.`; `/` for slash paths).
    #[serde(default = "dot")]
    pub separator: String,
    #[serde(default = "bracket")]
    pub index: IndexForm,
    /// The engine's first index (0 or 1); pointers always count from 0.
    #[serde(default)]
    pub index_base: u64,
}

fn dot() -> String {
    ".".into()
}
fn bracket() -> IndexForm {
    IndexForm::Bracket
}

/// The path syntax an engine dialect uses in its location field.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "RawSyntax")]
pub enum LocationSyntax {
    Parts(LocationParts),
    /// A regex over the whole location whose named captures fill `pointer`
    /// (`{name}` placeholders; each capture is escaped as one reference token).
    Pattern {
        regex: Regex,
        pointer: String,
    },
    /// A text language's locators (`crate::pilotage::text_range`): the
    /// adapter has already located the problem in the program's text, so a
    /// well-formed range passes through unchanged and anything else does
    /// not resolve.
    TextRange,
    /// A JSON language's locators: the adapter hands over RFC 6901 JSON
    /// Pointers into the program, which pass through unchanged (`""` or
    /// `/...`; anything else does not resolve).
    JsonPointer,
}

impl Default for LocationSyntax {
    fn default() -> Self {
        LocationSyntax::Parts(LocationParts {
            root: String::new(),
            separator: ".".into(),
            index: IndexForm::Bracket,
            index_base: 0,
        })
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawSyntax {
    Named(String),
    Pattern { pattern: String, pointer: String },
    Parts(LocationParts),
}

impl TryFrom<RawSyntax> for LocationSyntax {
    type Error = String;

    fn try_from(raw: RawSyntax) -> Result<Self, String> {
        match raw {
            RawSyntax::Named(name) => match name.as_str() {
                "legacy" => Ok(LocationSyntax::default()),
                "jsonpath" => Ok(LocationSyntax::Parts(LocationParts {
                    root: "$".into(),
                    ..parts_of(LocationSyntax::default())
                })),
                "text-range" => Ok(LocationSyntax::TextRange),
                "json-pointer" => Ok(LocationSyntax::JsonPointer),
                other => Err(format!(
                    "unknown location_syntax '{other}': use \"legacy\", \"jsonpath\", \"text-range\", \"json-pointer\", a table of parts \
                     {{ root, separator, index, index_base }} or {{ pattern, pointer }}"
                )),
            },
            RawSyntax::Parts(parts) => {
                if parts.separator.is_empty() {
                    return Err(
                        "location_syntax.separator is empty: name the character between members"
                            .into(),
                    );
                }
                if parts.index_base > 1 {
                    return Err(format!(
                        "location_syntax.index_base = {}: engines count from 0 or 1",
                        parts.index_base
                    ));
                }
                Ok(LocationSyntax::Parts(parts))
            }
            RawSyntax::Pattern { pattern, pointer } => {
                let regex = Regex::new(&pattern)
                    .map_err(|e| format!("location_syntax.pattern does not compile: {e}"))?;
                for name in placeholders(&pointer) {
                    if !regex.capture_names().flatten().any(|n| n == name) {
                        return Err(format!(
                            "location_syntax.pointer names {{{name}}}, which the pattern does not capture"
                        ));
                    }
                }
                if !pointer.is_empty() && !pointer.starts_with('/') {
                    return Err(format!(
                        "location_syntax.pointer '{pointer}' must start with '/' (or be empty for the root)"
                    ));
                }
                Ok(LocationSyntax::Pattern { regex, pointer })
            }
        }
    }
}

fn parts_of(syntax: LocationSyntax) -> LocationParts {
    match syntax {
        LocationSyntax::Parts(p) => p,
        LocationSyntax::Pattern { .. }
        | LocationSyntax::TextRange
        | LocationSyntax::JsonPointer => {
            unreachable!("the default syntax is described by parts")
        }
    }
}

/// The `{name}` placeholders of a pointer template.
fn placeholders(template: &str) -> impl Iterator<Item = &str> {
    template
        .split('{')
        .skip(1)
        .filter_map(|piece| piece.split_once('}').map(|(name, _)| name))
}

impl LocationSyntax {
    /// Converts an engine location into a JSON Pointer (`/steps/1/then/0/with/amount`).
    ///
    /// Returns `None` when the location does not follow the syntax, so the rule's
    /// locator chain can fall through to its next source instead of inventing
    /// coordinates. An empty location (or a bare root) is the document root, `""`.
    pub fn to_pointer(&self, location: &str) -> Option<String> {
        match self {
            LocationSyntax::Parts(parts) => {
                let members = parts_members(parts, location)?;
                Some(members.iter().map(|m| format!("/{}", escape(m))).collect())
            }
            LocationSyntax::Pattern { regex, pointer } => {
                let captures = regex.captures(location)?;
                let mut out = String::new();
                let mut rest = pointer.as_str();
                while let Some(open) = rest.find('{') {
                    out.push_str(&rest[..open]);
                    let close = rest[open..].find('}')? + open;
                    let value = captures.name(&rest[open + 1..close])?.as_str();
                    out.push_str(&escape(value));
                    rest = &rest[close + 1..];
                }
                out.push_str(rest);
                Some(out)
            }
            LocationSyntax::TextRange => crate::pilotage::text_range::TextRange::decode(location)
                .map(|_| location.to_string()),
            LocationSyntax::JsonPointer => is_pointer(location).then(|| location.to_string()),
        }
    }
}

/// Whether `text` is an RFC 6901 JSON Pointer: empty, or `/`-separated
/// tokens where `~` is only ever `~0` or `~1`.
fn is_pointer(text: &str) -> bool {
    (text.is_empty() || text.starts_with('/'))
        && text
            .split('~')
            .skip(1)
            .all(|rest| rest.starts_with('0') || rest.starts_with('1'))
}

/// Escapes one reference token per RFC 6901 (`~` first, so `/` → `~1` stays intact).
pub fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The members of a parts-described location, indexes rebased to 0.
fn parts_members(parts: &LocationParts, location: &str) -> Option<Vec<String>> {
    let mut rest = location;
    if !parts.root.is_empty() {
        rest = rest.strip_prefix(parts.root.as_str())?;
        if rest.is_empty() {
            return Some(Vec::new());
        }
        // After the root comes a separator or a bracket.
        if !rest.starts_with('[') || parts.index == IndexForm::Segment {
            rest = rest.strip_prefix(parts.separator.as_str())?;
        }
    } else if rest.is_empty() {
        return Some(Vec::new());
    }
    let brackets = parts.index != IndexForm::Segment;
    let segment_indexes = parts.index != IndexForm::Bracket;
    let mut members = Vec::new();
    let mut first = true;
    while !rest.is_empty() || first {
        if brackets && let Some(after) = rest.strip_prefix('[') {
            let (member, tail, is_index) = bracketed_member(after)?;
            members.push(if is_index {
                rebase(&member, parts.index_base)?
            } else {
                member
            });
            rest = tail;
            first = false;
            continue;
        }
        if !first {
            rest = rest.strip_prefix(parts.separator.as_str())?;
        }
        first = false;
        let end = member_end(rest, &parts.separator, brackets);
        if end == 0 {
            return None;
        }
        let member = &rest[..end];
        members.push(
            if segment_indexes && member.bytes().all(|b| b.is_ascii_digit()) {
                rebase(member, parts.index_base)?
            } else {
                member.to_owned()
            },
        );
        rest = &rest[end..];
    }
    Some(members)
}

/// A member runs to the next separator (or `[` when brackets are indexes).
fn member_end(text: &str, separator: &str, brackets: bool) -> usize {
    let at_separator = text.find(separator).unwrap_or(text.len());
    let at_bracket = if brackets {
        text.find('[').unwrap_or(text.len())
    } else {
        text.len()
    };
    at_separator.min(at_bracket)
}

/// An engine index minus its base; an index below the base does not resolve.
fn rebase(index: &str, base: u64) -> Option<String> {
    let n: u64 = index.parse().ok()?;
    n.checked_sub(base).map(|n| n.to_string())
}

/// `[0]` is an array index; `['x']` / `["x"]` a member whose name may hold dots.
fn bracketed_member(text: &str) -> Option<(String, &str, bool)> {
    if let Some(quote) = text.chars().next().filter(|c| *c == '\'' || *c == '"') {
        let body = &text[1..];
        let close = body.find(quote)?;
        let tail = body[close + 1..].strip_prefix(']')?;
        return Some((body[..close].to_owned(), tail, false));
    }
    let close = text.find(']')?;
    let index = &text[..close];
    if index.is_empty() || !index.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((index.to_owned(), &text[close + 1..], true))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syntax(toml_value: &str) -> LocationSyntax {
        #[derive(Deserialize)]
        struct File {
            location_syntax: LocationSyntax,
        }
        toml::from_str::<File>(&format!("location_syntax = {toml_value}"))
            .unwrap()
            .location_syntax
    }

    #[test]
    fn text_ranges_pass_through_and_nothing_else_resolves() {
        let text = syntax("\"text-range\"");
        assert_eq!(text.to_pointer("@4:5-6:12").as_deref(), Some("@4:5-6:12"));
        for bad in ["", "steps[0]", "/tasks/t1", "@0:1-1:1", "@3:1-2:1", "@1:1"] {
            assert_eq!(text.to_pointer(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn json_pointers_pass_through_and_nothing_else_resolves() {
        let pointer = syntax("\"json-pointer\"");
        for good in ["", "/nodes/1/type", "/connections/a~1b/main/0", "/x/~0"] {
            assert_eq!(pointer.to_pointer(good).as_deref(), Some(good), "{good:?}");
        }
        for bad in ["nodes/1", "$.nodes[1]", "/a~2b", "@1:1-1:2"] {
            assert_eq!(pointer.to_pointer(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn legacy_paths_become_pointers() {
        let legacy = syntax("\"legacy\"");
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
        let jsonpath = syntax("\"jsonpath\"");
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
    fn a_root_segment_dots_and_numeric_segments_are_described_by_parts() {
        let parts = syntax(r#"{ root = "flow", separator = ".", index = "segment" }"#);
        assert_eq!(
            parts
                .to_pointer("flow.steps.1.then.0.with.amount")
                .as_deref(),
            Some("/steps/1/then/0/with/amount")
        );
        assert_eq!(parts.to_pointer("flow").as_deref(), Some(""));
        assert_eq!(parts.to_pointer("steps.1"), None, "the root is required");
        let one_based = syntax(r#"{ separator = "/", index = "segment", index_base = 1 }"#);
        assert_eq!(
            one_based.to_pointer("steps/2/then/1").as_deref(),
            Some("/steps/1/then/0")
        );
        assert_eq!(one_based.to_pointer("steps/0"), None, "below the base");
    }

    #[test]
    fn a_pattern_fills_a_pointer_template() {
        let pattern = syntax(
            r#"{ pattern = '^node (?P<i>\d+) arg (?P<arg>\S+)$', pointer = "/steps/{i}/with/{arg}" }"#,
        );
        assert_eq!(
            pattern.to_pointer("node 3 arg a/b").as_deref(),
            Some("/steps/3/with/a~1b")
        );
        assert_eq!(pattern.to_pointer("step 3"), None);
    }

    #[test]
    fn bad_syntaxes_are_refused_with_the_reason() {
        #[derive(Deserialize, Debug)]
        struct File {
            #[allow(dead_code)]
            location_syntax: LocationSyntax,
        }
        for (bad, why) in [
            ("\"xpath\"", "unknown location_syntax"),
            (r#"{ pattern = '(', pointer = "" }"#, "does not compile"),
            (
                r#"{ pattern = '(?P<a>x)', pointer = "/{b}" }"#,
                "does not capture",
            ),
            (r#"{ separator = "" }"#, "empty"),
            (r#"{ index_base = 2 }"#, "0 or 1"),
        ] {
            let err = toml::from_str::<File>(&format!("location_syntax = {bad}"))
                .unwrap_err()
                .to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn tokens_are_escaped_per_rfc_6901() {
        assert_eq!(
            syntax("\"legacy\"")
                .to_pointer("steps[0].with.a/b~c")
                .as_deref(),
            Some("/steps/0/with/a~1b~0c")
        );
        assert_eq!(escape("~1"), "~01");
    }

    #[test]
    fn malformed_locations_do_not_resolve() {
        let legacy = syntax("\"legacy\"");
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
