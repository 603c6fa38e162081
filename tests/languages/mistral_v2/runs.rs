//! `mistral/v2` end to end beyond the shared loop, through the HTTP
//! endpoint against the real OpenStack Mistral: a misspelled action refused
//! before anything runs, both languages on one gateway each on its own
//! engine, deploy and `program_ref`, idempotent replay, the run deadline,
//! tenant isolation down to Mistral's projects, and actions the
//! configuration hides.

use crate::common::answers::codes;
use crate::common::engine_env::ids_of;
use crate::common::mistral::{
    self, EXECUTE, MISTRAL, MistralEnv, TRACE, VALIDATE, echo_program, greet_program, run, validate,
};
use crate::common::{ACME_OPS, LANG, engine_env, write_program};
use serde_json::{Value, json};
use std::time::Duration;

/// A task that writes, then a misspelled action: Mistral's validator lets it
/// through and would fail only after `write` ran.
const MISSPELLED: &str = "version: '2.0'
late:
  tasks:
    write:
      action: std.echo output='written'
      on-success:
        - next
    next:
      action: std.ecko output=1
";

#[tokio::test(flavor = "multi_thread")]
async fn a_misspelled_action_after_a_write_is_refused_before_anything_runs() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    // Mistral's own validator accepts it: only the gateway stands in the way.
    let direct = reqwest::Client::new()
        .post(format!("{}/workflows/validate", m.mistral.base))
        .header("X-Project-Id", &m.a.tenant)
        .header("Content-Type", "text/plain")
        .body(MISSPELLED)
        .send()
        .await
        .expect("Mistral validate")
        .json::<Value>()
        .await
        .expect("JSON");
    assert_eq!(direct["valid"], true, "{direct}");
    // Something ran before, so an unchanged list means something.
    let ok = run(&c, &echo_program("first", "before"), json!({})).await;
    assert_eq!(
        ok.structured["outcome"]["status"], "success",
        "{}",
        ok.structured
    );
    let executions = ids_of(&m.mistral.executions(&m.a.tenant).await);
    let workflows = ids_of(&m.mistral.workflows(&m.a.tenant).await);
    assert_eq!(executions.len(), 1);

    let v = validate(&c, MISSPELLED).await;
    assert_eq!(v.structured["valid"], false, "{}", v.structured);
    let d = v.structured["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "unknown_capability")
        .unwrap_or_else(|| panic!("no unknown_capability: {}", v.structured))
        .clone();
    assert!(d["message"].as_str().unwrap().contains("std.ecko"), "{d}");
    assert!(
        d["hint"].as_str().unwrap_or("").contains("std.echo"),
        "close match: {d}"
    );
    // The task `next` starts on line 8 of the text.
    assert_eq!(d["path"]["start"]["line"], 8, "{d}");

    let r = run(&c, MISSPELLED, json!({})).await;
    assert_eq!(
        r.structured["outcome"]["status"], "validation_error",
        "{}",
        r.structured
    );
    assert!(codes(&r.structured).contains(&"unknown_capability".to_string()));
    assert!(
        r.structured["run_id"].is_string(),
        "a refused run has an id"
    );
    assert_eq!(
        ids_of(&m.mistral.executions(&m.a.tenant).await),
        executions,
        "nothing started in Mistral"
    );
    assert_eq!(
        ids_of(&m.mistral.workflows(&m.a.tenant).await),
        workflows,
        "nothing created in Mistral"
    );
    // The same program, spelled right, runs both tasks.
    let fixed = MISSPELLED.replace("std.ecko", "std.echo");
    let r = run(&c, &fixed, json!({})).await;
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    let ran: Vec<&str> = r.structured["trace"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    let tasks: Vec<&str> = ran.iter().copied().filter(|id| !id.contains('.')).collect();
    assert_eq!(tasks, ["write", "next"], "{ran:?}");
    assert!(ran.contains(&"write.next"), "the transition taken: {ran:?}");
    m.clean().await;
}

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
    assert_eq!(
        legacy.structured["outcome"]["status"], "success",
        "{}",
        legacy.structured
    );
    assert_eq!(
        on_mistral.structured["outcome"]["status"], "success",
        "{}",
        on_mistral.structured
    );
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
    assert_eq!(
        again.structured["outcome"]["status"], "success",
        "{}",
        again.structured
    );
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
async fn deploy_returns_a_program_ref_that_runs_by_reference() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let deployed = c
        .call(
            EXECUTE,
            json!({"workflow": greet_program(), "mode": "deploy"}),
        )
        .await;
    assert_eq!(
        deployed.structured["outcome"]["status"], "success",
        "{}",
        deployed.structured
    );
    let program_ref = deployed.structured["output"]["program_ref"]
        .as_str()
        .unwrap_or_else(|| panic!("no program_ref: {}", deployed.structured))
        .to_string();
    // The program entry is in the caller's catalog, with its input schema.
    let entry = c
        .call(
            "pilotage_catalog",
            json!({"language": MISTRAL, "verb": "get", "id": program_ref}),
        )
        .await;
    assert_eq!(
        entry.structured["entry"]["kind"], "program",
        "{}",
        entry.structured
    );
    assert_eq!(
        entry.structured["entry"]["input_schema"]["required"],
        json!(["name"]),
        "{}",
        entry.structured
    );
    let before = m.mistral.executions(&m.a.tenant).await.len();
    let r = c
        .call(
            EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate", "input": {"name": "bob"}}),
        )
        .await;
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    assert_eq!(r.structured["output"], json!({"greeting": "hello bob"}));
    assert_eq!(m.mistral.executions(&m.a.tenant).await.len(), before + 1);
    // A wrong input is refused against the entry's schema.
    let r = c
        .call(
            EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate", "input": {"nom": "bob"}}),
        )
        .await;
    assert_eq!(
        r.structured["outcome"]["status"], "validation_error",
        "{}",
        r.structured
    );
    assert!(codes(&r.structured).contains(&"input_binding".to_string()));
    assert_eq!(m.mistral.executions(&m.a.tenant).await.len(), before + 1);
    // Another tenant cannot run it.
    let other = m.session(&m.b).await;
    let r = other
        .call(
            EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate", "input": {"name": "eve"}}),
        )
        .await;
    assert_eq!(
        r.structured["error"]["kind"], "not_found",
        "{}",
        r.structured
    );
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idempotent_replay_runs_once() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let before = m.mistral.executions(&m.a.tenant).await.len();
    let args = json!({"workflow": greet_program(), "mode": "immediate",
        "input": {"name": "once"}, "idempotency_key": "replay-1"});
    let first = c.call(EXECUTE, args.clone()).await;
    assert_eq!(
        first.structured["outcome"]["status"], "success",
        "{}",
        first.structured
    );
    let second = c.call(EXECUTE, args.clone()).await;
    assert_eq!(
        first.structured, second.structured,
        "the same answer, run_id included"
    );
    assert_eq!(
        m.mistral.executions(&m.a.tenant).await.len(),
        before + 1,
        "one execution in Mistral"
    );
    let mut changed = args;
    changed["input"] = json!({"name": "twice"});
    let conflict = c.call(EXECUTE, changed).await;
    assert_eq!(
        conflict.structured["error"]["kind"], "idempotency_conflict",
        "{}",
        conflict.structured
    );
    assert_eq!(m.mistral.executions(&m.a.tenant).await.len(), before + 1);
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn past_the_deadline_the_execution_is_cancelled() {
    let m = MistralEnv::start_with(|cfg| {
        cfg.engines
            .get_mut(mistral::ENGINE)
            .unwrap()
            .run_deadline_ms = 3000;
    })
    .await;
    let c = m.session(&m.a).await;
    let slow = "version: '2.0'
slow:
  tasks:
    first:
      action: std.echo output='before'
      on-success:
        - nap
    nap:
      action: std.sleep seconds=60
      on-complete:
        - after
    after:
      action: std.noop
";
    let r = run(&c, slow, json!({"trace_level": "full"})).await;
    assert_eq!(
        r.structured["outcome"]["status"], "timeout",
        "{}",
        r.structured
    );
    assert_eq!(r.structured["outcome"]["ok"], false);
    let steps = r.structured["trace"]["steps"].as_array().unwrap();
    let ids: Vec<&str> = steps.iter().filter_map(|s| s["id"].as_str()).collect();
    assert!(ids.contains(&"first"), "{ids:?}");
    assert!(!ids.contains(&"after"), "nothing after the cancel: {ids:?}");
    // Mistral's execution is cancelled (the cancel is synchronous in Mistral).
    let executions = m.mistral.executions(&m.a.tenant).await;
    assert_eq!(executions.len(), 1, "{executions:?}");
    assert_eq!(executions[0]["state"], "CANCELLED", "{executions:?}");
    // Still cancelled a moment later: `after` never started.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let id = executions[0]["id"].as_str().unwrap();
    let (_, tasks) = m
        .mistral
        .get(&format!("/executions/{id}/tasks"), &m.a.tenant)
        .await;
    let names: Vec<&str> = tasks["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(!names.contains(&"after"), "{names:?}");
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn another_tenant_cannot_see_runs_and_mistral_projects_differ() {
    let m = MistralEnv::start().await;
    let a = m.session(&m.a).await;
    let r = run(
        &a,
        &greet_program(),
        json!({"input": {"name": "a"}, "store": true}),
    )
    .await;
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    let run_id = r.structured["run_id"].clone();
    let mine = a.call(TRACE, json!({"run_id": run_id})).await;
    assert!(!mine.is_error, "{}", mine.structured);
    // Another key's tenant and an anonymous session: not_found, identical to
    // an id that never existed.
    let b = m.session(&m.b).await;
    let anonymous = m.anonymous_session().await;
    let unknown = b.call(TRACE, json!({"run_id": "run_does_not_exist"})).await;
    for (who, c) in [("tenant b", &b), ("anonymous", &anonymous)] {
        let theirs = c.call(TRACE, json!({"run_id": run_id})).await;
        assert!(theirs.is_error, "{who}: {}", theirs.structured);
        assert_eq!(theirs.structured["error"]["kind"], "not_found", "{who}");
        assert_eq!(
            theirs.structured["error"]["message"], unknown.structured["error"]["message"],
            "{who}: indistinguishable from an unknown id"
        );
    }
    // Mistral: the run is in a's project only.
    let in_a = m.mistral.executions(&m.a.tenant).await;
    assert_eq!(in_a.len(), 1, "{in_a:?}");
    assert_eq!(in_a[0]["project_id"], m.a.tenant.as_str());
    assert!(m.mistral.executions(&m.b.tenant).await.is_empty());
    assert!(m.mistral.executions(&m.anonymous).await.is_empty());
    // b's own run lands in b's project.
    let r = run(&b, &greet_program(), json!({"input": {"name": "b"}})).await;
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    let in_b = m.mistral.executions(&m.b.tenant).await;
    assert_eq!(in_b.len(), 1);
    assert_eq!(in_b[0]["project_id"], m.b.tenant.as_str());
    assert_eq!(m.mistral.executions(&m.a.tenant).await.len(), 1);
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
    assert_eq!(
        r.structured["outcome"]["status"], "validation_error",
        "{}",
        r.structured
    );
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
