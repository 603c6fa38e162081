//! A positioned YAML tree of one document, built from `yaml-rust2`'s event
//! parser: every node keeps the text range it was written at, and mappings
//! keep every entry in document order, duplicate keys included (YAML loaders
//! keep the last silently; the checks need to see both).
//!
//! Ranges are of the actual text: a node starts at the parser's marker and
//! ends at its last character (for a scalar, the closing quote or the last
//! character of its value; for a collection, its last child or its closing
//! bracket). Nothing here allocates before the caller has checked the
//! program's bounds.

use crate::pilotage::text_range::{Position, TextRange};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// One YAML node with its range.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    pub range: TextRange,
}

/// What a node holds.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeKind {
    /// A scalar with its value; `plain` when written without quotes or a
    /// block indicator (only plain scalars can be `null`, numbers, ...);
    /// `empty` when nothing was written at all (an absent value).
    Scalar {
        value: String,
        plain: bool,
        empty: bool,
    },
    Seq(Vec<Node>),
    /// Entries in document order, duplicates kept.
    Map(Vec<(Node, Node)>),
    /// An alias (`*name`): never expanded.
    Alias,
}

impl Node {
    /// The scalar's text, when this node is a scalar that was written.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            NodeKind::Scalar {
                value,
                empty: false,
                ..
            } => Some(value),
            _ => None,
        }
    }

    /// Whether this is an absent value (`key:` with nothing after it) or a
    /// plain `null` / `~`.
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, NodeKind::Scalar { value, plain: true, empty }
            if *empty || value == "null" || value == "~" || value == "Null" || value == "NULL")
    }

    /// The mapping entries, when this node is a mapping.
    pub fn entries(&self) -> Option<&[(Node, Node)]> {
        match &self.kind {
            NodeKind::Map(e) => Some(e),
            _ => None,
        }
    }

    /// The items, when this node is a sequence.
    pub fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            NodeKind::Seq(i) => Some(i),
            _ => None,
        }
    }

    /// The last value under key `key` (YAML's own rule for duplicates).
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries()?
            .iter()
            .rev()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// Every scalar below this node (keys excluded), in document order.
    pub fn scalars<'a>(&'a self, out: &mut Vec<&'a Node>) {
        // An explicit stack: nesting depth is bounded, but recursion is not
        // needed for a walk this simple.
        let mut stack = vec![self];
        while let Some(node) = stack.pop() {
            match &node.kind {
                NodeKind::Scalar { empty: false, .. } => out.push(node),
                NodeKind::Seq(items) => stack.extend(items.iter().rev()),
                NodeKind::Map(entries) => stack.extend(entries.iter().rev().map(|(_, v)| v)),
                _ => {}
            }
        }
    }
}

/// The first YAML feature under `node` the gateway does not follow: an
/// alias (`*name`) or a merge key (`<<`). Mistral's loader expands both,
/// so an action could hide in them; the checks refuse them instead.
pub fn unsupported_feature(node: &Node) -> Option<(&'static str, TextRange)> {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match &n.kind {
            NodeKind::Alias => return Some(("an alias", n.range)),
            NodeKind::Seq(items) => stack.extend(items.iter().rev()),
            NodeKind::Map(entries) => {
                for (k, v) in entries.iter().rev() {
                    stack.push(v);
                    stack.push(k);
                }
                if let Some((k, _)) = entries
                    .iter()
                    .find(|(k, _)| matches!(&k.kind, NodeKind::Scalar { value, plain: true, .. } if value == "<<"))
                {
                    return Some(("a merge key", k.range));
                }
            }
            NodeKind::Scalar { .. } => {}
        }
    }
    None
}

/// Why the text is not a YAML document the gateway can read: the parser's
/// message and where it stopped (clamped into the text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFailure {
    pub message: String,
    pub at: TextRange,
}

/// Parses the first document of `text` into a positioned tree (`None` for a
/// stream with no document).
pub fn parse(text: &str) -> Result<Option<Node>, ParseFailure> {
    let mut events = Events::default();
    Parser::new_from_str(text)
        .load(&mut events, false)
        .map_err(|e| {
            let whole = TextRange::whole(text);
            let at = position(e.marker()).min(whole.end);
            ParseFailure {
                message: e.info().to_string(),
                at: TextRange { start: at, end: at },
            }
        })?;
    let lines = Lines::of(text);
    Ok(Builder::new(&events.0, &lines).build())
}

/// The raw event list.
#[derive(Default)]
struct Events(Vec<(Event, Marker)>);

impl MarkedEventReceiver for Events {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        self.0.push((ev, mark));
    }
}

/// The text as lines of characters, for finding where a node ends.
struct Lines(Vec<Vec<char>>);

