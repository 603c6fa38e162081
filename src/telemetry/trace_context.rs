//! W3C Trace Context (`traceparent`, `tracestate`): taken from the caller's
//! request, or started here when it sent none, and handed to every engine
//! call the request causes, so one trace id follows a request from the agent
//! through the gateway into the engine.
//!
//! Each engine call gets a `traceparent` with the caller's trace id and a new
//! span id of its own (the engine call is a child of the request); the
//! caller's `tracestate` travels unchanged.

use axum::http::HeaderMap;

/// The trace a request belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    /// 32 lowercase hex digits, not all zero.
    pub trace_id: String,
    /// The caller's span (16 hex digits), or `None` when the trace starts here.
    pub parent_id: Option<String>,
    /// Trace flags (`01` = sampled).
    pub flags: String,
    pub tracestate: Option<String>,
}

tokio::task_local! {
    static CURRENT: TraceContext;
}

impl TraceContext {
    /// The caller's context, or a new trace when `traceparent` is absent or
    /// malformed (the standard says to restart the trace then, and to drop
    /// `tracestate` with it).
    pub fn from_headers(headers: &HeaderMap) -> TraceContext {
        let parsed = headers
            .get("traceparent")
            .and_then(|v| v.to_str().ok())
            .and_then(parse_traceparent);
        match parsed {
            Some((trace_id, parent_id, flags)) => TraceContext {
                trace_id,
                parent_id: Some(parent_id),
                flags,
                tracestate: headers
                    .get("tracestate")
                    .and_then(|v| v.to_str().ok())
                    .filter(|s| !s.is_empty() && s.len() <= 512)
                    .map(str::to_string),
            },
            None => TraceContext {
                trace_id: format!("{:032x}", rand::random::<u128>() | 1),
                parent_id: None,
                flags: "01".into(),
                tracestate: None,
            },
        }
    }

    /// The `traceparent` of a child span with a fresh span id.
    pub fn child_traceparent(&self) -> String {
        format!(
            "00-{}-{:016x}-{}",
            self.trace_id,
            rand::random::<u64>() | 1,
            self.flags
        )
    }

    /// Runs `f` with this context as the current one (read by engine calls).
    pub async fn scope<F: std::future::Future>(self, f: F) -> F::Output {
        CURRENT.scope(self, f).await
    }

    /// The context of the request being served, if any.
    pub fn current() -> Option<TraceContext> {
        CURRENT.try_with(Clone::clone).ok()
    }
}

/// `version-traceid-parentid-flags`, version `00` (later versions are read
/// by their first four fields, as the standard asks).
fn parse_traceparent(value: &str) -> Option<(String, String, String)> {
    let mut parts = value.trim().split('-');
    let version = parts.next()?;
    let trace_id = parts.next()?;
    let parent_id = parts.next()?;
    let flags = parts.next()?;
    let rest = parts.next();
    let hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let valid = hex(version, 2)
        && version != "ff"
        && (version != "00" || rest.is_none())
        && hex(trace_id, 32)
        && trace_id.bytes().any(|b| b != b'0')
        && hex(parent_id, 16)
        && parent_id.bytes().any(|b| b != b'0')
        && hex(flags, 2);
    valid.then(|| (trace_id.into(), parent_id.into(), flags.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(traceparent: &str, tracestate: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("traceparent", traceparent.parse().unwrap());
        if let Some(s) = tracestate {
            h.insert("tracestate", s.parse().unwrap());
        }
        h
    }

    #[test]
    fn a_valid_traceparent_is_continued_with_a_new_span_id() {
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let ctx = TraceContext::from_headers(&headers(tp, Some("vendor=x")));
        assert_eq!(ctx.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(ctx.parent_id.as_deref(), Some("00f067aa0ba902b7"));
        assert_eq!(ctx.tracestate.as_deref(), Some("vendor=x"));
        let child = ctx.child_traceparent();
        assert!(child.starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-"));
        assert!(child.ends_with("-01"));
        assert_ne!(&child[36..52], "00f067aa0ba902b7");
    }

    #[test]
    fn a_malformed_traceparent_starts_a_new_trace_and_drops_tracestate() {
        for bad in [
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "garbage",
        ] {
            let ctx = TraceContext::from_headers(&headers(bad, Some("vendor=x")));
            assert_eq!(ctx.parent_id, None, "{bad}");
            assert_eq!(ctx.tracestate, None, "{bad}");
            assert_eq!(ctx.trace_id.len(), 32);
        }
    }
}
