//! `[engine.breaker]` and `[engine.retry_budget]`: how many failures open an
//! engine's circuit breaker and for how long, and what share of calls may be
//! retried. Every engine table has both, whichever adapter serves it.

use serde::Deserialize;

/// When an engine's breaker opens, and for how long.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerSettings {
    /// Failed calls in a row that open the breaker (0: never on a count).
    pub consecutive_failures: u32,
    /// Share of failed calls over `window_ms` that opens it (1.0 or more:
    /// never on a ratio)...
    pub failure_ratio: f64,
    /// ...once the window holds at least this many calls.
    pub min_calls: u32,
    /// The window, in milliseconds, the counts above are taken over.
    pub window_ms: u64,
    /// How long an open breaker fails calls fast before one probe call
    /// decides whether it closes.
    pub open_ms: u64,
}

impl Default for BreakerSettings {
    fn default() -> Self {
        Self {
            consecutive_failures: 5,
            failure_ratio: 0.5,
            min_calls: 20,
            window_ms: 10_000,
            open_ms: 5_000,
        }
    }
}

/// The share of calls that may be retried, as Envoy's retry budget and
/// gRPC's retry throttling bound it.
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct RetryBudgetSettings {
    /// Retries allowed per call made over `window_ms`...
    pub ratio: f64,
    /// ...plus this many per second of the window, so a quiet engine's
    /// occasional failure is still retried.
    pub min_per_second: u32,
    /// The window, in milliseconds, the counts above are taken over.
    pub window_ms: u64,
}

impl Default for RetryBudgetSettings {
    fn default() -> Self {
        Self {
            ratio: 0.1,
            min_per_second: 1,
            window_ms: 10_000,
        }
    }
}

/// (key, problem, fix) for both tables, with `prefix` (`engine` or
/// `engines.NAME`) before each key.
pub fn problems(
    prefix: &str,
    breaker: &BreakerSettings,
    budget: &RetryBudgetSettings,
) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut refuse = |key: &str, problem: String, fix: &str| {
        out.push((format!("{prefix}.{key}"), problem, fix.to_string()));
    };
    if breaker.failure_ratio.is_nan() || breaker.failure_ratio <= 0.0 {
        refuse(
            "breaker.failure_ratio",
            format!(
                "{} would open the breaker on any call",
                breaker.failure_ratio
            ),
            "set a share above 0 (default 0.5; 1.0 or more turns the ratio off)",
        );
    }
    if breaker.window_ms == 0 {
        refuse(
            "breaker.window_ms",
            "0 holds no calls".into(),
            "set a window in milliseconds (default 10000)",
        );
    }
    if breaker.open_ms == 0 {
        refuse(
            "breaker.open_ms",
            "0 would never let an open breaker pause calls".into(),
            "set a cool-down in milliseconds (default 5000)",
        );
    }
    if !(0.0..=1.0).contains(&budget.ratio) {
        refuse(
            "retry_budget.ratio",
            format!("{} is not a share between 0 and 1", budget.ratio),
            "set retries allowed per call, e.g. 0.1 (default)",
        );
    }
    if budget.window_ms < 1000 {
        refuse(
            "retry_budget.window_ms",
            format!("{} ms is shorter than a second", budget.window_ms),
            "set a window of at least 1000 ms (default 10000)",
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_pass_and_nonsense_is_named() {
        let (b, r) = (BreakerSettings::default(), RetryBudgetSettings::default());
        assert!(problems("engine", &b, &r).is_empty());
        let bad_b = BreakerSettings {
            failure_ratio: 0.0,
            open_ms: 0,
            ..b
        };
        let bad_r = RetryBudgetSettings { ratio: 2.0, ..r };
        let keys: Vec<String> = problems("engines.x", &bad_b, &bad_r)
            .into_iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(
            keys,
            [
                "engines.x.breaker.failure_ratio",
                "engines.x.breaker.open_ms",
                "engines.x.retry_budget.ratio"
            ]
        );
    }
}
