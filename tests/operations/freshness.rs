//! Catalog currency through the real endpoint: by default every call is
//! answered from a catalog the engine confirmed after it arrived; the
//! opt-in `cache.read_only_catalog_staleness_ms` lets validate and catalog
//! pages reuse a confirmed one, never execute (its drift check refuses a
//! run on a changed catalog at any setting); a promotion through this
//! instance shows at once. A catalog too large for `cache.catalog_bytes`
//! still answers and is counted.

use crate::common::engine_env::ids_of;
use crate::common::{ACME_OPS, LANG, Mcp, TestEnv, write_program};
use serde_json::{Value, json};

const CONFIG: &str = "tests/fixtures/features.toml";
/// Longer than any test: nothing expires while one runs.
const HOUR_MS: u64 = 3_600_000;

async fn catalog(c: &Mcp) -> Value {
    list(c, json!({"language": LANG, "verb": "list"})).await
}

/// Changes the description of acme's `util.echo` in the engine's catalog.
async fn reword_echo(env: &TestEnv, doc: &str) {
    let mut cap = env.engine.capability("acme", "util.echo").await;
    cap["doc"] = json!(doc);
    env.engine
        .put_capability("util.echo", &cap, Some("acme"))
        .await;
}

async fn list(c: &Mcp, arguments: Value) -> Value {
    let r = c.call("pilotage_catalog", arguments).await;
    assert!(!r.is_error, "{}", r.raw);
    r.structured
}

#[tokio::test(flavor = "multi_thread")]
async fn read_only_staleness_serves_validate_and_pages_from_memory() {
    let env =
        TestEnv::with_config(CONFIG, |c| c.cache.read_only_catalog_staleness_ms = HOUR_MS).await;
    let c = env.client(ACME_OPS);
    let first = catalog(&c).await["catalog_version"].clone();
    let before = env.engine.requests().await;
    for _ in 0..5 {
        assert_eq!(catalog(&c).await["catalog_version"], first);
    }
    let checked = c
        .call(
            "validate_workflow",
            json!({"workflow": write_program("gold")}),
        )
        .await;
    assert_eq!(
        checked.structured["catalog_version"], first,
        "{}",
        checked.raw
    );
    // The validation itself is the engine's one request.
    assert_eq!(env.engine.requests().await, before + 1);
    // A change of the engine's catalog waits for the age.
    reword_echo(&env, "Echo, reworded while the catalog is reused.").await;
    assert_eq!(catalog(&c).await["catalog_version"], first);
    // Execute never reuses it: the run expecting the reused version is
    // refused as drift, and nothing is written.
    let state = env.engine.digest("acme").await;
    let run = c
        .call(
            "run_workflow",
            json!({"workflow": write_program("gold"), "mode": "immediate",
                "expected_catalog_version": first}),
        )
        .await;
    assert_eq!(
        run.structured["outcome"]["status"], "catalog_drift",
        "{}",
        run.raw
    );
    assert_eq!(env.engine.digest("acme").await, state, "no side effects");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_promotion_through_this_instance_shows_at_once() {
    let env =
        TestEnv::with_config(CONFIG, |c| c.cache.read_only_catalog_staleness_ms = HOUR_MS).await;
    let mut c = env.client(ACME_OPS);
    c.initialize().await;
    let before = catalog(&c).await;
    let deployed = c
        .call(
            "run_workflow",
            json!({"workflow": write_program("silver"), "mode": "deploy"}),
        )
        .await;
    let program_ref = deployed.structured["output"]["program_ref"]
        .as_str()
        .unwrap_or_else(|| panic!("no program_ref: {}", deployed.raw))
        .to_string();
    let after = list(
        &c,
        json!({"language": LANG, "verb": "list", "kind": "program"}),
    )
    .await;
    assert_ne!(after["catalog_version"], before["catalog_version"]);
    let ids = ids_of(after["items"].as_array().expect("items"));
    assert!(ids.contains(&program_ref), "{ids:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn by_default_every_request_asks_the_engine() {
    let env = TestEnv::start().await;
    let c = env.client(ACME_OPS);
    let first = catalog(&c).await["catalog_version"].clone();
    let before = env.engine.requests().await;
    for _ in 0..3 {
        catalog(&c).await;
    }
    assert_eq!(env.engine.requests().await, before + 3);
    reword_echo(&env, "Echo, reworded: the next answer shows it.").await;
    assert_ne!(catalog(&c).await["catalog_version"], first);
}

/// A catalog larger than `[cache] catalog_bytes` keeps still answers, in
/// full, and is counted for the operator; one that fits is not.
#[tokio::test(flavor = "multi_thread")]
async fn a_catalog_too_large_for_the_cache_still_answers_and_is_counted() {
    let env = TestEnv::with_config(CONFIG, |c| {
        // 192 KiB for catalogs: the shipped one fits, forty more do not.
        c.cache.catalog_bytes = 256 * 1024;
    })
    .await;
    let c = env.client(ACME_OPS);
    let small = catalog(&c).await;
    assert_eq!(oversized(&env).await, 0.0, "the shipped catalog fits");
    // Forty capabilities with 3 KB descriptions: about 400 KB as entries.
    let doc = "x".repeat(3000);
    for i in 0..40 {
        let name = format!("big.op_{i:02}");
        let cap = json!({"name": name, "title": format!("Op {i}"), "doc": doc,
            "params": {"type": "object"}, "effect": "read", "tags": []});
        env.engine.put_capability(&name, &cap, Some("acme")).await;
    }
    let page = list(
        &c,
        json!({"language": LANG, "verb": "list", "q": "big.op_"}),
    )
    .await;
    assert_ne!(page["catalog_version"], small["catalog_version"]);
    assert!(
        page["next_cursor"].is_string(),
        "40 entries need pages: {page}"
    );
    let last = list(
        &c,
        json!({"language": LANG, "verb": "get", "id": "big.op_39"}),
    )
    .await;
    assert_eq!(last["entry"]["description"], json!(doc));
    assert!(oversized(&env).await >= 1.0);
}

async fn oversized(env: &TestEnv) -> f64 {
    crate::metrics::scrape(env)
        .await
        .lines()
        .find_map(|l| l.strip_prefix("pilotage_catalog_oversized_total "))
        .and_then(|v| v.parse().ok())
        .expect("the counter is exported")
}

/// A catalog page is answered again from memory while its catalog_version
/// holds; the engine's change moves the version and the page with it.
#[tokio::test(flavor = "multi_thread")]
async fn a_page_follows_its_catalog_version() {
    let env = TestEnv::start().await;
    let c = env.client(ACME_OPS);
    let args = json!({"language": LANG, "verb": "list", "q": "echo"});
    let first = list(&c, args.clone()).await;
    assert_eq!(list(&c, args.clone()).await, first);
    reword_echo(&env, "Echo, reworded: the page must show it.").await;
    let after = list(&c, args).await;
    assert_ne!(after["catalog_version"], first["catalog_version"]);
    let echo = after["items"]
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .find(|e| e["name"] == "util.echo" || e["id"] == "util.echo")
        })
        .unwrap_or_else(|| panic!("no util.echo in {after}"));
    assert!(
        echo.to_string().contains("reworded: the page must show it"),
        "{echo}"
    );
}
