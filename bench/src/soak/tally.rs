//! What the soak records while it runs — every answer (when, how long, what
//! kind) and once a second the processes' memory — and the per-minute
//! figures drawn from it.

use std::collections::BTreeMap;
use std::sync::Mutex;

/// One answer.
#[derive(Debug, Clone)]
pub struct Sample {
    /// Completion, milliseconds since the soak started.
    pub at_ms: u64,
    pub latency_us: u64,
    pub kind: String,
    pub lockout: bool,
}

/// Memory once a second.
#[derive(Debug, Clone)]
pub struct Reading {
    pub at_s: f64,
    /// RSS of each gateway instance, MiB (`None` while unreadable).
    pub rss_mib: Vec<Option<f64>>,
    /// Redis `used_memory`, bytes (`None` while Redis is down).
    pub store_bytes: Option<u64>,
}

/// Every answer so far, shared by the callers.
#[derive(Default)]
pub struct Tally {
    samples: Mutex<Vec<Sample>>,
}

impl Tally {
    pub fn record(&self, sample: Sample) {
        self.samples
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(sample);
    }

    pub fn snapshot(&self) -> Vec<Sample> {
        self.samples
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Nearest-rank percentile of latencies in microseconds, as milliseconds.
pub fn percentile_ms(sorted_us: &[u64], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted_us.len() as f64).ceil() as usize;
    sorted_us[rank.clamp(1, sorted_us.len()) - 1] as f64 / 1000.0
}

/// The figures of one window of the soak.
#[derive(Debug, Clone)]
pub struct Window {
    pub to_s: f64,
    pub answers: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub kinds: BTreeMap<String, usize>,
    pub lockouts: usize,
    /// The last memory reading inside the window.
    pub rss_mib: Vec<Option<f64>>,
    pub store_bytes: Option<u64>,
}

/// The answers and readings between `from_s` and `to_s`.
pub fn window(samples: &[Sample], readings: &[Reading], from_s: f64, to_s: f64) -> Window {
    let inside: Vec<&Sample> = samples
        .iter()
        .filter(|s| {
            let t = s.at_ms as f64 / 1000.0;
            t >= from_s && t < to_s
        })
        .collect();
    let mut latencies: Vec<u64> = inside.iter().map(|s| s.latency_us).collect();
    latencies.sort_unstable();
    let mut kinds = BTreeMap::new();
    for s in &inside {
        *kinds.entry(s.kind.clone()).or_insert(0) += 1;
    }
    let last = readings
        .iter()
        .rev()
        .find(|r| r.at_s >= from_s && r.at_s < to_s);
    Window {
        to_s,
        answers: inside.len(),
        p50_ms: percentile_ms(&latencies, 50.0),
        p99_ms: percentile_ms(&latencies, 99.0),
        kinds,
        lockouts: inside.iter().filter(|s| s.lockout).count(),
        rss_mib: last.map(|r| r.rss_mib.clone()).unwrap_or_default(),
        store_bytes: last.and_then(|r| r.store_bytes),
    }
}

impl Window {
    /// `ok 1200 · internal 3`.
    pub fn kinds_line(&self) -> String {
        self.kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// `31 / 30 / 32`.
    pub fn rss_line(&self) -> String {
        self.rss_mib
            .iter()
            .map(|r| r.map_or("–".to_string(), |m| format!("{m:.0}")))
            .collect::<Vec<_>>()
            .join(" / ")
    }

    pub fn store_line(&self) -> String {
        self.store_bytes
            .map_or("–".into(), |b| format!("{:.1} MiB", b as f64 / 1048576.0))
    }
}
