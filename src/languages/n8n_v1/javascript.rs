//! JavaScript in a workflow: the `{{ … }}` expressions of parameter strings
//! and the bodies of Code nodes, checked for syntax with `oxc_parser` (the
//! parser only: no type analysis), the `$` variables an expression reads
//! and the methods it calls ([`names`]), and the node references they make (`$('Name')`,
//! `$node["Name"]`, `$node.Name`, `$items('Name')`).
//!
//! n8n runs a Code node's `jsCode` as the body of an async function and an
//! expression as one JavaScript expression, so each is parsed wrapped that
//! way: `return` and `await` at the top of a Code body are allowed.

use super::dollar_names::FreeNames;
use oxc_allocator::Allocator;
use oxc_parser::Parser;
use oxc_span::SourceType;
use regex::Regex;
use std::sync::LazyLock;

/// Why `body` (a Code node's `jsCode`) is not a valid function body.
pub fn function_body_error(body: &str) -> Option<String> {
    syntax_error(&format!("(async function () {{\n{body}\n}});"))
}

/// Why `expression` (the inside of one `{{ … }}`) is not one valid
/// JavaScript expression.
pub fn expression_error(expression: &str) -> Option<String> {
    if expression.trim().is_empty() {
        return Some("the expression is empty".into());
    }
    syntax_error(&format!("(\n{expression}\n);"))
}

/// Sources up to this many bytes are parsed on the caller's stack: even
/// nested as deep as their length allows, they need far less than a
/// thread's smallest stack.
const INLINE_PARSE_BYTES: usize = 256;
/// Stack reserved per byte of a longer source: the parser descends once
/// per nesting level, a level can be one byte (`(((…`), and a level takes
/// about 1.5 KiB of stack in a debug build (less in release).
const STACK_PER_BYTE: usize = 4 * 1024;
/// The largest stack reserved for one parse (virtual memory: only what
/// the parse touches is used). Longer sources are not checked.
const MAX_PARSE_STACK: usize = 512 << 20;

/// The parser's first error in `source`.
fn syntax_error(source: &str) -> Option<String> {
    on_a_fitting_stack(source, parse).flatten()
}

/// The names `expression` (the inside of one `{{ … }}`) reads without
/// giving them itself: every `$` variable it uses (`$json` and `$`
/// included) and every method it calls. None when it does not parse (that
/// is a finding of its own).
pub fn names(expression: &str) -> FreeNames {
    on_a_fitting_stack(
        &format!("(\n{expression}\n);"),
        super::dollar_names::free_names,
    )
    .unwrap_or_default()
}

/// `work` on `source`, on a stack that fits it. The parser (and a walk of
/// its tree) recurses without a depth limit, so a longer source is handled
/// on a thread whose stack fits its worst case: a deeply nested program
/// must never overflow the gateway's own stack. `None` for a source too
/// long for that: it is not checked.
fn on_a_fitting_stack<T: Send + 'static>(source: &str, work: fn(&str) -> T) -> Option<T> {
    if source.len() <= INLINE_PARSE_BYTES {
        return Some(work(source));
    }
    let stack = source.len().checked_mul(STACK_PER_BYTE)?;
    if stack > MAX_PARSE_STACK {
        tracing::debug!(
            bytes = source.len(),
            "JavaScript too long to parse safely; not checked"
        );
        return None;
    }
    let owned = source.to_string();
    std::thread::Builder::new()
        .name("javascript-parse".into())
        .stack_size(stack.max(8 << 20))
        .spawn(move || work(&owned))
        .ok()?
        .join()
        .ok()
}

fn parse(source: &str) -> Option<String> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, source, SourceType::script()).parse();
    if let Some(first) = parsed.errors.first() {
        return Some(first.message.to_string());
    }
    parsed
        .panicked
        .then(|| "the parser stopped before the end".to_string())
}

/// The expressions of a parameter string: `Ok` with the inside of every
/// `{{ … }}`, or `Err` when a `{{` never closes. Only a string starting
/// with `=` is an expression in n8n; any other string is literal text.
pub fn expressions(value: &str) -> Result<Vec<&str>, UnclosedExpression> {
    let Some(template) = value.strip_prefix('=') else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find("{{") {
        let inside = &rest[open + 2..];
        let Some(close) = closing(inside) else {
            return Err(UnclosedExpression);
        };
        out.push(&inside[..close]);
        rest = &inside[close + 2..];
    }
    Ok(out)
}

