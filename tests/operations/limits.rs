//! Per-principal limits through the real endpoint: a spent tool-call budget
//! and a full run cap are Pilotage request errors that say when to retry.

use crate::common::{ACME_OPS, TestEnv, valid_program};
use pilotage_gateway::config::limits::{KeyLimit, Limit};
use serde_json::json;
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread")]
async fn each_anonymous_session_has_its_own_budget_and_is_told_when_to_retry() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        c.limits.anonymous = Limit {
            // One call a minute: the fourth call is refused, whatever the timing.
            requests_per_second: Some(1.0 / 60.0),
            burst: Some(3),
            concurrent_runs: None,
        };
    })
    .await;
    let mut a = env.anonymous();
    a.initialize().await;
    let mut b = env.anonymous();
    b.initialize().await;
    for _ in 0..3 {
        let r = a.call("pilotage_manifest", json!({})).await;
        assert!(!r.is_error, "{}", r.structured);
    }
    let refused = a.call("pilotage_manifest", json!({})).await;
    assert!(refused.is_error);
    assert_eq!(refused.structured["error"]["kind"], "internal");
    let ms = refused.structured["retry_after_ms"]
        .as_u64()
        .expect("retry_after_ms");
    assert!(ms > 1000 && ms <= 60_000, "{ms}");
    let message = refused.structured["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("rate limit") && message.contains(&format!("retry in {ms} ms")),
        "{message}"
    );
    // Another session's budget is whole: a's refusal cost it nothing.
    for _ in 0..3 {
        assert!(!b.call("pilotage_manifest", json!({})).await.is_error);
    }
    assert!(b.call("pilotage_manifest", json!({})).await.is_error);
    // A key holder is not held back by anonymous traffic.
    let key = env.client(ACME_OPS);
    assert!(!key.call("pilotage_manifest", json!({})).await.is_error);
    let metrics = &env.gateway.as_ref().unwrap().metrics;
    assert_eq!(
        metrics.rate_limited.with_label_values(&["requests"]).get(),
        2
    );
    assert_eq!(
        metrics
            .request_errors
            .with_label_values(&["internal"])
            .get(),
        2
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_at_its_run_cap_is_refused_until_a_run_finishes() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        c.limits.keys = vec![KeyLimit {
            name: "ops".into(),
            limit: Limit {
                concurrent_runs: Some(1),
                ..Default::default()
            },
        }];
    })
    .await;
    let gw = env.gateway.clone().unwrap();
    let slow = json!({"steps": [{"id": "nap", "kind": "call", "capability": "util.sleep", "with": {"ms": 1500}}]});
    let first = tokio::spawn({
        let key = env.client(ACME_OPS);
        async move {
            key.call(
                "run_workflow",
                json!({"workflow": slow, "mode": "immediate"}),
            )
            .await
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while gw.metrics.runs_in_flight.get() < 1 {
        assert!(
            Instant::now() < deadline,
            "the first run never reached the engine"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let key = env.client(ACME_OPS);
    let args = json!({"workflow": valid_program(), "input": {"id": "cus_1"}, "mode": "immediate"});
    let refused = key.call("run_workflow", args.clone()).await;
    assert!(refused.is_error, "{}", refused.structured);
    assert_eq!(refused.structured["error"]["kind"], "internal");
    assert!(refused.structured["retry_after_ms"].as_u64().is_some());
    assert!(
        refused.structured["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1 runs in progress")
    );
    // Another key is not affected.
    let audit = env.client(crate::common::ACME_AUDIT);
    let other = audit.call("run_workflow", args.clone()).await;
    assert_eq!(
        other.structured["outcome"]["status"], "success",
        "{}",
        other.structured
    );
    let done = first.await.unwrap();
    assert_eq!(
        done.structured["outcome"]["status"], "success",
        "{}",
        done.structured
    );
    let again = key.call("run_workflow", args).await;
    assert_eq!(again.structured["outcome"]["status"], "success");
    assert_eq!(
        gw.metrics
            .rate_limited
            .with_label_values(&["concurrent_runs"])
            .get(),
        1
    );
}

#[test]
fn limits_are_validated_at_start_naming_the_key_and_the_fix() {
    let path = crate::common::repo_path("tests/fixtures/features.toml");
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "[limits.anonymous]\n",
        "[limits]\ntrusted_proxies = [\"10.0.0.0/8\", \"nginx\"]\nmax_tracked_callers = 0\n\n[limits.anonymous]\nrequests_per_second = 0\n\n[[limits.key]]\nname = \"nobody\"\nconcurrent_runs = 0\n",
    );
    let config = pilotage_gateway::config::Config::parse(&text, &path).unwrap();
    let problems: Vec<String> = config.validate().iter().map(|p| p.to_string()).collect();
    assert!(
        !problems.iter().any(|p| p.contains("trusted_proxies[0]")),
        "a CIDR block is a proxy: {problems:?}"
    );
    for expected in [
        "`limits.anonymous.requests_per_second`",
        "`limits.key[0].concurrent_runs`",
        "`limits.key[0].name`: no [[auth.key]] is named 'nobody'",
        "`limits.trusted_proxies[1]`: 'nginx' is not an IP address or CIDR block",
        "`limits.max_tracked_callers`",
    ] {
        assert!(
            problems
                .iter()
                .any(|p| p.contains(expected) && p.contains("fix:")),
            "{expected} in {problems:?}"
        );
    }
}
