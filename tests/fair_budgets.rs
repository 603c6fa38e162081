//! Budgets per caller through the real endpoint: a flooding anonymous
//! session never costs a quiet one a call, sessionless callers are told
//! apart by client address (`X-Forwarded-For` only from trusted proxies), a
//! refusal carries `retry_after_ms` and `Retry-After`, and the limiter
//! forgets callers whose budget is whole again.

mod common;

use common::{Mcp, TestEnv};
use pilotage_gateway::config::limits::Limit;
use serde_json::{Value, json};
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// The demo's anonymous budget (deploy/gateway.local.toml).
fn demo_budget() -> Limit {
    Limit {
        requests_per_second: Some(10.0),
        burst: Some(50),
        concurrent_runs: Some(4),
    }
}

/// Two calls, then one a minute: the third call in a test is refused.
fn two_calls() -> Limit {
    Limit {
        requests_per_second: Some(1.0 / 60.0),
        burst: Some(2),
        concurrent_runs: None,
    }
}

/// A sessionless client whose socket is bound to `source`.
struct Sessionless {
    http: reqwest::Client,
    url: String,
}

/// What one sessionless tools/call answered.
struct Answer {
    refused: bool,
    retry_after_ms: Option<u64>,
    retry_after_header: Option<String>,
}

impl Sessionless {
    fn from(env: &TestEnv, source: &str) -> Sessionless {
        Sessionless {
            http: reqwest::Client::builder()
                .local_address(source.parse::<IpAddr>().unwrap())
                .timeout(Duration::from_secs(30))
                .build()
                .unwrap(),
            url: env.url.clone(),
        }
    }

