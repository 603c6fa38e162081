//! The execute operation, in the exact processing order of Part II §6.5.2,
//! one file per step:
//! 1. `request` — well-formedness (runnable selection, mode, program_ref,
//!    trace_level, test_run, store vs retention, idempotency) → request errors;
//! 2. `revalidate` — catalog drift → `catalog_drift`;
//! 3. `revalidate` — re-validation of an inline program, or the promotion
//!    baseline of a `program_ref` → `validation_error` / `promotion_drift`;
//! 4. `bind` — input and context binding → `validation_error`;
//! 5. `run` — execution on the engine, or `promote` for a deploy;
//!    then `record` writes what retention promises and builds the response.
//!
//! `claim` holds the idempotency key around steps 2–5. Refused runs get a
//! `run_id` and are never stored nor recorded for replay. A started run's
//! record is written before the response whenever retention or `store: true`
//! promises it.

use crate::auth::Principal;
use crate::gateway::{Gateway, LanguageRuntime};
use crate::languages::StepInfo;
use crate::pilotage::{Outcome, RequestError};
use crate::store::StoreError;
use serde_json::Value;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tracing::Instrument;

pub mod approval;
mod bind;
mod claim;
pub mod input_schemas;
mod promote;
mod record;
mod request;
mod revalidate;
mod run;

/// The abstract execute request (Part II §6.5), as read from tool arguments.
#[derive(Debug, Default, Clone)]
pub struct ExecuteRequest {
    pub program: Option<Value>,
    /// The text `program` arrived in, when the front kept it.
    pub program_text: Option<Box<serde_json::value::RawValue>>,
    pub program_ref: Option<String>,
    pub input: Option<Value>,
    pub context: Option<Value>,
    /// The text `context` arrived in, when the front kept it.
    pub context_text: Option<Box<serde_json::value::RawValue>>,
    pub trace_level: Option<String>,
    pub store: Option<bool>,
    pub expected_catalog_version: Option<String>,
    pub idempotency_key: Option<String>,
    pub test_run: Option<bool>,
    pub mode: Option<String>,
    /// Not an argument: how a task holds its run.
    pub terms: RunTerms,
}

/// How a run is held beyond its arguments: a task's own deadline, and the
/// stop its cancel triggers.
#[derive(Debug, Default, Clone)]
pub struct RunTerms {
    /// Replaces the language's `run_deadline_ms`.
    pub deadline: Option<Duration>,
    /// Cancelled when the run must stop (the task was cancelled).
    pub stop: Option<tokio_util::sync::CancellationToken>,
    /// The call is a task's, taken over from an instance that died: a run
    /// that instance started will never record its answer.
    pub holder_gone: bool,
    /// A task's call: where a run that needs approval reports its hold.
    pub hold: Option<approval::HoldSlot>,
    /// The approval a held run was given.
    pub approved: Option<approval::Approved>,
}

/// Why a passing caller (an anonymous request without a session or key) is
/// never promised anything a later request would reach.
pub const PASSING_CALLER: &str = "this request carries no API key, token or MCP session, so no later request can be the same caller";

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
    let checked = request::well_formed(gw, lang, principal, &req).await?;
    let ex = Exec {
        gw,
        lang,
        principal,
        req: &req,
        run_id: new_run_id(),
        checked,
    };
    // Every line logged while the run is prepared, sent and recorded names it.
    let span = tracing::info_span!("execute", run_id = %ex.run_id);
    executed(&ex).instrument(span).await
}

/// The steps of one execute, behind its idempotency claim when it has a key.
async fn executed(ex: &Exec<'_>) -> Result<Value, RequestError> {
    let (gw, req) = (ex.gw, ex.req);
    let Some(key) = req.idempotency_key.clone() else {
        return steps(ex, None).await.map(|r| r.response);
    };
    let claim = claim::Claim::new(
        gw,
        ex.principal,
        &key,
        request::fingerprint(req),
        ex.deadline(),
        request::dedup_window(ex.lang),
    );
    if let Some(recorded) = claim.settle(gw, req.terms.holder_gone).await? {
        return Ok(recorded);
    }
    let result = steps(ex, Some(&claim)).await;
    claim.finish(gw, &result).await;
    result.map(|r| r.response)
}

/// One well-formed execute request, as every later step sees it.
struct Exec<'a> {
    gw: &'a Gateway,
    lang: &'a LanguageRuntime,
    principal: &'a Principal,
    req: &'a ExecuteRequest,
    run_id: String,
    checked: request::Checked,
}

impl Exec<'_> {
    /// The run's deadline: a task's own, else the language's.
    fn deadline(&self) -> Duration {
        self.req.terms.deadline.unwrap_or(Duration::from_millis(
            self.lang.engine_config.run_deadline_ms,
        ))
    }
}

/// The program that passed steps 2 and 3, with its steps as the language
/// reads them.
struct Runnable {
    program: Value,
    steps: Vec<StepInfo>,
}

/// A started run's result, before it is recorded and answered.
struct Finished {
    outcome: Outcome,
    output: Option<Value>,
    trace: Vec<Value>,
    stats: Value,
}

/// A finished request: whether execution started, and the response.
pub(crate) struct Done {
    started: bool,
    response: Value,
}

/// Why steps 2–5 stopped early: a refused run (answered with its outcome)
/// or a request error.
enum Halt {
    Refused(Done),
    Failed(RequestError),
}

impl From<RequestError> for Halt {
    fn from(e: RequestError) -> Self {
        Halt::Failed(e)
    }
}

/// Steps 2 to 5, in the order of §6.5.2.
async fn steps(ex: &Exec<'_>, claim: Option<&claim::Claim>) -> Result<Done, RequestError> {
    match steps_until_halt(ex, claim).await {
        Ok(done) | Err(Halt::Refused(done)) => Ok(done),
        Err(Halt::Failed(e)) => Err(e),
    }
}

async fn steps_until_halt(ex: &Exec<'_>, claim: Option<&claim::Claim>) -> Result<Done, Halt> {
    let view = ex
        .lang
        .catalog
        // Whatever the configuration: the drift check and the re-validation
        // use a catalog the engine confirmed after this call arrived.
        .view(ex.principal, crate::catalog::Currency::Confirmed)
        .await
        .map_err(|e| e.before_execution())?;
    revalidate::no_catalog_drift(ex, &view)?;
    let runnable = revalidate::runnable(ex, &view).await?;
    bind::binds(ex, &runnable.program)?;
    if !ex.checked.installs() {
        approval::gate(ex, &view, &runnable)?;
    }
    run::reserve(ex, claim).await?;
    let finished = if ex.checked.installs() {
        promote::install(ex, &view, &runnable).await?
    } else {
        run::on_engine(ex, &view, &runnable).await?
    };
    Ok(record::finish(ex, finished).await)
}

fn store_internal(e: StoreError) -> RequestError {
    store_internal_with(&e, "nothing was executed")
}

/// A store failure before execution, named as one (not as the engine's).
/// A full store says when room is expected (`retry_after_ms`) and what
/// else the caller or the operator can do.
fn store_internal_with(e: &StoreError, consequence: &str) -> RequestError {
    match e {
        StoreError::Full { retry_after_ms, .. } => crate::pilotage::store_internal(
            e,
            &format!(
                "{consequence}; retry in {retry_after_ms} ms, or run with store: false (nothing kept for a later fetch); an operator can raise the store budget (store.memory_principal_bytes) or use Redis"
            ),
        )
        .with("retry_after_ms", serde_json::json!(retry_after_ms)),
        _ => crate::pilotage::store_internal(e, consequence),
    }
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
