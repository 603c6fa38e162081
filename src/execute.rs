//! The execute operation, in the exact processing order of Part II §6.5.2:
//! 1. request well-formedness (runnable selection, mode, program_ref,
//!    trace_level, test_run, store vs retention, idempotency) → request errors;
//! 2. catalog drift → `catalog_drift`;
//! 3. re-validation of an inline program, or the promotion baseline of a
//!    `program_ref` → `validation_error` / `promotion_drift`;
//! 4. input and context binding → `validation_error`;
//! 5. execution.
//!
//! Refused runs get a `run_id` and are never stored nor recorded for replay.
//! A started run's record is written before the response whenever retention
//! or `store: true` promises it.

use crate::auth::Principal;
use crate::catalog::{CatalogView, KIND_PROGRAM, canonical_json};
use crate::classify::Diagnostic;
use crate::engines::{EngineError, RunState};
use crate::gateway::{Gateway, LanguageRuntime};
use crate::languages::{RunEnd, StepInfo, binding};
use crate::pilotage::{Outcome, RequestError, RequestErrorKind, RunStatus};
use crate::store::StoreError;
use crate::validate::{self, internal};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

mod claim;

/// The abstract execute request (Part II §6.5), as read from tool arguments.
#[derive(Debug, Default, Clone)]
pub struct ExecuteRequest {
    pub program: Option<Value>,
    pub program_ref: Option<String>,
    pub input: Option<Value>,
    pub context: Option<Value>,
    pub trace_level: Option<String>,
    pub store: Option<bool>,
    pub expected_catalog_version: Option<String>,
    pub idempotency_key: Option<String>,
    pub test_run: Option<bool>,
    pub mode: Option<String>,
}

/// Trace levels, ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    None,
    Summary,
    Full,
}

impl Level {
    pub fn parse(s: &str) -> Option<Level> {
        match s {
            "none" => Some(Level::None),
            "summary" => Some(Level::Summary),
            "full" => Some(Level::Full),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Level::None => "none",
            Level::Summary => "summary",
            Level::Full => "full",
        }
    }
}

/// The declared ceiling of a language.
pub fn ceiling(lang: &LanguageRuntime) -> Level {
    Level::parse(&lang.config.trace).unwrap_or(Level::Summary)
}

/// Executes and returns the `structuredContent` of the response; request
/// errors are the `Err` side.
pub async fn execute(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    req: ExecuteRequest,
) -> Result<Value, RequestError> {
    // Held for the whole execute, idempotency waits included.
    let _slot = gw.limits.run_slot(principal)?;
    let checked = well_formed(gw, lang, principal, &req).await?;
    let run_id = new_run_id();
    let Some(key) = req.idempotency_key.clone() else {
        return run(gw, lang, principal, &req, checked, run_id, None)
            .await
            .map(|r| r.response);
    };
    let claim = claim::Claim::new(gw, principal, &key, fingerprint(&req), dedup_window(lang));
    if let Some(recorded) = claim.settle(gw).await? {
        return Ok(recorded);
    }
    let result = run(gw, lang, principal, &req, checked, run_id, Some(&claim)).await;
    claim.finish(gw, &result).await;
    result.map(|r| r.response)
}

/// What step 1 established.
struct Checked {
    level: Level,
    program_record: Option<Value>,
    deploy: bool,
    test_run: bool,
}