    async fn manifest(&self, forwarded_for: Option<&str>) -> Answer {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "pilotage_manifest", "arguments": {}}});
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json")
            .body(body.to_string());
        if let Some(xff) = forwarded_for {
            request = request.header("x-forwarded-for", xff);
        }
        let response = request.send().await.expect("POST /mcp");
        assert_eq!(response.status(), 200);
        let retry_after_header = response
            .headers()
            .get("retry-after")
            .map(|v| v.to_str().unwrap().to_string());
        let value: Value = response.json().await.expect("JSON answer");
        let result = &value["result"];
        assert!(result.is_object(), "{value}");
        let refused = result["isError"] == json!(true);
        if refused {
            assert_eq!(result["structuredContent"]["error"]["kind"], "internal");
        }
        Answer {
            refused,
            retry_after_ms: result["structuredContent"]["retry_after_ms"].as_u64(),
            retry_after_header,
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_quiet_session_is_never_refused_while_another_floods() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        // The harder case: every anonymous caller is one principal (scope
        // "tenant"), yet each session still has a budget of its own.
        c.auth.anonymous_scope = "tenant".into();
        c.limits.anonymous = demo_budget();
    })
    .await;
    let mut flooder = env.anonymous();
    flooder.initialize().await;
    let mut quiet = env.anonymous();
    quiet.initialize().await;
    let flooder = Arc::new(flooder);
    let flooding = Arc::new(AtomicBool::new(true));
    let refused = Arc::new(AtomicUsize::new(0));
    // Four connections of one session, 100 calls each, as fast as answered.
    let floods: Vec<_> = (0..4)
        .map(|_| {
            let (flooder, refused) = (flooder.clone(), refused.clone());
            tokio::spawn(async move {
                for _ in 0..100 {
                    if flooder.call("pilotage_manifest", json!({})).await.is_error {
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    let quiet_calls = tokio::spawn({
        let flooding = flooding.clone();
        async move {
            let mut answered = Vec::new();
            // Every 100 ms while the flood lasts (at most 30 s).
            for _ in 0..300 {
                if !flooding.load(Ordering::Relaxed) && answered.len() >= 10 {
                    break;
                }
                let r = quiet.call("pilotage_manifest", json!({})).await;
                answered.push(r.is_error);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            answered
        }
    });
    for f in floods {
        f.await.unwrap();
    }
    flooding.store(false, Ordering::Relaxed);
    let answered = quiet_calls.await.unwrap();
    let refused = refused.load(Ordering::Relaxed);
    assert!(
        refused > 0,
        "400 calls at once are over one session's budget (burst 50)"
    );
    assert!(
        answered.iter().all(|was_refused| !was_refused),
        "the quiet session was refused {} of {} calls while the flooder was refused {refused} of 400",
        answered.iter().filter(|r| **r).count(),
        answered.len()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sessionless_callers_are_budgeted_per_client_address() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        c.limits.anonymous = two_calls();
    })
    .await;
    let here = Sessionless::from(&env, "127.0.0.1");
    let there = Sessionless::from(&env, "127.0.0.2");
    assert!(!here.manifest(None).await.refused);
    assert!(!here.manifest(None).await.refused);
    let refused = here.manifest(None).await;
    assert!(
        refused.refused,
        "the third call from one address is over budget"
    );
    let ms = refused.retry_after_ms.expect("retry_after_ms");
    assert!(ms > 1000 && ms <= 60_000, "{ms}");
    assert_eq!(
        refused.retry_after_header,
        Some(ms.div_ceil(1000).to_string()),
        "Retry-After in whole seconds, rounded up"
    );
    // Another address, and a session from the same address, have budgets of their own.
    for _ in 0..2 {
        let admitted = there.manifest(None).await;
        assert!(!admitted.refused);
        assert_eq!(admitted.retry_after_header, None);
    }
    let mut session = Mcp::new(&env.url, None);
    session.initialize().await;
    assert!(!session.call("pilotage_manifest", json!({})).await.is_error);
    assert!(here.manifest(None).await.refused, "still over budget");
}

#[tokio::test(flavor = "multi_thread")]
async fn forwarded_for_counts_only_from_a_trusted_proxy() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        c.limits.anonymous = two_calls();
        c.limits.trusted_proxies = vec!["127.0.0.2".into()];
    })
    .await;
    // Not a trusted proxy: whatever it claims, it is 127.0.0.1.
    let stranger = Sessionless::from(&env, "127.0.0.1");
    assert!(!stranger.manifest(Some("198.51.100.1")).await.refused);
    assert!(!stranger.manifest(Some("198.51.100.2")).await.refused);
    assert!(stranger.manifest(Some("198.51.100.3")).await.refused);
    // The proxy: each forwarded client has a budget of its own.
    let proxy = Sessionless::from(&env, "127.0.0.2");
    assert!(!proxy.manifest(Some("198.51.100.1")).await.refused);
    assert!(!proxy.manifest(Some("198.51.100.1")).await.refused);
    assert!(proxy.manifest(Some("198.51.100.1")).await.refused);
    // A client's own prefix is not believed: the proxy's entry is the client.
    assert!(!proxy.manifest(Some("10.9.9.9, 198.51.100.2")).await.refused);
    assert!(!proxy.manifest(Some("10.9.9.8, 198.51.100.2")).await.refused);
    assert!(proxy.manifest(Some("10.9.9.7, 198.51.100.2")).await.refused);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_limiter_keeps_a_bounded_number_of_callers_and_forgets_whole_budgets() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        // Whole again 1 ms after a call: kept for the one-second minimum.
        c.limits.anonymous = Limit {
            requests_per_second: Some(1000.0),
            burst: Some(1),
            concurrent_runs: None,
        };
        c.limits.trusted_proxies = vec!["127.0.0.1".into()];
        c.limits.max_tracked_callers = 20;
    })
    .await;
    let limits = &env.gateway.as_ref().unwrap().limits;
    let proxy = Sessionless::from(&env, "127.0.0.1");
    for i in 0..200u32 {
        let client = format!("10.0.{}.{}", i / 250, i % 250 + 1);
        assert!(!proxy.manifest(Some(&client)).await.refused);
    }
    let kept = limits.tracked_callers();
    assert!(
        (1..=20).contains(&kept),
        "200 callers, at most 20 kept: {kept}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while limits.tracked_callers() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "idle callers with whole budgets are forgotten: {} kept",
            limits.tracked_callers()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
