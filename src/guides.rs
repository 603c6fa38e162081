//! Guides: the teaching material of a Language (Part II §5.2, Part III §4.1).
//!
//! A guide is one markdown file in a directory such as `guides/workflow-v1/`,
//! opening with front matter:
//!
//! ```text
//! ---
//! id: core
//! title: "workflow/v1 essentials"
//! level: core                  # core | reference | examples
//! topics: [grammar, steps]     # or one `  - topic` line each
//! version: 1
//! ---
//! ```
//!
//! The Language is deliberately not written in the file: the caller passes it,
//! and `id_prefix` is prepended to every guide id, so one directory can serve two
//! Languages without their guide ids colliding (ids are unique per Server).
//!
//! What the loader guarantees, failing with a [`GuideError`] that names the
//! file, the line and the fix otherwise:
//! - every front matter key is present and well formed, and guide ids are unique;
//! - each id in `topics` is exactly one `## Heading {#topic-id}` section, and
//!   every anchored `##` section is listed; the topic form returns that section,
//!   from its heading to the next `#` or `##` heading;
//! - at least one `core` guide exists, and exactly one guide lists the reserved
//!   topic `closed-sets`, at level `reference`;
//! - the closed-sets guide has a `## Diagnostic codes` table whose first column
//!   holds each code in backticks, including the reserved codes of Part II §5.5
//!   (the classifier takes its allowed codes from it);
//! - every ```` ```json workflow ```` block (and the ```` ```json input ```` block
//!   that may follow it) is valid JSON, the workflow an object; a text
//!   language's ```` ```yaml workflow ```` block is kept as the program string
//!   (its syntax is the language's to judge, which the tests run it through);
//! - every cross reference `{{guide:ID}}` or `{{guide:ID#TOPIC}}` names an
//!   existing guide (and topic); it is served as the prefixed id of ID.
//!
//! Versions: the exposed `version` is `<front matter version>-<first 8 hex digits
//! of SHA-256(body)>`. Part II requires it to change whenever the content
//! changes; the hash makes that hold even when an author forgets to bump the
//! front matter, which remains the place to signal a deliberate revision.
//!
//! Line endings are normalised to `\n` before anything is measured or hashed, so
//! a checkout with CRLF endings serves the same bytes and the same version.

mod error;
#[cfg(test)]
mod n8n_tests;
mod parse;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

pub use error::{ErrorKind, GuideError, TopicError};

/// The reserved topic identifying the closed-sets guide (Part II §5.2).
pub const CLOSED_SETS_TOPIC: &str = "closed-sets";
/// Part II §5.2: a core guide SHOULD be no larger than this many bytes.
pub const CORE_SIZE_LIMIT: usize = 8192;
/// Heading of the closed-sets section that lists the diagnostic codes.
pub const DIAGNOSTIC_CODES_HEADING: &str = "Diagnostic codes";
/// Diagnostic codes every Language must declare (Part II §5.5).
pub const RESERVED_CODES: [&str; 3] = ["constraint", "input_binding", "context_binding"];
const FORMAT: &str = "text/markdown";

/// Guide level (Part II §5.2). Ordered as guides are listed in the index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Core,
    Reference,
    Examples,
}

impl Level {
    fn parse(text: &str) -> Option<Level> {
        match text {
            "core" => Some(Level::Core),
            "reference" => Some(Level::Reference),
            "examples" => Some(Level::Examples),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Level::Core => "core",
            Level::Reference => "reference",
            Level::Examples => "examples",
        }
    }
}

/// One runnable example: a ```` ```json workflow ```` block (the program as
/// a JSON object) or a ```` ```yaml workflow ```` block (the program as a JSON
/// string), and the ```` ```json input ```` block that follows it, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct GuideExample {
    /// Served (prefixed) id of the guide holding the example.
    pub guide_id: String,
    /// 0-based position among that guide's workflow blocks.
    pub index: usize,
    pub workflow: Value,
    pub input: Option<Value>,
}

