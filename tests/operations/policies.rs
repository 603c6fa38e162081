//! Permissions and risk ceilings of API keys (`[[auth.key]]` `permissions`,
//! `max_risk`), through the HTTP endpoint: a validate-only key is offered no
//! execute, deploy or trace in `tools/list`, its manifest or its initialize
//! result; a key capped at `write` gets a `risk_ceiling` diagnostic for a
//! destructive program, which execute refuses before any side effect, while
//! the same program runs for a key without a ceiling; a key that forbids
//! `openWorld` cannot send mail but may delete; anonymous callers get the
//! `auth.anonymous_*` policy. The first two run against the
//! conformance configuration as shipped, so also behind the load balancer.

use crate::common::{ACME_OPS, TestEnv, valid_program, write_program};
use serde_json::{Value, json};

const READER: &str = "acme-reader-key";
const WRITER: &str = "acme-writer-key";

fn delete_program() -> Value {
    json!({"steps": [{"id": "drop", "kind": "call", "capability": "crm.delete_customer",
        "with": {"id": "cus_2"}}]})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_validate_only_key_sees_only_the_learn_and_validate_stages() {
    let env = TestEnv::start().await;
    let mut c = env.client(READER);
    let init = c.initialize().await;
    let names: Vec<String> = c
        .list_tools()
        .await
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    assert_eq!(
        names,
        vec![
            "pilotage_manifest",
            "pilotage_get_guide",
            "pilotage_catalog",
            "validate_workflow",
            "validate_staging_workflow"
        ]
    );
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    assert_eq!(
        init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"],
        manifest
    );
    let lang = &manifest["languages"][0];
    assert_eq!(lang["loop"], json!({"validate": "validate_workflow"}));
    assert!(lang["capabilities"].get("execute").is_none());
    let hidden = c
        .rpc(
            "tools/call",
            json!({"name": "run_workflow", "arguments": {"workflow": valid_program(), "mode": "immediate"}}),
        )
        .await;
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    // The full key of the same tenant is offered everything.
    let full = env.client(ACME_OPS);
    let full_manifest = full.call("pilotage_manifest", json!({})).await.structured;
    assert_eq!(
        full_manifest["languages"][0]["loop"]["execute"],
        "run_workflow"
    );
    assert_eq!(full_manifest["languages"][0]["execution"], "both");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_write_ceiling_refuses_a_destructive_program_that_runs_for_an_uncapped_key() {
    let env = TestEnv::start().await;
    let capped = env.client(WRITER);
    let v = capped
        .call("validate_workflow", json!({"workflow": delete_program()}))
        .await
        .structured;
    assert_eq!(v["valid"], false);
    assert_eq!(v["diagnostics"][0]["code"], "risk_ceiling", "{v}");
    assert_eq!(v["diagnostics"][0]["path"], "/steps/0");
    assert!(
        v["diagnostics"][0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("max_risk \"write\""),
        "{v}"
    );
    let before = env.engine.digest("acme").await;
    let r = capped
        .call(
            "run_workflow",
            json!({"workflow": delete_program(), "mode": "immediate"}),
        )
        .await
        .structured;
    assert_eq!(r["outcome"]["status"], "validation_error", "{r}");
    assert_eq!(env.engine.digest("acme").await, before, "nothing ran");
    // The plan of an allowed program is unchanged for the capped key.
    let w = capped
        .call(
            "validate_workflow",
            json!({"workflow": write_program("gold")}),
        )
        .await
        .structured;
    assert_eq!(w["valid"], true);
    assert_eq!(w["plan"]["max_risk"], "write");
    // A verdict for one principal is never served to another of the tenant.
    let ops = env.client(ACME_OPS);
    let v = ops
        .call("validate_workflow", json!({"workflow": delete_program()}))
        .await
        .structured;
    assert_eq!(v["valid"], true, "{v}");
    let r = ops
        .call(
            "run_workflow",
            json!({"workflow": delete_program(), "mode": "immediate"}),
        )
        .await
        .structured;
    assert_eq!(r["outcome"]["status"], "success", "{r}");
    assert_ne!(env.engine.digest("acme").await, before);
    env.engine.reset().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forbidden_hint_refuses_mail_but_not_a_delete() {
    use crate::common::engine_env::key_entry;
    let engine = crate::common::dialect_engine();
    let env = TestEnv::in_front_of(engine, "tests/fixtures/features.toml", |c| {
        let mut key = key_entry("no-mail", "acme", "acme-no-mail-key");
        key.forbid_risk_hints = vec!["openWorld".into()];
        c.auth.keys.push(key);
    })
    .await;
    let c = env.client("acme-no-mail-key");
    let mail = json!({"steps": [{"id": "tell", "kind": "call", "capability": "mail.send",
        "with": {"to": "a@example.com", "subject": "s", "body": "b"}}]});
    let v = c
        .call("validate_workflow", json!({"workflow": mail}))
        .await
        .structured;
    assert_eq!(v["diagnostics"][0]["code"], "risk_ceiling", "{v}");
    assert!(
        v["diagnostics"][0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("openWorld"),
        "{v}"
    );
    let before = env.engine.digest("acme").await;
    let r = c
        .call(
            "run_workflow",
            json!({"workflow": mail, "mode": "immediate"}),
        )
        .await
        .structured;
    assert_eq!(r["outcome"]["status"], "validation_error", "{r}");
    assert_eq!(env.engine.digest("acme").await, before, "no mail queued");
    // Only openWorld is forbidden: a destructive step is within this ceiling.
    let d = c
        .call("validate_workflow", json!({"workflow": delete_program()}))
        .await
        .structured;
    assert_eq!(d["valid"], true, "{d}");
}

#[tokio::test(flavor = "multi_thread")]
async fn anonymous_callers_get_the_configured_policy() {
    let engine = crate::common::dialect_engine();
    let env = TestEnv::in_front_of(engine, "tests/fixtures/features.toml", |c| {
        c.auth.anonymous_permissions =
            Some(vec!["learn".into(), "validate".into(), "execute".into()]);
        c.auth.anonymous_max_risk = Some("safe".into());
    })
    .await;
    let mut c = env.anonymous();
    c.initialize().await;
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    let lang = &manifest["languages"][0];
    assert_eq!(lang["execution"], "immediate", "{lang}");
    assert!(lang["loop"].get("trace").is_none(), "{lang}");
    let w = c
        .call(
            "validate_workflow",
            json!({"workflow": write_program("gold")}),
        )
        .await
        .structured;
    assert_eq!(w["diagnostics"][0]["code"], "risk_ceiling", "{w}");
    assert!(
        w["diagnostics"][0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("max_risk \"safe\""),
        "{w}"
    );
    let r = c
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "input": {"id": "cus_1"}}),
        )
        .await
        .structured;
    assert_eq!(r["outcome"]["status"], "success", "a read runs: {r}");
    // Keys keep their own policy.
    let ops = env.client(ACME_OPS);
    let v = ops
        .call(
            "validate_workflow",
            json!({"workflow": write_program("gold")}),
        )
        .await
        .structured;
    assert_eq!(v["valid"], true, "{v}");
}
