//! The gateway's Prometheus metrics: one registry per gateway, every family
//! with HELP and TYPE, rendered in the text exposition format on `/metrics`.
//!
//! No series carries an `instance` label: Prometheus adds `instance` to every
//! target it scrapes, and a label of ours would collide with it. Label values
//! come from closed sets (tool names, languages, statuses, request-error
//! kinds, diagnostic codes, operations), never from caller-chosen text, so the
//! number of series stays bounded. `docs/operations.md` explains every family.

pub mod http_requests;
pub mod store;

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder,
};
use std::time::Duration;

/// Latency buckets (seconds) of tool calls and engine calls: from a cached
/// manifest answer to a run near the default 30 s deadline; `call_buckets`
/// extends them to the longest configured deadline.
const CALL_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];
/// The engine label of a `Metrics` not yet handed to a named engine.
const DEFAULT_ENGINE: &str = crate::config::DEFAULT_ENGINE;
/// Store operations: sub-millisecond in memory, a few ms over the network,
/// bounded by the 2 s operation timeout.
const STORE_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// Every metric of one gateway process. Clones share the families; a clone
/// made by `for_engine` labels its engine calls with that engine's name.
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    /// The `engine` label of the engine calls recorded through this value.
    engine: std::sync::Arc<str>,
    pub mcp_requests: IntCounter,
    pub http_requests: http_requests::HttpRequests,
    pub tool_calls: HistogramVec,
    pub engine_calls: HistogramVec,
    pub store_operations: HistogramVec,
    pub store_errors: IntCounterVec,
    pub runs: IntCounterVec,
    pub diagnostics: IntCounterVec,
    pub request_errors: IntCounterVec,
    pub catalog_version_changes: IntCounter,
    pub catalog_oversized: IntCounter,
    pub session_rejects: IntCounterVec,
    pub rate_limited: IntCounterVec,
    pub runs_in_flight: IntGauge,
    pub cache_entries: IntGaugeVec,
    pub engine_breakers: IntGaugeVec,
    pub draining: IntGauge,
}

impl Metrics {
    /// A fresh registry with every family registered. Families whose label
    /// values are known up front (request-error kinds, rate limits, session
    /// reject reasons) start at zero, so `rate()` works from the first scrape.
    pub fn new() -> Self {
        Self::with_longest_deadline(Duration::from_millis(30_000))
    }

    /// The metrics of a gateway with this configuration: call latency
    /// buckets reach its longest run deadline.
    pub fn for_config(config: &crate::config::Config) -> Self {
        Self::with_longest_deadline(Duration::from_millis(config.longest_run_deadline_ms()))
    }

    /// The same families, with engine calls labelled `engine = name` (the
    /// engine table's name: `default` for `[engine]`).
    pub fn for_engine(&self, name: &str) -> Self {
        Self {
            engine: name.into(),
            ..self.clone()
        }
    }