async fn well_formed(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    req: &ExecuteRequest,
) -> Result<Checked, RequestError> {
    let caps = &lang.config.capabilities.execute;
    let argument = &lang.config.argument;
    match (&req.program, &req.program_ref) {
        (Some(_), Some(_)) => {
            return Err(RequestError::invalid(format!(
                "supply exactly one runnable: either '{argument}' or 'program_ref', not both"
            )));
        }
        (None, None) => {
            return Err(RequestError::invalid(format!(
                "supply exactly one runnable: '{argument}' (an inline program) or 'program_ref' (a promoted program from the catalog)"
            )));
        }
        _ => {}
    }
    // The mode this principal has: a language executing "both" is
    // "immediate" or "deploy" only for a principal without the other
    // permission, and answers `mode` exactly as such a language would.
    let execution = principal
        .permissions
        .execution_of(&lang.config)
        .unwrap_or(lang.config.execution.as_str());
    let both = execution == "both";
    let deploy = match (&req.mode, both) {
        (None, true) => {
            return Err(RequestError::invalid(
                "'mode' is required for this language: \"immediate\" runs the program now, \"deploy\" promotes it to the catalog and returns its program_ref",
            ));
        }
        (Some(m), true) => match m.as_str() {
            "immediate" => false,
            "deploy" => true,
            other => {
                return Err(RequestError::invalid(format!(
                    "unknown mode '{other}': use \"immediate\" or \"deploy\""
                )));
            }
        },
        (Some(_), false) => {
            return Err(RequestError::invalid(format!(
                "'mode' applies only to languages with execution \"both\"; {} executes \"{}\" only: remove 'mode'",
                lang.config.name, execution
            )));
        }
        (None, false) => execution == "deploy",
    };
    if deploy && req.program_ref.is_some() {
        return Err(RequestError::invalid(
            "deploy promotes an inline program; a program_ref is already promoted: run it with mode \"immediate\"",
        ));
    }
    let program_record = match &req.program_ref {
        Some(r) => Some(
            gw.store
                .get_program(&principal.scope, r)
                .await
                .map_err(store_internal)?
                .ok_or_else(|| {
                    RequestError::not_found(format!(
                        "unknown program_ref '{r}': look promoted programs up with pilotage_catalog (kind \"program\")"
                    ))
                })?,
        ),
        None => None,
    };
    let level = match &req.trace_level {
        None => ceiling(lang),
        Some(l) => Level::parse(l).ok_or_else(|| {
            RequestError::invalid(format!(
                "unknown trace_level '{l}': use \"none\", \"summary\" or \"full\""
            ))
        })?,
    }
    .min(ceiling(lang));
    if req.test_run.is_some() && !caps.test_run {
        return Err(RequestError::invalid(format!(
            "test_run is not declared for {}: remove it (validate with {} to check a program without running it)",
            lang.config.name, lang.config.tools.validate
        )));
    }
    if req.store == Some(true) && lang.config.retention == "none" {
        return Err(RequestError::new(
            RequestErrorKind::Unsupported,
            format!(
                "store: true cannot be honoured: {} declares retention \"none\"",
                lang.config.name
            ),
        ));
    }
    if req.idempotency_key.is_some() && !caps.idempotency {
        return Err(RequestError::invalid(format!(
            "idempotency_key is not declared for {}: remove it",
            lang.config.name
        )));
    }
    if !principal.lasting {
        // A deploy with test_run installs nothing.
        refuse_unreachable_promises(req, deploy && req.test_run != Some(true))?;
    }
    if let Some(p) = &req.program {
        lang.language.check_bounds(p, &lang.config.bounds)?;
    }
    Ok(Checked {
        level,
        program_record,
        deploy,
        test_run: req.test_run == Some(true),
    })
}

/// A caller no later request can be (an anonymous request without a session
/// under `anonymous_scope = "session"`) is refused whatever would store
/// something only a later request could reach: a retained run, an idempotency
/// claim, a promoted program. Checked before anything is written.
fn refuse_unreachable_promises(req: &ExecuteRequest, deploy: bool) -> Result<(), RequestError> {
    const WHO: &str = "this request carries no MCP session and no API key, so no later request can be the same caller";
    if req.store == Some(true) {
        return Err(RequestError::new(
            RequestErrorKind::Unsupported,
            format!(
                "store: true cannot be honoured: {WHO}. For a retained run, call with an API key (Authorization: Bearer <key>) or open a session (initialize, then send its Mcp-Session-Id)"
            ),
        ));
    }
    if req.idempotency_key.is_some() {
        return Err(RequestError::invalid(format!(
            "idempotency_key cannot be honoured: {WHO} to be recognised on a retry. Remove it, or call with an API key or inside a session"
        )));
    }
    if deploy {
        return Err(RequestError::invalid(format!(
            "mode \"deploy\" cannot be honoured: {WHO} to reach the promoted program. Use mode \"immediate\", or call with an API key or inside a session"
        )));
    }
    Ok(())
}

