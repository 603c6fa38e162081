//! How often the gateway asked the engine for a tenant's catalog while a row
//! ran, per tool call: read from the gateway's own `/metrics` before and
//! after its measurement. Every call must stand on a catalog confirmed after
//! it arrived (Part II §6.4); concurrent calls share one confirmation, so
//! under load this number is well below one, and it is the engine work that
//! currency costs. The same scrape gives what the embedded store keeps after
//! a load (the memory that must stay).

use crate::procs::Proc;

/// The gateway's counts of tool calls and of engine catalog requests so far.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counts {
    tool_calls: f64,
    catalog_requests: f64,
}

impl Counts {
    /// Catalog requests per tool call between `self` (earlier) and `later`.
    pub fn per_call(self, later: Counts) -> Option<f64> {
        let calls = later.tool_calls - self.tool_calls;
        (calls > 0.0).then(|| (later.catalog_requests - self.catalog_requests) / calls)
    }
}

/// Scrapes `gateway`'s `/metrics`.
pub async fn read(gateway: &Proc) -> Result<Counts, String> {
    Ok(counts(&scrape(gateway).await?))
}

/// Bytes the embedded store counts as held, over its largest principal
/// groups (about all of it when a benchmark's one key wrote everything);
/// `None` for a gateway on Redis.
pub async fn store_bytes(gateway: &Proc) -> Result<Option<u64>, String> {
    const FAMILY: &str = "pilotage_store_principal_bytes{";
    let metrics = scrape(gateway).await?;
    let embedded = metrics.lines().any(|l| l.starts_with(FAMILY));
    Ok(embedded.then(|| sum(&metrics, FAMILY, None) as u64))
}

async fn scrape(gateway: &Proc) -> Result<String, String> {
    let url = format!("{}/metrics", gateway.url());
    reqwest::get(&url)
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| format!("{url}: {e}"))?
        .text()
        .await
        .map_err(|e| format!("{url}: {e}"))
}

/// The sum of `family`'s samples (those whose labels contain `label`).
fn sum(metrics: &str, family: &str, label: Option<&str>) -> f64 {
    metrics
        .lines()
        .filter(|l| l.starts_with(family))
        .filter(|l| label.is_none_or(|want| l.contains(want)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

fn counts(metrics: &str) -> Counts {
    let sum = |family: &str, label: Option<&str>| sum(metrics, family, label);
    Counts {
        tool_calls: sum("pilotage_tool_call_duration_seconds_count", None),
        catalog_requests: sum(
            "pilotage_engine_call_duration_seconds_count",
            Some("operation=\"catalog\""),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_the_families_series() {
        let text = "\
# TYPE pilotage_tool_call_duration_seconds histogram
pilotage_tool_call_duration_seconds_count{language=\"workflow/v1\",tool=\"validate_workflow\",outcome=\"ok\"} 90
pilotage_tool_call_duration_seconds_count{language=\"\",tool=\"pilotage_manifest\",outcome=\"ok\"} 10
pilotage_engine_call_duration_seconds_count{engine=\"default\",operation=\"catalog\",status=\"304\"} 20
pilotage_engine_call_duration_seconds_count{engine=\"default\",operation=\"catalog\",status=\"200\"} 5
pilotage_engine_call_duration_seconds_count{engine=\"default\",operation=\"check\",status=\"200\"} 90
";
        let before = Counts::default();
        assert_eq!(before.per_call(counts(text)), Some(0.25));
        assert_eq!(before.per_call(before), None);
    }
}
