//! What the rest of the gateway reads of an engine, whichever adapter serves
//! it: the fields of a catalog entry, what each effect value risks, and how
//! the runner's events read. Every adapter produces one [`EngineProfile`];
//! the catalog and the languages' traces see an engine's data only through it.
//!
//! The defaults are the reference engine's dialect (the REST adapter's
//! defaults), so a configuration that says nothing talks to it.

mod events;

pub use events::{ArmMeaning, CallOutcome, EventKind, EventMapping};

use super::json_path::{pick, value_text};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The engine-neutral reading of one engine.
#[derive(Debug, Clone)]
pub struct EngineProfile {
    /// Whether value tables match engine values regardless of case.
    pub case_insensitive_values: bool,
    pub catalog: CatalogFields,
    pub events: EventMapping,
    /// Engine effect value → Pilotage risk. A value not in the table is the
    /// most dangerous risk (destructive, open world).
    pub effects: BTreeMap<String, EffectRisk>,
}

impl Default for EngineProfile {
    fn default() -> Self {
        Self {
            case_insensitive_values: false,
            catalog: CatalogFields::default(),
            events: EventMapping::default(),
            effects: BTreeMap::from([
                ("read".into(), EffectRisk::new("safe", true, false, false)),
                (
                    "write".into(),
                    EffectRisk::new("write", false, false, false),
                ),
                (
                    "external".into(),
                    EffectRisk::new("external", false, false, true),
                ),
                (
                    "delete".into(),
                    EffectRisk::new("destructive", false, true, false),
                ),
            ]),
        }
    }
}

/// The effect table of an adapter whose entries name their effect by the
/// four Pilotage risks themselves.
pub fn risk_levels() -> BTreeMap<String, EffectRisk> {
    BTreeMap::from([
        ("safe".into(), EffectRisk::new("safe", true, false, false)),
        (
            "write".into(),
            EffectRisk::new("write", false, false, false),
        ),
        (
            "external".into(),
            EffectRisk::new("external", false, false, true),
        ),
        (
            "destructive".into(),
            EffectRisk::new("destructive", false, true, true),
        ),
    ])
}

/// Looks an engine value up in a value table, regardless of case when
/// `case_insensitive`.
pub fn lookup<'t, T>(
    table: &'t BTreeMap<String, T>,
    value: &str,
    case_insensitive: bool,
) -> Option<&'t T> {
    if let Some(found) = table.get(value) {
        return Some(found);
    }
    if case_insensitive {
        return table
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(value))
            .map(|(_, v)| v);
    }
    None
}

impl EngineProfile {
    /// Looks an engine value up in a value table (`case_insensitive_values`
    /// honoured). Non-string values are looked up by their JSON text
    /// (`true`, `0`).
    pub fn lookup<'t, T>(&self, table: &'t BTreeMap<String, T>, value: &str) -> Option<&'t T> {
        lookup(table, value, self.case_insensitive_values)
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

/// The risk an engine effect value stands for (Part II §5.3).
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EffectRisk {
    /// The Pilotage risk: `safe`, `write`, `external` or `destructive`.
    pub risk: String,
    /// The capability changes nothing.
    #[serde(rename = "readOnly")]
    pub read_only: bool,
    /// The capability may destroy data.
    pub destructive: bool,
    /// The capability reaches systems outside the engine.
    #[serde(rename = "openWorld")]
    pub open_world: bool,
}

impl EffectRisk {
    pub fn new(risk: &str, read_only: bool, destructive: bool, open_world: bool) -> Self {
        Self {
            risk: risk.into(),
            read_only,
            destructive,
            open_world,
        }
    }
}

/// The capability listing.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CatalogFields {
    /// The listing call (GET).
    pub path: String,
    /// Field holding the array of capabilities.
    pub list: String,
    /// Field of a capability's name.
    pub name: String,
    /// The remaining fields may be empty: the engine has no such field.
    pub title: String,
    /// Field of a capability's description (empty: none).
    pub description: String,
    /// Field of a capability's parameter schema (empty: none).
    pub params: String,
    /// Field of a capability's result schema (empty: none).
    pub returns: String,
    /// Field of a capability's effect value, read through `effects` (empty:
    /// none).
    pub effect: String,
    /// Field of a capability's tags (empty: none).
    pub tags: String,
    /// Field telling a capability is deprecated (empty: none).
    pub deprecated: String,
    /// Fields that move without the contract changing (usage counters,
    /// timestamps); they never reach an entry, so never move
    /// `catalog_version`. Listed for documentation and for `check-config`.
    pub volatile: Vec<String>,
    /// Members of an adapter's own entries copied into the Pilotage entry
    /// as they are (n8n's `n8n` and `risk_when`); an adapter sets them, a
    /// configuration cannot.
    #[serde(skip)]
    pub kept: Vec<String>,
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
            kept: Vec::new(),
        }
    }
}
