//! Two tenants served by one n8n hold one catalog: through the HTTP
//! endpoint of a gateway in front of a real n8n, after each tenant's first
//! validate the gateway's metrics count two tenant catalogs and one
//! distinct catalog content (`pilotage_cache_entries`, `catalog_tenants`
//! and `catalog_contents`).

use crate::common::n8n_gateway::{N8nEnv, say_program, validate};

/// The value of `pilotage_cache_entries{cache="<cache>"}` in a scrape.
fn cache_entries(scrape: &str, cache: &str) -> f64 {
    let series = format!("pilotage_cache_entries{{cache=\"{cache}\"}} ");
    scrape
        .lines()
        .find_map(|line| line.strip_prefix(&series))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {series} in the scrape"))
}

#[tokio::test(flavor = "multi_thread")]
async fn tenants_served_the_same_node_types_share_one_catalog() {
    let env = N8nEnv::start().await;
    for caller in [&env.a, &env.b] {
        let c = env.session(caller).await;
        let verdict = validate(&c, &say_program("shared")).await;
        assert_eq!(verdict.structured["valid"], true, "{}", verdict.structured);
    }
    let base = env.env.url.trim_end_matches("/mcp");
    let scrape = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("GET /metrics")
        .text()
        .await
        .expect("the scrape");
    assert_eq!(cache_entries(&scrape, "catalog_tenants"), 2.0);
    assert_eq!(cache_entries(&scrape, "catalog_contents"), 1.0);
}
