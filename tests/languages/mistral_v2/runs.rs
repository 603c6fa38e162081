//! `mistral/v2` end to end where only this language goes, through the
//! HTTP endpoint against the real OpenStack Mistral: both languages on one
//! gateway each on its own engine, and actions the configuration hides.

use crate::common::answers::codes;
use crate::common::mistral::{self, MISTRAL, MistralEnv, VALIDATE, echo_program, run};
use crate::common::{ACME_OPS, LANG, engine_env, write_program};
use crate::suite::engine_runs::assert_status;
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn both_languages_run_at_once_each_on_its_own_engine() {
    // The legacy engine knows its own tenants only: workflow/v1 runs as an
    // `acme` key, mistral/v2 as the suite's own tenant, on one gateway.
    let m = MistralEnv::start_with(|cfg| {
        cfg.auth
            .keys
            .push(engine_env::key_entry("legacy", "acme", ACME_OPS));
    })
    .await;
    let c = m.session(&m.a).await;
    let mut legacy_caller = m.env.client(ACME_OPS);
    legacy_caller.initialize().await;
    let legacy_before = m.env.engine.digest("acme").await;
    let mistral_before = m.mistral.executions(&m.a.tenant).await.len();
    // Concurrently: a workflow/v1 write on the legacy engine, a mistral/v2
    // run on Mistral.
    let legacy = legacy_caller.call(
        "run_workflow",
        json!({"workflow": write_program("gold"), "mode": "immediate"}),
    );
    let yaml = echo_program("both", "from mistral");
    let on_mistral = run(&c, &yaml, json!({}));
    let (legacy, on_mistral) = tokio::join!(legacy, on_mistral);
    assert_status(&legacy, "success");
    assert_status(&on_mistral, "success");
    assert_eq!(
        on_mistral.structured["output"],
        json!({"said": "from mistral"})
    );
    assert_ne!(
        m.env.engine.digest("acme").await,
        legacy_before,
        "the workflow/v1 run wrote on the legacy engine"
    );
    assert_eq!(
        m.mistral.executions(&m.a.tenant).await.len(),
        mistral_before + 1,
        "the mistral/v2 run reached Mistral"
    );
    // A mistral/v2 run leaves the legacy engine alone.
    let legacy_after = m.env.engine.state("acme").await;
    let again = run(&c, &yaml, json!({})).await;
    assert_status(&again, "success");
    assert_eq!(m.env.engine.state("acme").await, legacy_after);
    assert_eq!(
        m.mistral.executions(&m.a.tenant).await.len(),
        mistral_before + 2
    );
    // Each catalog is its own engine's.
    let mistral_get = c
        .call(
            "pilotage_catalog",
            json!({"language": MISTRAL, "verb": "get", "id": "crm.set_tier"}),
        )
        .await;
    assert_eq!(mistral_get.structured["error"]["kind"], "not_found");
    let legacy_get = legacy_caller
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "get", "id": "std.echo"}),
        )
        .await;
    assert_eq!(legacy_get.structured["error"]["kind"], "not_found");
    // A program of one language is not a program of the other: a JSON
    // document is refused by the mistral/v2 tool's schema (a string).
    let cross = c
        .rpc(
            "tools/call",
            json!({"name": VALIDATE, "arguments": {"workflow": write_program("gold")}}),
        )
        .await;
    assert_eq!(cross["error"]["code"], -32602, "{cross}");
    assert!(
        cross["error"]["message"]
            .as_str()
            .unwrap()
            .contains("string"),
        "{cross}"
    );
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn actions_the_configuration_hides_from_a_tenant_answer_like_unknown_ones() {
    let m = MistralEnv::start_with(|cfg| {
        let b = cfg.auth.keys[1].tenant.clone();
        let table = |value: &mut toml::Value| value.as_table_mut().expect("a table").clone();
        let engine = cfg.engines.get_mut(mistral::ENGINE).unwrap();
        let settings = engine
            .adapter
            .entry("mistral")
            .or_insert(toml::Value::Table(Default::default()));
        let mut visibility = settings
            .get_mut("visibility")
            .map(table)
            .unwrap_or_default();
        visibility.insert(b, toml::Value::from(vec!["std.echo", "std.noop"]));
        settings
            .as_table_mut()
            .expect("[engines.NAME.mistral] is a table")
            .insert("visibility".into(), toml::Value::Table(visibility));
    })
    .await;
    let a = m.session(&m.a).await;
    let b = m.session(&m.b).await;
    let get = |c: &'static str| json!({"language": MISTRAL, "verb": "get", "id": c});
    let seen = a.call("pilotage_catalog", get("std.ssh")).await;
    assert!(!seen.is_error, "{}", seen.structured);
    assert_eq!(seen.structured["entry"]["risk"], "destructive");
    let hidden = b.call("pilotage_catalog", get("std.ssh")).await;
    let unknown = b.call("pilotage_catalog", get("std.zzz")).await;
    assert_eq!(hidden.structured["error"]["kind"], "not_found");
    assert_eq!(
        hidden.structured["error"]["message"]
            .as_str()
            .map(|s| s.replace("std.ssh", "X")),
        unknown.structured["error"]["message"]
            .as_str()
            .map(|s| s.replace("std.zzz", "X")),
    );
    // Calling it is refused exactly like a misspelled action, before Mistral.
    let ssh = "version: '2.0'\nwf:\n  tasks:\n    t:\n      action: std.ssh cmd='ls' host='h' username='u'\n";
    let r = run(&b, ssh, json!({})).await;
    assert_status(&r, "validation_error");
    assert_eq!(
        codes(&r.structured),
        ["unknown_capability"],
        "{}",
        r.structured
    );
    assert!(m.mistral.executions(&m.b.tenant).await.is_empty());
    let listed = b
        .call(
            "pilotage_catalog",
            json!({"language": MISTRAL, "verb": "list", "limit": 100}),
        )
        .await;
    let ids: Vec<&str> = listed.structured["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["id"].as_str())
        .collect();
    assert_eq!(ids, ["std.echo", "std.noop"]);
}
