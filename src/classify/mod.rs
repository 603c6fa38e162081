//! Classification of the engine's free-text validation problems into closed
//! Pilotage diagnostics.
//!
//! The engine's validator is left as it is; an ordered table of regex rules, one TOML
//! file per language (`classifiers/<language>.toml`, format below), maps each
//! message it emits to a code of the language's closed diagnostic set:
//!
//! - rules are tried in file order and the first match wins;
//! - a rule gives the code, optionally overrides the severity, derives the locator
//!   (JSON Pointer) from the engine's location or from a captured step id, and may
//!   author the message and a hint from its captures;
//! - hints name only caller-visible catalog entries; engine suggestions are never
//!   passed through (rule files list them under `redact`), because the engine's
//!   suggestions come from a registry wider than the caller's view;
//! - an unmatched message becomes `constraint` with the engine's message kept and
//!   path `""`, so the set stays closed when the engine grows a new message.
//!
//! # Rule file format
//!
//! Every key is checked; unknown keys are errors so that a typo cannot silently
//! disable a rule:
//!
//! ```toml
//! location_syntax = "legacy"            # or "jsonpath", or parts / a pattern (see `location`)
//! redact = ['''\s*\(did you mean '[^']*'\?\)''']  # removed from any text passed through
//!
//! [[rule]]
//! name = "unknown-capability"           # unique in the file
//! pattern = '''^unknown capability '(?P<capability>.*?)'(?: \(did you mean '.*'\?\))?$'''
//! code = "unknown_capability"           # from the language's closed-sets guide
//! severity = "error"                    # optional; default: the engine's level
//! path = ["location", "step:step"]      # optional; default "location"; [] = always ""
//! message = "unknown capability '{capability}'"   # optional; default: the engine text
//! hint = "close match: {close_match:capability}"  # optional
//!
//! [[rule.example]]
//! message = "unknown capability 'crm.get_custmer'"  # engine text (input)
//! location = "steps[0].capability"      # optional engine location (input)
//! level = "error"                       # optional engine level (input), default error
//! visible = ["crm.get_customer"]        # optional caller-visible names (input)
//! steps = { a = "/steps/0" }            # optional step id -> pointer (input)
//! code = "unknown_capability"           # expected
//! path = "/steps/0/capability"          # expected
//! hint = "close match: crm.get_customer"  # expected; absent = no hint expected
//! severity = "error"                    # optional expectation
//! expect_message = "unknown capability 'crm.get_custmer'"  # optional expectation
//!
//! [[unmatched_example]]                 # a message that must fall to `constraint`
//! message = "E_LIMIT_0042: step budget exhausted (201/200)"
//! ```
//!
//! Locator sources: `location` (the engine location as a JSON Pointer) and
//! `step:<capture>` (the pointer of the step whose id was captured), each optionally
//! followed by a pointer suffix such as `/capability`. Nothing resolving gives `""`.
//!
//! Templates: `{capture}`, `{close_match:capture}` (up to three caller-visible names
//! close to the capture, joined by `", "`), `{visible:capture}` (the capture only if
//! the caller can see that name); `{{`/`}}` are literal braces. A hint with a
//! placeholder that resolves to nothing is omitted; a message template that cannot
//! render falls back to the engine's (redacted) text. `message` and `hint` also
//! accept a list of templates, tried in order (e.g. one naming a visible replacement,
//! then one without it).
//!
//! # Use
//!
//! ```no_run
//! use std::collections::{BTreeSet, HashMap};
//! use std::path::Path;
//! use pilotage_gateway::classify::{ClassifyContext, EngineProblem, RuleTable, Severity};
//!
//! let codes: BTreeSet<String> = ["unknown_capability"].map(String::from).into();
//! let table = RuleTable::load(Path::new("classifiers/workflow-v1.toml"), &codes)?;
//! let steps = HashMap::new();
//! let visible = vec!["crm.get_customer".to_owned()];
//! let ctx = ClassifyContext { step_pointers: &steps, visible_names: &visible };
//! let problem = EngineProblem {
//!     level: Severity::Error,
//!     text: "unknown capability 'crm.get_custmer'".into(),
//!     location: Some("steps[0].capability".into()),
//! };
//! let classified = table.classify(&problem, &ctx);
//! assert_eq!(classified.diagnostic.code, "unknown_capability");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod examples;
mod live;
mod load;
mod location;
mod table;
mod template;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use serde::{Deserialize, Serialize};

pub use error::{RuleErrorKind, RuleFileError};
pub use examples::{ExampleOutcome, ExampleReport, check_examples};
pub use live::{Classifiers, RuleSource};
pub use location::{IndexForm, LocationParts, LocationSyntax};
pub use table::RuleTable;
pub use template::close_matches;

/// The reserved catch-all code for anything no rule recognises.
pub const CONSTRAINT: &str = "constraint";

/// A diagnostic's severity. Serializes as `"error"` / `"warning"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// The program is invalid.
    Error,
    /// The program is valid but likely not what the author meant.
    Warning,
}

impl Severity {
    /// Maps a level spelled `ERROR`/`WARN` or `error`/`warning` (any case) to
    /// a severity. Unknown levels give `None`. The engine's own levels are
    /// read through the mapping's level tables instead.
    pub fn from_engine_level(level: &str) -> Option<Severity> {
        match level.to_ascii_lowercase().as_str() {
            "error" => Some(Severity::Error),
            "warn" | "warning" => Some(Severity::Warning),
            _ => None,
        }
    }
}

