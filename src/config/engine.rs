//! `[engine.mapping]`: where the engine's REST dialect keeps each thing.
//!
//! Every default below is the reference engine's dialect, so a config that says
//! nothing talks to it. Adapting the gateway to another engine means overriding
//! these keys (see docs/adapting.md): endpoint paths, the tenant header, field
//! names (dotted paths into the engine's JSON), level and state values, event
//! kinds, and the effect → risk table.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineMapping {
    /// Header carrying the tenant on every engine call.
    pub tenant_header: String,
    /// Readiness probe (GET, any 2xx is ready).
    pub health_path: String,
    pub catalog: CatalogFields,
    pub check: CheckMapping,
    pub run: RunMapping,
    pub events: EventMapping,
    /// Engine effect value → Pilotage risk.
    pub effects: BTreeMap<String, EffectRisk>,
}

impl Default for EngineMapping {
    fn default() -> Self {
        let effect = |risk: &str, read_only, destructive, open_world| EffectRisk {
            risk: risk.into(),
            read_only,
            destructive,
            open_world,
        };
        Self {
            tenant_header: "X-Tenant".into(),
            health_path: "/healthz".into(),
            catalog: CatalogFields::default(),
            check: CheckMapping::default(),
            run: RunMapping::default(),
            events: EventMapping::default(),
            effects: BTreeMap::from([
                ("read".into(), effect("safe", true, false, false)),
                ("write".into(), effect("write", false, false, false)),
                ("external".into(), effect("external", false, false, true)),
                ("delete".into(), effect("destructive", false, true, false)),
            ]),
        }
    }
}

/// The risk an engine effect value stands for (Part II §5.3).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct EffectRisk {
    pub risk: String,
    #[serde(rename = "readOnly")]
    pub read_only: bool,
    pub destructive: bool,
    #[serde(rename = "openWorld")]
    pub open_world: bool,
}

/// The capability listing.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CatalogFields {
    pub path: String,
    /// Field holding the array of capabilities.
    pub list: String,
    pub name: String,
    pub title: String,
    pub description: String,
    pub params: String,
    pub returns: String,
    pub effect: String,
    pub tags: String,
    pub deprecated: String,
    /// Fields that move without the contract changing (usage counters,
    /// timestamps); they never reach an entry, so never move
    /// `catalog_version`. Listed for documentation and for `check-config`.
    pub volatile: Vec<String>,
}

impl Default for CatalogFields {
    fn default() -> Self {
        Self {
            path: "/api/v1/capabilities".into(),
            list: "capabilities".into(),
            name: "name".into(),
            title: "title".into(),
            description: "doc".into(),
            params: "params".into(),
            returns: "returns".into(),
            effect: "effect".into(),
            tags: "tags".into(),
            deprecated: "deprecated".into(),
            volatile: vec!["usage_count".into(), "updated_at".into()],
        }
    }
}

/// The validator endpoint.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CheckMapping {
    pub path: String,
    /// Request field carrying the program.
    pub program_field: String,
    /// Request field carrying the context.
    pub context_field: String,
    /// Response field holding the problems array.
    pub problems: String,
    pub text: String,
    pub location: String,
    pub level: String,
    pub error_level: String,
    pub warning_level: String,
}

impl Default for CheckMapping {
    fn default() -> Self {
        Self {
            path: "/api/v1/workflows/check".into(),
            program_field: "workflow".into(),
            context_field: "context".into(),
            problems: "problems".into(),
            text: "text".into(),
            location: "where".into(),
            level: "level".into(),
            error_level: "ERROR".into(),
            warning_level: "WARN".into(),
        }
    }
}

/// The runner endpoint.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunMapping {
    pub path: String,
    pub program_field: String,
    pub input_field: String,
    pub context_field: String,
    pub trace_field: String,
    pub dry_run_field: String,
    pub deadline_field: String,
    pub run_id: String,
    pub state: String,
    pub result: String,
    pub error: String,
    pub events: String,
    /// Problems of a rejected run (same item shape as the validator's).
    pub problems: String,
    pub completed: String,
    pub failed: String,
    pub timed_out: String,
    pub rejected: String,
}

impl Default for RunMapping {
    fn default() -> Self {
        Self {
            path: "/api/v1/workflows/run".into(),
            program_field: "workflow".into(),
            input_field: "input".into(),
            context_field: "context".into(),
            trace_field: "trace".into(),
            dry_run_field: "dry_run".into(),
            deadline_field: "deadline_ms".into(),
            run_id: "run".into(),
            state: "state".into(),
            result: "result".into(),
            error: "error".into(),
            events: "events".into(),
            problems: "problems".into(),
            completed: "COMPLETED".into(),
            failed: "FAILED".into(),
            timed_out: "TIMED_OUT".into(),
            rejected: "REJECTED".into(),
        }
    }
}

/// The runner's event log.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EventMapping {
    pub kind: String,
    pub step: String,
    /// Enclosing loop counters, outermost first.
    pub iter: String,
    pub ms: String,
    pub call_kind: String,
    pub set_kind: String,
    pub branch_kind: String,
    pub loop_enter_kind: String,
    pub loop_next_kind: String,
    pub loop_exit_kind: String,
    pub capability: String,
    pub args: String,
    pub result: String,
    /// Field telling whether a call succeeded, and the value meaning success.
    pub ok_field: String,
    pub ok_value: toml::Value,
    pub error: String,
    /// Value produced by a set step.
    pub set_value: String,
    /// Arm taken by a branch, the condition as written, and its value.
    pub arm: String,
    pub cond: String,
    pub cond_value: String,
    /// Number of items a loop activation will visit (on loop enter).
    pub loop_count: String,
}

impl Default for EventMapping {
    fn default() -> Self {
        Self {
            kind: "type".into(),
            step: "step".into(),
            iter: "iter".into(),
            ms: "ms".into(),
            call_kind: "call".into(),
            set_kind: "set".into(),
            branch_kind: "branch".into(),
            loop_enter_kind: "loop_enter".into(),
            loop_next_kind: "loop_next".into(),
            loop_exit_kind: "loop_exit".into(),
            capability: "capability".into(),
            args: "args".into(),
            result: "result".into(),
            ok_field: "status".into(),
            ok_value: toml::Value::String("ok".into()),
            error: "error".into(),
            set_value: "value".into(),
            arm: "arm".into(),
            cond: "cond".into(),
            cond_value: "value".into(),
            loop_count: "count".into(),
        }
    }
}

/// Reads a dotted path (`stats.calls`) out of a JSON value.
pub fn pick<'a>(value: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    if path.is_empty() {
        return Some(value);
    }
    path.split('.').try_fold(value, |v, key| v.get(key))
}
