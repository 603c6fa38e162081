//! Errors of the guide loader and of topic requests.
//!
//! Every load error names the file, the line and the fix, because the person
//! reading it is a guide author who should not need to open the loader's code.

use std::path::PathBuf;

/// A guide file that cannot be served, with where and how to fix it.
#[derive(Debug, thiserror::Error)]
#[error("{}{}: {kind}; fix: {}", file.display(), line_suffix(*line), kind.fix())]
pub struct GuideError {
    /// The guide file, or the directory for problems of the set as a whole.
    pub file: PathBuf,
    /// 1-based line number; 0 when the problem has no single line.
    pub line: usize,
    pub kind: ErrorKind,
}

fn line_suffix(line: usize) -> String {
    if line == 0 {
        String::new()
    } else {
        format!(":{line}")
    }
}

/// What is wrong with a guide file (see [`ErrorKind::fix`] for the remedy).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    #[error("cannot read the guide: {0}")]
    Io(String),
    #[error("no front matter")]
    NoFrontMatter,
    #[error("front matter is not closed")]
    UnclosedFrontMatter,
    #[error("cannot read front matter line `{0}`")]
    BadFrontMatterLine(String),
    #[error("unknown front matter key `{0}`")]
    UnknownKey(String),
    #[error("front matter key `{0}` appears twice")]
    DuplicateKey(String),
    #[error("missing front matter key `{0}`")]
    MissingKey(&'static str),
    #[error("front matter key `{0}` is empty")]
    EmptyValue(&'static str),
    #[error("bad guide id `{0}`")]
    BadId(String),
    #[error("bad level `{0}`")]
    BadLevel(String),
    #[error("bad topic id `{0}`")]
    BadTopicId(String),
    #[error("topic `{0}` is listed twice")]
    DuplicateTopic(String),
    #[error("guide id `{id}` is already used by {}", other.display())]
    DuplicateId { id: String, other: PathBuf },
    #[error("topic `{0}` has no `## ... {{#{0}}}` section")]
    MissingTopicSection(String),
    #[error("topic `{topic}` has a second section (the first is at line {first_line})")]
    DuplicateTopicSection { topic: String, first_line: usize },
    #[error("section anchor `{{#{0}}}` is not listed in `topics`")]
    UndeclaredTopicSection(String),
    #[error("a code block is not closed")]
    UnclosedFence,
    #[error("bad guide reference `{{{{guide:{0}`")]
    BadGuideReference(String),
    #[error("bad example: {0}")]
    BadExample(String),
    #[error("no guide has level `core`")]
    NoCoreGuide,
    #[error("{} guides list the reserved topic `closed-sets` ({})", .0.len(), .0.join(", "))]
    ClosedSetsCount(Vec<String>),
    #[error("the closed-sets guide has level `{0}`")]
    ClosedSetsNotReference(String),
    #[error("the closed-sets guide has no `## Diagnostic codes` table")]
    NoDiagnosticTable,
    #[error("cannot read diagnostic code row `{0}`")]
    BadDiagnosticRow(String),
    #[error("diagnostic code `{0}` is listed twice")]
    DuplicateDiagnosticCode(String),
    #[error("reserved diagnostic code `{0}` is missing")]
    MissingReservedCode(&'static str),
}

impl ErrorKind {
    /// How to repair the guide.
    pub fn fix(&self) -> String {
        use ErrorKind::*;
        match self {
            Io(_) => "make the file readable UTF-8 text".into(),
            NoFrontMatter => "start the file with a `---` line, then `id:`, `title:`, `level:`, `topics:`, `version:` lines, then a closing `---` line".into(),
            UnclosedFrontMatter => "end the front matter with a line holding only `---`".into(),
            BadFrontMatterLine(_) => "write `key: value`; write topics as `[a, b]` or as indented `- topic` lines under `topics:`".into(),
            UnknownKey(key) if key == "language" => "remove it: the language comes from the gateway configuration".into(),
            UnknownKey(_) => "use only the keys id, title, level, topics and version".into(),
            DuplicateKey(key) => format!("keep a single `{key}:` line"),
            MissingKey(key) | EmptyValue(key) => format!("add `{key}: <value>` to the front matter"),
            BadId(_) | BadTopicId(_) => "use letters, digits, `-`, `_` and `.` only".into(),
            BadLevel(_) => "use `level: core`, `level: reference` or `level: examples`".into(),
            DuplicateTopic(_) => "list each topic once".into(),
            DuplicateId { .. } => "give one of the two guides another `id`".into(),
            MissingTopicSection(t) => format!("add a `## <Title> {{#{t}}}` section, or remove `{t}` from `topics`"),
            DuplicateTopicSection { .. } => "give each `##` section its own topic id".into(),
            UndeclaredTopicSection(t) => format!("add `{t}` to `topics`, or remove the anchor"),
            UnclosedFence => "close the code block with a line holding only ```".into(),
            BadGuideReference(_) => "write `{{guide:ID}}` or `{{guide:ID#TOPIC}}` with an existing guide id and one of its topics".into(),
            BadExample(_) => "make the block valid JSON; a `json workflow` block must hold a JSON object".into(),
            NoCoreGuide => "add a guide with `level: core`".into(),
            ClosedSetsCount(_) => "list the topic `closed-sets` in exactly one guide".into(),
            ClosedSetsNotReference(_) => "set `level: reference` on the closed-sets guide".into(),
            NoDiagnosticTable => "add a `## Diagnostic codes` section with a table whose first column is each code in backticks".into(),
            BadDiagnosticRow(_) => "start every row of the table with the code in backticks, e.g. `| `unknown_kind` | error | ... |`".into(),
            DuplicateDiagnosticCode(_) => "list each code once".into(),
            MissingReservedCode(code) => format!("add a row for `{code}`: Part II requires every Language to declare it"),
        }
    }
}

/// Why a topic request cannot be served; carries the valid choices so the
/// caller can name them in its `not_found` message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopicError {
    #[error("unknown guide `{id}`; guides: {}", .valid.join(", "))]
    UnknownGuide { id: String, valid: Vec<String> },
    #[error("guide `{id}` has no topic `{topic}`; its topics: {}", .valid.join(", "))]
    UnknownTopic {
        id: String,
        topic: String,
        valid: Vec<String>,
    },
}
