//! The targets a run is checked against, printed as ratios with met or
//! missed, at 16 connections: validate of a new program each call at 0.85
//! of the bare nginx relay to the engine; validate of one repeated program
//! at 2 × the engine's own check; stored execute with a full trace at 0.9
//! of the engine's run (embedded store) and 0.8 (Redis); the Redis
//! validate rows at 0.8; the manifest and a catalog page at 0.6 of bare
//! axum; `catalog_version` of 10,000 entries from scratch within 5 ms; the
//! gateway's resident memory idle, at its peak, and after the load (within
//! 2 × idle). The bytes Redis keeps per stored run are reported beside
//! them without a target.

use crate::report::{GatewayMemory, NOT_MEASURED, Report, TargetCheck, load_average};
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
/// Gateway RSS after the load over its idle RSS.
const AFTER_OVER_IDLE: f64 = 2.0;
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
        // Read at 16 connections, against the engine's own answer or the
        // bare relay to it (nginx: the least anything in between costs).
        for (scenario, min, against, what) in [
            (
                "validate-uncached",
                0.85,
                Against::Relay,
                "validate, a new program each call ≥ 0.85 × the bare relay",
            ),
            (
                "validate",
                2.0,
                Against::Baseline,
                "validate, one program repeated (verdict cache hit) ≥ 2 × the engine's check",
            ),
            (
                "execute-memory",
                0.9,
                Against::Baseline,
                "stored execute, full trace (embedded store) ≥ 0.9 × the engine's run",
            ),
            (
                "validate-redis",
                0.8,
                Against::Baseline,
                "validate, verdict cache hit (Redis store) ≥ 0.8 × the engine's check",
            ),
            (
                "validate-redis-session",
                0.8,
                Against::Baseline,
                "validate in an MCP session (Redis store) ≥ 0.8 × the engine's check",
            ),
            (
                "execute-redis",
                0.8,
                Against::Baseline,
                "stored execute, full trace (Redis) ≥ 0.8 × the engine's run",
            ),
            (
                "manifest",
                0.6,
                Against::Baseline,
                "pilotage_manifest ≥ 0.6 × bare axum",
            ),
            (
                "catalog",
                0.6,
                Against::Baseline,
                "pilotage_catalog list ≥ 0.6 × bare axum",
            ),
        ] {
            let target = format!("{what}, {AT} connections");
            checks.push(match self.row(scenario, AT) {
                Some(r) => {
                    let ratio = match against {
                        Against::Baseline => r.ratio,
                        Against::Relay => r.relay_ratio,
                    };
                    TargetCheck {
                        target,
                        measured: format!("{ratio:.2}"),
                        met: Some(ratio >= min && r.gateway.errors == 0),
                    }
                }
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
        if let Some(worst) = self
            .gateways
            .iter()
            .max_by(|a, b| after_over_idle(a).total_cmp(&after_over_idle(b)))
        {
            checks.push(TargetCheck {
                target: format!(
                    "gateway RSS after the load ≤ {AFTER_OVER_IDLE} × idle (the largest over the scenarios: {}, {} store)",
                    worst.scenario, worst.store
                ),
                measured: format!(
                    "{:.1} MiB after, {:.1} idle: {:.2} ×",
                    worst.after_load.rss_mib(),
                    worst.idle.rss_mib(),
                    after_over_idle(worst)
                ),
                met: Some(after_over_idle(worst) <= AFTER_OVER_IDLE),
            });
        }
        self.targets = checks;
    }
}

/// What a ratio target compares the gateway with.
#[derive(Clone, Copy)]
enum Against {
    /// The engine's own endpoint (or the bare axum floor).
    Baseline,
    /// nginx relaying to that endpoint.
    Relay,
}

/// A gateway's resident memory after its load over its idle memory.
fn after_over_idle(g: &GatewayMemory) -> f64 {
    g.after_load.rss_kib as f64 / g.idle.rss_kib.max(1) as f64
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