/// A finished request: whether execution started, and the response.
pub(crate) struct Done {
    started: bool,
    response: Value,
}

async fn run(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    req: &ExecuteRequest,
    checked: Checked,
    run_id: String,
    claim: Option<&claim::Claim>,
) -> Result<Done, RequestError> {
    let view = lang
        .catalog
        .view(principal)
        .await
        .map_err(|e| e.before_execution())?;
    // Step 2: drift precedes re-validation.
    if let Some(expected) = &req.expected_catalog_version
        && *expected != view.version
    {
        return Ok(refused(
            &run_id,
            RunStatus::CatalogDrift,
            "catalog version mismatch",
            None,
        ));
    }
    // Step 3: re-validation or the promotion baseline.
    let (program, steps) = match &checked.program_record {
        None => {
            let program = req.program.clone().unwrap_or(Value::Null);
            let verdict =
                validate::validate(gw, lang, principal, &view, &program, req.context.as_ref())
                    .await?;
            if !verdict.valid {
                return Ok(refused(
                    &run_id,
                    RunStatus::ValidationError,
                    "the program is invalid; nothing was executed",
                    Some(&verdict.diagnostics),
                ));
            }
            (program, verdict.steps.clone())
        }
        Some(record) => {
            if let Some(changed) = baseline_drift(record, &view) {
                return Ok(refused(
                    &run_id,
                    RunStatus::PromotionDrift,
                    &format!(
                        "catalog entry '{changed}' changed since promotion; promote the program again"
                    ),
                    None,
                ));
            }
            let program = record.get("program").cloned().unwrap_or(Value::Null);
            let steps = lang.language.steps(&program);
            // The ceiling may be lower now than at promotion (configuration,
            // or a token's claim): the run stays within today's.
            let above = validate::ceiling_findings(&steps, &view, &principal.ceiling);
            if !above.is_empty() {
                return Ok(refused(
                    &run_id,
                    RunStatus::ValidationError,
                    "the promoted program is above this caller's risk ceiling; nothing was executed",
                    Some(&above),
                ));
            }
            (program, steps)
        }
    };
    // Step 4: input and context binding.
    let input = req.input.clone().unwrap_or_else(|| json!({}));
    let installs = checked.deploy && !checked.test_run;
    // Installing binds no input: the body runs later, with its own.
    let mut binding = if installs {
        Vec::new()
    } else {
        input_findings(lang, &program, checked.program_record.as_ref(), &input)
    };
    if checked.program_record.is_some() {
        binding.extend(validate::context_findings(lang, req.context.as_ref()));
    }
    if !binding.is_empty() {
        return Ok(refused(
            &run_id,
            RunStatus::ValidationError,
            "input or context does not bind; nothing was executed",
            Some(&binding),
        ));
    }
    // Step 5, once the store has room for what it will record and the
    // idempotency claim (if any) is marked started.
    if retains(lang, principal, req) || claim.is_some() {
        gw.store
            .admit(&principal.scope)
            .await
            .map_err(|e| store_internal_with(&e, "nothing was executed"))?;
    }
    if let Some(claim) = claim {
        claim.start(gw).await?;
    }
    if installs {
        return promote(
            gw,
            lang,
            principal,
            req,
            &view,
            &program,
            &steps,
            run_id,
            checked.level,
        )
        .await;
    }
    let context = req
        .context
        .as_ref()
        .filter(|_| lang.context_schema.is_some());
    let deadline = Duration::from_millis(lang.engine_config.run_deadline_ms);
    let started = std::time::Instant::now();
    let in_flight = gw.metrics.run_in_flight();
    let reply = lang
        .engine
        .run(
            &principal.tenant,
            &program,
            &input,
            context,
            checked.test_run,
            deadline,
        )
        .await;
    drop(in_flight);
    let (mut outcome, output, events, end) = match reply {
        Err(EngineError::Unreachable(m)) | Err(EngineError::Failed(m)) => {
            return Err(internal(&EngineError::Failed(m)));
        }
        // The engine's answer shows nothing ran (as the mapping reads it): a
        // request error before execution, never a replayed outcome.
        Err(e @ EngineError::NotStarted(_)) => return Err(internal(&e)),
        Err(EngineError::RunBroken { message, events }) => (
            Outcome::run_failure(
                RunStatus::Partial,
                format!("the engine failed mid-run: {message}"),
            ),
            None,
            events,
            RunEnd::Failed,
        ),
        Ok(reply) => match reply.state {
            RunState::Rejected => {
                let mut diagnostics =
                    validate::classify_problems(gw, lang, &view, &steps, reply.problems);
                validate::locate_whole_program(lang, &program, &mut diagnostics);
                return Ok(refused(
                    &run_id,
                    RunStatus::ValidationError,
                    "the engine rejected the program; nothing was executed",
                    Some(&diagnostics),
                ));
            }
            RunState::Completed => (
                Outcome::success(),
                Some(reply.result),
                reply.events,
                RunEnd::Completed,
            ),
            RunState::Failed => {
                // `partial` instead once the trace shows a call that
                // completed (side effects may exist).
                let error = reply.error.unwrap_or_else(|| "the run failed".into());
                (
                    Outcome::run_failure(RunStatus::Error, error),
                    None,
                    reply.events,
                    RunEnd::Failed,
                )
            }
            RunState::TimedOut => {
                let error = reply
                    .error
                    .unwrap_or_else(|| "the run's deadline passed".into());
                (
                    Outcome::run_failure(RunStatus::Timeout, error),
                    None,
                    reply.events,
                    RunEnd::TimedOut,
                )
            }
        },
    };
    let full_steps = lang
        .language
        .trace(&program, &events, lang.engine.profile(), &steps, end);
    if end == RunEnd::Failed
        && outcome.status == RunStatus::Error.as_str()
        && any_call_succeeded(&full_steps)
    {
        outcome.status = RunStatus::Partial.as_str();
    }
    let stats = json!({"calls": full_steps.iter().filter(|s| s.get("calls").is_some()).count(),
        "duration_ms": started.elapsed().as_millis() as u64, "test_run": checked.test_run});
    finish_started(
        gw,
        lang,
        principal,
        req,
        run_id,
        outcome,
        output,
        full_steps,
        stats,
        checked.level,
    )
    .await
}

