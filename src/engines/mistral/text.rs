//! Reading Mistral's texts: only the first line of an error is stable (the
//! rest is a traceback or a schema dump that must never reach an agent),
//! YAML errors carry 1-based `line N, column M` marks, and many fields are
//! JSON encoded inside strings.

use crate::pilotage::text_range::{Position, TextRange};
use serde_json::Value;

/// The first line of `text`, trimmed (a trailing `:` that introduces the
/// traceback is kept: it is part of Mistral's stable line).
pub fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_string()
}

/// The locator (`@L:C-L:C`) of a YAML error in `program`: the first line's
/// own mark when it has one, else the last `line N, column M` mark of the
/// text (where the parser stopped), kept inside the program's text. `None`
/// when the error names no position.
pub fn yaml_location(error: &str, program: &str) -> Option<String> {
    let first = first_line(error);
    let mark = marks(&first).pop().or_else(|| marks(error).pop())?;
    let whole = TextRange::whole(program);
    let at = if mark > whole.end { whole.end } else { mark };
    Some(TextRange { start: at, end: at }.encode())
}

/// Every `line N, column M` mark of `text`, in order.
fn marks(text: &str) -> Vec<Position> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("line ") {
        rest = &rest[i + 5..];
        let digits = |s: &str| -> Option<(usize, usize)> {
            let n = s.chars().take_while(char::is_ascii_digit).count();
            Some((s[..n].parse().ok()?, n))
        };
        let Some((line, n)) = digits(rest) else {
            continue;
        };
        let Some(after) = rest[n..].strip_prefix(", column ") else {
            continue;
        };
        let Some((column, _)) = digits(after) else {
            continue;
        };
        if line >= 1 && column >= 1 {
            out.push(Position { line, column });
        }
    }
    out
}

/// JSON encoded inside a string, decoded; anything else as it is.
pub fn decode(value: Option<&Value>) -> Value {
    match value {
        Some(Value::String(s)) => {
            serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone()))
        }
        Some(v) => v.clone(),
        None => Value::Null,
    }
}

/// The first line of an optional text field (`None` when absent or empty).
pub fn first_line_of(value: Option<&Value>) -> Option<String> {
    value
        .and_then(Value::as_str)
        .map(first_line)
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const BLOCK: &str = "Definition could not be parsed: while parsing a block mapping\n  in \"<unicode string>\", line 4, column 5:\n        t1:\n        ^\nexpected <block end>, but found '<block mapping start>'\n  in \"<unicode string>\", line 6, column 6:\n         publish: {}\n         ^";

    #[test]
    fn yaml_errors_are_located_where_the_parser_stopped() {
        let program =
            "version: '2.0'\nwf:\n  tasks:\n    t1:\n      action: std.noop\n     publish: {}\n";
        assert_eq!(
            first_line(BLOCK),
            "Definition could not be parsed: while parsing a block mapping"
        );
        assert_eq!(yaml_location(BLOCK, program).as_deref(), Some("@6:6-6:6"));
    }

    #[test]
    fn a_mark_past_the_end_stays_inside_the_text() {
        let error = "Definition could not be parsed: while parsing a flow node\n  in \"<unicode string>\", line 3, column 1:";
        assert_eq!(
            yaml_location(error, "a: [\nb\n").as_deref(),
            Some("@2:1-2:1")
        );
    }

    #[test]
    fn errors_without_marks_have_no_location() {
        assert_eq!(yaml_location("Task 't2' not found.", "x: 1\n"), None);
        assert_eq!(
            yaml_location(
                "Invalid DSL: 'version' is a required property\n\nFailed validating 'required' in schema:",
                "x: 1\n"
            ),
            None
        );
    }

    #[test]
    fn json_inside_strings_is_decoded_once() {
        assert_eq!(decode(Some(&json!("{\"a\": 1}"))), json!({"a": 1}));
        assert_eq!(decode(Some(&json!("\"hi\""))), json!("hi"));
        assert_eq!(decode(Some(&json!("not json"))), json!("not json"));
        assert_eq!(decode(Some(&json!(3))), json!(3));
        assert_eq!(decode(None), Value::Null);
    }
}
