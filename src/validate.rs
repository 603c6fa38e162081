//! The validate operation (Part II §6.4), shared by the validate tool and by
//! execute's re-validation guard (Part II §6.5.2 step 3).
//!
//! Order: bounds (request error) → program structure → gateway-native findings
//! (reserved ids, names the caller cannot see, context binding) → the engine's
//! validator through the classifier. Verdicts are cached by
//! (tenant, program hash, catalog_version, context hash), so execute after
//! validate does not ask the engine twice (Part IV §6).

use crate::auth::Principal;
use crate::auth::policy::RiskCeiling;
use crate::catalog::{CatalogView, canonical_json, write_canonical_to};
use crate::classify::{ClassifyContext, Diagnostic, EngineProblem, Severity};
use crate::engines::{EngineError, RawProblem};
use crate::gateway::{Gateway, LanguageRuntime};
use crate::languages::{StepInfo, StepKind, binding};
use crate::pilotage::RequestError;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::sync::Arc;

/// The result of validating one program against one catalog view.
#[derive(Debug)]
pub struct Verdict {
    pub valid: bool,
    pub diagnostics: Vec<Diagnostic>,
    pub plan: Option<Value>,
    pub steps: Vec<StepInfo>,
}

/// Verdict cache shared by validate and execute, bounded by the estimated
/// bytes of its verdicts (`cache.verdict_bytes`): a verdict's plan and
/// diagnostics grow with its program, so a count would bound nothing.
pub struct VerdictCache {
    cache: moka::future::Cache<String, Arc<Verdict>>,
}

impl VerdictCache {
    pub fn new(max_bytes: u64) -> Self {
        Self {
            cache: moka::future::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|key: &String, verdict: &Arc<Verdict>| {
                    crate::weigh::as_weight(crate::weigh::text(key) + verdict.weight())
                })
                .time_to_live(std::time::Duration::from_secs(600))
                .build(),
        }
    }

    /// Verdicts held (moka counts lazily: settled first).
    pub async fn entry_count(&self) -> u64 {
        self.cache.run_pending_tasks().await;
        self.cache.entry_count()
    }

    /// Drops every verdict (after a rule reload).
    pub fn clear(&self) {
        self.cache.invalidate_all();
    }

    /// Estimated bytes held, after pending evictions ran (tests, benchmarks).
    pub async fn weighted_size(&self) -> u64 {
        self.cache.run_pending_tasks().await;
        self.cache.weighted_size()
    }
}

impl Verdict {
    /// Estimated heap bytes of this verdict.
    fn weight(&self) -> u64 {
        use crate::weigh::{json, text};
        let diagnostics: u64 = self
            .diagnostics
            .iter()
            .map(|d| {
                text(&d.code) + text(&d.path) + text(&d.message) + d.hint.as_deref().map_or(0, text)
            })
            .sum();
        let steps: u64 = self
            .steps
            .iter()
            .map(|s| {
                // Enclosing ids are shared between steps: counted once per
                // step as a pointer, their text is in the program's weight.
                96 + text(&s.pointer)
                    + s.id.as_deref().map_or(0, text)
                    + s.capability.as_deref().map_or(0, text)
            })
            .sum();
        let shared: u64 = self
            .steps
            .iter()
            .filter(|s| s.kind != StepKind::Call && s.kind != StepKind::Set)
            .filter_map(|s| s.id.as_deref().map(text))
            .sum();
        64 + diagnostics + steps + shared + self.plan.as_ref().map_or(0, json)
    }
}

/// Validates `program` with `context` for `principal`.
pub async fn validate(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    view: &CatalogView,
    program: &Value,
    context: Option<&Value>,
) -> Result<Arc<Verdict>, RequestError> {
    lang.language.check_bounds(program, &lang.config.bounds)?;
    let key = cache_key(principal, &lang.config.name, program, view, context);
    if let Some(hit) = gw.verdicts.cache.get(&key).await {
        return Ok(hit);
    }
    let steps = lang.language.steps(program);
    let verdict = Arc::new(compute(gw, lang, principal, view, program, context, steps).await?);
    gw.verdicts.cache.insert(key, verdict.clone()).await;
    Ok(verdict)
}

fn cache_key(
    principal: &Principal,
    language: &str,
    program: &Value,
    view: &CatalogView,
    context: Option<&Value>,
) -> String {
    let mut h = Sha256::new();
    // Principals of one tenant share verdicts unless their ceilings differ.
    let ceiling = format!("{:?}", principal.ceiling);
    for part in [&principal.tenant, language, &view.version, &ceiling] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    // Streamed into the hash: a large program is never written out whole.
    let mut sink = HashSink(&mut h);
    let _ = write_canonical_to(program, &mut sink);
    h.update([0]);
    if let Some(c) = context {
        h.update(canonical_json(c).as_bytes());
    }
    hex::encode(h.finalize())
}

/// `io::Write` into a SHA-256 state.
struct HashSink<'a>(&'a mut Sha256);

