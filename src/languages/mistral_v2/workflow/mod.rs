//! The parts of a Mistral v2 workflow document the gateway reads, with their
//! text ranges: the workflow's name, `input`, `vars` and `output`, and its
//! tasks in document order with their action or sub-workflow, inputs,
//! publishes, transitions and `with-items`.
//!
//! This is not Mistral's validator: anything malformed is left out here and
//! left for Mistral to report. Only the last definition of a duplicated task
//! key is a task (YAML's, and so Mistral's, rule); the earlier ones are kept
//! as [`Workflow::duplicate_tasks`] for the checks.

mod action_line;
mod read;

pub use read::{read, to_json};

use crate::pilotage::text_range::TextRange;
use serde_json::Value;

/// Mistral's engine commands: transition targets that are not tasks.
pub const ENGINE_COMMANDS: [&str; 4] = ["fail", "succeed", "pause", "noop"];

/// A parsed document: its workflows in document order.
#[derive(Debug, Clone, Default)]
pub struct Document {
    pub workflows: Vec<Workflow>,
    /// A YAML feature the gateway does not follow (alias, merge key), and
    /// where.
    pub unsupported: Option<(&'static str, TextRange)>,
}

/// One workflow.
#[derive(Debug, Clone)]
pub struct Workflow {
    pub name: String,
    pub name_range: TextRange,
    /// The workflow's key through the end of its body.
    pub range: TextRange,
    /// `type:` as written (`direct` when absent).
    pub kind: String,
    pub kind_range: Option<TextRange>,
    /// `None` when `input` is not a list of names and one-entry maps.
    pub inputs: Vec<InputParam>,
    /// Names in `vars:`.
    pub vars: Vec<String>,
    /// Every written scalar of `output` and `output-on-error`.
    pub output_scalars: Vec<Scalar>,
    pub tasks: Vec<Task>,
    /// Earlier definitions of a task key defined again later: name and key range.
    pub duplicate_tasks: Vec<(String, TextRange)>,
}

/// One `input` entry.
#[derive(Debug, Clone)]
pub struct InputParam {
    pub name: String,
    /// The default, as YAML types it; `None` when there is none (required).
    pub default: Option<Value>,
}

/// A scalar's value and range.
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    pub value: String,
    pub range: TextRange,
}

/// One task.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    pub key_range: TextRange,
    /// The task's key through the end of its body.
    pub range: TextRange,
    pub action: Option<ActionCall>,
    /// `workflow:`: the sub-workflow's name and the scalar's range.
    pub workflow: Option<Scalar>,
    /// `input:` keys, or `None` when `input` is absent.
    pub input: Option<InputKeys>,
    /// Names published by the task (`publish`, `publish-on-error`, and the
    /// `publish` of its transitions).
    pub publishes: Vec<String>,
    /// Names a transition publishes to Mistral's `global` scope, which every
    /// task can read once published.
    pub global_publishes: Vec<String>,
    /// Transitions, including those inherited from `task-defaults`.
    pub transitions: Vec<Transition>,
    pub with_items: Option<WithItems>,
    pub join: Option<String>,
    /// Every written scalar value of the task's body, for expression checks.
    pub scalars: Vec<Scalar>,
}

/// The written `input:` of a task.
#[derive(Debug, Clone)]
pub enum InputKeys {
    /// A mapping: its keys.
    Keys(Vec<Scalar>),
    /// An expression or anything else whose keys cannot be known statically.
    Unknown,
}

/// `action: NAME key=value ...`.
#[derive(Debug, Clone)]
pub struct ActionCall {
    pub name: String,
    /// The name's range.
    pub name_range: TextRange,
    pub params: Vec<InlineParam>,
}

/// One inline `key=value` parameter.
#[derive(Debug, Clone)]
pub struct InlineParam {
    pub name: String,
    pub raw: String,
    /// Whether Mistral keeps it as written: a quoted string, an expression,
    /// a bracketed value, `true`/`false`/`null` or digits. Anything else is
    /// silently dropped by Mistral (an unquoted word, `-3`, `True`), or cut
    /// to its leading digits (`0.5` is read as `0`).
    pub kept: bool,
    pub range: TextRange,
}

/// The transition kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum On {
    Success,
    Error,
    Complete,
}

impl On {
    pub const ALL: [On; 3] = [On::Success, On::Error, On::Complete];
    /// The task key, which is also the `event` Mistral records.
    pub fn key(self) -> &'static str {
        match self {
            On::Success => "on-success",
            On::Error => "on-error",
            On::Complete => "on-complete",
        }
    }
    pub fn from_event(event: &str) -> Option<On> {
        On::ALL.into_iter().find(|o| o.key() == event)
    }
}

/// One target of a transition.
#[derive(Debug, Clone)]
pub struct Transition {
    pub on: On,
    /// The target task or engine command (first word of the entry).
    pub target: String,
    pub target_range: TextRange,
    /// Whether the target is one of [`ENGINE_COMMANDS`].
    pub command: bool,
    /// The condition text, for a `{target: condition}` entry.
    pub condition: Option<String>,
    /// Whether it comes from `task-defaults`.
    pub inherited: bool,
}

/// `with-items: var in <expr>` (one or several `var in ...` entries).
#[derive(Debug, Clone)]
pub struct WithItems {
    /// The iteration variables.
    pub vars: Vec<String>,
    pub range: TextRange,
}
