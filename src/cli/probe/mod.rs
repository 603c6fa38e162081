//! `check-config --probe`: asks the configured engine and shows, field by
//! field, what the mapping reads from it: the catalog, the error body of a
//! refused call, a check of a deliberately broken program, and a dry run of a
//! harmless program (or one the operator names). Every finding names the key
//! to look at; anything missing or unknown makes the probe fail. An engine
//! that does not answer is one `UNREACHABLE` line naming its URL and the
//! cause, and nothing else is asked.

mod catalog;
mod check;
pub mod reach;
mod run;

use crate::classify::RuleTable;
use crate::config::Config;
use crate::engines::rest::EngineClient;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Arc;

/// How bad one finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Found,
    Note,
    Missing,
    Unknown,
    /// The engine gave no answer to probe: nothing else is asked.
    Unreachable,
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Finding {
    pub verdict: Verdict,
    pub key: String,
    pub detail: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let tag = match self.verdict {
            Verdict::Found => "found  ",
            Verdict::Note => "note   ",
            Verdict::Missing => "MISSING",
            Verdict::Unknown => "UNKNOWN",
            Verdict::Unreachable => "UNREACHABLE",
        };
        write!(f, "{tag} {}: {}", self.key, self.detail)
    }
}

/// What the probe runs with.
pub struct ProbeInput {
    pub tenant: String,
    /// The program dry-run (default: a harmless one using every step kind but calls).
    pub program: Value,
    pub input: Value,
    /// The rule tables of the configured languages (file name, table).
    pub rules: Vec<(String, Arc<RuleTable>)>,
}

/// The harmless program: a set, a branch and a loop of two items, no calls.
pub fn harmless_program() -> (Value, Value) {
    (
        json!({"name": "pilotage-probe", "steps": [
            {"id": "probe_set", "kind": "set", "value": 1},
            {"id": "probe_branch", "kind": "branch",
             "when": {"op": "eq", "left": "$.input.flag", "right": true},
             "then": [{"id": "probe_then", "kind": "set", "value": 2}],
             "else": [{"id": "probe_else", "kind": "set", "value": 3}]},
            {"id": "probe_loop", "kind": "for_each", "items": "$.input.items", "as": "item",
             "do": [{"id": "probe_item", "kind": "set", "value": "$.item"}]}],
            "output": {"probe": "$.steps.probe_set.output"}}),
        json!({"flag": true, "items": [1, 2]}),
    )
}

/// Runs every probe and returns the report.
pub async fn probe(config: &Config, input: &ProbeInput) -> Vec<Finding> {
    let mut out = Report::default();
    // An engine that does not answer would fail every probe below, each
    // blaming its mapping key: one line with the cause says more.
    if let Some(unreachable) = reach::check(config, &config.engine).await {
        out.push(Verdict::Unreachable, "engine.url", unreachable.to_string());
        return out.0;
    }
    let client = EngineClient::new(&config.engine);
    catalog::catalog(&client, &input.tenant, &mut out).await;
    catalog::error_body(&client, &mut out).await;
    check::check(&client, &input.tenant, &input.rules, &mut out).await;
    run::dry_run(&client, config, input, &mut out).await;
    out.0
}

#[derive(Default)]
pub(super) struct Report(pub(super) Vec<Finding>);

impl Report {
    pub(super) fn push(&mut self, verdict: Verdict, key: &str, detail: impl Into<String>) {
        self.0.push(Finding {
            verdict,
            key: key.to_string(),
            detail: detail.into(),
        });
    }
}

pub(super) fn quoted(values: &BTreeSet<String>) -> String {
    values
        .iter()
        .map(|v| format!("'{v}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
