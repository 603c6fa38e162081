//! `/metrics` after a whole loop through the real endpoint and the real
//! engine: the scrape passes `promtool check metrics`, and every family the
//! loop exercised is there with the counts the loop implies (cached verdicts
//! included).

use crate::common::{ACME_OPS, LANG, Mcp, TestEnv, valid_program};
use serde_json::json;
use std::collections::BTreeMap;

/// One scraped sample: name, labels, value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

fn parse(text: &str) -> Vec<Sample> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').expect("sample value");
            let (name, labels) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            let labels = labels
                .split("\",")
                .filter(|p| !p.is_empty())
                .map(|p| {
                    let (k, v) = p.split_once('=').expect("label pair");
                    (k.to_string(), v.trim_matches('"').to_string())
                })
                .collect();
            Sample {
                name: name.to_string(),
                labels,
                value: value.parse().expect("numeric sample"),
            }
        })
        .collect()
}

/// Sum of the samples of `name` whose labels include every pair of `with`.
fn total(samples: &[Sample], name: &str, with: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            with.iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
        .sum()
}

fn promtool_check(text: &str) {
    let dir = std::env::temp_dir().join(format!("pilotage-metrics-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("scrape.prom");
    std::fs::write(&file, text).expect("write scrape");
    let out = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::fs::File::open(&file).expect("scrape file"))
        .output()
        .expect("promtool is installed by scripts/install-deps (Debian package prometheus)");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "promtool check metrics failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The gateway's `/metrics` text (HTTP 200, Prometheus text format).
pub(crate) async fn scrape(env: &TestEnv) -> String {
    let base = env.url.trim_end_matches("/mcp");
    let r = reqwest::get(format!("{base}/metrics"))
        .await
        .expect("GET /metrics");
    assert_eq!(r.status(), 200);
    let content_type = r.headers()["content-type"].to_str().unwrap().to_string();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    r.text().await.expect("metrics body")
}

/// An initialized anonymous caller and the first language's validate and
/// execute tools, from its manifest.
async fn anonymous_loop(env: &TestEnv) -> (Mcp, String, String) {
    let mut c = env.anonymous();
    c.initialize().await;
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    let tool = |stage: &str| {
        manifest["languages"][0]["loop"][stage]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (validate, execute) = (tool("validate"), tool("execute"));
    (c, validate, execute)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_scrape_after_the_loop_passes_promtool_and_counts_what_happened() {
    let env = TestEnv::start().await;
    let (c, validate, execute) = anonymous_loop(&env).await;
    let argument = "workflow";
    c.call("pilotage_get_guide", json!({"language": LANG}))
        .await;
    c.call(
        "pilotage_catalog",
        json!({"language": LANG, "verb": "list", "q": "invoice"}),
    )
    .await;
    // The same unknown capability validated three times: one engine check,
    // two cached verdicts; each answer's diagnostic counts.
    let unknown = json!({"steps": [{"id": "a", "kind": "call", "capability": "crm.no_such_thing", "with": {}}]});
    for _ in 0..3 {
        let v = c
            .call(&validate, json!({argument: unknown}))
            .await
            .structured;
        assert_eq!(v["valid"], false, "{v}");
    }
    let broken = json!({"steps": [{"id": "s", "kind": "set"}]});
    let v = c
        .call(&validate, json!({argument: broken}))
        .await
        .structured;
    assert_eq!(v["diagnostics"][0]["code"], "invalid_structure", "{v}");
    // A run, and a refused run whose diagnostics count too.
    let run = c
        .call(
            &execute,
            json!({argument: valid_program(), "input": {"id": "cus_1"}, "mode": "immediate"}),
        )
        .await
        .structured;
    assert_eq!(run["outcome"]["status"], "success", "{run}");
    let refused = c
        .call(&execute, json!({argument: unknown, "mode": "immediate"}))
        .await
        .structured;
    assert_eq!(refused["outcome"]["status"], "validation_error");
    // A request error.
    let e = c
        .call("pilotage_get_guide", json!({"language": "nope/v0"}))
        .await;
    assert!(e.is_error);
    // A catalog contract change, seen by the next lookup.
    let key = env.client(ACME_OPS);
    let before = key
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "list"}),
        )
        .await
        .structured["catalog_version"]
        .clone();
    let mut cap = env.engine.capability("acme", "util.echo").await;
    cap["doc"] = json!("Echo, reworded so the contract changes.");
    env.engine.put_capability("util.echo", &cap, None).await;
    let after = key
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "list"}),
        )
        .await
        .structured["catalog_version"]
        .clone();
    assert_ne!(before, after);
    // A forged session id.
    let mut forged = env.anonymous();
    forged.session = Some("abc.1.deadbeef".into());
    let (status, _, _) = forged
        .raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .await;
    assert_eq!(status, 404);

    // Made-up tool names share one series.
    for name in ["made_up_1", "made_up_2"] {
        let r = c
            .rpc("tools/call", json!({"name": name, "arguments": {}}))
            .await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }

    let text = scrape(&env).await;
    promtool_check(&text);
    assert!(
        !text.contains("instance="),
        "no instance label of ours:\n{text}"
    );
    let s = parse(&text);
    let d = "pilotage_diagnostics_total";
    // 3 validates + 1 refused execute (revalidated from the cache).
    assert_eq!(
        total(&s, d, &[("code", "unknown_capability")]),
        4.0,
        "{text}"
    );
    assert_eq!(total(&s, d, &[("code", "invalid_structure")]), 1.0);
    assert_eq!(
        total(&s, "pilotage_runs_total", &[("status", "success")]),
        1.0
    );
    assert_eq!(
        total(&s, "pilotage_runs_total", &[("status", "validation_error")]),
        1.0
    );
    assert_eq!(
        total(
            &s,
            "pilotage_request_errors_total",
            &[("kind", "not_found")]
        ),
        1.0
    );
    assert_eq!(
        total(&s, "pilotage_request_errors_total", &[("kind", "internal")]),
        0.0,
        "every kind is a series from the start"
    );
    assert!(total(&s, "pilotage_catalog_version_changes_total", &[]) >= 1.0);
    assert_eq!(
        total(
            &s,
            "pilotage_session_rejects_total",
            &[("reason", "invalid")]
        ),
        1.0
    );
    let calls = "pilotage_tool_call_duration_seconds_count";
    assert_eq!(
        total(
            &s,
            calls,
            &[("tool", &validate), ("language", LANG), ("outcome", "ok")]
        ),
        4.0
    );
    assert_eq!(
        total(&s, calls, &[("tool", &execute), ("outcome", "success")]),
        1.0
    );
    assert_eq!(
        total(
            &s,
            calls,
            &[("tool", "pilotage_get_guide"), ("outcome", "not_found")]
        ),
        1.0
    );
    assert_eq!(
        total(
            &s,
            calls,
            &[("tool", "unknown"), ("outcome", "carrier_error")]
        ),
        2.0
    );
    assert!(
        !text.contains("made_up_"),
        "caller text became a label:\n{text}"
    );
    let engine = "pilotage_engine_call_duration_seconds_count";
    assert!(total(&s, engine, &[("operation", "run"), ("status", "200")]) >= 1.0);
    assert!(total(&s, engine, &[("operation", "check"), ("status", "200")]) >= 1.0);
    assert!(total(&s, engine, &[("operation", "catalog")]) >= 2.0);
    let store = "pilotage_store_operation_duration_seconds_count";
    assert!(
        total(&s, store, &[("operation", "put_run")]) >= 1.0,
        "{text}"
    );
    assert!(total(&s, store, &[("operation", "list_programs")]) >= 1.0);
    assert_eq!(total(&s, "pilotage_runs_in_flight", &[]), 0.0);
    assert!(
        total(
            &s,
            "pilotage_cache_entries",
            &[("cache", "catalog_tenants")]
        ) >= 1.0
    );
    assert!(total(&s, "pilotage_cache_entries", &[("cache", "verdicts")]) >= 2.0);
    assert!(total(&s, "pilotage_mcp_requests_total", &[]) >= 15.0);
    assert!(
        total(
            &s,
            "pilotage_http_requests_total",
            &[("method", "tools/call"), ("code", "200")]
        ) >= 12.0
    );
    assert_eq!(total(&s, "pilotage_build_info", &[]), 1.0);
    assert!(total(&s, "process_resident_memory_bytes", &[]) > 0.0);
    assert!(total(&s, "process_start_time_seconds", &[]) > 0.0);
    // CPU time may still read 0 s this early; the series must exist.
    assert!(s.iter().any(|x| x.name == "process_cpu_seconds_total"));
    // Every family has its HELP and TYPE.
    let families: std::collections::BTreeSet<&str> = s
        .iter()
        .map(|x| {
            x.name
                .trim_end_matches("_bucket")
                .trim_end_matches("_count")
                .trim_end_matches("_sum")
        })
        .collect();
    for family in families {
        assert!(text.contains(&format!("# HELP {family} ")), "{family}");
        assert!(text.contains(&format!("# TYPE {family} ")), "{family}");
    }
}