/// A `{{` with no `}}` after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnclosedExpression;

/// Where the `}}` closing an expression is in `inside`: the first one whose
/// text before it parses, else the first one (n8n's own splitter takes the
/// first `}}`; a later one is tried so `{{ {a: {b: 1}} }}` is no false
/// finding).
fn closing(inside: &str) -> Option<usize> {
    /// Later `}}`s tried: enough for nested object literals, bounded so a
    /// long text of many `}}` costs a few parses only.
    const TRIES: usize = 8;
    let first = inside.find("}}")?;
    let mut at = first;
    for _ in 0..TRIES {
        if expression_error(&inside[..at]).is_none() {
            return Some(at);
        }
        match inside[at + 1..].find("}}") {
            Some(next) => at = at + 1 + next,
            None => break,
        }
    }
    Some(first)
}

/// The node names `source` reads, in order of appearance, with repeats.
pub fn node_references(source: &str) -> Vec<String> {
    static CALL: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r#"\$(?:items)?\(\s*(?:'([^'\\]*)'|"([^"\\]*)"|`([^`\\$]*)`)"#)
            .unwrap_or_else(|e| unreachable!("a fixed pattern: {e}"))
    });
    static LEGACY: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r#"\$node(?:\[\s*(?:'([^'\\]*)'|"([^"\\]*)"|`([^`\\$]*)`)\s*\]|\.([A-Za-z_][A-Za-z0-9_$]*))"#,
        )
        .unwrap_or_else(|e| unreachable!("a fixed pattern: {e}"))
    });
    let mut found: Vec<(usize, String)> = Vec::new();
    for re in [&*CALL, &*LEGACY] {
        for caps in re.captures_iter(source) {
            if let Some(name) = caps.iter().skip(1).flatten().next() {
                found.push((name.start(), name.as_str().to_string()));
            }
        }
    }
    found.sort();
    found.into_iter().map(|(_, name)| name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_bodies_are_function_bodies() {
        assert_eq!(
            function_body_error("const r = await Promise.resolve(1);\nreturn [{json: {r}}];"),
            None
        );
        assert!(function_body_error("const x = ;\nreturn x;").is_some());
        assert!(function_body_error("return [1]; }").is_some());
    }

    #[test]
    fn expressions_are_split_and_parsed() {
        assert_eq!(
            expressions("={{ $json.a }} and {{ 1 + 2 }}"),
            Ok(vec![" $json.a ", " 1 + 2 "])
        );
        assert_eq!(expressions("{{ not an expression"), Ok(vec![]));
        assert_eq!(expressions("={{ 'hello' "), Err(UnclosedExpression));
        assert_eq!(expressions("={{ {a: {b: 1}} }}"), Ok(vec![" {a: {b: 1}} "]));
        assert_eq!(expression_error(" $json.a "), None);
        assert!(expression_error(" 1 + ").is_some());
        assert!(expression_error("  ").is_some());
    }

    #[test]
    fn deep_nesting_is_parsed_without_overflowing_the_stack() {
        // On a thread with a small stack, as a request's task has.
        let deep = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(|| {
                (
                    function_body_error(&format!(
                        "return {}1{};",
                        "(".repeat(20_000),
                        ")".repeat(20_000)
                    )),
                    function_body_error(&format!("return {}1", "!".repeat(30_000))),
                    expression_error(&"[".repeat(30_000)),
                    names(&format!("{}$foo{}", "(".repeat(20_000), ")".repeat(20_000))).dollar,
                )
            })
            .expect("a thread")
            .join()
            .expect("no overflow");
        assert_eq!(deep.0, None);
        assert_eq!(deep.3, ["$foo"]);
        assert_eq!(deep.1, None);
        assert!(deep.2.is_some());
        // Too long to check safely: no finding rather than a guess.
        assert_eq!(function_body_error(&"(".repeat(200_000)), None);
    }

    #[test]
    fn references_in_every_form() {
        let source = r#"$('A').item; $node["B"].json; $node.C.json; $items("D"); $( `E` ); $json.x; $node[name]"#;
        assert_eq!(node_references(source), ["A", "B", "C", "D", "E"]);
    }
}
