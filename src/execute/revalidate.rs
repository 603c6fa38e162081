//! Steps 2 and 3 of execute (Part II §6.5.2): catalog drift precedes
//! re-validation; then an inline program is validated again against today's
//! catalog, and a promoted one is held to its promotion baseline and to
//! today's risk ceiling.

use super::promote::baseline_drift;
use super::record::refuse;
use super::{Exec, Halt, Runnable};
use crate::catalog::CatalogView;
use crate::pilotage::RunStatus;
use crate::validate;
use serde_json::Value;

/// Step 2: the caller's `expected_catalog_version`, when given, is today's.
pub(super) fn no_catalog_drift(ex: &Exec<'_>, view: &CatalogView) -> Result<(), Halt> {
    match &ex.req.expected_catalog_version {
        Some(expected) if *expected != view.version => {
            // The refusal says the next step and carries the token it needs.
            let message = format!(
                "catalog version mismatch: the catalog changed since expected_catalog_version was read; the current catalog_version is '{}': validate again and run with the catalog_version it returns",
                view.version
            );
            let mut halt = refuse(ex, RunStatus::CatalogDrift, &message, None);
            if let Halt::Refused(done) = &mut halt {
                done.response["catalog_version"] = Value::String(view.version.clone());
            }
            Err(halt)
        }
        _ => Ok(()),
    }
}

/// Step 3: re-validation or the promotion baseline.
pub(super) async fn runnable(ex: &Exec<'_>, view: &CatalogView) -> Result<Runnable, Halt> {
    match &ex.checked.program_record {
        None => inline(ex, view).await,
        Some(record) => promoted(ex, view, record),
    }
}

async fn inline(ex: &Exec<'_>, view: &CatalogView) -> Result<Runnable, Halt> {
    let program = ex.req.program.clone().unwrap_or(Value::Null);
    let verdict = validate::validate(
        ex.gw,
        ex.lang,
        ex.principal,
        view,
        validate::Subject {
            program: &program,
            program_text: ex.req.program_text.as_deref(),
            context: ex.req.context.as_ref(),
            context_text: ex.req.context_text.as_deref(),
        },
    )
    .await?;
    if !verdict.valid {
        return Err(refuse(
            ex,
            RunStatus::ValidationError,
            "the program is invalid; nothing was executed",
            Some(&verdict.diagnostics),
        ));
    }
    Ok(Runnable {
        program,
        steps: verdict.steps.clone(),
    })
}

fn promoted(ex: &Exec<'_>, view: &CatalogView, record: &Value) -> Result<Runnable, Halt> {
    if let Some(changed) = baseline_drift(record, view) {
        return Err(refuse(
            ex,
            RunStatus::PromotionDrift,
            &format!(
                "catalog entry '{changed}' changed since promotion; promote the program again"
            ),
            None,
        ));
    }
    let program = record.get("program").cloned().unwrap_or(Value::Null);
    let steps = ex.lang.language.steps(&program);
    // The ceiling may be lower now than at promotion (configuration, or a
    // token's claim): the run stays within today's.
    let above = validate::ceiling_findings(
        &*ex.lang.language,
        &program,
        &steps,
        view,
        &ex.principal.ceiling,
    );
    if !above.is_empty() {
        return Err(refuse(
            ex,
            RunStatus::ValidationError,
            "the promoted program is above this caller's risk ceiling; nothing was executed",
            Some(&above),
        ));
    }
    Ok(Runnable { program, steps })
}