fn promtool(args: &[&str]) {
    let out = std::process::Command::new("promtool")
        .args(args)
        .current_dir(crate::common::repo_path("deploy/prometheus"))
        .output()
        .expect("promtool is installed by scripts/install-deps (Debian package prometheus)");
    assert!(
        out.status.success(),
        "promtool {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_shipped_alert_rules_and_scrape_config_pass_promtool() {
    promtool(&["check", "rules", "alerts.yml"]);
    promtool(&["check", "config", "prometheus.yml"]);
    // alerts.test.yml: each alert fires on the series that should raise it.
    promtool(&["test", "rules", "alerts.test.yml"]);
}

#[test]
fn every_alert_has_a_runbook_entry() {
    let rules = std::fs::read_to_string(crate::common::repo_path("deploy/prometheus/alerts.yml"))
        .expect("alerts.yml");
    let runbook = std::fs::read_to_string(crate::common::repo_path("docs/operations.md"))
        .expect("operations.md");
    let alerts: Vec<&str> = rules
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- alert: "))
        .collect();
    assert!(alerts.len() >= 5, "{alerts:?}");
    for alert in alerts {
        assert!(
            runbook.contains(&format!("### {alert}")),
            "docs/operations.md has no `### {alert}` runbook entry"
        );
    }
}

/// Engine calls are labelled with the engine table's name, so two engines'
/// latencies never merge; the latency buckets reach the longest configured
/// run deadline (here a named engine's 120 s, past the 30 s default).
#[tokio::test(flavor = "multi_thread")]
async fn engine_calls_carry_the_engine_name_and_buckets_reach_the_longest_deadline() {
    let second = crate::common::Engine::spawn(&[]);
    let second_url = second.url.clone();
    let env = TestEnv::with_config("tests/fixtures/features.toml", |cfg| {
        let mut engine = cfg.engine.clone();
        engine.url = second_url;
        engine.run_deadline_ms = 120_000;
        cfg.engines.insert("second".into(), engine);
    })
    .await;
    let base = env.url.trim_end_matches("/mcp");
    let ready = reqwest::get(format!("{base}/readyz"))
        .await
        .expect("GET /readyz");
    assert_eq!(ready.status(), 200);
    let mut c = env.anonymous();
    c.initialize().await;
    c.call("pilotage_manifest", json!({})).await;
    let text = scrape(&env).await;
    let s = parse(&text);
    let engine = "pilotage_engine_call_duration_seconds_count";
    for name in ["default", "second"] {
        assert!(
            total(&s, engine, &[("engine", name), ("operation", "health")]) >= 1.0,
            "no health call of engine {name}:\n{text}"
        );
    }
    assert!(
        s.iter()
            .filter(|x| x.name == engine)
            .all(|x| x.labels.contains_key("engine")),
        "an engine series without the engine label:\n{text}"
    );
    for family in [
        "pilotage_engine_call_duration_seconds_bucket",
        "pilotage_tool_call_duration_seconds_bucket",
    ] {
        let bounds: Vec<f64> = s
            .iter()
            .filter(|x| x.name == family)
            .filter_map(|x| x.labels.get("le"))
            .filter(|le| *le != "+Inf")
            .map(|le| le.parse().expect("numeric bucket bound"))
            .collect();
        let top = bounds.iter().cloned().fold(0.0, f64::max);
        assert!(top >= 120.0, "{family} ends at {top} s:\n{text}");
    }
    drop(second);
}

/// Engine checks the gateway made so far (`/metrics`).
async fn engine_checks(env: &TestEnv) -> f64 {
    let s = parse(&scrape(env).await);
    total(
        &s,
        "pilotage_engine_call_duration_seconds_count",
        &[("operation", "check")],
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_verdict_is_found_again_by_the_text_its_program_arrived_in() {
    let env = TestEnv::start().await;
    let (c, validate, execute) = anonymous_loop(&env).await;
    let program = valid_program();
    // The same program with one step's members in another order: other
    // text, the same tree.
    let mut reordered = program.clone();
    let step = reordered["steps"][1].take();
    let mut members: Vec<_> = step.as_object().unwrap().clone().into_iter().collect();
    members.reverse();
    reordered["steps"][1] = serde_json::Value::Object(members.into_iter().collect());
    assert_eq!(program, reordered);
    assert_ne!(program.to_string(), reordered.to_string());

    let at_start = engine_checks(&env).await;
    let first = c
        .call(&validate, json!({"workflow": program}))
        .await
        .structured;
    assert_eq!(first["valid"], true, "{first}");
    assert_eq!(engine_checks(&env).await, at_start + 1.0);
    // Sent again in the same text: the verdict, without the engine, from
    // the text alone; beside another member, from the arguments read.
    let again = c
        .call(&validate, json!({"workflow": program}))
        .await
        .structured;
    assert_eq!(again, first);
    let beside = c
        .call(&validate, json!({"workflow": program, "note": [1]}))
        .await
        .structured;
    assert_eq!(beside, first);
    assert_eq!(engine_checks(&env).await, at_start + 1.0);
    // In other text: checked again, and answered alike.
    let other = c
        .call(&validate, json!({"workflow": reordered}))
        .await
        .structured;
    assert!(first["plan"].is_object(), "{first}");
    assert_eq!(other, first);
    assert_eq!(engine_checks(&env).await, at_start + 2.0);
    // Execute re-validates the text validate saw from the verdict.
    let run = c
        .call(
            &execute,
            json!({"workflow": program, "input": {"id": "cus_1"}, "mode": "immediate"}),
        )
        .await
        .structured;
    assert_eq!(run["outcome"]["status"], "success", "{run}");
    assert_eq!(engine_checks(&env).await, at_start + 2.0);
}