impl Lines {
    fn of(text: &str) -> Lines {
        Lines(
            text.split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l).chars().collect())
                .collect(),
        )
    }

    fn char_at(&self, p: Position) -> Option<char> {
        self.0.get(p.line - 1)?.get(p.column - 1).copied()
    }

    /// The last character that is not blank and not in a comment-only line,
    /// strictly before `limit`; `None` when there is none after `floor`.
    fn last_text_before(&self, limit: Position, floor: Position) -> Option<Position> {
        let mut line = limit.line;
        let mut end_col = limit.column - 1; // columns strictly before limit
        while line >= floor.line && line >= 1 {
            let chars = self.0.get(line - 1).map_or(&[][..], |l| &l[..]);
            let upto = end_col.min(chars.len());
            let start_col = if line == floor.line {
                floor.column - 1
            } else {
                0
            };
            let body = &chars[..upto];
            let comment_line = body.iter().find(|c| !c.is_whitespace()) == Some(&'#')
                && !(line == floor.line && start_col > 0);
            if !comment_line
                && let Some(i) = (start_col..upto).rev().find(|&i| !body[i].is_whitespace())
            {
                return Some(Position {
                    line,
                    column: i + 1,
                });
            }
            if line == 1 {
                break;
            }
            line -= 1;
            end_col = usize::MAX;
        }
        None
    }
}

fn position(m: &Marker) -> Position {
    Position {
        line: m.line().max(1),
        column: m.col() + 1,
    }
}

/// Builds the tree from the event list with an explicit stack.
struct Builder<'a> {
    events: &'a [(Event, Marker)],
    lines: &'a Lines,
}

/// A collection being built.
enum Open {
    Seq(Position, Vec<Node>),
    Map(Position, Vec<(Node, Node)>, Option<Node>),
}

impl<'a> Builder<'a> {
    fn new(events: &'a [(Event, Marker)], lines: &'a Lines) -> Self {
        Builder { events, lines }
    }

    fn build(&self) -> Option<Node> {
        let mut stack: Vec<Open> = Vec::new();
        let mut root = None;
        for (i, (event, mark)) in self.events.iter().enumerate() {
            let start = position(mark);
            let done = match event {
                Event::Scalar(value, style, _, _) => Some(self.scalar(i, value, *style, start)),
                Event::Alias(_) => Some(Node {
                    kind: NodeKind::Alias,
                    range: TextRange { start, end: start },
                }),
                Event::SequenceStart(..) => {
                    stack.push(Open::Seq(start, Vec::new()));
                    None
                }
                Event::MappingStart(..) => {
                    stack.push(Open::Map(start, Vec::new(), None));
                    None
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    stack.pop().map(|open| self.close(open, start))
                }
                _ => None,
            };
            let Some(node) = done else { continue };
            match stack.last_mut() {
                Some(Open::Seq(_, items)) => items.push(node),
                Some(Open::Map(_, entries, key)) => match key.take() {
                    Some(k) => entries.push((k, node)),
                    None => *key = Some(node),
                },
                None => {
                    if root.is_none() {
                        root = Some(node);
                    }
                }
            }
        }
        root
    }

    fn close(&self, open: Open, end_mark: Position) -> Node {
        // A flow collection ends at its bracket; a block one at its last child.
        let bracket = matches!(self.lines.char_at(end_mark), Some(']' | '}'));
        // A block mapping's start event comes after its first key: the
        // mapping starts where that key does.
        let (start, kind, last) = match open {
            Open::Seq(start, items) => {
                let first = items.first().map_or(start, |n| n.range.start);
                let last = items.last().map(|n| n.range.end);
                (start.min(first), NodeKind::Seq(items), last)
            }
            Open::Map(start, entries, _) => {
                let first = entries.first().map_or(start, |(k, _)| k.range.start);
                let last = entries.last().map(|(_, v)| v.range.end);
                (start.min(first), NodeKind::Map(entries), last)
            }
        };
        let end = if bracket {
            end_mark
        } else {
            last.unwrap_or(start)
        };
        Node {
            kind,
            range: TextRange {
                start,
                end: end.max(start),
            },
        }
    }

    fn scalar(&self, i: usize, value: &str, style: TScalarStyle, start: Position) -> Node {
        let next = self.events.get(i + 1).map(|(_, m)| position(m));
        let empty = style == TScalarStyle::Plain
            && value.is_empty()
            && !matches!(self.lines.char_at(start), Some('\'' | '"'));
        let single_line = !value.contains('\n');
        let end = match style {
            _ if empty => start,
            TScalarStyle::Plain if single_line => Position {
                line: start.line,
                column: start.column + value.chars().count().max(1) - 1,
            },
            TScalarStyle::SingleQuoted | TScalarStyle::DoubleQuoted => self
                .closing_quote(start, style)
                .or_else(|| next.and_then(|n| self.lines.last_text_before(n, start)))
                .unwrap_or(start),
            _ => next
                .and_then(|n| self.lines.last_text_before(n, start))
                .unwrap_or(start),
        };
        Node {
            kind: NodeKind::Scalar {
                value: value.to_string(),
                plain: style == TScalarStyle::Plain,
                empty,
            },
            range: TextRange {
                start,
                end: end.max(start),
            },
        }
    }