#[derive(Debug, Clone)]
struct Guide {
    id: String,
    title: String,
    level: Level,
    topics: Vec<String>,
    version: String,
    body: String,
    /// Byte range of each topic's section in `body`, in `topics` order.
    sections: Vec<(usize, usize)>,
}

/// The guides of one Language, loaded and checked once.
#[derive(Debug, Clone)]
pub struct GuideSet {
    language: String,
    guides: Vec<Guide>,
    diagnostic_codes: BTreeSet<String>,
    examples: Vec<GuideExample>,
}

impl GuideSet {
    /// Loads every `*.md` file of `dir` as a guide of `language`.
    pub fn load(dir: &Path, language: &str, id_prefix: &str) -> Result<GuideSet, GuideError> {
        let at = |file: &Path, (line, kind): parse::Failure| GuideError {
            file: file.to_path_buf(),
            line,
            kind,
        };
        let io = |file: &Path, e: std::io::Error| at(file, (0, ErrorKind::Io(e.to_string())));

        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| io(dir, e))?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
            .collect();
        // Sorted so errors and example order do not depend on the filesystem.
        files.sort();

        // Pass 1: front matter of every file, so references can be resolved.
        let mut parsed: Vec<(PathBuf, parse::FrontMatter)> = Vec::new();
        for file in files {
            let text = std::fs::read_to_string(&file).map_err(|e| io(&file, e))?;
            let fm = parse::front_matter(&text.replace("\r\n", "\n")).map_err(|f| at(&file, f))?;
            if let Some((other, _)) = parsed.iter().find(|(_, o)| o.id == fm.id) {
                let kind = ErrorKind::DuplicateId {
                    id: fm.id.clone(),
                    other: other.clone(),
                };
                return Err(at(&file, (1, kind)));
            }
            parsed.push((file, fm));
        }
        check_set(dir, &parsed).map_err(|(file, failure)| at(&file, failure))?;

        let resolve = |id: &str, topic: Option<&str>| {
            let (_, target) = parsed.iter().find(|(_, fm)| fm.id == id)?;
            match topic {
                Some(t) if !target.topics.iter().any(|x| x == t) => None,
                _ => Some(format!("{id_prefix}{id}")),
            }
        };

