//! Inline programs run under a gateway-owned workflow name: the tenant and
//! the content hash, so the same program of the same tenant is one stored
//! workflow and two programs never meet. Only the name's own text range is
//! rewritten (found with the YAML event parser's markers): comments, line
//! numbers and every other byte stay as the caller wrote them, so
//! Mistral's positions still point into the caller's text.

use sha2::{Digest, Sha256};
use yaml_rust2::Event;
use yaml_rust2::parser::Parser;
use yaml_rust2::scanner::TScalarStyle;

/// Where every gateway-owned workflow name starts.
pub const PREFIX: &str = "pilotage_";

/// A document with its workflow renamed.
#[derive(Debug, Clone, PartialEq)]
pub struct Renamed {
    /// The workflow's name as the caller wrote it.
    pub original: String,
    /// The gateway-owned name (under 255 characters, no spaces).
    pub name: String,
    pub text: String,
}

/// Why a document cannot be renamed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenameError {
    #[error("the document is not YAML: {0}")]
    Yaml(String),
    #[error("the document is not a mapping of 'version' and one workflow")]
    NotAMapping,
    #[error("the document defines {0} workflows; a program is exactly one workflow")]
    WorkflowCount(usize),
    #[error("the workflow's name could not be located in the text")]
    Unlocated,
}

/// The gateway-owned name of `text` for `tenant`.
pub fn owned_name(tenant: &str, text: &str) -> String {
    let tenant_hash = hex::encode(Sha256::digest(tenant.as_bytes()));
    let content_hash = hex::encode(Sha256::digest(text.as_bytes()));
    format!("{PREFIX}{}_{}", &tenant_hash[..16], &content_hash[..40])
}

/// `text` with its one workflow renamed to the tenant's owned name.
pub fn rename(tenant: &str, text: &str) -> Result<Renamed, RenameError> {
    let key = workflow_key(text)?;
    let start = byte_offset(text, key.char_index).ok_or(RenameError::Unlocated)?;
    let end = start + source_len(&text[start..], &key).ok_or(RenameError::Unlocated)?;
    let name = owned_name(tenant, text);
    let mut renamed = String::with_capacity(text.len() + name.len());
    renamed.push_str(&text[..start]);
    renamed.push_str(&name);
    renamed.push_str(&text[end..]);
    Ok(Renamed {
        original: key.value,
        name,
        text: renamed,
    })
}

/// A top-level key whose value is a mapping (a workflow).
struct Key {
    value: String,
    style: TScalarStyle,
    char_index: usize,
}

/// The one workflow key of the first document.
fn workflow_key(text: &str) -> Result<Key, RenameError> {
    let mut parser = Parser::new_from_str(text);
    // 0 outside the top mapping, 1 inside it, more inside its values.
    let mut depth = 0usize;
    let mut at_key = true;
    let mut pending: Option<Key> = None;
    let mut workflows = Vec::new();
    loop {
        let (event, mark) = parser
            .next_token()
            .map_err(|e| RenameError::Yaml(e.to_string()))?;
        match event {
            Event::StreamEnd | Event::DocumentEnd => break,
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let mapping = matches!(event, Event::MappingStart(..));
                if depth == 0 && !mapping {
                    return Err(RenameError::NotAMapping);
                }
                if depth == 1 {
                    if at_key {
                        // A collection as a key: no workflow is named so.
                        return Err(RenameError::NotAMapping);
                    }
                    if let Some(key) = pending.take().filter(|k| mapping && k.value != "version") {
                        workflows.push(key);
                    }
                }
                depth += 1;
            }
            Event::MappingEnd | Event::SequenceEnd => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    break;
                }
                if depth == 1 {
                    at_key = true;
                }
            }
            Event::Scalar(value, style, ..) if depth == 1 => {
                if at_key {
                    pending = Some(Key {
                        value,
                        style,
                        char_index: mark.index(),
                    });
                } else {
                    pending = None;
                }
                at_key = !at_key;
            }
            Event::Alias(_) if depth == 1 => {
                pending = None;
                at_key = !at_key;
            }
            Event::Scalar(..) if depth == 0 => return Err(RenameError::NotAMapping),
            _ => {}
        }
    }
    match workflows.len() {
        1 => Ok(workflows.remove(0)),
        n => Err(RenameError::WorkflowCount(n)),
    }
}

