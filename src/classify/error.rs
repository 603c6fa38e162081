//! The error a rule file produces when it cannot be used.
//!
//! Every error names the file, the line and (when one is at fault) the rule, and
//! says how to fix it: operators read these in the start-up failure or in the log
//! line of a rejected reload, usually without the source at hand.

use std::fmt;
use std::path::{Path, PathBuf};

/// What is wrong with a rule file (for tests and tooling; the text is in `Display`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleErrorKind {
    /// The file cannot be read.
    Io,
    /// The TOML is malformed or does not follow the rule file format.
    Syntax,
    /// A rule's `pattern` (or a `redact` pattern) is not a valid regex.
    BadRegex,
    /// A template or locator names a capture group the pattern does not define.
    UnknownCapture,
    /// A rule's `code` is not in the language's closed diagnostic set.
    UndeclaredCode,
    /// Two rules share a name.
    DuplicateName,
    /// A `path` locator source is malformed.
    BadPath,
    /// A `message` or `hint` template is malformed.
    BadTemplate,
    /// An inline example does not produce its expectation.
    FailingExample,
    /// The rules together exceed the regex engine's size limit.
    TooLarge,
}

/// A rule file that cannot be loaded. `Display` reads
/// `FILE:LINE: rule 'NAME': PROBLEM (fix: FIX)`.
///
/// The details are boxed so that `Result<_, RuleFileError>` stays one word wide on
/// the success path.
#[derive(Debug, thiserror::Error)]
#[error("{details}")]
pub struct RuleFileError {
    details: Box<Details>,
}

#[derive(Debug)]
struct Details {
    file: PathBuf,
    line: Option<usize>,
    rule: Option<String>,
    kind: RuleErrorKind,
    problem: String,
    fix: String,
}

impl RuleFileError {
    /// A problem in the file as a whole or in one of its rules.
    pub(crate) fn new(
        file: &Path,
        line: usize,
        rule: Option<&str>,
        kind: RuleErrorKind,
        problem: impl Into<String>,
        fix: impl Into<String>,
    ) -> RuleFileError {
        RuleFileError {
            details: Box::new(Details {
                file: file.to_owned(),
                line: Some(line),
                rule: rule.map(str::to_owned),
                kind,
                problem: problem.into(),
                fix: fix.into(),
            }),
        }
    }

    /// The file could not be read.
    pub(crate) fn io(file: &Path, error: &std::io::Error) -> RuleFileError {
        RuleFileError {
            details: Box::new(Details {
                file: file.to_owned(),
                line: None,
                rule: None,
                kind: RuleErrorKind::Io,
                problem: format!("cannot read the rule file: {error}"),
                fix: "check the classifier path in the configuration and the file's permissions"
                    .to_owned(),
            }),
        }
    }

    /// The rule file.
    pub fn file(&self) -> &Path {
        &self.details.file
    }

    /// 1-based line of the offending rule, field or example (`None` for I/O errors).
    pub fn line(&self) -> Option<usize> {
        self.details.line
    }

    /// The offending rule's name, when a rule is at fault.
    pub fn rule(&self) -> Option<&str> {
        self.details.rule.as_deref()
    }

    /// The category of the problem.
    pub fn kind(&self) -> RuleErrorKind {
        self.details.kind
    }

    /// What is wrong.
    pub fn problem(&self) -> &str {
        &self.details.problem
    }

    /// How to fix it.
    pub fn fix(&self) -> &str {
        &self.details.fix
    }
}

impl fmt::Display for Details {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if let Some(rule) = &self.rule {
            write!(f, ": rule '{rule}'")?;
        }
        write!(f, ": {} (fix: {})", self.problem, self.fix)
    }
}

/// Maps byte offsets of the TOML source to 1-based line numbers.
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub(crate) fn new(source: &str) -> LineIndex {
        let newlines = source.match_indices('\n').map(|(i, _)| i + 1);
        LineIndex {
            starts: std::iter::once(0).chain(newlines).collect(),
        }
    }

    pub(crate) fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|start| *start <= offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_lines() {
        let index = LineIndex::new("a\nbc\n\nd");
        assert_eq!(index.line(0), 1);
        assert_eq!(index.line(1), 1);
        assert_eq!(index.line(2), 2);
        assert_eq!(index.line(5), 3);
        assert_eq!(index.line(6), 4);
    }

    #[test]
    fn display_names_file_line_rule_and_fix() {
        let err = RuleFileError::new(
            Path::new("classifiers/x.toml"),
            12,
            Some("unknown-capability"),
            RuleErrorKind::UndeclaredCode,
            "code 'nope' is not declared",
            "use a declared code",
        );
        assert_eq!(
            err.to_string(),
            "classifiers/x.toml:12: rule 'unknown-capability': code 'nope' is not declared \
             (fix: use a declared code)"
        );
    }
}
