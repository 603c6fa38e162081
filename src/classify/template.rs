//! Message and hint templates, and close-match hints over caller-visible names.
//!
//! A template is literal text with placeholders:
//! - `{name}`: the regex capture `name`;
//! - `{close_match:name}`: up to three caller-visible names close to the capture;
//! - `{visible:name}`: the capture itself, but only when it is a caller-visible name.
//!
//! Any placeholder may be followed by filters, applied left to right:
//! `{items|split:" / "|join:", "}` turns the capture `a / b / c` into `a, b, c`.
//! Filters: `split:"sep"` (each value into pieces), `join:"sep"` (all values into
//! one), `lower`, `upper`, `trim` (each value; `trim` also drops empty pieces).
//! Several values left at the end are joined with `", "`.
//!
//! `{{` and `}}` stand for literal braces. A template renders to `None` when any
//! placeholder has nothing to show, because a hint with a hole in it misleads more
//! than no hint at all. Only caller-visible names ever reach a hint: engine
//! suggestions may name capabilities another tenant owns.

use regex::Captures;

/// Minimum similarity for a close match. Normalized Damerau–Levenshtein is used
/// rather than Jaro–Winkler because catalog ids share namespace prefixes (`crm.`),
/// which Jaro–Winkler over-rewards.
const CLOSE_MATCH_THRESHOLD: f64 = 0.7;
/// At most this many close matches are offered.
const CLOSE_MATCH_LIMIT: usize = 3;

/// One parsed piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Capture(String, Vec<Filter>),
    CloseMatch(String, Vec<Filter>),
    Visible(String, Vec<Filter>),
}

/// A transformation of a placeholder's values.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Filter {
    Split(String),
    Join(String),
    Lower,
    Upper,
    Trim,
}

impl Filter {
    fn apply(&self, values: Vec<String>) -> Vec<String> {
        match self {
            Filter::Split(sep) => values
                .iter()
                .flat_map(|v| v.split(sep.as_str()).map(str::to_owned))
                .collect(),
            Filter::Join(sep) => vec![values.join(sep)],
            Filter::Lower => values.iter().map(|v| v.to_lowercase()).collect(),
            Filter::Upper => values.iter().map(|v| v.to_uppercase()).collect(),
            Filter::Trim => values
                .iter()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
                .collect(),
        }
    }
}

/// Runs the filters; `None` when nothing is left to show.
fn filtered(values: Vec<String>, filters: &[Filter]) -> Option<String> {
    let values = filters.iter().fold(values, |v, f| f.apply(v));
    let text = values.join(", ");
    (!text.is_empty()).then_some(text)
}

/// A compiled template (see the module documentation for the syntax).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses a template; the error explains what is malformed.
    pub(crate) fn parse(source: &str) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut text = String::new();
        let mut chars = source.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    text.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    text.push('}');
                }
                '{' => {
                    let mut body = String::new();
                    loop {
                        match chars.next() {
                            Some('}') => break,
                            Some(c) => body.push(c),
                            None => {
                                return Err(format!("unterminated '{{' in template {source:?}"));
                            }
                        }
                    }
                    if !text.is_empty() {
                        pieces.push(Piece::Text(std::mem::take(&mut text)));
                    }
                    pieces.push(placeholder(&body, source)?);
                }
                '}' => return Err(format!("unmatched '}}' in template {source:?}")),
                _ => text.push(c),
            }
        }
        if !text.is_empty() {
            pieces.push(Piece::Text(text));
        }
        Ok(Template { pieces })
    }

    /// The capture names the template refers to (validated against the regex at load).
    pub(crate) fn capture_names(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|piece| match piece {
            Piece::Text(_) => None,
            Piece::Capture(name, _) | Piece::CloseMatch(name, _) | Piece::Visible(name, _) => {
                Some(name.as_str())
            }
        })
    }

    /// Renders the template, or `None` when a placeholder resolves to nothing.
    pub(crate) fn render(&self, captures: &Captures<'_>, visible: &[String]) -> Option<String> {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Capture(name, filters) => {
                    let value = non_empty_capture(captures, name)?;
                    out.push_str(&filtered(vec![value.to_owned()], filters)?);
                }
                Piece::CloseMatch(name, filters) => {
                    let matches = close_matches(non_empty_capture(captures, name)?, visible);
                    let matches = matches.into_iter().map(str::to_owned).collect();
                    out.push_str(&filtered(matches, filters)?);
                }
                Piece::Visible(name, filters) => {
                    let value = non_empty_capture(captures, name)?;
                    visible.iter().any(|v| v == value).then_some(())?;
                    out.push_str(&filtered(vec![value.to_owned()], filters)?);
                }
            }
        }
        Some(out)
    }
}

