//! One gateway serving `workflow/v1` (the legacy engine), `mistral/v2`
//! (OpenStack Mistral) and `n8n/v1` (n8n) together: each program validated
//! and run at the same time, each on its own engine, each catalog its own.
//! The gateway is `deploy/gateway.n8n.toml` with the Mistral engine and
//! language of `deploy/gateway.mistral.toml` added, so it needs both
//! engines (found or started as `common::mistral` and `common::n8n_gateway`
//! say).

use crate::common::mistral::{self, Mistral, echo_program, mistral_url};
use crate::common::n8n_gateway::{self, N8N, N8nEnv, say_program};
use crate::common::{ACME_OPS, LANG, engine_env, repo_path, write_program};
use pilotage_gateway::config::Config;
use serde_json::json;

/// `deploy/gateway.mistral.toml`: its engine and language are added.
fn mistral_config() -> Config {
    let path = repo_path(mistral::CONFIG);
    let text = std::fs::read_to_string(&path).expect("read the Mistral configuration");
    Config::parse(&text, &path).expect("parse the Mistral configuration")
}

#[tokio::test(flavor = "multi_thread")]
async fn three_languages_run_at_once_each_on_its_own_engine() {
    let from = mistral_config();
    let mut engine = from.engines[mistral::ENGINE].clone();
    engine.url = mistral_url();
    let language = from
        .languages
        .iter()
        .find(|l| l.name == mistral::MISTRAL)
        .expect("mistral/v2 in its configuration")
        .clone();
    // The legacy engine knows its own tenants only: workflow/v1 runs as an
    // `acme` key; mistral/v2 and n8n/v1 as the suite's tenant a.
    let n = N8nEnv::start_with(move |cfg| {
        cfg.engines.insert(mistral::ENGINE.into(), engine);
        cfg.languages.push(language);
        cfg.auth
            .keys
            .push(engine_env::key_entry("legacy", "acme", ACME_OPS));
    })
    .await;
    let m = Mistral::new(&mistral_url());
    let c = n.session(&n.a).await;
    let mut legacy = n.env.client(ACME_OPS);
    legacy.initialize().await;
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    let mut names: Vec<&str> = manifest["languages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l["name"].as_str())
        .collect();
    names.sort();
    assert_eq!(names, [mistral::MISTRAL, N8N, LANG], "{manifest}");

    let legacy_program = write_program("gold");
    let yaml = echo_program("three", "from mistral");
    let n8n_program = say_program("from n8n");
    // Validated in each language, each by its own checks.
    let (v_legacy, v_mistral, v_n8n) = tokio::join!(
        legacy.call("validate_workflow", json!({"workflow": legacy_program})),
        mistral::validate(&c, &yaml),
        n8n_gateway::validate(&c, &n8n_program),
    );
    for (lang, v) in [
        (LANG, &v_legacy),
        (mistral::MISTRAL, &v_mistral),
        (N8N, &v_n8n),
    ] {
        assert_eq!(v.structured["valid"], true, "{lang}: {}", v.structured);
    }
    let legacy_before = n.env.engine.digest("acme").await;
    let mistral_before = m.executions(&n.a.tenant).await.len();
    let n8n_before = n.n8n.gateway_workflows(&n.a.n8n_key).await;
    // Run at the same time, one on each engine.
    let (on_legacy, on_mistral, on_n8n) = tokio::join!(
        legacy.call(
            "run_workflow",
            json!({"workflow": legacy_program, "mode": "immediate"}),
        ),
        mistral::run(&c, &yaml, json!({})),
        n8n_gateway::run(&c, &n8n_program, json!({"trace_level": "full"})),
    );
    for (lang, r) in [
        (LANG, &on_legacy),
        (mistral::MISTRAL, &on_mistral),
        (N8N, &on_n8n),
    ] {
        assert_eq!(
            r.structured["outcome"]["status"], "success",
            "{lang}: {}",
            r.structured
        );
    }
    assert_eq!(
        on_mistral.structured["output"],
        json!({"said": "from mistral"})
    );
    assert_eq!(on_n8n.structured["output"], json!([{"said": "from n8n"}]));
    assert_ne!(
        n.env.engine.digest("acme").await,
        legacy_before,
        "the workflow/v1 run wrote on the legacy engine"
    );
    assert_eq!(
        m.executions(&n.a.tenant).await.len(),
        mistral_before + 1,
        "the mistral/v2 run reached Mistral, in tenant a's project"
    );
    let n8n_steps: Vec<&str> = on_n8n.structured["trace"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(n8n_steps, ["Start", "Say"], "the n8n/v1 run ran in n8n");
    assert_eq!(
        n.n8n.gateway_workflows(&n.a.n8n_key).await,
        n8n_before,
        "and left nothing there"
    );
    // Each catalog is its own engine's.
    let get = |lang: &str, id: &str| json!({"language": lang, "verb": "get", "id": id});
    for (lang, id, caller) in [
        (mistral::MISTRAL, "n8n-nodes-base.set", &c),
        (N8N, "std.echo", &c),
        (LANG, "n8n-nodes-base.set", &legacy),
        (LANG, "std.echo", &legacy),
    ] {
        let answer = caller.call("pilotage_catalog", get(lang, id)).await;
        assert_eq!(
            answer.structured["error"]["kind"], "not_found",
            "{lang} {id}: {}",
            answer.structured
        );
    }
    for (lang, id) in [(mistral::MISTRAL, "std.echo"), (N8N, "n8n-nodes-base.set")] {
        let answer = c.call("pilotage_catalog", get(lang, id)).await;
        assert_eq!(
            answer.structured["entry"]["id"], id,
            "{}",
            answer.structured
        );
    }
    // A program of one language is not a program of another: a YAML text
    // is refused by the n8n/v1 tool's schema (an object).
    let cross = c
        .rpc(
            "tools/call",
            json!({"name": n8n_gateway::VALIDATE, "arguments": {"workflow": yaml}}),
        )
        .await;
    assert_eq!(cross["error"]["code"], -32602, "{cross}");
    m.clean(&n.a.tenant).await;
}
