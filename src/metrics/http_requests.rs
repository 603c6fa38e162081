//! `pilotage_http_requests_total`: answered `/mcp` requests by JSON-RPC
//! method and HTTP status. Methods are a closed set (the MCP ones, else
//! `other`, or `none` when the body named none), so a caller's made-up
//! method never becomes a series.
//!
//! Nearly every answer is a 200 to one of these methods: those counters are
//! kept at hand once first used, so counting a request does not hash its
//! labels and look the series up every time.

use axum::http::StatusCode;
use prometheus::{IntCounter, IntCounterVec};
use std::sync::{Arc, OnceLock};

/// The methods counted under their own name.
const KNOWN: [&str; 13] = [
    "initialize",
    "notifications/initialized",
    "ping",
    "tools/list",
    "tools/call",
    "server/discover",
    "resources/list",
    "prompts/list",
    "tasks/get",
    "tasks/result",
    "tasks/list",
    "tasks/cancel",
    "tasks/update",
];
const OTHER: usize = KNOWN.len();
const NONE: usize = KNOWN.len() + 1;

/// The family, with its HTTP 200 counters by method label.
#[derive(Clone)]
pub struct HttpRequests {
    family: IntCounterVec,
    ok: Arc<[OnceLock<IntCounter>; KNOWN.len() + 2]>,
}

impl HttpRequests {
    pub fn new(family: IntCounterVec) -> Self {
        Self {
            family,
            ok: Arc::new(std::array::from_fn(|_| OnceLock::new())),
        }
    }

    /// Counts one answered request to `method` (the first of a batch).
    pub fn count(&self, method: Option<&str>, status: StatusCode) {
        let label = match method {
            Some(m) => KNOWN.iter().position(|k| *k == m).unwrap_or(OTHER),
            None => NONE,
        };
        if status == StatusCode::OK {
            self.ok[label]
                .get_or_init(|| self.series(label, status))
                .inc();
        } else {
            self.series(label, status).inc();
        }
    }

    fn series(&self, label: usize, status: StatusCode) -> IntCounter {
        let method = match label {
            OTHER => "other",
            NONE => "none",
            known => KNOWN[known],
        };
        self.family.with_label_values(&[method, status.as_str()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prometheus::Opts;

    #[test]
    fn requests_are_counted_by_closed_method_and_status() {
        let family =
            IntCounterVec::new(Opts::new("t", "t"), &["method", "code"]).expect("valid options");
        let counts = HttpRequests::new(family.clone());
        counts.count(Some("tools/call"), StatusCode::OK);
        counts.clone().count(Some("tools/call"), StatusCode::OK);
        counts.count(Some("made/up"), StatusCode::OK);
        counts.count(None, StatusCode::BAD_REQUEST);
        counts.count(Some("tools/call"), StatusCode::NOT_FOUND);
        let value = |m: &str, c: &str| family.with_label_values(&[m, c]).get();
        assert_eq!(value("tools/call", "200"), 2);
        assert_eq!(value("other", "200"), 1);
        assert_eq!(value("none", "400"), 1);
        assert_eq!(value("tools/call", "404"), 1);
        assert_eq!(value("made/up", "200"), 0);
    }
}
