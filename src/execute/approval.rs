//! The approval gate, after binding and before the run: a run whose plan
//! is riskier than its caller's `approve_above` starts only once a person
//! approved exactly this program (its digest) on this catalog (its
//! version). A task's call reports the hold and stops, nothing executed,
//! so the task can wait for the decision; a plain call, which cannot wait,
//! is refused with the way to have it held. A test run needs no approval:
//! nothing it does takes effect.

use super::record::refuse;
use super::{Exec, Halt, Runnable};
use crate::auth::policy::RiskLevel;
use crate::catalog::CatalogView;
use crate::catalog::risk_when::step_risk;
use crate::pilotage::{RequestError, RunStatus};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex, PoisonError};

/// What a held run shows the person who decides: the program's digest and
/// the catalog it was checked on (an approval holds for exactly these), its
/// riskiest level, and each step that calls something with its risk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hold {
    pub digest: String,
    pub catalog_version: String,
    pub risk: String,
    pub approve_above: String,
    pub steps: Vec<HeldStep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldStep {
    pub id: String,
    pub capability: String,
    pub risk: String,
}

/// An approval: the run of this program on this catalog may start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approved {
    pub digest: String,
    pub catalog_version: String,
}

/// Where a task's call reports its hold.
#[derive(Debug, Clone, Default)]
pub struct HoldSlot(Arc<Mutex<Option<Hold>>>);

impl HoldSlot {
    pub fn take(&self) -> Option<Hold> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    fn put(&self, hold: Hold) {
        *self.0.lock().unwrap_or_else(PoisonError::into_inner) = Some(hold);
    }
}

/// The digest an approval names: SHA-256 of the program's JSON text.
pub fn program_digest(program: &Value) -> String {
    format!(
        "sha256:{}",
        hex::encode(Sha256::digest(program.to_string()))
    )
}

pub(super) fn gate(ex: &Exec<'_>, view: &CatalogView, runnable: &Runnable) -> Result<(), Halt> {
    let Some(limit) = ex.principal.approve_above else {
        return Ok(());
    };
    if ex.checked.test_run {
        return Ok(());
    }
    let (risk, steps) = riskiest(ex, view, runnable);
    if risk <= limit {
        return Ok(());
    }
    let digest = program_digest(&runnable.program);
    if let Some(approved) = &ex.req.terms.approved {
        if approved.digest != digest {
            return Err(RequestError::invalid(
                "this is not the program that was approved; nothing was executed",
            )
            .into());
        }
        if approved.catalog_version != view.version {
            return Err(refuse(
                ex,
                RunStatus::CatalogDrift,
                "the catalog changed since the run was approved; nothing was executed: run it again to have it approved on today's catalog",
                None,
            ));
        }
        return Ok(());
    }
    let hold = Hold {
        digest,
        catalog_version: view.version.clone(),
        risk: risk.as_str().into(),
        approve_above: limit.as_str().into(),
        steps,
    };
    let message = format!(
        "this run reaches risk '{}', above '{}' that this caller may run without a person's approval",
        hold.risk, hold.approve_above
    );
    match &ex.req.terms.hold {
        Some(slot) => {
            slot.put(hold);
            Err(RequestError::invalid(format!("{message}; it is held for approval")).into())
        }
        None => Err(RequestError::invalid(format!(
            "{message}: call it as a task (MCP Tasks) to have it held until a person approves it; nothing was executed"
        ))
        .with("approval", json!({"risk": hold.risk, "approve_above": hold.approve_above}))
        .into()),
    }
}

/// The riskiest level among the steps, and each calling step's risk.
fn riskiest(ex: &Exec<'_>, view: &CatalogView, runnable: &Runnable) -> (RiskLevel, Vec<HeldStep>) {
    let language = &*ex.lang.language;
    let mut top = RiskLevel::Safe;
    let mut steps = Vec::new();
    for step in &runnable.steps {
        let Some(capability) = step.capability.as_deref() else {
            continue;
        };
        let parameters = language.step_parameters(&runnable.program, step);
        let Some((_, hints)) = step_risk(view, capability, parameters) else {
            continue;
        };
        let level = RiskLevel::of(hints);
        top = top.max(level);
        steps.push(HeldStep {
            id: step.id.clone().unwrap_or_default(),
            capability: capability.to_owned(),
            risk: level.as_str().into(),
        });
    }
    (top, steps)
}
