//! The compiled rule table and the classification of one engine problem.
//!
//! All rule patterns are compiled once into a single `RegexSet`, so finding the first
//! matching rule is one pass over the message whatever the number of rules; only the
//! winning rule's own regex then runs again to extract its captures.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use regex::{Captures, Regex, RegexSet};

use super::location::LocationSyntax;
use super::template::Template;
use super::{CONSTRAINT, Classified, ClassifyContext, Diagnostic, EngineProblem, Severity};

/// An ordered, compiled classifier for one language (one rule file).
///
/// Built by [`RuleTable::load`]; immutable afterwards, so it can be shared behind an
/// `Arc` and swapped as a whole on reload.
#[derive(Debug)]
pub struct RuleTable {
    pub(crate) file: PathBuf,
    pub(crate) location_syntax: LocationSyntax,
    pub(crate) redactions: Vec<Regex>,
    pub(crate) set: RegexSet,
    pub(crate) rules: Vec<Rule>,
    pub(crate) unmatched_examples: Vec<Example>,
}

/// One compiled `[[rule]]`.
#[derive(Debug)]
pub(crate) struct Rule {
    pub(crate) name: String,
    pub(crate) line: usize,
    pub(crate) regex: Regex,
    pub(crate) code: String,
    pub(crate) severity: Option<Severity>,
    pub(crate) path: Vec<PathSource>,
    /// Tried in order; the first that renders is the message (none: engine text).
    pub(crate) message: Vec<Template>,
    /// Tried in order; the first that renders is the hint (none: no hint).
    pub(crate) hint: Vec<Template>,
    pub(crate) examples: Vec<Example>,
}

/// One source of a rule's locator; a rule tries its sources in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PathSource {
    /// The engine's location field, converted, then `suffix` appended.
    Location { suffix: String },
    /// The program pointer of the step whose id the capture holds, then `suffix`.
    Step { capture: String, suffix: String },
}

/// An inline example: an engine problem and the diagnostic it must produce.
#[derive(Debug, Clone)]
pub(crate) struct Example {
    pub(crate) line: usize,
    pub(crate) level: Severity,
    pub(crate) message: String,
    pub(crate) location: Option<String>,
    pub(crate) visible: Vec<String>,
    pub(crate) steps: HashMap<String, String>,
    pub(crate) code: String,
    pub(crate) path: String,
    pub(crate) hint: Option<String>,
    pub(crate) severity: Option<Severity>,
    pub(crate) expect_message: Option<String>,
}

impl RuleTable {
    /// Classifies one engine problem: the first rule (in file order) whose pattern
    /// matches gives the diagnostic; when none matches, the problem falls to
    /// `constraint` with its (redacted) message kept and path `""`.
    pub fn classify(&self, problem: &EngineProblem, ctx: &ClassifyContext<'_>) -> Classified {
        let matched = self.first_match(&problem.text).and_then(|index| {
            let rule = &self.rules[index];
            rule.regex.captures(&problem.text).map(|caps| (rule, caps))
        });
        match matched {
            Some((rule, captures)) => Classified {
                diagnostic: self.apply(rule, &captures, problem, ctx),
                rule: Some(rule.name.clone()),
            },
            None => Classified {
                diagnostic: self.constraint(problem),
                rule: None,
            },
        }
    }

    /// The rule file this table was loaded from.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// The rule names, in matching order.
    pub fn rule_names(&self) -> impl Iterator<Item = &str> {
        self.rules.iter().map(|rule| rule.name.as_str())
    }

    /// The 1-based line of a rule's `[[rule]]` header, for operator output.
    pub fn rule_line(&self, name: &str) -> Option<usize> {
        self.rules.iter().find(|r| r.name == name).map(|r| r.line)
    }

    /// The number of rules.
    pub fn len(&self) -> usize {
        self.rules.len()
    }

    /// Whether the table has no rules (everything falls to `constraint`).
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The location syntax the file declares.
    pub fn location_syntax(&self) -> &LocationSyntax {
        &self.location_syntax
    }

    /// `SetMatches` iterates in ascending rule order, so the first index is the
    /// first rule in the file that matches.
    fn first_match(&self, text: &str) -> Option<usize> {
        self.set.matches(text).iter().next()
    }

    fn apply(
        &self,
        rule: &Rule,
        captures: &Captures<'_>,
        problem: &EngineProblem,
        ctx: &ClassifyContext<'_>,
    ) -> Diagnostic {
        let message = first_rendered(&rule.message, captures, ctx.visible_names)
            .unwrap_or_else(|| self.redact(&problem.text));
        Diagnostic {
            severity: rule.severity.unwrap_or(problem.level),
            code: rule.code.clone(),
            path: self.locate(rule, captures, problem.location.as_deref(), ctx),
            message,
            hint: first_rendered(&rule.hint, captures, ctx.visible_names),
        }
    }

    fn constraint(&self, problem: &EngineProblem) -> Diagnostic {
        Diagnostic {
            severity: problem.level,
            code: CONSTRAINT.to_owned(),
            path: String::new(),
            message: self.redact(&problem.text),
            hint: None,
        }
    }

    /// The first locator source that resolves, or `""` (the program root) when none
    /// does: attaching a finding to the whole program beats inventing coordinates.
    fn locate(
        &self,
        rule: &Rule,
        captures: &Captures<'_>,
        location: Option<&str>,
        ctx: &ClassifyContext<'_>,
    ) -> String {
        rule.path
            .iter()
            .find_map(|source| match source {
                PathSource::Location { suffix } => location
                    .and_then(|loc| self.location_syntax.to_pointer(loc))
                    .map(|pointer| pointer + suffix),
                PathSource::Step { capture, suffix } => captures
                    .name(capture)
                    .and_then(|id| ctx.step_pointers.get(id.as_str()))
                    .map(|pointer| format!("{pointer}{suffix}")),
            })
            .unwrap_or_default()
    }

    /// Removes engine suggestions (and anything else the file's `redact` patterns
    /// name) from text that is passed through to the caller.
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for pattern in &self.redactions {
            if pattern.is_match(&out) {
                out = pattern.replace_all(&out, "").into_owned();
            }
        }
        out
    }
}

/// The first template of a fallback chain that renders.
fn first_rendered(
    chain: &[Template],
    captures: &Captures<'_>,
    visible: &[String],
) -> Option<String> {
    chain
        .iter()
        .find_map(|template| template.render(captures, visible))
}
