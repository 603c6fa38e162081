//! `[engine.mapping]`: where the engine's REST dialect keeps each thing.
//!
//! Every default below is the reference engine's dialect, so a config that says
//! nothing talks to it. Adapting the gateway to another engine means overriding
//! these keys (see docs/adapting.md): endpoint paths, the tenant header, request
//! bodies as JSON templates with typed placeholders, field paths (dotted paths into
//! the engine's JSON), value tables for every enumerated value the gateway reads,
//! what each HTTP status of a run or check answer means, and how an asynchronous
//! runner is polled.

mod body;
mod check;
mod events;
mod run;

pub use body::{Encoding, Encodings, PLACEHOLDERS};
pub use check::{CheckMapping, CheckMeaning, LevelMeaning};
pub use events::{ArmMeaning, CallOutcome, EventKind, EventMapping};
pub use run::{
    CallPath, LogMapping, OutputMapping, PollMapping, RunMapping, RunMeaning, Runner, StateMeaning,
};

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EngineMapping {
    /// Header carrying the tenant on every engine call.
    pub tenant_header: String,
    /// Readiness probe (GET, any 2xx is ready).
    pub health_path: String,
    /// Whether value tables match engine values regardless of case.
    pub case_insensitive_values: bool,
    /// Where an error body keeps its text, tried in order (`fault.message`).
    pub error_paths: Vec<String>,
    pub catalog: CatalogFields,
    pub check: CheckMapping,
    pub run: RunMapping,
    pub events: EventMapping,
    /// Engine effect value → Pilotage risk. A value not in the table is the
    /// most dangerous risk (destructive, open world).
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
            case_insensitive_values: false,
            error_paths: vec!["error".into()],
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

impl EngineMapping {
    /// Looks an engine value up in a value table (`case_insensitive_values`
    /// honoured). Non-string values are looked up by their JSON text
    /// (`true`, `0`).
    pub fn lookup<'t, T>(&self, table: &'t BTreeMap<String, T>, value: &str) -> Option<&'t T> {
        if let Some(found) = table.get(value) {
            return Some(found);
        }
        if self.case_insensitive_values {
            return table
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(value))
                .map(|(_, v)| v);
        }
        None
    }

    /// What an event is; `Err` carries a kind no table lists.
    pub fn event_kind(&self, event: &serde_json::Value) -> Result<EventKind, String> {
        let text = pick(event, &self.events.kind)
            .and_then(value_text)
            .unwrap_or_default();
        self.lookup(&self.events.kinds, &text).copied().ok_or(text)
    }

    /// Whether a call event succeeded; a value no table lists is a failure.
    pub fn call_ok(&self, event: &serde_json::Value) -> bool {
        let text = pick(event, &self.events.ok_field)
            .and_then(value_text)
            .unwrap_or_default();
        self.lookup(&self.events.outcomes, &text) == Some(&CallOutcome::Ok)
    }

    /// The arm a branch event took; `Err` carries an arm no table lists.
    pub fn arm(&self, event: &serde_json::Value) -> Result<ArmMeaning, String> {
        let text = pick(event, &self.events.arm)
            .and_then(value_text)
            .unwrap_or_default();
        self.lookup(&self.events.arms, &text).copied().ok_or(text)
    }

    /// An event's loop counters, rebased so the first iteration is 1.
    pub fn counters(&self, event: &serde_json::Value) -> Vec<u64> {
        let shift = 1u64.saturating_sub(self.events.counter_base);
        pick(event, &self.events.iter)
            .and_then(serde_json::Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(serde_json::Value::as_u64)
                    .map(|n| n + shift)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The risk of an effect value; unknown values fail closed.
    pub fn effect_risk(&self, effect: &str) -> Option<&EffectRisk> {
        self.lookup(&self.effects, effect)
    }
}

/// The text of a scalar engine value as value tables see it.
pub fn value_text(value: &serde_json::Value) -> Option<String> {
    match value {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
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
    /// The remaining fields may be empty: the engine has no such field.
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

/// Reads a dotted path (`stats.calls`) out of a JSON value.
pub fn pick<'a>(value: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    if path.is_empty() {
        return Some(value);
    }
    path.split('.').try_fold(value, |v, key| v.get(key))
}

/// Like `pick`, but an empty path means "the engine has no such field".
pub fn pick_field<'a>(value: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    if path.is_empty() {
        None
    } else {
        pick(value, path)
    }
}