        // Pass 2: bodies.
        let mut set = GuideSet {
            language: language.to_string(),
            guides: Vec::new(),
            diagnostic_codes: BTreeSet::new(),
            examples: Vec::new(),
        };
        for (file, fm) in &parsed {
            let body = parse::expand_references(&fm.body, fm.body_first_line, resolve)
                .map_err(|f| at(file, f))?;
            let structure = parse::structure(&body, fm.body_first_line).map_err(|f| at(file, f))?;
            let sections = topic_sections(fm, &structure, body.len()).map_err(|f| at(file, f))?;
            let id = format!("{id_prefix}{}", fm.id);
            set.examples
                .extend(examples(&id, &structure).map_err(|f| at(file, f))?);
            if fm.topics.iter().any(|t| t == CLOSED_SETS_TOPIC) {
                set.diagnostic_codes = diagnostic_codes(&body, &structure, fm.body_first_line)
                    .map_err(|f| at(file, f))?;
            }
            let digest = hex::encode(Sha256::digest(body.as_bytes()));
            set.guides.push(Guide {
                id,
                title: fm.title.clone(),
                level: fm.level,
                topics: fm.topics.clone(),
                version: format!("{}-{}", fm.version, &digest[..8]),
                body,
                sections,
            });
        }
        set.guides
            .sort_by(|a, b| (a.level, &a.id).cmp(&(b.level, &b.id)));
        Ok(set)
    }

    /// The Language these guides teach.
    pub fn language(&self) -> &str {
        &self.language
    }

    /// Index form: every guide field except the body, core guides first.
    pub fn index(&self) -> Vec<Value> {
        self.guides
            .iter()
            .map(|g| self.metadata(g, &g.body))
            .collect()
    }

    /// Fetch form: metadata plus `body`; `None` for an unknown id.
    pub fn fetch(&self, id: &str) -> Option<Value> {
        let guide = self.guides.iter().find(|g| g.id == id)?;
        let mut value = self.metadata(guide, &guide.body);
        value["body"] = Value::String(guide.body.clone());
        Some(value)
    }

    /// Topic form: the guide's metadata with `body` holding only the topic's
    /// section. `size_bytes` and `tokens_estimate` describe the returned body,
    /// and a `topic` member names the topic served.
    pub fn fetch_topic(&self, id: &str, topic: &str) -> Result<Value, TopicError> {
        let guide =
            self.guides
                .iter()
                .find(|g| g.id == id)
                .ok_or_else(|| TopicError::UnknownGuide {
                    id: id.to_string(),
                    valid: self.ids(),
                })?;
        let position = guide
            .topics
            .iter()
            .position(|t| t == topic)
            .ok_or_else(|| TopicError::UnknownTopic {
                id: id.to_string(),
                topic: topic.to_string(),
                valid: guide.topics.clone(),
            })?;
        let (start, end) = guide.sections[position];
        let section = &guide.body[start..end];
        let mut value = self.metadata(guide, section);
        value["topic"] = Value::String(topic.to_string());
        value["body"] = Value::String(section.to_string());
        Ok(value)
    }

    /// Served guide ids, in index order.
    pub fn ids(&self) -> Vec<String> {
        self.guides.iter().map(|g| g.id.clone()).collect()
    }

    /// The closed diagnostic-code set, from the closed-sets guide's table.
    pub fn diagnostic_codes(&self) -> BTreeSet<String> {
        self.diagnostic_codes.clone()
    }

    /// Every runnable example of every guide, in file order.
    pub fn examples(&self) -> Vec<GuideExample> {
        self.examples.clone()
    }

    fn metadata(&self, guide: &Guide, body: &str) -> Value {
        let size = body.len();
        json!({
            "id": guide.id,
            "title": guide.title,
            "level": guide.level.as_str(),
            "topics": guide.topics,
            "language": self.language,
            "version": guide.version,
            "size_bytes": size,
            // Informative only (Part II §5.2); ~4 bytes a token for English prose.
            "tokens_estimate": size.div_ceil(4),
            "format": FORMAT,
        })
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Rules about the set as a whole: a core guide, one closed-sets guide.
fn check_set(
    dir: &Path,
    parsed: &[(PathBuf, parse::FrontMatter)],
) -> Result<(), (PathBuf, parse::Failure)> {
    if !parsed.iter().any(|(_, fm)| fm.level == Level::Core) {
        return Err((dir.to_path_buf(), (0, ErrorKind::NoCoreGuide)));
    }
    let closed: Vec<_> = parsed
        .iter()
        .filter(|(_, fm)| fm.topics.iter().any(|t| t == CLOSED_SETS_TOPIC))
        .collect();
    match closed.as_slice() {
        [(file, fm)] if fm.level != Level::Reference => {
            let kind = ErrorKind::ClosedSetsNotReference(fm.level.to_string());
            Err((file.clone(), (fm.level_line, kind)))
        }
        [_] => Ok(()),
        _ => {
            let ids = closed.iter().map(|(_, fm)| fm.id.clone()).collect();
            Err((dir.to_path_buf(), (0, ErrorKind::ClosedSetsCount(ids))))
        }
    }
}

/// Maps each listed topic to its section, rejecting missing, doubled and
/// unlisted anchors so `topics` and the body cannot drift apart.
fn topic_sections(
    fm: &parse::FrontMatter,
    structure: &parse::Structure,
    body_len: usize,
) -> Result<Vec<(usize, usize)>, parse::Failure> {
    let mut found: Vec<Option<(usize, (usize, usize))>> = vec![None; fm.topics.len()];
    for (index, heading) in structure.headings.iter().enumerate() {
        let Some(anchor) = &heading.anchor else {
            continue;
        };
        if heading.level != 2 {
            continue;
        }
        let Some(position) = fm.topics.iter().position(|t| t == anchor) else {
            return Err((
                heading.line,
                ErrorKind::UndeclaredTopicSection(anchor.clone()),
            ));
        };
        if let Some((first_line, _)) = found[position] {
            let kind = ErrorKind::DuplicateTopicSection {
                topic: anchor.clone(),
                first_line,
            };
            return Err((heading.line, kind));
        }
        found[position] = Some((heading.line, structure.section(index, body_len)));
    }
    fm.topics
        .iter()
        .zip(found)
        .map(|(topic, f)| {
            f.map(|(_, range)| range).ok_or_else(|| {
                (
                    fm.topics_line,
                    ErrorKind::MissingTopicSection(topic.clone()),
                )
            })
        })
        .collect()
}

/// Collects `json workflow` and `yaml workflow` blocks, each with a directly
/// following `json input` block (prose may sit between them, another code
/// block may not).
fn examples(
    guide_id: &str,
    structure: &parse::Structure,
) -> Result<Vec<GuideExample>, parse::Failure> {
    let json = |fence: &parse::Fence| {
        serde_json::from_str::<Value>(&fence.content).map_err(|e| {
            (
                fence.line,
                ErrorKind::BadExample(format!("`{}` block: {e}", fence.info)),
            )
        })
    };
    let mut out = Vec::new();
    let fences = &structure.fences;
    for (position, fence) in fences.iter().enumerate() {
        let workflow = if is_tagged(&fence.info, "workflow") {
            json(fence)?
        } else if is_tagged_as(&fence.info, "yaml", "workflow") {
            Value::String(fence.content.clone())
        } else {
            continue;
        };
        if !workflow.is_object() && !workflow.is_string() {
            let kind = ErrorKind::BadExample("the workflow is not a JSON object".into());
            return Err((fence.line, kind));
        }
        let input = match fences.get(position + 1) {
            Some(next) if is_tagged(&next.info, "input") => Some(json(next)?),
            _ => None,
        };
        out.push(GuideExample {
            guide_id: guide_id.to_string(),
            index: out.len(),
            workflow,
            input,
        });
    }
    Ok(out)
}

/// `json workflow` / `json input` info strings (extra words are tolerated).
fn is_tagged(info: &str, role: &str) -> bool {
    is_tagged_as(info, "json", role)
}

/// An info string whose first word is `syntax` and which names `role`.
fn is_tagged_as(info: &str, syntax: &str, role: &str) -> bool {
    let mut words = info.split_whitespace();
    words.next() == Some(syntax) && words.any(|w| w == role)
}

fn diagnostic_codes(
    body: &str,
    structure: &parse::Structure,
    first_line: usize,
) -> Result<BTreeSet<String>, parse::Failure> {
    let index = structure
        .headings
        .iter()
        .position(|h| h.level == 2 && h.text == DIAGNOSTIC_CODES_HEADING)
        .ok_or((first_line, ErrorKind::NoDiagnosticTable))?;
    let (start, end) = structure.section(index, body.len());
    let section_line = structure.headings[index].line;
    let rows = parse::code_table(&body[start..end], section_line)?;
    if rows.is_empty() {
        return Err((section_line, ErrorKind::NoDiagnosticTable));
    }
    let mut codes = BTreeSet::new();
    for (code, line) in rows {
        if !codes.insert(code.clone()) {
            return Err((line, ErrorKind::DuplicateDiagnosticCode(code)));
        }
    }
    match RESERVED_CODES.iter().find(|code| !codes.contains(**code)) {
        Some(missing) => Err((section_line, ErrorKind::MissingReservedCode(missing))),
        None => Ok(codes),
    }
}