/// The byte offset of the `index`-th character.
fn byte_offset(text: &str, index: usize) -> Option<usize> {
    text.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .nth(index)
}

/// How many bytes of `from` (the text at the key's marker) the key spans.
fn source_len(from: &str, key: &Key) -> Option<usize> {
    match key.style {
        TScalarStyle::Plain => from.starts_with(&key.value).then_some(key.value.len()),
        TScalarStyle::SingleQuoted => {
            let body = from.strip_prefix('\'')?;
            let mut chars = body.char_indices().peekable();
            while let Some((i, c)) = chars.next() {
                if c == '\'' {
                    if chars.peek().map(|(_, n)| *n) == Some('\'') {
                        chars.next();
                    } else {
                        return Some(i + 2);
                    }
                }
            }
            None
        }
        TScalarStyle::DoubleQuoted => {
            let body = from.strip_prefix('"')?;
            let mut escaped = false;
            for (i, c) in body.char_indices() {
                match c {
                    _ if escaped => escaped = false,
                    '\\' => escaped = true,
                    '"' => return Some(i + 2),
                    _ => {}
                }
            }
            None
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "---\n# greeting\nversion: '2.0'\n\nhello:\n  input: [name]\n  tasks:\n    greet:\n      action: std.echo output=<% $.name %>\n";

    #[test]
    fn only_the_name_changes() {
        let r = rename("acme", DOC).unwrap();
        assert_eq!(r.original, "hello");
        assert!(
            r.name.starts_with(PREFIX) && r.name.len() < 255,
            "{}",
            r.name
        );
        assert!(!r.name.contains(' '));
        assert_eq!(r.text, DOC.replacen("hello:", &format!("{}:", r.name), 1));
        assert_eq!(r.text.lines().count(), DOC.lines().count());
    }

    #[test]
    fn the_name_depends_on_tenant_and_content() {
        let a = rename("acme", DOC).unwrap().name;
        assert_eq!(a, rename("acme", DOC).unwrap().name);
        assert_ne!(a, rename("other", DOC).unwrap().name);
        let changed = DOC.replace("greeting", "greetings");
        assert_ne!(a, rename("acme", &changed).unwrap().name);
    }

    #[test]
    fn quoted_and_flow_names_are_found() {
        for (doc, original) in [
            (
                "version: '2.0'\n'it''s':\n  tasks: {t: {action: std.noop}}\n",
                "it's",
            ),
            (
                "version: '2.0'\n\"wf\\\"x\": {tasks: {t: {action: std.noop}}}\n",
                "wf\"x",
            ),
            (
                "{version: '2.0', wf: {tasks: {t: {action: std.noop}}}}",
                "wf",
            ),
            (
                "wf:\n  tasks:\n    t:\n      action: std.noop\nversion: '2.0'\n",
                "wf",
            ),
            (
                "version: '2.0'\nnamé:\n  tasks: {t: {action: std.noop}}\n",
                "namé",
            ),
        ] {
            let r = rename("t", doc).unwrap_or_else(|e| panic!("{doc:?}: {e}"));
            assert_eq!(r.original, original, "{doc:?}");
            let again = workflow_key(&r.text).unwrap();
            assert_eq!(again.value, r.name, "{doc:?} -> {:?}", r.text);
        }
    }

    #[test]
    fn documents_without_exactly_one_workflow_are_refused() {
        assert_eq!(
            rename("t", "version: '2.0'\n"),
            Err(RenameError::WorkflowCount(0))
        );
        assert_eq!(
            rename("t", "version: '2.0'\na: {tasks: {}}\nb: {tasks: {}}\n"),
            Err(RenameError::WorkflowCount(2))
        );
        assert_eq!(rename("t", "- a\n- b\n"), Err(RenameError::NotAMapping));
        assert_eq!(rename("t", "just text"), Err(RenameError::NotAMapping));
        assert!(matches!(rename("t", "a: [\n"), Err(RenameError::Yaml(_))));
    }
}
