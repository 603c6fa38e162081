//! A promoted program lives for its language's `promotion_lifetime`, through
//! the real endpoint: found in the catalog and runnable by `program_ref`
//! right after a `deploy` execution, gone once the lifetime has passed.

use crate::common::{ACME_OPS, TestEnv, write_program};
use serde_json::json;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn a_promoted_program_expires_after_the_promotion_lifetime() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |cfg| {
        cfg.languages[0].promotion_lifetime = "PT1S".into();
    })
    .await;
    let mut c = env.client(ACME_OPS);
    c.initialize().await;
    let deployed = c
        .call(
            "run_workflow",
            json!({"workflow": write_program("silver"), "mode": "deploy"}),
        )
        .await;
    assert_eq!(
        deployed.structured["outcome"]["status"], "success",
        "{}",
        deployed.raw
    );
    let program_ref = deployed.structured["output"]["program_ref"]
        .as_str()
        .expect("program_ref")
        .to_string();
    let get = json!({"language": "workflow/v1", "verb": "get", "id": program_ref});
    let found = c.call("pilotage_catalog", get.clone()).await;
    assert_eq!(
        found.structured["entry"]["kind"], "program",
        "{}",
        found.raw
    );

    tokio::time::sleep(Duration::from_millis(1500)).await;
    let gone = c.call("pilotage_catalog", get).await;
    assert_ne!(
        gone.structured["entry"]["kind"], "program",
        "still promoted after its lifetime: {}",
        gone.raw
    );
    let run = c
        .call(
            "run_workflow",
            json!({"program_ref": program_ref, "mode": "immediate"}),
        )
        .await;
    assert_ne!(
        run.structured["outcome"]["status"], "success",
        "an expired program still runs: {}",
        run.raw
    );
}

#[test]
fn a_promotion_lifetime_that_is_not_a_positive_duration_is_refused() {
    let path = crate::common::repo_path("tests/fixtures/features.toml");
    let text = std::fs::read_to_string(&path).expect("read config");
    for bad in ["PT0S", "forever", "PT1H1H"] {
        let mut cfg = pilotage_gateway::config::Config::parse(&text, &path).expect("parse");
        cfg.languages[0].promotion_lifetime = bad.into();
        let problems = cfg.validate();
        assert!(
            problems
                .iter()
                .any(|p| p.key == "language[0].promotion_lifetime"),
            "{bad}: {problems:?}"
        );
    }
}
