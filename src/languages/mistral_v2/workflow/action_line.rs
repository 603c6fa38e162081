//! The inline form of a task's action, `action: NAME key=value ...`:
//! its name and parameters with their columns, and which inline values
//! Mistral keeps as written.

use super::super::document::{Node, NodeKind};
use super::{ActionCall, InlineParam};
use crate::pilotage::text_range::{Position, TextRange};

/// Splits `action:` into its name and inline parameters.
pub(super) fn action_call(node: &Node) -> Option<ActionCall> {
    let text = node.as_str()?;
    // Offsets into the text map to columns only for a plain one-line
    // scalar, whose value is exactly what was written.
    let exact = matches!(node.kind, NodeKind::Scalar { plain: true, .. }) && !text.contains('\n');
    let at = |from: usize, to: usize| {
        if !exact {
            return node.range;
        }
        let col = |i: usize| node.range.start.column + text[..i].chars().count();
        TextRange {
            start: Position {
                line: node.range.start.line,
                column: col(from),
            },
            end: Position {
                line: node.range.start.line,
                column: col(to).saturating_sub(1).max(col(from)),
            },
        }
    };
    let lead = text.len() - text.trim_start().len();
    let name_end = text[lead..]
        .find(char::is_whitespace)
        .map_or(text.len(), |i| lead + i);
    let name = text[lead..name_end].to_string();
    if name.is_empty() {
        return None;
    }
    let mut params = Vec::new();
    let bytes = text.as_bytes();
    // Every step moves `i` forward by at least one whole character.
    let char_len = |i: usize| text[i..].chars().next().map_or(1, char::len_utf8);
    let mut i = name_end;
    while i < text.len() {
        if text[i..].starts_with(char::is_whitespace) {
            i += char_len(i);
            continue;
        }
        let start = i;
        let key_end = text[i..]
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
            .map_or(text.len(), |k| i + k);
        if key_end == start || bytes.get(key_end) != Some(&b'=') {
            // Not `key=value`: skip the word (Mistral ignores it too).
            let next = i + char_len(i);
            i = text[next..]
                .find(char::is_whitespace)
                .map_or(text.len(), |k| next + k);
            continue;
        }
        let value_start = key_end + 1;
        let value_end = value_end(text, value_start);
        let raw = text[value_start..value_end].to_string();
        params.push(InlineParam {
            name: text[start..key_end].to_string(),
            kept: kept(&raw),
            raw,
            range: at(start, value_end),
        });
        i = if value_end > value_start {
            value_end
        } else {
            value_start
        };
    }
    Some(ActionCall {
        name,
        name_range: at(lead, name_end),
        params,
    })
}

/// Where an inline value starting at `from` ends (exclusive byte offset).
fn value_end(text: &str, from: usize) -> usize {
    let rest = &text[from..];
    let closing = |open: &str, close: &str| {
        rest.strip_prefix(open)
            .and_then(|r| r.find(close))
            .map(|k| from + open.len() + k + close.len())
    };
    let end = if rest.starts_with("<%") {
        closing("<%", "%>")
    } else if rest.starts_with("{{") {
        closing("{{", "}}")
    } else if rest.starts_with('\'') {
        closing("'", "'")
    } else if rest.starts_with('"') {
        closing("\"", "\"")
    } else if rest.starts_with('[') || rest.starts_with('{') {
        balanced(rest).map(|k| from + k)
    } else {
        None
    };
    end.unwrap_or_else(|| {
        rest.find(char::is_whitespace)
            .map_or(text.len(), |k| from + k)
    })
}

/// The end of a bracketed value, counting brackets outside quotes.
fn balanced(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Some(i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whether Mistral keeps an inline value as written (see
/// [`InlineParam::kept`]). Its inline-parameter pattern accepts digits
/// only as numbers: `-3` and `True` are dropped, `0.5` is read as `0`
/// (measured against Mistral 23.0.0).
fn kept(raw: &str) -> bool {
    let quoted =
        |open: char, close: char| raw.len() >= 2 && raw.starts_with(open) && raw.ends_with(close);
    quoted('\'', '\'')
        || quoted('"', '"')
        || quoted('[', ']')
        || quoted('{', '}')
        || (raw.starts_with("<%") && raw.ends_with("%>"))
        || matches!(raw, "true" | "false" | "null")
        || (!raw.is_empty() && raw.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::super::super::document;
    use super::*;

    #[test]
    fn inline_values_mistral_keeps() {
        for raw in [
            "'a b'",
            "\"x\"",
            "<% $.x %>",
            "{{ 1 + 1 }}",
            "[1, 2]",
            "{\"a\": 1}",
            "true",
            "null",
            "12",
        ] {
            assert!(kept(raw), "{raw}");
        }
        for raw in ["red", "a.b", "yes", "True", "1a", "-3", "0.5", ""] {
            assert!(!kept(raw), "{raw}");
        }
        let text = "a: 'std.http url=''http://x/a b'' body={\"k\": [1, \"}\"]} n=<% 1 + 2 %>'";
        let doc = document::parse(text).unwrap().unwrap();
        let call = action_call(doc.get("a").unwrap()).unwrap();
        assert_eq!(call.name, "std.http");
        let raws: Vec<_> = call.params.iter().map(|p| p.raw.as_str()).collect();
        assert_eq!(
            raws,
            ["'http://x/a b'", "{\"k\": [1, \"}\"]}", "<% 1 + 2 %>"]
        );
    }
}
