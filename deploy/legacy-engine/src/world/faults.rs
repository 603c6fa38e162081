//! Injected faults (`POST /admin/faults`): a failing validator, slow responses, a
//! runner that crashes after N events, and an engine that sheds every tenant
//! request with `503` and `Retry-After`, globally or per tenant.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// The most an injected slowdown may add to one response, so a fault can never
/// turn into a hang.
pub const MAX_SLOW_MS: u64 = 60_000;

/// The faults in force for one tenant.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultSet {
    pub validator_500: bool,
    pub slow_ms: u64,
    pub runner_crash_after: Option<usize>,
    /// Every tenant request answers `503 Service Unavailable` with
    /// `Retry-After` of this many seconds.
    pub unavailable_retry_after_s: Option<u64>,
}

/// Global faults plus per-tenant replacements.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    global: FaultSet,
    per_tenant: BTreeMap<String, FaultSet>,
}

impl Faults {
    /// The faults tenant `tenant` sees: its own set if one was posted, else the global one.
    pub fn for_tenant(&self, tenant: &str) -> FaultSet {
        self.per_tenant.get(tenant).unwrap_or(&self.global).clone()
    }

    /// Installs a fault set. Without a tenant it replaces the global set and drops
    /// every per-tenant one, so `{}` clears everything.
    pub fn set(&mut self, tenant: Option<String>, faults: FaultSet) {
        match tenant {
            Some(t) => {
                self.per_tenant.insert(t, faults);
            }
            None => {
                self.global = faults;
                self.per_tenant.clear();
            }
        }
    }
}

/// Parses a `POST /admin/faults` body into the target tenant and the fault set.
pub fn parse(body: &Map<String, Value>) -> Result<(Option<String>, FaultSet), String> {
    let tenant = match body.get("tenant") {
        None | Some(Value::Null) => None,
        Some(Value::String(t)) => Some(t.clone()),
        Some(_) => return Err("field 'tenant' must be a string".to_owned()),
    };
    let validator_500 = match body.get("validator_500") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("field 'validator_500' must be a boolean".to_owned()),
    };
    let slow_ms = match body.get("slow_ms") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_u64().filter(|ms| *ms <= MAX_SLOW_MS).ok_or(format!(
            "field 'slow_ms' must be an integer between 0 and {MAX_SLOW_MS}"
        ))?,
    };
    let runner_crash_after = match body.get("runner_crash_after") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or("field 'runner_crash_after' must be a non-negative integer or null")?,
        ),
    };
    let unavailable_retry_after_s =
        match body.get("unavailable_retry_after_s") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or(
                "field 'unavailable_retry_after_s' must be a non-negative integer or null",
            )?),
        };
    Ok((
        tenant,
        FaultSet {
            validator_500,
            slow_ms,
            runner_crash_after,
            unavailable_retry_after_s,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tenant_sets_override_the_global_one_until_cleared() {
        let mut faults = Faults::default();
        let (t, set) = parse(json!({"slow_ms": 5}).as_object().expect("object")).expect("valid");
        faults.set(t, set);
        let (t, set) = parse(
            json!({"tenant": "acme", "validator_500": true})
                .as_object()
                .expect("object"),
        )
        .expect("valid");
        faults.set(t, set);
        assert!(faults.for_tenant("acme").validator_500);
        assert_eq!(faults.for_tenant("globex").slow_ms, 5);
        faults.set(None, FaultSet::default());
        assert_eq!(faults.for_tenant("acme"), FaultSet::default());
        assert!(parse(json!({"slow_ms": -1}).as_object().expect("object")).is_err());
    }
}
