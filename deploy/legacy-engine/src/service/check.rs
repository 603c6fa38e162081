//! Checking a workflow for a tenant.

use serde_json::{Map, Value};

use super::{ServiceError, enter};
use crate::validate::problem::Problem;
use crate::validate::{Env, validate};
use crate::world::Engine;

/// Validates `workflow` as `tenant` would see it.
pub async fn check(
    engine: &Engine,
    tenant: &str,
    workflow: &Value,
    context: Option<&Map<String, Value>>,
) -> Result<Vec<Problem>, ServiceError> {
    let faults = enter(engine, tenant).await?;
    if faults.validator_500 {
        return Err(ServiceError::ValidatorFault);
    }
    let view = engine.view(tenant);
    Ok(validate(
        workflow,
        &Env {
            view: &view,
            context,
        },
    ))
}
