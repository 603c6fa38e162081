//! `[engine.mapping]`: where the engine's REST dialect keeps each thing (the
//! REST adapter's configuration schema).
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
pub mod problems;
mod run;

pub use body::{Encoding, Encodings, PLACEHOLDERS};
pub use check::{CheckMapping, CheckMeaning, LevelMeaning};
pub use run::{
    CallPath, LogMapping, OutputMapping, PollMapping, RunMapping, RunMeaning, Runner, StateMeaning,
};

use crate::config::EngineConfig;
use crate::engines::profile::{CatalogFields, EffectRisk, EngineProfile, EventMapping};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
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
    /// The capability listing call and its fields.
    pub catalog: CatalogFields,
    /// The validator call and how its answer reads.
    pub check: CheckMapping,
    /// The runner call(s) and how their answers read.
    pub run: RunMapping,
    /// The fields of the runner's event log.
    pub events: EventMapping,
    /// Engine effect value → Pilotage risk. A value not in the table is the
    /// most dangerous risk (destructive, open world).
    pub effects: BTreeMap<String, EffectRisk>,
}

impl Default for EngineMapping {
    fn default() -> Self {
        let profile = EngineProfile::default();
        Self {
            tenant_header: "X-Tenant".into(),
            health_path: "/healthz".into(),
            case_insensitive_values: profile.case_insensitive_values,
            error_paths: vec!["error".into()],
            catalog: profile.catalog,
            check: CheckMapping::default(),
            run: RunMapping::default(),
            events: profile.events,
            effects: profile.effects,
        }
    }
}

impl EngineMapping {
    /// Looks an engine value up in a value table (`case_insensitive_values`
    /// honoured). Non-string values are looked up by their JSON text
    /// (`true`, `0`).
    pub fn lookup<'t, T>(&self, table: &'t BTreeMap<String, T>, value: &str) -> Option<&'t T> {
        crate::engines::profile::lookup(table, value, self.case_insensitive_values)
    }

    /// The engine-neutral part: what the catalog and the traces read.
    pub fn profile(&self) -> EngineProfile {
        EngineProfile {
            case_insensitive_values: self.case_insensitive_values,
            catalog: self.catalog.clone(),
            events: self.events.clone(),
            effects: self.effects.clone(),
        }
    }
}

/// The key of the REST adapter's own table under an engine's table.
pub const TABLE: &str = "mapping";

/// The mapping of an engine table (the defaults when it has none), or why
/// its `[engine.mapping]` does not read.
pub fn read(config: &EngineConfig) -> Result<EngineMapping, String> {
    crate::engines::adapter::own_table(config, TABLE)
}
