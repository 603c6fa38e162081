//! Running a rule file's inline examples.
//!
//! Examples are the rule file's own test suite: they run at every load (a failing
//! example rejects the file) and on demand for the operator's `classify --check`.
//! An example passes only when its own rule wins, so a rule shadowed by an earlier,
//! more general one is caught even if the shadowing rule happens to give the same code.

use std::fmt;
use std::path::PathBuf;

use super::table::{Example, RuleTable};
use super::{Classified, ClassifyContext, EngineProblem};

/// The outcome of one inline example.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleOutcome {
    /// The rule the example belongs to; `None` for an `[[unmatched_example]]`.
    pub rule: Option<String>,
    /// 1-based position among the rule's examples (or among the unmatched examples).
    pub index: usize,
    /// 1-based line of the example's table header.
    pub line: usize,
    /// The engine message the example feeds in.
    pub message: String,
    /// `None` when the example passed; otherwise what differed.
    pub failure: Option<String>,
}

impl ExampleOutcome {
    /// Whether the example produced its expectation.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}

/// Every example of one rule file, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExampleReport {
    /// The rule file.
    pub file: PathBuf,
    /// One entry per example.
    pub outcomes: Vec<ExampleOutcome>,
}

impl ExampleReport {
    /// Whether every example passed.
    pub fn all_passed(&self) -> bool {
        self.outcomes.iter().all(ExampleOutcome::passed)
    }

    /// The failing examples.
    pub fn failures(&self) -> impl Iterator<Item = &ExampleOutcome> {
        self.outcomes.iter().filter(|outcome| !outcome.passed())
    }
}

/// One line per example (`ok` / `FAIL`), then a summary line.
impl fmt::Display for ExampleReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for outcome in &self.outcomes {
            let status = if outcome.passed() { "ok  " } else { "FAIL" };
            let owner = match &outcome.rule {
                Some(rule) => format!("rule '{rule}'"),
                None => "unmatched".to_owned(),
            };
            write!(
                f,
                "{status} {}:{} {owner} example #{}: {:?}",
                self.file.display(),
                outcome.line,
                outcome.index,
                outcome.message
            )?;
            if let Some(failure) = &outcome.failure {
                write!(f, ": {failure}")?;
            }
            writeln!(f)?;
        }
        let failed = self.failures().count();
        writeln!(
            f,
            "{}: {} examples, {} passed, {failed} failed",
            self.file.display(),
            self.outcomes.len(),
            self.outcomes.len() - failed
        )
    }
}

/// Runs every inline example of `table` (rule examples in file order, then the
/// `[[unmatched_example]]` entries) and reports each one.
pub fn check_examples(table: &RuleTable) -> ExampleReport {
    let rule_examples = table.rules.iter().flat_map(|rule| {
        rule.examples
            .iter()
            .enumerate()
            .map(move |(i, example)| (Some(rule.name.as_str()), i + 1, example))
    });
    let unmatched = table
        .unmatched_examples
        .iter()
        .enumerate()
        .map(|(i, example)| (None, i + 1, example));
    let outcomes = rule_examples
        .chain(unmatched)
        .map(|(rule, index, example)| ExampleOutcome {
            rule: rule.map(str::to_owned),
            index,
            line: example.line,
            message: example.message.clone(),
            failure: run_example(table, rule, example),
        })
        .collect();
    ExampleReport {
        file: table.file.clone(),
        outcomes,
    }
}

/// Classifies the example and describes every difference from its expectation.
fn run_example(table: &RuleTable, rule: Option<&str>, example: &Example) -> Option<String> {
    let problem = EngineProblem {
        level: example.level,
        text: example.message.clone(),
        location: example.location.clone(),
    };
    let ctx = ClassifyContext {
        step_pointers: &example.steps,
        visible_names: &example.visible,
    };
    let got = table.classify(&problem, &ctx);
    let differences = differences(table, rule, example, &got);
    (!differences.is_empty()).then(|| differences.join("; "))
}

fn differences(
    table: &RuleTable,
    rule: Option<&str>,
    example: &Example,
    got: &Classified,
) -> Vec<String> {
    let d = &got.diagnostic;
    let mut out = Vec::new();
    if got.rule.as_deref() != rule {
        out.push(format!(
            "matched {} instead of {}",
            describe_rule(got.rule.as_deref()),
            describe_rule(rule)
        ));
    }
    compare(&mut out, "code", &example.code, &d.code);
    compare(&mut out, "path", &example.path, &d.path);
    compare(&mut out, "hint", &example.hint, &d.hint);
    if let Some(severity) = example.severity {
        compare(&mut out, "severity", &severity, &d.severity);
    }
    let expected_message = match (&example.expect_message, rule) {
        (Some(message), _) => Some(message.clone()),
        // A fallback keeps the engine's text, minus redactions, by definition.
        (None, None) => Some(table.redact(&example.message)),
        (None, Some(_)) => None,
    };
    if let Some(message) = expected_message {
        compare(&mut out, "message", &message, &d.message);
    }
    out
}

fn compare<T: PartialEq + fmt::Debug>(out: &mut Vec<String>, what: &str, want: &T, got: &T) {
    if want != got {
        out.push(format!("{what}: expected {want:?}, got {got:?}"));
    }
}

fn describe_rule(rule: Option<&str>) -> String {
    match rule {
        Some(name) => format!("rule '{name}'"),
        None => "the constraint fallback".to_owned(),
    }
}