/// Builds the response, and the record when retention promises one; the
/// record is durably written before the response leaves.
#[allow(clippy::too_many_arguments)]
async fn finish_started(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    req: &ExecuteRequest,
    run_id: String,
    outcome: Outcome,
    output: Option<Value>,
    full_steps: Vec<Value>,
    mut stats: Value,
    level: Level,
) -> Result<Done, RequestError> {
    let recorded_level = ceiling(lang);
    let recorded_steps = if recorded_level == Level::Full {
        full_steps
    } else {
        lang.language.summarize(&full_steps)
    };
    if retains(lang, principal, req) {
        let record = envelope(
            &run_id,
            &outcome,
            output.as_ref(),
            Some((recorded_level, &recorded_steps, &stats)),
        );
        let ttl = lang
            .config
            .retention_duration()
            .unwrap_or(Duration::from_secs(24 * 3600));
        if let Err(e) = write_with_retry(gw, principal, &run_id, &record, ttl).await {
            tracing::error!(%run_id, error = %e, "run record could not be stored after the run; the response says retained: false");
            stats["retained"] = Value::Bool(false);
        }
    }
    let response = match level {
        Level::None => envelope(&run_id, &outcome, output.as_ref(), None),
        Level::Full if recorded_level == Level::Full => envelope(
            &run_id,
            &outcome,
            output.as_ref(),
            Some((Level::Full, &recorded_steps, &stats)),
        ),
        _ => {
            let steps = lang.language.summarize(&recorded_steps);
            envelope(
                &run_id,
                &outcome,
                output.as_ref(),
                Some((Level::Summary, &steps, &stats)),
            )
        }
    };
    Ok(Done {
        started: true,
        response,
    })
}

