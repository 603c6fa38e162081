//! n8n's own verdict at validate, without running anything: the workflow is
//! created inactive in the tenant's project, under a gateway-owned probe
//! name, exactly as execute creates it, and deleted again. What n8n refuses
//! when a workflow is created (a node type or version it does not have, a
//! parameter shape its node rejects, …) is then refused at validate as
//! execute would meet it, located at the node n8n names. A workflow is
//! never activated here: an active trigger is a side effect.
//!
//! A probe left behind (the gateway stopped between create and delete) is
//! never active, so it runs nothing; the first probe of a tenant after a
//! start removes every probe that tenant still has.

use super::N8nEngine;
use super::client::Auth;
use super::run::{id_text, owned_name, workflow_path};
use crate::engines::http_client::Call;
use crate::engines::{EngineError, RawProblem};
use reqwest::Method;
use serde_json::Value;

/// The name prefix of probe workflows (runs' names do not start so).
const PROBE_PREFIX: &str = "pilotage-probe-";
/// Pages of the tenant's workflow list read when sweeping, at most.
const SWEEP_PAGES: usize = 20;

impl N8nEngine {
    /// n8n's refusal of `program` when it is created (none when n8n takes
    /// it). A program without a trigger is not created: execute refuses it
    /// before creating anything, and the language reports it.
    pub(super) async fn probe(
        &self,
        tenant: &str,
        program: &Value,
    ) -> Result<Vec<RawProblem>, EngineError> {
        let Some(trigger) = self.trigger(tenant, program).await? else {
            return Ok(Vec::new());
        };
        self.sweep_once(tenant).await;
        let name = owned_name(PROBE_PREFIX, program);
        let created = self
            .create(tenant, "check", &name, program, &trigger, &Value::Null)
            .await?;
        Ok(match created {
            Ok(id) => {
                self.remove(tenant, &workflow_path(&id)).await;
                Vec::new()
            }
            Err(refused) => vec![refused],
        })
    }

    /// Removes the tenant's leftover probes, once per tenant and process.
    async fn sweep_once(&self, tenant: &str) {
        let first = self
            .swept
            .lock()
            .map(|mut swept| swept.insert(tenant.to_string()))
            .unwrap_or(false);
        if !first {
            return;
        }
        let mut cursor: Option<String> = None;
        for _ in 0..SWEEP_PAGES {
            let path = match &cursor {
                Some(c) => format!("/api/v1/workflows?limit=250&excludePinnedData=true&cursor={c}"),
                None => "/api/v1/workflows?limit=250&excludePinnedData=true".to_string(),
            };
            let page = match self
                .call_json(
                    tenant,
                    Call::safe("check", Method::GET, &path),
                    Auth::Key,
                    "listing the workflows",
                )
                .await
            {
                Ok(page) => page,
                Err(e) => {
                    tracing::warn!(tenant, error = %e, "n8n's leftover probes could not be listed");
                    return;
                }
            };
            for leftover in leftovers(&page) {
                self.remove(tenant, &workflow_path(&leftover)).await;
            }
            cursor = page
                .get("nextCursor")
                .and_then(Value::as_str)
                .filter(|c| !c.is_empty())
                .map(str::to_string);
            if cursor.is_none() {
                return;
            }
        }
    }
}

/// The ids of the probes on one page of n8n's workflow list.
fn leftovers(page: &Value) -> Vec<String> {
    page.get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|w| {
            w.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| n.starts_with(PROBE_PREFIX))
        })
        .filter_map(|w| w.get("id").and_then(id_text))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_probes_are_swept() {
        let page = json!({"data": [
            {"id": "a1", "name": "pilotage-probe-0123456789abcdef"},
            {"id": "a2", "name": "pilotage-0123456789abcdef"},
            {"id": 7, "name": "pilotage-probe-fedcba9876543210"},
            {"id": "a3", "name": "the tenant's own"}]});
        assert_eq!(leftovers(&page), ["a1", "7"]);
    }

    #[test]
    fn probe_names_are_not_run_names() {
        let name = owned_name(PROBE_PREFIX, &json!({}));
        assert!(name.starts_with(PROBE_PREFIX));
        assert!(!owned_name(super::super::run::RUN_PREFIX, &json!({})).starts_with(PROBE_PREFIX));
    }
}
