//! Step 1 of execute (Part II §6.5.2): the request is well formed — one
//! runnable, a mode the caller has, a known `program_ref`, a known
//! `trace_level`, only declared options, no promise a later request could not
//! reach — before anything is looked up in the catalog or written.

use super::{ExecuteRequest, Level, ceiling, store_internal};
use crate::auth::Principal;
use crate::catalog::canonical_json;
use crate::gateway::{Gateway, LanguageRuntime};
use crate::pilotage::{RequestError, RequestErrorKind};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// What step 1 established.
pub(super) struct Checked {
    pub(super) level: Level,
    pub(super) program_record: Option<Value>,
    pub(super) deploy: bool,
    pub(super) test_run: bool,
}

impl Checked {
    /// A deploy that installs; a deploy with test_run installs nothing.
    pub(super) fn installs(&self) -> bool {
        self.deploy && !self.test_run
    }
}

pub(super) async fn well_formed(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    req: &ExecuteRequest,
) -> Result<Checked, RequestError> {
    one_runnable(lang, req)?;
    let deploy = deploys(lang, principal, req)?;
    let program_record = promoted_record(gw, principal, req).await?;
    let level = trace_level(lang, req)?;
    only_declared_options(lang, req)?;
    if !principal.lasting {
        refuse_unreachable_promises(req)?;
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

fn one_runnable(lang: &LanguageRuntime, req: &ExecuteRequest) -> Result<(), RequestError> {
    let argument = &lang.config.argument;
    match (&req.program, &req.program_ref) {
        (Some(_), Some(_)) => Err(RequestError::invalid(format!(
            "supply exactly one runnable: either '{argument}' or 'program_ref', not both"
        ))),
        (None, None) => Err(RequestError::invalid(format!(
            "supply exactly one runnable: '{argument}' (an inline program) or 'program_ref' (a promoted program from the catalog)"
        ))),
        _ => Ok(()),
    }
}

/// Whether this request deploys. The mode this principal has: a language
/// executing "both" is "immediate" or "deploy" only for a principal without
/// the other permission, and answers `mode` exactly as such a language would.
fn deploys(
    lang: &LanguageRuntime,
    principal: &Principal,
    req: &ExecuteRequest,
) -> Result<bool, RequestError> {
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
        // Part III §4.4: `mode` on a language that is not "both" (for this
        // caller) is invalid_request, even naming the one mode it has.
        (Some(m), false) if m == "deploy" && !principal.lasting => {
            return Err(RequestError::invalid(format!(
                "mode \"deploy\" is not among your modes (your manifest declares execution \"{execution}\"): {} to reach the promoted program. Use mode \"immediate\", or call with an API key or an OAuth access token (Authorization: Bearer …)",
                super::PASSING_CALLER
            )));
        }
        (Some(_), false) => {
            return Err(RequestError::invalid(format!(
                "'mode' applies only to languages with execution \"both\"; {} executes \"{}\" only for you: remove 'mode'",
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
    Ok(deploy)
}

/// The promoted program a `program_ref` names, if the request has one.
async fn promoted_record(
    gw: &Gateway,
    principal: &Principal,
    req: &ExecuteRequest,
) -> Result<Option<Value>, RequestError> {
    let Some(r) = &req.program_ref else {
        return Ok(None);
    };
    gw.store
        .get_program(&principal.scope, r)
        .await
        .map_err(store_internal)?
        .ok_or_else(|| {
            RequestError::not_found(format!(
                "unknown program_ref '{r}': look promoted programs up with pilotage_catalog (kind \"program\")"
            ))
        })
        .map(Some)
}

/// The requested trace level, never above the language's ceiling.
fn trace_level(lang: &LanguageRuntime, req: &ExecuteRequest) -> Result<Level, RequestError> {
    let level = match &req.trace_level {
        None => ceiling(lang),
        Some(l) => Level::parse(l).ok_or_else(|| {
            RequestError::invalid(format!(
                "unknown trace_level '{l}': use \"none\", \"summary\" or \"full\""
            ))
        })?,
    };
    Ok(level.min(ceiling(lang)))
}

/// test_run, store and idempotency_key only where the language declares them.
fn only_declared_options(lang: &LanguageRuntime, req: &ExecuteRequest) -> Result<(), RequestError> {
    let caps = &lang.config.capabilities.execute;
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
    Ok(())
}

/// A caller no later request can be (an anonymous request without a session
/// under `anonymous_scope = "session"`) is refused whatever only a later
/// request could reach: a retained run, an idempotency claim (its manifest
/// declares retention "none" and no idempotency; deploy is not among its
/// modes). Checked before anything is written. The advice works on every
/// protocol revision: 2026-07-28 has no sessions to open.
fn refuse_unreachable_promises(req: &ExecuteRequest) -> Result<(), RequestError> {
    const WHO: &str = super::PASSING_CALLER;
    const WAY: &str = "call with an API key or an OAuth access token (Authorization: Bearer …)";
    if req.store == Some(true) {
        return Err(RequestError::new(
            RequestErrorKind::Unsupported,
            format!(
                "store: true cannot be honoured: your manifest declares retention \"none\", since {WHO}. For a retained run, {WAY}"
            ),
        ));
    }
    if req.idempotency_key.is_some() {
        return Err(RequestError::invalid(format!(
            "idempotency_key is not declared for this caller: {WHO} to be recognised on a retry. Remove it, or {WAY}"
        )));
    }
    Ok(())
}

/// What makes two requests under one idempotency key the same request: the
/// runnable and the input.
pub(super) fn fingerprint(req: &ExecuteRequest) -> String {
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
pub(super) fn dedup_window(lang: &LanguageRuntime) -> Duration {
    lang.config
        .retention_duration()
        .unwrap_or(Duration::from_secs(24 * 3600))
}