/// Whether a started run's record is kept (retention, or `store`).
/// Whether this run gets a record. A caller no later request can be gets
/// none: nobody could fetch it.
fn retains(lang: &LanguageRuntime, principal: &Principal, req: &ExecuteRequest) -> bool {
    principal.lasting
        && match req.store {
            Some(flag) => flag,
            None => lang.config.retention != "none",
        }
}

/// `{run_id, outcome, output?, trace?}` — the same shape for the execute
/// response and the stored record.
fn envelope(
    run_id: &str,
    outcome: &Outcome,
    output: Option<&Value>,
    trace: Option<(Level, &Vec<Value>, &Value)>,
) -> Value {
    let mut out = Map::new();
    out.insert("run_id".into(), Value::String(run_id.into()));
    out.insert("outcome".into(), outcome.to_json());
    if outcome.ok
        && let Some(o) = output
    {
        out.insert("output".into(), o.clone());
    }
    if let Some((level, steps, stats)) = trace {
        out.insert(
            "trace".into(),
            json!({"run_id": run_id, "level": level.as_str(), "steps": steps, "stats": stats}),
        );
    }
    Value::Object(out)
}

/// A refused run: a run_id, an outcome, diagnostics when validation refused.
fn refused(
    run_id: &str,
    status: RunStatus,
    error: &str,
    diagnostics: Option<&[Diagnostic]>,
) -> Done {
    let mut response = json!({
        "run_id": run_id,
        "outcome": Outcome::run_failure(status, error).to_json(),
    });
    if let Some(d) = diagnostics {
        response["diagnostics"] = json!(d);
    }
    Done {
        started: false,
        response,
    }
}

/// Deploy: promote the program as a catalog entry with its recorded baseline
/// (Part II §5.4), and answer with an installation trace.
#[allow(clippy::too_many_arguments)]
async fn promote(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    req: &ExecuteRequest,
    view: &CatalogView,
    program: &Value,
    steps: &[StepInfo],
    run_id: String,
    level: Level,
) -> Result<Done, RequestError> {
    let started = std::time::Instant::now();
    let mut baseline = Map::new();
    for cap in steps.iter().filter_map(|s| s.capability.as_deref()) {
        if let Some(entry) = view.get(cap) {
            baseline.insert(cap.to_string(), load_bearing(entry));
        }
    }
    let baseline = Value::Object(baseline);
    let body_plan = lang.language.plan(program, steps, &|cap| {
        let hints = view.capability_risk(cap)?;
        Some((hints.level().to_string(), hints))
    });
    let hints = lang.language.plan_max_hints(&body_plan);
    let digest = Sha256::digest(
        format!(
            "{}\u{0}{}",
            canonical_json(program),
            canonical_json(&baseline)
        )
        .as_bytes(),
    );
    let program_ref = format!("wf_{}", &hex::encode(digest)[..24]);
    let name = lang
        .language
        .program_name(program)
        .unwrap_or_else(|| program_ref.clone());
    let entry = json!({
        "id": program_ref,
        "kind": KIND_PROGRAM,
        "name": name,
        "description": format!("Promoted {} program; run it with program_ref and mode \"immediate\".", lang.config.name),
        "input_schema": lang.language.input_schema(program).unwrap_or_else(|| json!({"type": "object"})),
        "output_schema": Value::Null,
        "risk": hints.level(),
        "risk_hints": hints.to_json(),
        "tags": ["program"],
        "languages": [lang.config.name],
    });
    let record = json!({"entry": entry, "program": program, "baseline": baseline,
        "language": lang.config.name, "promoted_at_ms": now_ms()});
    gw.store
        .put_program(
            &principal.scope,
            &program_ref,
            &record,
            lang.config.promotion_lifetime(),
        )
        .await
        .map_err(store_internal)?;
    let output = json!({"program_ref": program_ref});
    let install = vec![json!({
        "id": "install",
        "input": {"name": name},
        "output": output,
        "outcome": Outcome::success().to_json(),
        "t_ms": started.elapsed().as_millis() as u64,
    })];
    let stats = json!({"installed": program_ref});
    finish_started(
        gw,
        lang,
        principal,
        req,
        run_id,
        Outcome::success(),
        Some(output),
        install,
        stats,
        level,
    )
    .await
}

