//! The targets a run is checked against, printed as ratios with met or
//! missed: validate (both stores, and in an MCP session as SDK clients
//! call) and stored execute with Redis at 0.8 of
//! the engine's own check and run, the manifest and a catalog page at 0.6
//! of bare axum, all at 16 connections; `catalog_version` of 10,000
//! entries from scratch within 5 ms; the gateway's resident memory. Two
//! figures are reported beside them without a target: the bytes Redis
//! keeps per stored run of the benchmark program, and the verdict-cache
//! miss rows.

use crate::report::{NOT_MEASURED, Report, TargetCheck, load_average};
use pilotage_gateway::catalog::Entry;
use serde::Serialize;
use serde_json::Value;
use std::time::{Duration, Instant};

/// Connections the ratio targets are read at.
const AT: usize = 16;
/// Gateway peak RSS under load, MiB.
const PEAK_RSS_MIB: f64 = 64.0;
/// Gateway RSS idle, MiB.
const IDLE_RSS_MIB: f64 = 30.0;
/// `catalog_version` of 10,000 entries from scratch, milliseconds.
const CATALOG_VERSION_MS: f64 = 5.0;

/// What Redis keeps of one stored run (its record, full trace).
#[derive(Serialize, Clone, Copy)]
pub struct RunRecord {
    /// `MEMORY USAGE` of the run's key.
    pub memory_usage: u64,
    /// `STRLEN` of its value.
    pub value_bytes: u64,
}

impl Report {
    /// Checks the targets against this run.
    pub fn evaluate(&mut self) {
        self.load_average[1] = load_average();
        let mut checks = Vec::new();
        for (scenario, min, what) in [
            (
                "validate",
                0.8,
                "validate, verdict cache hit (memory store) ≥ 0.8 × the engine's check",
            ),
            (
                "validate-redis",
                0.8,
                "validate, verdict cache hit (Redis store) ≥ 0.8 × the engine's check",
            ),
            (
                "validate-redis-session",
                0.8,
                "validate in an MCP session (Redis store) ≥ 0.8 × the engine's check",
            ),
            (
                "validate-uncached",
                0.5,
                "validate, verdict cache miss ≥ 0.5 × the engine's check",
            ),
            (
                "execute-redis",
                0.8,
                "stored execute, full trace (Redis) ≥ 0.8 × the engine's run",
            ),
            ("manifest", 0.6, "pilotage_manifest ≥ 0.6 × bare axum"),
            ("catalog", 0.6, "pilotage_catalog list ≥ 0.6 × bare axum"),
        ] {
            let target = format!("{what}, {AT} connections");
            checks.push(match self.row(scenario, AT) {
                Some(r) => TargetCheck {
                    target,
                    measured: format!("{:.2}", r.ratio),
                    met: Some(r.ratio >= min && r.gateway.errors == 0),
                },
                None => TargetCheck {
                    target,
                    measured: NOT_MEASURED.into(),
                    met: None,
                },
            });
        }
        checks.push(TargetCheck {
            target: format!(
                "catalog_version of 10,000 entries from scratch ≤ {CATALOG_VERSION_MS} ms"
            ),
            measured: self.catalog_version_10k.map_or(NOT_MEASURED.into(), |v| {
                format!("{:.1} ms", v.from_scratch_ms)
            }),
            met: self
                .catalog_version_10k
                .map(|v| v.from_scratch_ms <= CATALOG_VERSION_MS),
        });
        if let Some(v) = self.catalog_version_10k {
            checks.push(TargetCheck {
                target: "writing those 10,000 entries from their trees, once per changed catalog (no target)".into(),
                measured: format!("{:.1} ms", v.writing_entries_ms),
                met: None,
            });
        }
        if let Some(record) = self.run_record {
            checks.push(TargetCheck {
                target: "bytes Redis keeps per stored run of the benchmark program (no target)"
                    .into(),
                measured: format!("{} B ({} B value)", record.memory_usage, record.value_bytes),
                met: None,
            });
        }
        if let Some(idle) = self
            .gateways
            .iter()
            .max_by(|a, b| a.idle.rss_kib.cmp(&b.idle.rss_kib))
        {
            checks.push(TargetCheck {
                target: format!(
                    "gateway RSS idle ≤ {IDLE_RSS_MIB} MiB (largest over the scenarios' fresh gateways)"
                ),
                measured: format!("{:.1} MiB", idle.idle.rss_mib()),
                met: Some(idle.idle.rss_mib() <= IDLE_RSS_MIB),
            });
        }
        for g in &self.gateways {
            checks.push(TargetCheck {
                target: format!(
                    "gateway peak RSS under load ≤ {PEAK_RSS_MIB} MiB: {} ({} store)",
                    g.scenario, g.store
                ),
                measured: format!("{:.1} MiB", g.under_load.peak_mib()),
                met: Some(g.under_load.peak_mib() <= PEAK_RSS_MIB),
            });
        }
        self.targets = checks;
    }
}

/// `catalog_version` of 10,000 entries made from `page`'s (the gateway's
/// own catalog entries, each id made unique), from scratch with the
/// gateway's own function over the entries as a catalog keeps them: every
/// entry's stored canonical text hashed again, then the token. Also what
/// keeping them cost first: writing each entry's text, digest and small
/// members from its tree, as a rebuild does once per changed catalog. The
/// best of five of each, milliseconds.
pub fn catalog_version_10k(page: &Value) -> Option<CatalogVersion> {
    let items = page["result"]["structuredContent"]["items"].as_array()?;
    if items.is_empty() {
        return None;
    }
    let entries: Vec<Value> = (0..10_000)
        .map(|i| {
            let mut e = items[i % items.len()].clone();
            if let Some(obj) = e.as_object_mut() {
                obj.remove("revision");
                let id = obj.get("id").and_then(Value::as_str).unwrap_or("entry");
                let id = format!("{id}.{i:05}");
                obj.insert("id".into(), Value::String(id));
            }
            e
        })
        .collect();
    let kept: Vec<Entry> = entries.iter().map(|e| Entry::new(e.clone()).0).collect();
    let refs: Vec<&Entry> = kept.iter().collect();
    let from_scratch_ms = best_of_five(|| {
        std::hint::black_box(pilotage_gateway::catalog::version_of(&refs));
    });
    // Each round writes from its own copy of the trees, copied untimed.
    let mut copies: Vec<Vec<Value>> = (0..5).map(|_| entries.clone()).collect();
    let writing_entries_ms = best_of_five(|| {
        let trees = copies.pop().unwrap_or_default();
        std::hint::black_box(trees.into_iter().map(Entry::new).count());
    });
    Some(CatalogVersion {
        from_scratch_ms,
        writing_entries_ms,
    })
}

/// The best of five runs of `work`, milliseconds.
fn best_of_five(mut work: impl FnMut()) -> f64 {
    let mut best = Duration::MAX;
    for _ in 0..5 {
        let started = Instant::now();
        work();
        best = best.min(started.elapsed());
    }
    best.as_secs_f64() * 1000.0
}

/// `catalog_version` of 10,000 entries, and what keeping them cost.
#[derive(Serialize, Clone, Copy)]
pub struct CatalogVersion {
    /// The token from scratch over the kept entries (the target's row).
    pub from_scratch_ms: f64,
    /// Writing the 10,000 entries from their trees (no target).
    pub writing_entries_ms: f64,
}
