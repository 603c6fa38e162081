//! Text-level parsing of one guide file: the front matter and the markdown
//! structure (headings, topic anchors, fenced blocks, the diagnostic-code table).
//!
//! Only the small subset of YAML and markdown the guides use is understood, on
//! purpose: a full parser would accept constructs the loader cannot check, and a
//! guide that silently means something else than it says is worse than a load
//! error.

use std::collections::BTreeSet;

use super::{ErrorKind, Level};

/// A parse failure: the 1-based line in the file and what went wrong.
pub(super) type Failure = (usize, ErrorKind);

/// The keys a front matter block must contain, in the order authors write them.
const KEYS: [&str; 5] = ["id", "title", "level", "topics", "version"];

/// The parsed front matter, plus where the body starts.
#[derive(Debug)]
pub(super) struct FrontMatter {
    pub id: String,
    pub title: String,
    pub level: Level,
    pub level_line: usize,
    pub topics: Vec<String>,
    pub topics_line: usize,
    pub version: String,
    /// Text after the closing `---` line.
    pub body: String,
    /// File line number of the body's first line.
    pub body_first_line: usize,
}

/// Splits `text` into front matter and body and checks every key.
pub(super) fn front_matter(text: &str) -> Result<FrontMatter, Failure> {
    let mut lines = text.split_inclusive('\n').enumerate();
    let mut consumed = match lines.next() {
        Some((_, first)) if first.trim_end() == "---" => first.len(),
        _ => return Err((1, ErrorKind::NoFrontMatter)),
    };
    // (key, value, line); list items are appended to the value of `topics`.
    let mut values: Vec<(String, Value, usize)> = Vec::new();
    let mut closing = None;
    for (index, raw) in lines {
        let number = index + 1;
        consumed += raw.len();
        let line = raw.trim_end();
        if line == "---" {
            closing = Some(number);
            break;
        }
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        if let Some(item) = line.trim_start().strip_prefix("- ") {
            match values.last_mut() {
                Some((key, Value::List(items), _)) if key == "topics" && line.starts_with(' ') => {
                    items.push(unquote(item.trim()).to_string());
                    continue;
                }
                _ => return Err((number, ErrorKind::BadFrontMatterLine(line.to_string()))),
            }
        }
        let Some((key, value)) = line.split_once(':') else {
            return Err((number, ErrorKind::BadFrontMatterLine(line.to_string())));
        };
        let key = key.trim();
        if !KEYS.contains(&key) {
            return Err((number, ErrorKind::UnknownKey(key.to_string())));
        }
        if values.iter().any(|(k, _, _)| k == key) {
            return Err((number, ErrorKind::DuplicateKey(key.to_string())));
        }
        let value = value.trim();
        let value = if key == "topics" {
            Value::List(
                inline_list(value)
                    .ok_or_else(|| (number, ErrorKind::BadFrontMatterLine(line.to_string())))?,
            )
        } else {
            Value::Text(unquote(value).to_string())
        };
        values.push((key.to_string(), value, number));
    }
    let closing = closing.ok_or((text.lines().count().max(1), ErrorKind::UnclosedFrontMatter))?;

    let mut take = |key: &'static str| -> Result<(Value, usize), Failure> {
        let at = values.iter().position(|(k, _, _)| k == key);
        let (_, value, line) = values.swap_remove(at.ok_or((closing, ErrorKind::MissingKey(key)))?);
        if matches!(&value, Value::Text(t) if t.is_empty()) {
            return Err((line, ErrorKind::EmptyValue(key)));
        }
        Ok((value, line))
    };
    let (id, id_line) = take("id")?;
    let (title, _) = take("title")?;
    let (level, level_line) = take("level")?;
    let (topics, topics_line) = take("topics")?;
    let (version, _) = take("version")?;

    let id = id.into_text();
    if !is_name(&id) {
        return Err((id_line, ErrorKind::BadId(id)));
    }
    let level_text = level.into_text();
    let level = Level::parse(&level_text).ok_or((level_line, ErrorKind::BadLevel(level_text)))?;
    let topics = topics.into_list();
    let mut seen = BTreeSet::new();
    for topic in &topics {
        if !is_name(topic) {
            return Err((topics_line, ErrorKind::BadTopicId(topic.clone())));
        }
        if !seen.insert(topic) {
            return Err((topics_line, ErrorKind::DuplicateTopic(topic.clone())));
        }
    }
    Ok(FrontMatter {
        id,
        title: title.into_text(),
        level,
        level_line,
        topics,
        topics_line,
        version: version.into_text(),
        body: text[consumed..].to_string(),
        body_first_line: closing + 1,
    })
}

#[derive(Debug)]
enum Value {
    Text(String),
    List(Vec<String>),
}

impl Value {
    fn into_text(self) -> String {
        match self {
            Value::Text(text) => text,
            Value::List(items) => items.join(", "),
        }
    }
    fn into_list(self) -> Vec<String> {
        match self {
            Value::List(items) => items,
            Value::Text(text) => vec![text],
        }
    }
}

