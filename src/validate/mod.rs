//! The validate operation (Part II §6.4), shared by the validate tool and by
//! execute's re-validation guard (Part II §6.5.2 step 3), one file per step.
//!
//! Order: bounds (a request error, the language's own check) → program
//! structure → gateway-native findings: the language's own checks, names
//! the caller cannot see ([`visibility`]), the risk ceiling ([`ceiling`]),
//! context binding ([`context`]) → the engine's validator through the
//! classifier ([`engine`]) → locators ([`locate`]) and the plan, and the
//! tool's answer written once ([`response`]). Verdicts are cached
//! ([`verdict`]), so execute after validate does not ask the engine twice
//! (Part IV §6).

pub mod ceiling;
pub mod context;
pub mod engine;
pub mod locate;
mod parameter_hint;
pub mod response;
pub mod verdict;
pub mod visibility;

pub use ceiling::{RISK_CEILING, ceiling_findings};
pub use context::context_findings;
pub use engine::classify_problems;
pub use locate::locate_whole_program;
pub use response::Response;
pub use verdict::{Verdict, VerdictCache};

use crate::auth::Principal;
use crate::catalog::CatalogView;
use crate::catalog::risk_when::step_risk;
use crate::classify::{Diagnostic, Severity};
use crate::gateway::{Gateway, LanguageRuntime};
use crate::languages::StepInfo;
use crate::pilotage::RequestError;
use serde_json::Value;
use serde_json::value::RawValue;
use std::collections::HashSet;
use std::sync::Arc;
use verdict::Keyed;
use visibility::HiddenSteps;

/// What is validated: the program and its context, each with the text it
/// arrived in when the front kept it (the verdict's key, see [`Keyed`]).
pub struct Subject<'a> {
    pub program: &'a Value,
    pub program_text: Option<&'a RawValue>,
    pub context: Option<&'a Value>,
    pub context_text: Option<&'a RawValue>,
}

impl Subject<'_> {
    fn key(&self, lang: &LanguageRuntime, principal: &Principal, view: &CatalogView) -> String {
        verdict::cache_key(
            principal,
            &lang.config.name,
            view,
            self.program_text
                .map_or(Keyed::Tree(self.program), Keyed::Text),
            self.context
                .map(|c| self.context_text.map_or(Keyed::Tree(c), Keyed::Text)),
        )
    }
}

/// Validates `subject` for `principal`. The caller has checked the program
/// against the language's bounds already (the validate tool and execute's
/// well-formedness step both do, before the catalog is read), so a large
/// program is not walked twice.
pub async fn validate(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    view: &CatalogView,
    subject: Subject<'_>,
) -> Result<Arc<Verdict>, RequestError> {
    let key = subject.key(lang, principal, view);
    validate_as(
        gw,
        lang,
        principal,
        view,
        (subject.program, subject.context),
        key,
    )
    .await
}

/// [`validate`] with the verdict's key already made (by [`text_key`], for
/// the same program and context as `subject`'s trees).
pub async fn validate_as(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    view: &CatalogView,
    (program, context): (&Value, Option<&Value>),
    key: String,
) -> Result<Arc<Verdict>, RequestError> {
    if let Some(hit) = gw.verdicts.get(&key).await {
        return Ok(hit);
    }
    let steps = lang.language.steps(program);
    let verdict = Arc::new(compute(gw, lang, principal, view, program, context, steps).await?);
    gw.verdicts.insert(key, verdict.clone()).await;
    Ok(verdict)
}

/// The key of the verdict for a program (and context) sent in this very
/// text: the key [`validate`] makes for their trees read from it.
pub fn text_key(
    lang: &LanguageRuntime,
    principal: &Principal,
    view: &CatalogView,
    program: &RawValue,
    context: Option<&RawValue>,
) -> String {
    verdict::cache_key(
        principal,
        &lang.config.name,
        view,
        Keyed::Text(program),
        context.map(Keyed::Text),
    )
}

async fn compute(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    view: &CatalogView,
    program: &Value,
    context: Option<&Value>,
    steps: Vec<StepInfo>,
) -> Result<Verdict, RequestError> {
    let mut diagnostics = Vec::new();
    diagnostics.extend(context_findings(lang, context));
    if let Some(problem) = lang.language.structure_problem(program) {
        diagnostics.push(problem);
        return Ok(finish(lang, view, program, diagnostics, steps));
    }
    diagnostics.extend(lang.language.native_checks(program, &steps, view));
    let hidden = HiddenSteps::find(&*lang.language, &steps, view);
    diagnostics.extend(hidden.findings.iter().cloned());
    diagnostics.extend(ceiling_findings(
        &*lang.language,
        program,
        &steps,
        view,
        &principal.ceiling,
    ));
    // Context reaches the engine only when the language declares it.
    let engine_context = context.filter(|_| lang.context_schema.is_some());
    let problems = lang
        .engine
        .check(&principal.tenant, program, engine_context)
        .await
        .map_err(|e| crate::pilotage::internal(&e))?;
    let mut seen = HashSet::new();
    for d in classify_problems(gw, lang, view, &steps, problems) {
        if hidden.cover(&d.path) {
            continue;
        }
        let fingerprint = (d.code.clone(), d.path.clone(), d.message.clone());
        if seen.insert(fingerprint) {
            diagnostics.push(d);
        }
    }
    parameter_hint::add(&mut diagnostics, &steps, view);
    Ok(finish(lang, view, program, diagnostics, steps))
}

fn finish(
    lang: &LanguageRuntime,
    view: &CatalogView,
    program: &Value,
    mut diagnostics: Vec<Diagnostic>,
    steps: Vec<StepInfo>,
) -> Verdict {
    locate_whole_program(lang, program, &mut diagnostics);
    let valid = !diagnostics.iter().any(|d| d.severity == Severity::Error);
    let plan = (valid && lang.config.capabilities.plan).then(|| {
        lang.language.plan(program, &steps, &|cap, parameters| {
            step_risk(view, cap, parameters)
        })
    });
    let response = Response::new(lang, valid, &diagnostics, plan, &steps, &view.version);
    Verdict {
        valid,
        diagnostics,
        response,
        steps,
    }
}
