//! Expressions: `$.input…`, `$.context.<k>…`, `$.steps.<id>.output…`, `$.item…` and
//! `$.vars.<as>…`, with array positions written as `.0`.
//!
//! A string is an expression exactly when it starts with `$.`; anything else is a
//! literal. Parsing is deliberately strict (no brackets, no blanks, no empty
//! segments) so that a typo is reported instead of silently resolving to null.

use serde_json::Value;

/// The marker that turns a string into an expression.
pub const PREFIX: &str = "$.";

/// What an expression starts from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Root {
    /// `$.input` — the run input.
    Input,
    /// `$.context.<key>` — a key of the request's context object.
    Context(String),
    /// `$.steps.<id>.output` — the output of an earlier step.
    Step(String),
    /// `$.item` — the item of the innermost loop.
    Item,
    /// `$.vars.<as>` — the item of an enclosing loop, by its `as` name.
    Var(String),
}

/// A parsed expression: its root and the member path below it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expr {
    pub text: String,
    pub root: Root,
    pub path: Vec<String>,
}

/// True when the string is meant as an expression (whether or not it parses).
pub fn is_expression(text: &str) -> bool {
    text.starts_with(PREFIX)
}

impl Expr {
    /// Parses an expression; `None` means "cannot parse".
    pub fn parse(text: &str) -> Option<Expr> {
        let rest = text.strip_prefix(PREFIX)?;
        let segments: Vec<&str> = rest.split('.').collect();
        if !segments.iter().all(|s| valid_segment(s)) {
            return None;
        }
        let owned = |s: &[&str]| s.iter().map(|x| (*x).to_owned()).collect::<Vec<_>>();
        let (root, path) = match segments.as_slice() {
            ["input", rest @ ..] => (Root::Input, owned(rest)),
            ["context", key, rest @ ..] => (Root::Context((*key).to_owned()), owned(rest)),
            ["steps", id, "output", rest @ ..] => (Root::Step((*id).to_owned()), owned(rest)),
            ["item", rest @ ..] => (Root::Item, owned(rest)),
            ["vars", name, rest @ ..] => (Root::Var((*name).to_owned()), owned(rest)),
            _ => return None,
        };
        Some(Expr {
            text: text.to_owned(),
            root,
            path,
        })
    }
}

fn valid_segment(segment: &str) -> bool {
    !segment.is_empty()
        && !segment
            .chars()
            .any(|c| c.is_whitespace() || c == '[' || c == ']')
}

/// Follows a member path into a value: object keys by name, array items by decimal
/// position. Anything missing yields `None` (the runner turns that into null).
pub fn walk<'a>(mut value: &'a Value, path: &[String]) -> Option<&'a Value> {
    for segment in path {
        value = match value {
            Value::Object(map) => map.get(segment)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_every_root() {
        let e = Expr::parse("$.steps.a.output.x.0").expect("parses");
        assert_eq!(e.root, Root::Step("a".into()));
        assert_eq!(e.path, vec!["x", "0"]);
        assert_eq!(Expr::parse("$.input").map(|e| e.root), Some(Root::Input));
        assert_eq!(
            Expr::parse("$.context.k.v").map(|e| e.root),
            Some(Root::Context("k".into()))
        );
        assert_eq!(Expr::parse("$.item.id").map(|e| e.root), Some(Root::Item));
        assert_eq!(
            Expr::parse("$.vars.c.id").map(|e| e.root),
            Some(Root::Var("c".into()))
        );
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in [
            "$.",
            "$.steps.a",
            "$.steps.a.result",
            "$.input..a",
            "$.input.a[0]",
            "$.nope",
            "$.context",
            "$.vars",
            "$.input.a b",
            "input.a",
        ] {
            assert!(Expr::parse(bad).is_none(), "{bad} should not parse");
        }
    }

    #[test]
    fn walks_objects_and_arrays() {
        let v = json!({"a": [{"b": 1}]});
        let path: Vec<String> = vec!["a".into(), "0".into(), "b".into()];
        assert_eq!(walk(&v, &path), Some(&json!(1)));
        assert_eq!(walk(&v, &["a".into(), "9".into()]), None);
        assert_eq!(walk(&v, &["a".into(), "x".into()]), None);
    }
}