/// Parses the inside of `{...}`: `[function:]capture` then `|filter` parts.
fn placeholder(body: &str, source: &str) -> Result<Piece, String> {
    let mut parts = split_filters(body).into_iter();
    let head = parts.next().unwrap_or_default();
    let filters = parts
        .map(|f| filter(&f, source))
        .collect::<Result<Vec<_>, _>>()?;
    let (function, name) = match head.split_once(':') {
        Some((function, name)) => (Some(function), name),
        None => (None, head.as_str()),
    };
    if !is_capture_name(name) {
        return Err(format!(
            "placeholder {{{body}}} in template {source:?} is not a capture name \
             (letters, digits and '_')"
        ));
    }
    let name = name.to_owned();
    match function {
        None => Ok(Piece::Capture(name, filters)),
        Some("close_match") => Ok(Piece::CloseMatch(name, filters)),
        Some("visible") => Ok(Piece::Visible(name, filters)),
        Some(other) => Err(format!(
            "unknown placeholder function '{other}' in template {source:?} \
             (known: close_match, visible)"
        )),
    }
}

/// Splits a placeholder body on `|` outside double quotes.
fn split_filters(body: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quoted = false;
    for c in body.chars() {
        if c == '|' && !quoted {
            parts.push(String::new());
            continue;
        }
        if c == '"' {
            quoted = !quoted;
        }
        if let Some(part) = parts.last_mut() {
            part.push(c);
        }
    }
    parts
}

/// One filter: `lower`, `upper`, `trim`, `split:"sep"` or `join:"sep"`.
fn filter(text: &str, source: &str) -> Result<Filter, String> {
    let (name, arg) = match text.split_once(':') {
        Some((name, arg)) => (name.trim(), Some(arg.trim())),
        None => (text.trim(), None),
    };
    let quoted = |arg: Option<&str>| -> Result<String, String> {
        arg.and_then(|a| a.strip_prefix('"')?.strip_suffix('"'))
            .map(str::to_owned)
            .ok_or_else(|| {
                format!("filter '{name}' in template {source:?} needs a quoted argument, e.g. {name}:\", \"")
            })
    };
    match (name, arg) {
        ("lower", None) => Ok(Filter::Lower),
        ("upper", None) => Ok(Filter::Upper),
        ("trim", None) => Ok(Filter::Trim),
        ("split", a) => Ok(Filter::Split(quoted(a)?).non_empty(source)?),
        ("join", a) => Ok(Filter::Join(quoted(a)?)),
        _ => Err(format!(
            "unknown filter '{text}' in template {source:?} (known: split:\"sep\", join:\"sep\", lower, upper, trim)"
        )),
    }
}

impl Filter {
    fn non_empty(self, source: &str) -> Result<Filter, String> {
        match &self {
            Filter::Split(sep) if sep.is_empty() => Err(format!(
                "filter split in template {source:?} has an empty separator"
            )),
            _ => Ok(self),
        }
    }
}

/// The regex crate's rule for group names, minus the rarely used `.`, `[` and `]`.
fn is_capture_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && chars.all(|c| c.is_alphanumeric() || c == '_')
}

fn non_empty_capture<'t>(captures: &Captures<'t>, name: &str) -> Option<&'t str> {
    captures
        .name(name)
        .map(|m| m.as_str())
        .filter(|s| !s.is_empty())
}