    /// A fresh registry whose call latency buckets end at `longest_deadline`.
    pub fn with_longest_deadline(longest_deadline: Duration) -> Self {
        let registry = Registry::new();
        let call_buckets = call_buckets(longest_deadline);
        let m = Self {
            engine: DEFAULT_ENGINE.into(),
            mcp_requests: counter(
                &registry,
                "pilotage_mcp_requests_total",
                "HTTP requests to /mcp this instance received (every method, rejected ones included).",
            ),
            http_requests: http_requests::HttpRequests::new(counter_vec(
                &registry,
                "pilotage_http_requests_total",
                "Answered HTTP requests to /mcp, by JSON-RPC method (closed set, else \"other\") and HTTP status code.",
                &["method", "code"],
            )),
            tool_calls: histogram_vec(
                &registry,
                "pilotage_tool_call_duration_seconds",
                "Duration of tools/call, by tool, language (empty when the tool has none) and outcome: the run status of an execute, the request-error kind, \"carrier_error\" for a JSON-RPC error, else \"ok\".",
                &["tool", "language", "outcome"],
                &call_buckets,
            ),
            engine_calls: histogram_vec(
                &registry,
                "pilotage_engine_call_duration_seconds",
                "Duration of calls to a workflow engine until its answer's headers arrived, by engine (the engine table's name: \"default\" for [engine], else NAME of [engines.NAME]), operation (health, catalog, check, run) and status (the HTTP status code, \"unreachable\", \"timeout\" or \"error\").",
                &["engine", "operation", "status"],
                &call_buckets,
            ),
            store_operations: histogram_vec(
                &registry,
                "pilotage_store_operation_duration_seconds",
                "Duration of store operations, by operation and backend (memory, redis), failed ones included.",
                &["operation", "backend"],
                STORE_BUCKETS,
            ),
            store_errors: counter_vec(
                &registry,
                "pilotage_store_errors_total",
                "Store operations that failed, by operation, backend and error (unavailable, corrupt).",
                &["operation", "backend", "error"],
            ),
            runs: counter_vec(
                &registry,
                "pilotage_runs_total",
                "Execute answers that carry a run outcome, by run status (refused runs included: validation_error, catalog_drift, promotion_drift).",
                &["status"],
            ),
            diagnostics: counter_vec(
                &registry,
                "pilotage_diagnostics_total",
                "Diagnostics returned to callers (validate and refused executes, cached verdicts included), by code.",
                &["code"],
            ),
            request_errors: counter_vec(
                &registry,
                "pilotage_request_errors_total",
                "Pilotage request errors returned, by kind.",
                &["kind"],
            ),
            catalog_version_changes: counter(
                &registry,
                "pilotage_catalog_version_changes_total",
                "Times a tenant's engine catalog changed its contract (a new catalog_version) as seen by this instance.",
            ),
            catalog_oversized: counter(
                &registry,
                "pilotage_catalog_oversized_total",
                "Tenant catalogs built larger than [cache] catalog_bytes keeps (each is fetched whole again, up to once per request).",
            ),
            session_rejects: counter_vec(
                &registry,
                "pilotage_session_rejects_total",
                "Requests whose Mcp-Session-Id was refused with HTTP 404, by reason (malformed, invalid: forged, expired or another caller's, revoked).",
                &["reason"],
            ),
            rate_limited: counter_vec(
                &registry,
                "pilotage_rate_limited_total",
                "Requests refused by a per-principal limit, by limit (requests, concurrent_runs).",
                &["limit"],
            ),
            runs_in_flight: gauge(
                &registry,
                "pilotage_runs_in_flight",
                "Runs this instance has sent to the engine and not yet had answered.",
            ),
            cache_entries: gauge_vec(
                &registry,
                "pilotage_cache_entries",
                "Entries held in the in-process caches, by cache (verdicts, catalog_tenants, and catalog_contents: the distinct catalogs those tenants share).",
                &["cache"],
            ),
            engine_breakers: gauge_vec(
                &registry,
                "pilotage_engine_breaker_state",
                "The circuit breaker of each configured engine, by engine name: 0 closed, 1 half-open (one probe call decides), 2 open (calls fail fast with retry_after_ms).",
                &["engine"],
            ),
            draining: gauge(
                &registry,
                "pilotage_draining",
                "1 while the instance drains after SIGTERM (readyz answers 503), else 0.",
            ),
            registry,
        };
        for kind in crate::pilotage::RequestErrorKind::ALL {
            m.request_errors.with_label_values(&[kind.as_str()]);
        }
        for limit in ["requests", "concurrent_runs"] {
            m.rate_limited.with_label_values(&[limit]);
        }
        for reason in ["malformed", "invalid", "revoked"] {
            m.session_rejects.with_label_values(&[reason]);
        }
        let build = gauge_vec(
            &m.registry,
            "pilotage_build_info",
            "Always 1; the labels say which build runs.",
            &["version", "pilotage"],
        );
        build
            .with_label_values(&[env!("CARGO_PKG_VERSION"), crate::pilotage::VERSION])
            .set(1);
        // CPU, memory, file descriptors, threads and start time of this process.
        #[cfg(target_os = "linux")]
        if let Err(e) = m.registry.register(Box::new(
            prometheus::process_collector::ProcessCollector::for_self(),
        )) {
            tracing::warn!(error = %e, "process metrics are off");
        }
        m
    }

    /// Diagnostic codes start at zero, so a code that never fired is still a series.
    pub fn declare_diagnostic_codes<'a>(&self, codes: impl IntoIterator<Item = &'a str>) {
        for code in codes {
            self.diagnostics.with_label_values(&[code]);
        }
    }

    /// Records one call to this value's engine.
    pub fn engine_call(&self, operation: &str, status: &str, took: Duration) {
        self.engine_calls
            .with_label_values(&[&self.engine, operation, status])
            .observe(took.as_secs_f64());
    }

    /// Counts a run as in flight until the guard drops.
    pub fn run_in_flight(&self) -> InFlight {
        self.runs_in_flight.inc();
        InFlight(self.runs_in_flight.clone())
    }

    /// The text exposition of every family.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        if let Err(e) = TextEncoder::new().encode(&self.registry.gather(), &mut out) {
            tracing::warn!(error = %e, "metrics encoding failed");
        }
        String::from_utf8(out).unwrap_or_default()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