    /// The closing quote of a quoted scalar starting at `start`, when it is
    /// on the same line.
    fn closing_quote(&self, start: Position, style: TScalarStyle) -> Option<Position> {
        let line = self.lines.0.get(start.line - 1)?;
        let quote = if style == TScalarStyle::SingleQuoted {
            '\''
        } else {
            '"'
        };
        let mut i = start.column; // index just after the opening quote
        while i < line.len() {
            let c = line[i];
            if quote == '"' && c == '\\' {
                i += 2;
                continue;
            }
            if c == quote {
                if quote == '\'' && line.get(i + 1) == Some(&'\'') {
                    i += 2;
                    continue;
                }
                return Some(Position {
                    line: start.line,
                    column: i + 1,
                });
            }
            i += 1;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str) -> Node {
        parse(text).unwrap().unwrap()
    }

    #[test]
    fn scalars_keys_and_mappings_have_the_ranges_of_their_text() {
        let text = "version: '2.0'\nwf:\n  tasks:\n    t1:\n      action: std.echo output=\"a\"\n    # note\n    t2:\n      action: std.noop\n";
        let doc = r(text);
        let entries = doc.entries().unwrap();
        assert_eq!(entries[0].0.range.encode(), "@1:1-1:7");
        assert_eq!(entries[0].1.range.encode(), "@1:10-1:14");
        assert_eq!(entries[0].1.as_str(), Some("2.0"));
        let tasks = doc.get("wf").unwrap().get("tasks").unwrap();
        let t = tasks.entries().unwrap();
        assert_eq!(t[0].0.range.encode(), "@4:5-4:6");
        // t1's body ends at the closing quote, not at the comment line.
        assert_eq!(t[0].1.range.encode(), "@5:7-5:33");
        assert_eq!(t[1].1.range.encode(), "@8:7-8:22");
        assert_eq!(doc.range.encode(), "@1:1-8:22");
    }

    #[test]
    fn duplicate_keys_are_kept_and_get_reads_the_last() {
        let doc = r("a: 1\nb: 2\na: 3\n");
        let keys: Vec<_> = doc
            .entries()
            .unwrap()
            .iter()
            .map(|(k, _)| k.as_str().unwrap())
            .collect();
        assert_eq!(keys, ["a", "b", "a"]);
        assert_eq!(doc.get("a").and_then(Node::as_str), Some("3"));
    }

    #[test]
    fn flow_collections_end_at_their_bracket_and_empty_values_are_marked() {
        let doc = r("a: [x, 'y z']\nb: {k: v}\nc:\n");
        assert_eq!(doc.get("a").unwrap().range.encode(), "@1:4-1:13");
        let items = doc.get("a").unwrap().items().unwrap();
        assert_eq!(items[1].range.encode(), "@1:8-1:12");
        assert_eq!(doc.get("b").unwrap().range.encode(), "@2:4-2:9");
        assert!(doc.get("c").unwrap().is_null());
        assert_eq!(doc.get("c").unwrap().as_str(), None);
    }

    #[test]
    fn aliases_and_merge_keys_are_found() {
        let doc = r("a: &x {k: 1}\nb:\n  c: [1, *x]\n");
        assert_eq!(
            unsupported_feature(&doc).map(|(w, at)| (w, at.encode())),
            Some(("an alias", "@3:10-3:10".into()))
        );
        let doc = r("a:\n  <<: {action: std.http}\n");
        assert_eq!(
            unsupported_feature(&doc).map(|(w, at)| (w, at.encode())),
            Some(("a merge key", "@2:3-2:4".into()))
        );
        assert_eq!(unsupported_feature(&r("a: {'<<': 1}\n")), None);
    }

    #[test]
    fn block_scalars_end_at_their_last_character() {
        let doc = r("a: |\n  one\n  two\n\nb: 1\n");
        // The parser marks a block scalar where its content starts.
        assert_eq!(doc.get("a").unwrap().range.encode(), "@2:3-3:5");
        assert_eq!(doc.get("a").and_then(Node::as_str), Some("one\ntwo\n"));
    }

    #[test]
    fn unparsable_text_fails_and_an_empty_stream_has_no_document() {
        let failure = parse("a: b\nc: [1, 2\n").unwrap_err();
        // The parser stopped past the end: clamped to the last character.
        assert_eq!(failure.at.encode(), "@2:8-2:8", "{failure:?}");
        assert!(!failure.message.is_empty());
        assert!(parse("a:\tb: c\n  - x").is_err());
        assert_eq!(parse(""), Ok(None));
    }
}