/// The best (at most three) caller-visible names similar to `wanted`, best first,
/// ties broken alphabetically so the hint is deterministic on every instance.
pub fn close_matches<'a>(wanted: &str, visible: &'a [String]) -> Vec<&'a str> {
    let wanted = wanted.to_lowercase();
    let mut scored: Vec<(f64, &str)> = visible
        .iter()
        .map(|name| {
            let score = strsim::normalized_damerau_levenshtein(&wanted, &name.to_lowercase());
            (score, name.as_str())
        })
        .filter(|(score, _)| *score >= CLOSE_MATCH_THRESHOLD)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(CLOSE_MATCH_LIMIT)
        .map(|(_, name)| name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn render(template: &str, pattern: &str, text: &str, visible: &[String]) -> Option<String> {
        let regex = Regex::new(pattern).unwrap();
        let captures = regex.captures(text).unwrap();
        Template::parse(template)
            .unwrap()
            .render(&captures, visible)
    }

    #[test]
    fn captures_and_escaped_braces_render() {
        let out = render("unknown {{kind}} '{x}'", "(?P<x>\\w+)", "abc", &names(&[]));
        assert_eq!(out.as_deref(), Some("unknown {kind} 'abc'"));
    }

    #[test]
    fn close_matches_come_from_visible_names_only() {
        let visible = names(&["crm.get_customer", "crm.list_orders", "billing.charge"]);
        assert_eq!(
            close_matches("crm.get_custmer", &visible),
            vec!["crm.get_customer"]
        );
        assert!(close_matches("zzz", &visible).is_empty());
    }

    #[test]
    fn close_matches_are_capped_and_ordered() {
        let visible = names(&["abcd1", "abcd2", "abcd3", "abcd4", "abcde"]);
        assert_eq!(
            close_matches("abcde", &visible),
            vec!["abcde", "abcd1", "abcd2"]
        );
    }

    #[test]
    fn a_hint_without_close_match_is_omitted() {
        let visible = names(&["crm.get_customer"]);
        let pattern = "'(?P<c>[^']*)'";
        let template = "close match: {close_match:c}";
        assert_eq!(
            render(template, pattern, "'crm.get_custmer'", &visible).as_deref(),
            Some("close match: crm.get_customer")
        );
        assert_eq!(render(template, pattern, "'nothing_alike'", &visible), None);
    }

    #[test]
    fn visible_placeholder_hides_names_the_caller_cannot_see() {
        let visible = names(&["crm.v2"]);
        let pattern = "use (?P<r>.+)";
        assert_eq!(
            render("use {visible:r}", pattern, "use crm.v2", &visible).as_deref(),
            Some("use crm.v2")
        );
        assert_eq!(
            render("use {visible:r}", pattern, "use secret.v2", &visible),
            None
        );
    }

    #[test]
    fn unmatched_optional_capture_omits_the_text() {
        assert_eq!(render("x{b}", "a(?P<b>z)?", "a", &names(&[])), None);
    }

    #[test]
    fn filters_transform_a_capture() {
        let pattern = "one of (?P<list>.+)$";
        assert_eq!(
            render(
                "one of {list|split:\" / \"|join:\", \"}",
                pattern,
                "one of a / b / c",
                &names(&[])
            )
            .as_deref(),
            Some("one of a, b, c")
        );
        assert_eq!(
            render(
                "{list|split:\"|\"|trim|upper}",
                pattern,
                "one of a | | b ",
                &names(&[])
            )
            .as_deref(),
            Some("A, B")
        );
        assert_eq!(
            render("{list|lower}", pattern, "one of ABC", &names(&[])).as_deref(),
            Some("abc")
        );
        assert_eq!(
            render("{list|trim}", pattern, "one of    ", &names(&[])),
            None,
            "nothing left: the template has a hole"
        );
        let visible = names(&["crm.get_customer", "crm.get_customers"]);
        assert_eq!(
            render(
                "{close_match:c|join:\" or \"}",
                "(?P<c>.+)",
                "crm.get_custmer",
                &visible
            )
            .as_deref(),
            Some("crm.get_customer or crm.get_customers")
        );
        for bad in ["{a|nope}", "{a|split}", "{a|split:\"\"}", "{a|join:x}"] {
            assert!(Template::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn malformed_templates_are_rejected() {
        for bad in [
            "{",
            "{abc",
            "{}",
            "a}",
            "{x y}",
            "{nearest:x}",
            "{close_match:}",
        ] {
            assert!(Template::parse(bad).is_err(), "{bad}");
        }
        let template = Template::parse("{a} {close_match:b} {visible:c}").unwrap();
        assert_eq!(
            template.capture_names().collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
    }
}