impl std::io::Write for HashSink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
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
    let visible = view.callable_names();
    // Steps calling something the caller cannot see: the gateway reports them
    // itself and drops whatever the engine says under them, so "unknown" and
    // "not enabled for this tenant" can never be told apart.
    let mut hidden_steps = Vec::new();
    for step in &steps {
        if let Some(cap) = &step.capability
            && view.capability_risk(cap).is_none()
        {
            diagnostics.push(lang.language.unknown_capability(step, cap, &visible));
            hidden_steps.push(step.pointer.clone());
        }
    }
    diagnostics.extend(ceiling_findings(&steps, view, &principal.ceiling));
    // Context reaches the engine only when the language declares it.
    let engine_context = context.filter(|_| lang.context_schema.is_some());
    let problems = lang
        .engine
        .check(&principal.tenant, program, engine_context)
        .await
        .map_err(|e| internal(&e))?;
    let mut seen = HashSet::new();
    for d in classify_problems(gw, lang, view, &steps, problems) {
        let under_hidden = hidden_steps
            .iter()
            .any(|p| d.path == *p || d.path.starts_with(&format!("{p}/")));
        if under_hidden {
            continue;
        }
        let fingerprint = (d.code.clone(), d.path.clone(), d.message.clone());
        if seen.insert(fingerprint) {
            diagnostics.push(d);
        }
    }
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
        lang.language.plan(program, &steps, &|cap| {
            let hints = view.capability_risk(cap)?;
            let risk = view
                .get(cap)
                .and_then(|e| e.get("risk").and_then(Value::as_str).map(str::to_string))
                .unwrap_or_else(|| hints.level().to_string());
            Some((risk, hints))
        })
    });
    Verdict {
        valid,
        diagnostics,
        plan,
        steps,
    }
}

/// Steps whose risk is above the principal's ceiling (a gateway-native
/// check, so execute refuses such a program before any side effect, whatever
/// the Host's own gate does). Risk is judged from the step's `risk_hints`.
pub fn ceiling_findings(
    steps: &[StepInfo],
    view: &CatalogView,
    ceiling: &RiskCeiling,
) -> Vec<Diagnostic> {
    if ceiling.is_none() {
        return Vec::new();
    }
    steps
        .iter()
        .filter_map(|step| {
            let cap = step.capability.as_deref()?;
            let why = ceiling.breach(view.capability_risk(cap)?)?;
            let id = step.id.as_deref().unwrap_or("?");
            Some(Diagnostic {
                severity: Severity::Error,
                code: RISK_CEILING.into(),
                path: step.pointer.clone(),
                message: format!("step '{id}' calls '{cap}': {why}"),
                hint: Some(
                    "remove or replace this step, or run the program as a caller whose ceiling allows it".into(),
                ),
            })
        })
        .collect()
}

/// Whole-program findings (an empty locator) get the language's root
/// locator; input and context findings keep their JSON Pointers into those
/// values (Part II §5.5).
pub fn locate_whole_program(
    lang: &LanguageRuntime,
    program: &Value,
    diagnostics: &mut [Diagnostic],
) {
    let mut root = None;
    for d in diagnostics.iter_mut() {
        if d.path.is_empty() && d.code != "input_binding" && d.code != "context_binding" {
            d.path = root
                .get_or_insert_with(|| lang.language.root_locator(program))
                .clone();
        }
    }
}

/// The diagnostic code of [`ceiling_findings`] (closed-sets guide).
pub const RISK_CEILING: &str = "risk_ceiling";

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

/// Context binding (Part II §6.4): checked against `context_schema`, refused
/// when the language declares none.
pub fn context_findings(lang: &LanguageRuntime, context: Option<&Value>) -> Vec<Diagnostic> {
    match (&lang.context_schema, context) {
        (None, None) => Vec::new(),
        (None, Some(_)) => vec![binding::binding_root(
            "context_binding",
            format!(
                "language {} takes no context; remove the 'context' member",
                lang.config.name
            ),
        )],
        (Some(_), None) => vec![binding::binding_root(
            "context_binding",
            "this language requires a 'context' value (see context_schema in the manifest)".into(),
        )],
        (Some((_, validator)), Some(ctx)) => {
            binding::bind(validator, ctx, "context_binding", "context")
        }
    }
}

/// The validate response (Part II §6.4).
pub fn response(lang: &LanguageRuntime, verdict: &Verdict, view: &CatalogView) -> Value {
    let mut out = json!({
        "valid": verdict.valid,
        "diagnostics": verdict.diagnostics,
        "catalog_version": view.version,
    });
    if let Some(plan) = &verdict.plan {
        out["plan"] = plan.clone();
    } else if verdict.valid && !lang.config.capabilities.plan {
        let refs: Vec<&str> = verdict
            .steps
            .iter()
            .filter_map(|s| s.capability.as_deref())
            .collect();
        out["references"] = json!(refs);
    }
    out
}

/// An engine failure before execution is an `internal` request error.
pub fn internal(e: &EngineError) -> RequestError {
    tracing::warn!(source = "engine", error = %e, "engine failure before execution");
    RequestError::internal(format!("the workflow engine failed: {e}"))
}

/// A failure of the gateway's own store before execution: an `internal`
/// request error that names the store, never the engine; `consequence`
/// tells the caller what happened (or did not) and what to do.
pub fn store_internal(e: &crate::store::StoreError, consequence: &str) -> RequestError {
    tracing::warn!(source = "store", error = %e, "store failure before execution");
    RequestError::internal(format!("the gateway's store failed: {e}; {consequence}"))
}