/// Decrements the in-flight gauge when dropped (also on an early return or a
/// cancelled request).
pub struct InFlight(IntGauge);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// `CALL_BUCKETS`, then doubling steps past 30 s and the deadline itself as
/// the last bound, so a run that ends near its deadline is not lost in
/// `+Inf` (two slack seconds past it: the answer still has to arrive).
fn call_buckets(longest_deadline: Duration) -> Vec<f64> {
    let mut buckets = CALL_BUCKETS.to_vec();
    let top = longest_deadline.as_secs_f64() + 2.0;
    let mut next = CALL_BUCKETS[CALL_BUCKETS.len() - 1] * 2.0;
    // At most 16 doublings: 30 s × 2^16 is far beyond any allowed deadline.
    for _ in 0..16 {
        if next >= top {
            break;
        }
        buckets.push(next);
        next *= 2.0;
    }
    if top > buckets[buckets.len() - 1] {
        buckets.push(top.ceil());
    }
    buckets
}

// Registration only fails on a duplicate or malformed name, which the fixed
// names above never are; a failed registration leaves the metric unexported
// rather than stopping the gateway.
fn register<C: prometheus::core::Collector + Clone + 'static>(registry: &Registry, c: C) -> C {
    if let Err(e) = registry.register(Box::new(c.clone())) {
        tracing::warn!(error = %e, "metric not registered");
    }
    c
}

fn counter(registry: &Registry, name: &str, help: &str) -> IntCounter {
    register(
        registry,
        IntCounter::with_opts(Opts::new(name, help)).expect("valid metric options"),
    )
}

fn counter_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    register(
        registry,
        IntCounterVec::new(Opts::new(name, help), labels).expect("valid metric options"),
    )
}

fn gauge(registry: &Registry, name: &str, help: &str) -> IntGauge {
    register(
        registry,
        IntGauge::with_opts(Opts::new(name, help)).expect("valid metric options"),
    )
}

fn gauge_vec(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntGaugeVec {
    register(
        registry,
        IntGaugeVec::new(Opts::new(name, help), labels).expect("valid metric options"),
    )
}

fn histogram_vec(
    registry: &Registry,
    name: &str,
    help: &str,
    labels: &[&str],
    buckets: &[f64],
) -> HistogramVec {
    register(
        registry,
        HistogramVec::new(
            HistogramOpts::new(name, help).buckets(buckets.to_vec()),
            labels,
        )
        .expect("valid metric options"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_family_has_help_and_type_and_no_instance_label() {
        let m = Metrics::new();
        m.tool_calls
            .with_label_values(&["pilotage_manifest", "", "ok"])
            .observe(0.0002);
        m.engine_call("run", "200", Duration::from_micros(300));
        let text = m.render();
        for family in [
            "pilotage_build_info",
            "pilotage_request_errors_total",
            "pilotage_tool_call_duration_seconds",
            "pilotage_engine_call_duration_seconds",
        ] {
            assert!(
                text.contains(&format!("# HELP {family} ")),
                "{family}:\n{text}"
            );
            assert!(
                text.contains(&format!("# TYPE {family} ")),
                "{family}:\n{text}"
            );
        }
        assert!(!text.contains("instance="), "{text}");
        assert!(text.contains("pilotage_build_info{pilotage=\"1.1\",version=\""));
    }

    #[test]
    fn call_buckets_reach_the_longest_deadline() {
        assert_eq!(call_buckets(Duration::from_secs(30)).last(), Some(&32.0));
        let long = call_buckets(Duration::from_secs(300));
        assert_eq!(&long[..CALL_BUCKETS.len()], CALL_BUCKETS);
        assert_eq!(&long[CALL_BUCKETS.len()..], &[60.0, 120.0, 240.0, 302.0]);
        assert!(long.windows(2).all(|w| w[0] < w[1]), "{long:?}");
        assert_eq!(call_buckets(Duration::from_secs(1)), CALL_BUCKETS);
    }

    #[test]
    fn engine_calls_carry_the_engine_name() {
        let m = Metrics::new();
        m.for_engine("orders")
            .engine_call("run", "200", Duration::from_millis(3));
        m.engine_call("catalog", "200", Duration::from_millis(3));
        let text = m.render();
        assert!(text.contains("pilotage_engine_call_duration_seconds_count{engine=\"orders\",operation=\"run\",status=\"200\"} 1"), "{text}");
        assert!(text.contains("pilotage_engine_call_duration_seconds_count{engine=\"default\",operation=\"catalog\",status=\"200\"} 1"), "{text}");
    }

    #[test]
    fn in_flight_guard_returns_the_gauge_to_zero() {
        let m = Metrics::new();
        let a = m.run_in_flight();
        let b = m.run_in_flight();
        assert_eq!(m.runs_in_flight.get(), 2);
        drop(a);
        drop(b);
        assert_eq!(m.runs_in_flight.get(), 0);
    }
}
