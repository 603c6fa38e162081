//! The dialect-neutral operations behind the REST surfaces: list a tenant's
//! catalog, check a workflow, run a workflow. Dialect modules parse their own
//! request shapes into these calls and print the answers in their own words.

mod check;
mod run;

use crate::runtime::event::Event;
use crate::world::Engine;
use crate::world::faults::FaultSet;

pub use check::check;
pub use run::{RunReport, RunRequest, RunState, run};

/// Failures that are not an answer of the operation itself.
#[derive(Debug)]
pub enum ServiceError {
    UnknownTenant(String),
    /// Injected fault: the validator "crashed".
    ValidatorFault,
    /// Injected fault: the runner "crashed" after these events (already committed).
    Crashed {
        run: u64,
        events: Vec<Event>,
    },
    Internal(String),
}

/// Admits a request for `tenant`: the tenant must exist, and an injected slowdown
/// is served here. Returns the faults in force.
pub async fn enter(engine: &Engine, tenant: &str) -> Result<FaultSet, ServiceError> {
    if !engine.has_tenant(tenant) {
        return Err(ServiceError::UnknownTenant(tenant.to_owned()));
    }
    let faults = engine.faults(tenant);
    if faults.slow_ms > 0 {
        tokio::time::sleep(std::time::Duration::from_millis(faults.slow_ms)).await;
    }
    Ok(faults)
}

/// The capabilities `tenant` sees, with their usage counters, sorted by name.
pub async fn catalog(
    engine: &Engine,
    tenant: &str,
) -> Result<Vec<(crate::world::capability::Capability, u64)>, ServiceError> {
    enter(engine, tenant).await?;
    Ok(engine.catalog(tenant))
}