/// `[a, b]` → items; empty → an empty list that `- item` lines may extend.
fn inline_list(value: &str) -> Option<Vec<String>> {
    if value.is_empty() {
        return Some(Vec::new());
    }
    let inner = value.strip_prefix('[')?.strip_suffix(']')?;
    Some(
        inner
            .split(',')
            .map(|item| unquote(item.trim()).to_string())
            .filter(|item| !item.is_empty())
            .collect(),
    )
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|v| v.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

/// Guide ids and topic ids travel in tool arguments and URIs: keep them plain.
pub(super) fn is_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A markdown heading outside code blocks.
#[derive(Debug)]
pub(super) struct Heading {
    pub level: usize,
    /// Heading text without the `{#topic}` anchor.
    pub text: String,
    pub anchor: Option<String>,
    pub line: usize,
    /// Byte offset of the heading line in the body.
    pub start: usize,
}

/// A fenced code block.
#[derive(Debug)]
pub(super) struct Fence {
    /// The info string after the opening fence, e.g. `json workflow`.
    pub info: String,
    pub content: String,
    pub line: usize,
}

/// The markdown structure of a body.
#[derive(Debug, Default)]
pub(super) struct Structure {
    pub headings: Vec<Heading>,
    pub fences: Vec<Fence>,
}

impl Structure {
    /// Byte range of the section opened by `headings[index]`: up to the next
    /// heading of the same or a higher level (`#` or `##` for a `##` section).
    pub fn section(&self, index: usize, body_len: usize) -> (usize, usize) {
        let heading = &self.headings[index];
        let end = self.headings[index + 1..]
            .iter()
            .find(|h| h.level <= heading.level)
            .map_or(body_len, |h| h.start);
        (heading.start, end)
    }
}

/// Finds headings and fenced blocks; headings inside fences are code, not structure.
pub(super) fn structure(body: &str, first_line: usize) -> Result<Structure, Failure> {
    let mut out = Structure::default();
    let mut open: Option<Fence> = None;
    let mut offset = 0;
    for (index, raw) in body.split_inclusive('\n').enumerate() {
        let line_no = first_line + index;
        let line = raw.trim_end();
        let start = offset;
        offset += raw.len();
        if let Some(fence) = open.as_mut() {
            if line.trim_start() == "```" {
                out.fences.extend(open.take());
            } else {
                fence.content.push_str(raw);
            }
            continue;
        }
        if let Some(info) = line.trim_start().strip_prefix("```") {
            open = Some(Fence {
                info: info.trim().to_string(),
                content: String::new(),
                line: line_no,
            });
            continue;
        }
        let level = line.chars().take_while(|&c| c == '#').count();
        if (1..=6).contains(&level) && line[level..].starts_with(' ') {
            let (text, anchor) = split_anchor(line[level..].trim());
            out.headings.push(Heading {
                level,
                text: text.to_string(),
                anchor: anchor.map(str::to_string),
                line: line_no,
                start,
            });
        }
    }
    match open {
        Some(fence) => Err((fence.line, ErrorKind::UnclosedFence)),
        None => Ok(out),
    }
}

/// `Title {#topic}` → (`Title`, Some(`topic`)).
fn split_anchor(text: &str) -> (&str, Option<&str>) {
    if let Some(rest) = text.strip_suffix('}')
        && let Some((title, anchor)) = rest.rsplit_once(" {#")
    {
        return (title.trim_end(), Some(anchor));
    }
    (text, None)
}

/// Reads the code column of a markdown table: rows after the `|---|` separator
/// whose first cell is `` `code` ``. Returns each code with its line.
pub(super) fn code_table(
    section: &str,
    first_line: usize,
) -> Result<Vec<(String, usize)>, Failure> {
    let mut codes = Vec::new();
    let mut past_separator = false;
    for (index, line) in section.lines().enumerate() {
        let line_no = first_line + index;
        let line = line.trim();
        if !line.starts_with('|') {
            // The table ends at the first non-table line after it started.
            if past_separator && !codes.is_empty() {
                break;
            }
            continue;
        }
        let first = line
            .trim_matches('|')
            .split('|')
            .next()
            .unwrap_or("")
            .trim();
        if !past_separator {
            past_separator =
                first.chars().all(|c| matches!(c, '-' | ':' | ' ')) && !first.is_empty();
            continue;
        }
        let code = first
            .strip_prefix('`')
            .and_then(|c| c.strip_suffix('`'))
            .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_lowercase() || ch == '_'))
            .ok_or_else(|| (line_no, ErrorKind::BadDiagnosticRow(line.to_string())))?;
        codes.push((code.to_string(), line_no));
    }
    Ok(codes)
}

/// Replaces `{{guide:ID}}` and `{{guide:ID#TOPIC}}` with the served id of guide
/// ID. `resolve` checks the reference and returns the replacement text.
pub(super) fn expand_references(
    body: &str,
    first_line: usize,
    resolve: impl Fn(&str, Option<&str>) -> Option<String>,
) -> Result<String, Failure> {
    const OPEN: &str = "{{guide:";
    let mut out = String::with_capacity(body.len());
    let mut rest = body;
    while let Some(at) = rest.find(OPEN) {
        let line = first_line + body[..body.len() - rest.len() + at].matches('\n').count();
        out.push_str(&rest[..at]);
        let after = &rest[at + OPEN.len()..];
        let bad = || {
            (
                line,
                ErrorKind::BadGuideReference(after.lines().next().unwrap_or("").to_string()),
            )
        };
        let end = after.find("}}").ok_or_else(bad)?;
        let reference = &after[..end];
        let (id, topic) = match reference.split_once('#') {
            Some((id, topic)) => (id, Some(topic)),
            None => (reference, None),
        };
        out.push_str(&resolve(id, topic).ok_or_else(bad)?);
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}
