//! The engine's validator, through the language's classifier rules (Part II
//! §6.4): its problems become closed-set diagnostics in the caller's scope.

use crate::catalog::CatalogView;
use crate::classify::{ClassifyContext, Diagnostic, EngineProblem, Severity};
use crate::engines::RawProblem;
use crate::gateway::{Gateway, LanguageRuntime};
use crate::languages::StepInfo;

/// The engine's problems through the language's rule table, in the caller's
/// scope (step locators, visible names for hints); a language without a table
/// (never, once started) degrades to `constraint`.
pub fn classify_problems(
    gw: &Gateway,
    lang: &LanguageRuntime,
    view: &CatalogView,
    steps: &[StepInfo],
    problems: Vec<RawProblem>,
) -> Vec<Diagnostic> {
    // A rule's step id is captured from a problem's text, so only the steps
    // some text names need a locator: a map of every step would cost memory
    // in proportion to the program for the one or two a message names.
    let named: Vec<StepInfo> = steps
        .iter()
        .filter(|s| {
            s.id.as_deref()
                .is_some_and(|id| problems.iter().any(|p| p.text.contains(id)))
        })
        .cloned()
        .collect();
    let pointers = lang.language.step_locators(&named);
    let visible = view.callable_names();
    let ctx = ClassifyContext {
        step_pointers: &pointers,
        visible_names: &visible,
    };
    problems
        .into_iter()
        .map(|p| {
            let problem = EngineProblem {
                level: if p.is_error {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                text: p.text,
                location: p.location,
            };
            match gw.classifiers.classify(&lang.config.name, &problem, &ctx) {
                Some(c) => c.diagnostic,
                None => Diagnostic {
                    severity: problem.level,
                    code: "constraint".into(),
                    path: String::new(),
                    message: problem.text,
                    hint: None,
                },
            }
        })
        .collect()
}