/// A closed Pilotage diagnostic, as returned to callers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// `error` or `warning`.
    pub severity: Severity,
    /// A code of the language's closed diagnostic set (or `constraint`).
    pub code: String,
    /// The locator in the language's dialect: an RFC 6901 JSON Pointer into
    /// the submitted program (`""` is the whole program), or a text range
    /// (`crate::pilotage::text_range`), sent as its JSON object.
    #[serde(
        serialize_with = "crate::pilotage::text_range::serialize_locator",
        deserialize_with = "crate::pilotage::text_range::deserialize_locator"
    )]
    pub path: String,
    /// Human-readable text: authored by the rule, or the engine's (redacted) text.
    pub message: String,
    /// Guidance naming only caller-visible entries; omitted when there is none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
}

/// One problem reported by the engine's validator, already read from the engine's
/// JSON through the engine mapping (`[engine.mapping.check]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineProblem {
    /// The engine's level.
    pub level: Severity,
    /// The engine's message, verbatim.
    pub text: String,
    /// The engine's location, in the rule file's `location_syntax`, when it gave one.
    pub location: Option<String>,
}

/// What the caller knows that the engine's message does not.
#[derive(Debug, Clone, Copy)]
pub struct ClassifyContext<'a> {
    /// Step id → JSON Pointer of that step in the submitted program
    /// (e.g. `"a" → "/steps/1/then/0"`), for messages that name a step but give no
    /// location.
    pub step_pointers: &'a HashMap<String, String>,
    /// The catalog ids the caller can see; close-match hints are drawn from these only.
    pub visible_names: &'a [String],
}

/// The classification of one engine problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    /// The diagnostic to return to the caller.
    pub diagnostic: Diagnostic,
    /// The rule that matched; `None` when the problem fell to `constraint`.
    pub rule: Option<String>,
}

impl RuleTable {
    /// Loads, validates and self-tests a rule file.
    ///
    /// Fails on unreadable or malformed TOML, a bad regex, a template or locator
    /// naming a capture the pattern lacks, a `code` outside `allowed_codes` (the
    /// language's closed set; `constraint` is always allowed), a duplicate rule name,
    /// or an inline example that does not produce its expectation. The error names
    /// the file, rule and line.
    pub fn load(path: &Path, allowed_codes: &BTreeSet<String>) -> Result<RuleTable, RuleFileError> {
        let source = std::fs::read_to_string(path).map_err(|e| RuleFileError::io(path, &e))?;
        RuleTable::parse(&source, path, allowed_codes)
    }

    /// Like [`RuleTable::load`] but does not run the examples, so that
    /// `classify --check` can load a file with failing examples and report them all
    /// with [`check_examples`].
    pub fn load_unchecked(
        path: &Path,
        allowed_codes: &BTreeSet<String>,
    ) -> Result<RuleTable, RuleFileError> {
        let source = std::fs::read_to_string(path).map_err(|e| RuleFileError::io(path, &e))?;
        RuleTable::parse_unchecked(&source, path, allowed_codes)
    }

    /// [`RuleTable::load`] from text already in memory; `file` is used in errors.
    pub fn parse(
        source: &str,
        file: &Path,
        allowed_codes: &BTreeSet<String>,
    ) -> Result<RuleTable, RuleFileError> {
        let table = RuleTable::parse_unchecked(source, file, allowed_codes)?;
        match check_examples(&table).failures().next() {
            Some(failure) => Err(example_error(&table, failure)),
            None => Ok(table),
        }
    }

    /// [`RuleTable::load_unchecked`] from text already in memory.
    pub fn parse_unchecked(
        source: &str,
        file: &Path,
        allowed_codes: &BTreeSet<String>,
    ) -> Result<RuleTable, RuleFileError> {
        load::compile(source, file, allowed_codes)
    }
}

fn example_error(table: &RuleTable, failure: &ExampleOutcome) -> RuleFileError {
    let which = match &failure.rule {
        Some(_) => format!("example #{}", failure.index),
        None => format!("unmatched example #{}", failure.index),
    };
    RuleFileError::new(
        table.file(),
        failure.line,
        failure.rule.as_deref(),
        RuleErrorKind::FailingExample,
        format!(
            "{which} ({:?}) does not produce its expectation: {}",
            failure.message,
            failure.failure.as_deref().unwrap_or_default()
        ),
        "correct the rule (pattern, order, locator or templates) or the example's \
         expectation; `classify --check` lists every example",
    )
}

/// Operator view of one classification: which rule matched (with its line) or that
/// the problem falls to `constraint`, then the diagnostic as pretty JSON.
pub fn explain(table: &RuleTable, problem: &EngineProblem, ctx: &ClassifyContext<'_>) -> String {
    let classified = table.classify(problem, ctx);
    let origin = match &classified.rule {
        Some(rule) => format!(
            "rule '{rule}' ({}:{})",
            table.file().display(),
            table.rule_line(rule).unwrap_or_default()
        ),
        None => format!(
            "no rule of {} matches: falls to {CONSTRAINT}",
            table.file().display()
        ),
    };
    let json = serde_json::to_string_pretty(&classified.diagnostic)
        .unwrap_or_else(|e| format!("(diagnostic not serializable: {e})"));
    format!("matched: {origin}\ndiagnostic: {json}\n")
}

#[cfg(test)]
mod tests;