/// The load-bearing fields of an entry (Part II §5.4 baseline).
fn load_bearing(entry: &Value) -> Value {
    let mut out = Map::new();
    for k in [
        "kind",
        "input_schema",
        "output_schema",
        "risk",
        "risk_hints",
        "languages",
    ] {
        if let Some(v) = entry.get(k) {
            out.insert(k.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// The first referenced entry whose load-bearing fields changed or vanished.
fn baseline_drift(record: &Value, view: &CatalogView) -> Option<String> {
    let baseline = record.get("baseline")?.as_object()?;
    baseline.iter().find_map(|(id, recorded)| {
        let current = view.get(id).map(|e| load_bearing(e));
        (current.as_ref() != Some(recorded)).then(|| id.clone())
    })
}

/// Input binding (Part II §6.5.5): a promoted program binds against its
/// entry's `input_schema`; an inline one against the workflow's own `input`
/// schema (the convention the closed-sets guide documents).
fn input_findings(
    lang: &LanguageRuntime,
    program: &Value,
    record: Option<&Value>,
    input: &Value,
) -> Vec<Diagnostic> {
    let schema = match record {
        Some(r) => r.get("entry").and_then(|e| e.get("input_schema")).cloned(),
        None => lang.language.input_schema(program),
    };
    let Some(schema) = schema else {
        return Vec::new();
    };
    match jsonschema::validator_for(&schema) {
        Ok(v) => binding::bind(&v, input, "input_binding", "input"),
        Err(e) => vec![binding::binding_root(
            "input_binding",
            format!("the program's input schema is not a valid JSON Schema: {e}"),
        )],
    }
}

/// Whether a call completed before the failure (side effects may exist),
/// as the language's trace shows it.
fn any_call_succeeded(trace: &[Value]) -> bool {
    trace.iter().any(|step| {
        step.get("calls").is_some()
            && step.pointer("/outcome/ok").and_then(Value::as_bool) == Some(true)
    })
}

async fn write_with_retry(
    gw: &Gateway,
    principal: &Principal,
    run_id: &str,
    record: &Value,
    ttl: Duration,
) -> Result<(), StoreError> {
    const ATTEMPTS: u32 = 4;
    let mut delay = Duration::from_millis(100);
    let mut attempt = 1;
    loop {
        match gw
            .store
            .put_run(&principal.scope, run_id, record, ttl)
            .await
        {
            Ok(()) => return Ok(()),
            Err(e) if attempt == ATTEMPTS => return Err(e),
            Err(e) => {
                tracing::warn!(%run_id, attempt, error = %e, "run record write failed; retrying");
                tokio::time::sleep(delay).await;
                delay *= 4;
                attempt += 1;
            }
        }
    }
}

fn fingerprint(req: &ExecuteRequest) -> String {
    let runnable = json!({
        "program": req.program, "program_ref": req.program_ref,
        "mode": req.mode, "test_run": req.test_run,
    });
    let input = req.input.clone().unwrap_or_else(|| json!({}));
    format!(
        "{}:{}",
        hex::encode(Sha256::digest(canonical_json(&runnable).as_bytes())),
        hex::encode(Sha256::digest(canonical_json(&input).as_bytes()))
    )
}

/// The dedup window is at least the declared retention (Part II §6.5.6).
fn dedup_window(lang: &LanguageRuntime) -> Duration {
    lang.config
        .retention_duration()
        .unwrap_or(Duration::from_secs(24 * 3600))
}

fn store_internal(e: StoreError) -> RequestError {
    store_internal_with(&e, "nothing was executed")
}

/// A store failure before execution, named as one (not as the engine's).
fn store_internal_with(e: &StoreError, consequence: &str) -> RequestError {
    validate::store_internal(e, consequence)
}

/// 128 random bits.
fn new_run_id() -> String {
    format!("run_{:032x}", rand::random::<u128>())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
