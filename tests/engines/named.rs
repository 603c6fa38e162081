//! One gateway fronting two engines at once: each `[[language]]` names its
//! engine, and its catalog, validation and runs come from that engine only.
//! The second engine speaks another dialect than the first, so a request
//! sent to the wrong one would not even be understood.

use crate::common::{ACME_OPS, Engine, LANG, STAGING, TestEnv, dialect, repo_path, write_program};
use pilotage_gateway::config::Config;
use serde_json::{Value, json};

/// The dialect of the second engine: any other than the one under test.
fn other_dialect() -> &'static str {
    match dialect().as_deref() {
        Some("b") => "c",
        _ => "b",
    }
}

/// A gateway whose `workflow/v1` runs on the default engine (the dialect
/// under test) and whose staging language runs on `[engines.second]`.
async fn two_engines() -> (TestEnv, Engine) {
    let other = other_dialect();
    let second = Engine::spawn(&["--dialect", other]);
    let first = crate::common::dialect_engine();
    let path = repo_path(&format!("deploy/gateway.dialect-{other}.toml"));
    let text = std::fs::read_to_string(&path).expect("read the second dialect's config");
    let other_cfg = Config::parse(&text, &path).expect("parse the second dialect's config");
    let rules = other_cfg.resolve(&other_cfg.languages[0].classifier);
    let mut engine = other_cfg.engine.clone();
    engine.url = second.url.clone();
    let env = TestEnv::in_front_of(first, "tests/fixtures/features.toml", |cfg| {
        cfg.engines.insert("second".into(), engine);
        let staging = cfg
            .languages
            .iter_mut()
            .find(|l| l.name == STAGING)
            .expect("the staging language");
        staging.engine = Some("second".into());
        staging.classifier = rules.display().to_string();
    })
    .await;
    (env, second)
}

/// Every catalog id a language lists, page by page (bounded).
async fn catalog_ids(c: &crate::common::Mcp, language: &str) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let mut args = json!({"language": language, "verb": "list"});
        if let Some(cur) = &cursor {
            args["cursor"] = json!(cur);
        }
        let r = c.call("pilotage_catalog", args).await;
        assert!(!r.is_error, "{}", r.structured);
        for e in r.structured["items"].as_array().expect("items") {
            ids.extend(e["id"].as_str().map(str::to_string));
        }
        match r.structured["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return ids,
        }
    }
    panic!("pagination did not end");
}

#[tokio::test(flavor = "multi_thread")]
async fn each_language_lists_the_catalog_of_its_own_engine() {
    let (env, second) = two_engines().await;
    let c = env.client(ACME_OPS);
    // A capability only the second engine has.
    let mut echo: Value = second.capability("acme", "util.echo").await;
    echo["doc"] = json!("Echo a value back, louder");
    echo["name"] = json!("util.shout");
    second.put_capability("util.shout", &echo, None).await;
    let staging = catalog_ids(&c, STAGING).await;
    let main = catalog_ids(&c, LANG).await;
    assert!(staging.contains(&"util.shout".to_string()), "{staging:?}");
    assert!(!main.contains(&"util.shout".to_string()), "{main:?}");
    // Both engines still serve what they share.
    assert!(staging.contains(&"util.echo".to_string()));
    assert!(main.contains(&"util.echo".to_string()), "{main:?}");
    // And the second engine's capability validates only in its language.
    let program = json!({"steps": [
        {"id": "s", "kind": "call", "capability": "util.shout", "with": {"value": "hi"}}
    ]});
    let on_second = c
        .call(
            "validate_staging_workflow",
            json!({"workflow": program, "context": {"environment": "staging"}}),
        )
        .await;
    assert_eq!(
        on_second.structured["valid"], true,
        "{}",
        on_second.structured
    );
    let on_first = c
        .call("validate_workflow", json!({"workflow": program}))
        .await;
    assert_eq!(
        on_first.structured["valid"], false,
        "{}",
        on_first.structured
    );
    assert_eq!(
        on_first.structured["diagnostics"][0]["code"],
        "unknown_capability"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn each_language_runs_on_its_own_engine() {
    let (env, second) = two_engines().await;
    let c = env.client(ACME_OPS);
    let first_before = env.engine.digest("acme").await;
    let second_before = second.digest("acme").await;
    let r = c
        .call(
            "run_staging_workflow",
            json!({"workflow": write_program("gold"), "context": {"environment": "staging"}}),
        )
        .await;
    assert!(!r.is_error, "{}", r.structured);
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    let second_after = second.digest("acme").await;
    assert_ne!(
        second_before, second_after,
        "the staging run wrote on the second engine"
    );
    assert_eq!(
        env.engine.digest("acme").await,
        first_before,
        "the staging run left the first engine alone"
    );
    let r = c
        .call(
            "run_workflow",
            json!({"workflow": write_program("silver"), "mode": "immediate"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.structured);
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    assert_ne!(env.engine.digest("acme").await, first_before);
    assert_eq!(second.digest("acme").await, second_after);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_language_naming_an_unknown_engine_is_refused_at_start() {
    let path = repo_path("tests/fixtures/features.toml");
    let text = std::fs::read_to_string(&path).expect("read test config");
    let mut cfg = Config::parse(&text, &path).expect("parse test config");
    cfg.languages[1].engine = Some("nowhere".into());
    let problems = cfg.validate();
    let p = problems
        .iter()
        .find(|p| p.key == "language[1].engine")
        .unwrap_or_else(|| panic!("no problem names the engine: {problems:?}"));
    assert!(p.problem.contains("'nowhere'"), "{p:?}");
    assert!(p.fix.contains("default"), "{p:?}");
    // A named engine is checked like [engine], under its own key.
    let mut cfg = Config::parse(&text, &path).expect("parse test config");
    let mut bad = cfg.engine.clone();
    bad.url = "ftp://127.0.0.1:1".into();
    cfg.engines.insert("second".into(), bad);
    let problems = cfg.validate();
    assert!(
        problems.iter().any(|p| p.key == "engines.second.url"),
        "{problems:?}"
    );
}
