//! The Mistral adapter against a real OpenStack Mistral, driven directly
//! through the `Engine` trait: the catalog of the standard actions with
//! their schemas and risks, per-tenant visibility and paging, the
//! validator's first line and YAML location, runs to SUCCESS and ERROR with
//! their events (with-items, transitions), cancellation past the deadline,
//! a create the validator refuses, a start whose answer is lost, and tenant
//! isolation.
//!
//! Mistral is found through `PILOTAGE_MISTRAL_URL`, else started with
//! `scripts/mistral start`. Every test works in projects of its own with
//! random names, so it never meets another test's objects.

use pilotage_gateway::config::Config;
use pilotage_gateway::engines::mistral::{MistralEngine, project};
use pilotage_gateway::engines::{CatalogFetch, Engine, EngineError, RunReply, RunState};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

/// The v2 API base of a running Mistral, or `None` (with the reason
/// printed) when this machine cannot run one at all.
fn mistral_url() -> Option<String> {
    static URL: OnceLock<Option<String>> = OnceLock::new();
    URL.get_or_init(|| {
        if let Ok(url) = std::env::var("PILOTAGE_MISTRAL_URL")
            && !url.is_empty()
        {
            return Some(url.trim_end_matches('/').to_string());
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/mistral");
        let out = std::process::Command::new(&script)
            .arg("start")
            .output()
            .expect("scripts/mistral runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        if out.status.success()
            && let Some(url) = stdout.lines().rev().find(|l| l.starts_with("http"))
        {
            return Some(url.trim().trim_end_matches('/').to_string());
        }
        let why = format!(
            "scripts/mistral start failed ({}):\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        // Only a machine that cannot install Mistral at all (no Debian
        // package manager) may skip, and never a CI run.
        let installable = Path::new("/usr/bin/apt-get").exists();
        if installable || std::env::var_os("CI").is_some() {
            panic!("{why}");
        }
        eprintln!("SKIPPED: Mistral cannot be installed on this machine (no apt-get): {why}");
        None
    })
    .clone()
}

/// An adapter for the Mistral at `url` with `engine_keys` and the
/// `[engine.mistral]` settings `settings`.
fn adapter(url: &str, engine_keys: &str, settings: &str) -> MistralEngine {
    let text = format!(
        "[engine]\nkind = \"mistral\"\nurl = \"{url}\"\ntimeout_ms = 30000\nretry_backoff_ms = 10\n{engine_keys}\n[engine.mistral]\n{settings}\n"
    );
    let cfg = Config::parse(&text, Path::new("gateway.toml")).expect("config");
    let problems: Vec<_> = cfg
        .validate()
        .into_iter()
        .filter(|p| p.key.starts_with("engine"))
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
    MistralEngine::new(&cfg.engine, Vec::new())
}

/// A fresh tenant name no other test uses.
fn tenant(label: &str) -> String {
    format!("{label}-{:016x}", rand::random::<u64>())
}

/// A GET straight to Mistral as `tenant`'s project.
async fn mistral_get(url: &str, tenant: &str, path: &str) -> (u16, Value) {
    let resp = reqwest::Client::new()
        .get(format!("{url}{path}"))
        .header("X-Project-Id", project(tenant))
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .expect("Mistral answers");
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The ids of the executions `tenant`'s project has.
async fn executions(url: &str, tenant: &str) -> Vec<String> {
    let (status, body) = mistral_get(url, tenant, "/executions?limit=100").await;
    assert_eq!(status, 200, "{body}");
    body["executions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect()
}

async fn run(engine: &MistralEngine, tenant: &str, program: &str, input: Value) -> RunReply {
    engine
        .run(
            tenant,
            &pilotage_gateway::engines::RunOrder {
                program: &json!(program),
                input: &input,
                context: None,
                dry_run: false,
                deadline: Duration::from_secs(60),
                stop: None,
            },
        )
        .await
        .unwrap_or_else(|e| panic!("the run answers: {e}"))
}

fn capabilities(fetched: CatalogFetch) -> (Option<String>, Vec<Value>) {
    match fetched {
        CatalogFetch::Fresh { etag, capabilities } => (etag, capabilities),
        CatalogFetch::NotModified | CatalogFetch::Same { .. } => panic!("a first listing is fresh"),
    }
}

fn names(entries: &[Value]) -> Vec<&str> {
    entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect()
}

const STANDARD: [&str; 14] = [
    "std.async_noop",
    "std.echo",
    "std.email",
    "std.fail",
    "std.http",
    "std.javascript",
    "std.js",
    "std.mistral_http",
    "std.noop",
    "std.sleep",
    "std.ssh",
    "std.ssh_proxied",
    "std.test_dict",
    "std.wait_ssh",
];

const HELLO: &str = "---\n# the greeting\nversion: '2.0'\n\nhello:\n  input:\n    - name\n    - punct: '!'\n  output:\n    greeting: <% $.greeting %>\n  tasks:\n    greet:\n      action: std.echo output=\"hello <% $.name %><% $.punct %>\"\n      publish:\n        greeting: <% task().result %>\n";

#[tokio::test(flavor = "multi_thread")]
async fn the_catalog_lists_the_standard_actions_with_schemas_and_risks() {
    let Some(url) = mistral_url() else { return };
    let engine = adapter(&url, "", "");
    let t = tenant("cat");
    let (etag, entries) = capabilities(engine.catalog(&t, None).await.unwrap());
    assert_eq!(names(&entries), STANDARD);
    let by_name = |n: &str| entries.iter().find(|e| e["name"] == n).unwrap().clone();
    let http = by_name("std.http");
    assert_eq!(http["input_schema"]["required"], json!(["url"]));
    assert_eq!(
        http["input_schema"]["properties"]["method"],
        json!({"default": "GET"})
    );
    assert_eq!(http["input_schema"]["additionalProperties"], json!(false));
    assert_eq!(
        http["input_schema"]["properties"]
            .as_object()
            .unwrap()
            .len(),
        12
    );
    assert_eq!(
        by_name("std.echo")["input_schema"],
        json!({"type": "object", "properties": {"output": {}, "delay": {"default": 0}},
               "required": ["output"], "additionalProperties": false})
    );
    assert_eq!(
        by_name("std.noop")["input_schema"],
        json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
    assert!(
        by_name("std.echo")["description"]
            .as_str()
            .unwrap()
            .starts_with("Echo action.")
    );
    let mapping = engine.profile();
    for (name, effect, risk) in [
        ("std.echo", "safe", "safe"),
        ("std.http", "external", "external"),
        ("std.email", "external", "external"),
        ("std.ssh", "destructive", "destructive"),
        ("std.ssh_proxied", "destructive", "destructive"),
    ] {
        let e = by_name(name);
        assert_eq!(e["effect"], effect, "{name}");
        assert_eq!(e["tags"][0], "action");
        assert_eq!(mapping.effect_risk(effect).unwrap().risk, risk);
    }
    // Unchanged: our own ETag answers NotModified.
    assert!(matches!(
        engine.catalog(&t, etag.as_deref()).await.unwrap(),
        CatalogFetch::NotModified
    ));

    // A configured table replaces the built-in one; what it does not name
    // gets no effect, which the catalog reads as destructive.
    let narrow = adapter(
        &url,
        "",
        "risk = [{ glob = \"std.e*\", effect = \"write\" }]",
    );
    let (other_etag, entries) = capabilities(narrow.catalog(&t, etag.as_deref()).await.unwrap());
    assert_ne!(other_etag, etag);
    assert_eq!(
        entries.iter().find(|e| e["name"] == "std.echo").unwrap()["effect"],
        "write"
    );
    let http = entries.iter().find(|e| e["name"] == "std.http").unwrap();
    assert!(http.get("effect").is_none(), "{http}");
    assert!(narrow.profile().effect_risk("").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_gateways_catalog_reads_the_entries_through_the_adapters_mapping() {
    use pilotage_gateway::auth::Principal;
    use pilotage_gateway::auth::policy::{Permissions, RiskCeiling};
    use pilotage_gateway::catalog::CatalogService;
    use std::sync::Arc;
    let Some(url) = mistral_url() else { return };
    let t = tenant("view");
    let principal = Principal {
        scope: format!("key:{t}:k"),
        tenant: t.clone(),
        lasting: true,
        permissions: Permissions::ALL,
        ceiling: RiskCeiling::default(),
        approve_above: None,
    };
    let view = |settings: &'static str| {
        let engine: pilotage_gateway::engines::SharedEngine = Arc::new(adapter(&url, "", settings));
        let store = Arc::new(pilotage_gateway::store::memory::MemoryStore::new());
        let principal = principal.clone();
        async move {
            CatalogService::new(engine, store, 1 << 20)
                .view(&principal, pilotage_gateway::catalog::Currency::Confirmed)
                .await
                .expect("a view")
        }
    };
    let full = view("").await;
    let entry = |v: &pilotage_gateway::catalog::CatalogView, id: &str| v.get(id).unwrap().to_json();
    let echo = entry(&full, "std.echo");
    assert_eq!(echo["risk"], "safe");
    assert_eq!(echo["name"], "std.echo");
    assert_eq!(echo["input_schema"]["required"], json!(["output"]));
    assert!(
        echo["description"]
            .as_str()
            .unwrap()
            .starts_with("Echo action.")
    );
    assert_eq!(entry(&full, "std.http")["risk"], "external");
    assert_eq!(entry(&full, "std.ssh")["risk"], "destructive");
    assert_eq!(full.callable_names().len(), 14);
    // An action no row names fails closed.
    let narrow = view("risk = [{ glob = \"std.echo\", effect = \"safe\" }]").await;
    assert_eq!(entry(&narrow, "std.noop")["risk"], "destructive");
    assert_eq!(entry(&narrow, "std.echo")["risk"], "safe");
    assert_ne!(narrow.version, full.version);
}

#[tokio::test(flavor = "multi_thread")]
async fn each_tenant_sees_the_actions_its_globs_allow() {
    let Some(url) = mistral_url() else { return };
    let (alice, bob, carol) = (tenant("alice"), tenant("bob"), tenant("carol"));
    let engine = adapter(
        &url,
        "",
        &format!(
            "[engine.mistral.visibility]\n\"{alice}\" = [\"std.echo\", \"std.noop\"]\n\"{bob}\" = [\"std.ssh*\"]\n\"*\" = [\"std.*\"]\n"
        ),
    );
    let (_, seen) = capabilities(engine.catalog(&alice, None).await.unwrap());
    assert_eq!(names(&seen), ["std.echo", "std.noop"]);
    let (_, seen) = capabilities(engine.catalog(&bob, None).await.unwrap());
    assert_eq!(names(&seen), ["std.ssh", "std.ssh_proxied"]);
    let (_, seen) = capabilities(engine.catalog(&carol, None).await.unwrap());
    assert_eq!(names(&seen), STANDARD);
}

#[tokio::test(flavor = "multi_thread")]
async fn small_pages_list_the_same_catalog() {
    let Some(url) = mistral_url() else { return };
    let t = tenant("pages");
    let (_, whole) = capabilities(adapter(&url, "", "").catalog(&t, None).await.unwrap());
    for size in [1, 3, 5, 13, 14] {
        let (_, paged) = capabilities(
            adapter(&url, "", &format!("page_size = {size}"))
                .catalog(&t, None)
                .await
                .unwrap(),
        );
        assert_eq!(paged, whole, "page_size {size}");
    }
    let cut = adapter(&url, "", "page_size = 3\nmax_pages = 2")
        .catalog(&t, None)
        .await;
    match cut {
        Err(EngineError::Failed(m)) => assert!(m.contains("max_pages"), "{m}"),
        other => panic!("a listing longer than max_pages fails: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_validator_answers_its_first_line_located_when_it_can_be() {
    let Some(url) = mistral_url() else { return };
    let engine = adapter(&url, "", "");
    let t = tenant("check");
    assert_eq!(engine.check(&t, &json!(HELLO), None).await.unwrap(), []);

    let misspelled = "version: '2.0'\nwf:\n  tasks:\n    t1:\n      actionn: std.noop\n";
    let problems = engine.check(&t, &json!(misspelled), None).await.unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(problems[0].is_error);
    assert_eq!(
        problems[0].text,
        "Invalid DSL: Additional properties are not allowed ('actionn' was unexpected)"
    );
    assert_eq!(
        problems[0].location, None,
        "schema errors carry no position"
    );

    let indented =
        "version: '2.0'\nwf:\n  tasks:\n    t1:\n      action: std.noop\n     publish: {}\n";
    let problems = engine.check(&t, &json!(indented), None).await.unwrap();
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(
        problems[0].text,
        "Definition could not be parsed: while parsing a block mapping"
    );
    assert_eq!(problems[0].location.as_deref(), Some("@6:6-6:6"));

    let unknown =
        "version: '2.0'\nwf:\n  tasks:\n    t1:\n      action: std.noop\n      on-success: [t2]\n";
    let problems = engine.check(&t, &json!(unknown), None).await.unwrap();
    assert_eq!(problems[0].text, "Task 't2' not found.");

    match engine.check(&t, &json!({"not": "text"}), None).await {
        Err(EngineError::Failed(m)) => assert!(m.contains("YAML text"), "{m}"),
        other => panic!("a program that is not text is refused: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_succeeds_with_its_events() {
    let Some(url) = mistral_url() else { return };
    let engine = adapter(&url, "", "");
    let t = tenant("run");
    let reply = run(&engine, &t, HELLO, json!({"name": "world"})).await;
    assert_eq!(reply.state, RunState::Completed, "{reply:?}");
    assert_eq!(reply.result, json!({"greeting": "hello world!"}));
    assert_eq!(reply.error, None);
    let id = reply.engine_run_id.clone().unwrap();
    assert_eq!(reply.events.len(), 1, "{:?}", reply.events);
    let greet = &reply.events[0];
    assert_eq!(greet["task"], "greet");
    assert_eq!(greet["state"], "SUCCESS");
    assert_eq!(greet["state_info"], Value::Null);
    assert_eq!(greet["triggered_by"], json!([]));
    assert_eq!(greet["published"], json!({"greeting": "hello world!"}));
    assert_eq!(greet["result"], json!("hello world!"));
    assert_eq!(greet["with_items"], json!(false));
    assert!(greet["duration_ms"].is_u64(), "{greet}");
    assert!(greet["task_id"].as_str().is_some_and(|s| s.len() == 36));
    assert_eq!(
        greet["actions"],
        json!([{"name": "std.echo", "state": "SUCCESS", "input": {"output": "hello world!"},
                "output": {"result": "hello world!"}, "state_info": null}])
    );
    // The execution is Mistral's, in the tenant's project, under a
    // gateway-owned workflow name.
    let (status, execution) = mistral_get(&url, &t, &format!("/executions/{id}")).await;
    assert_eq!(status, 200);
    assert_eq!(execution["project_id"], project(&t));
    let name = execution["workflow_name"].as_str().unwrap();
    assert!(name.starts_with("pilotage_") && name.len() < 255, "{name}");

    // The owned workflow is gone once started; the execution stays.
    assert_eq!(workflow_names(&url, &t).await, Vec::<String>::new());

    // Runs of the same program side by side (one owned name, created and
    // deleted by each) are executions of their own.
    let one = |i: usize| run(&engine, &t, HELLO, json!({"name": format!("n{i}")}));
    let (r0, r1, r2, r3) = tokio::join!(one(0), one(1), one(2), one(3));
    for (i, reply) in [r0, r1, r2, r3].iter().enumerate() {
        assert_eq!(reply.state, RunState::Completed, "{reply:?}");
        assert_eq!(reply.result, json!({"greeting": format!("hello n{i}!")}));
    }
    assert_eq!(executions(&url, &t).await.len(), 5);
    assert_eq!(workflow_names(&url, &t).await, Vec::<String>::new());
}

/// The workflow names `tenant`'s project lists.
async fn workflow_names(url: &str, tenant: &str) -> Vec<String> {
    let (status, body) = mistral_get(url, tenant, "/workflows?limit=100").await;
    assert_eq!(status, 200, "{body}");
    body["workflows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["project_id"] == project(tenant))
        .map(|w| w["name"].as_str().unwrap().to_string())
        .collect()
}

/// Stores `definition` in `tenant`'s project, as its own tools would.
async fn create_workflow(url: &str, tenant: &str, definition: &str) {
    let resp = reqwest::Client::new()
        .post(format!("{url}/workflows"))
        .header("X-Project-Id", project(tenant))
        .header("Content-Type", "text/plain")
        .body(definition.to_string())
        .timeout(Duration::from_secs(30))
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status().as_u16(),
        201,
        "{}",
        resp.text().await.unwrap()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tenants_own_workflows_are_callable_entries() {
    let Some(url) = mistral_url() else { return };
    let engine = adapter(
        &url,
        "",
        "page_size = 2\nrisk = [{ glob = \"std.echo\", effect = \"safe\" }, { glob = \"shout\", effect = \"safe\" }]",
    );
    let (t, other) = (tenant("subwf"), tenant("subwf-other"));
    create_workflow(
        &url,
        &t,
        "version: '2.0'\nshout:\n  input: [word, {times: 2}]\n  output:\n    said: <% $.word %>\n  tasks:\n    say:\n      action: std.echo output=<% $.word %>\n",
    )
    .await;
    for extra in ["one", "two", "three"] {
        create_workflow(
            &url,
            &t,
            &format!("version: '2.0'\n{extra}:\n  tasks:\n    t:\n      action: std.noop\n"),
        )
        .await;
    }
    let (_, entries) = capabilities(engine.catalog(&t, None).await.unwrap());
    let workflows: Vec<&Value> = entries
        .iter()
        .filter(|e| e["tags"][0] == "workflow")
        .collect();
    assert_eq!(
        names(&workflows.iter().map(|e| (*e).clone()).collect::<Vec<_>>()),
        ["one", "shout", "three", "two"]
    );
    let shout = entries.iter().find(|e| e["name"] == "shout").unwrap();
    assert_eq!(
        shout["input_schema"],
        json!({"type": "object", "properties": {"word": {}, "times": {"default": 2}},
               "required": ["word"], "additionalProperties": false})
    );
    assert_eq!(shout["effect"], "safe");
    assert!(
        entries
            .iter()
            .find(|e| e["name"] == "one")
            .unwrap()
            .get("effect")
            .is_none()
    );
    // Another tenant sees none of them.
    let (_, theirs) = capabilities(engine.catalog(&other, None).await.unwrap());
    assert!(
        theirs.iter().all(|e| e["tags"][0] == "action"),
        "{theirs:?}"
    );

    // An inline program calls it; the parent's task has the child's output.
    let program =
        "version: '2.0'\nparent:\n  tasks:\n    call:\n      workflow: shout word='hey'\n";
    let reply = run(&engine, &t, program, json!({})).await;
    assert_eq!(reply.state, RunState::Completed, "{reply:?}");
    assert_eq!(reply.events.len(), 1);
    assert_eq!(reply.events[0]["task"], "call");
    assert_eq!(reply.events[0]["result"], json!({"said": "hey"}));
    // The owned workflow is never offered, even while it exists.
    let (_, after) = capabilities(engine.catalog(&t, None).await.unwrap());
    assert!(
        after
            .iter()
            .all(|e| !e["name"].as_str().unwrap().starts_with("pilotage_"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_second_task_leaves_the_first_tasks_action_succeeded() {
    let Some(url) = mistral_url() else { return };
    let engine = adapter(&url, "", "");
    let t = tenant("fail");
    let program = "version: '2.0'\nlate:\n  tasks:\n    write:\n      action: std.echo output='written'\n      on-success: [next]\n    next:\n      action: std.fail error_data='boom'\n";
    let reply = run(&engine, &t, program, json!({})).await;
    assert_eq!(reply.state, RunState::Failed, "{reply:?}");
    let tasks: Vec<(&str, &str)> = reply
        .events
        .iter()
        .map(|e| (e["task"].as_str().unwrap(), e["state"].as_str().unwrap()))
        .collect();
    assert_eq!(tasks, [("write", "SUCCESS"), ("next", "ERROR")]);
    assert_eq!(reply.events[0]["actions"][0]["state"], "SUCCESS");
    assert_eq!(
        reply.events[1]["triggered_by"],
        json!([{"task": "write", "event": "on-success"}])
    );
    assert_eq!(reply.events[1]["actions"][0]["name"], "std.fail");
    assert_eq!(reply.events[1]["actions"][0]["state"], "ERROR");
    assert_eq!(
        reply.events[1]["actions"][0]["output"],
        json!({"result": "boom"})
    );
    let error = reply.error.unwrap();
    assert_eq!(error, "boom");
    assert_eq!(
        reply.result,
        Value::Null,
        "a failed run's output (tracebacks) stays in Mistral"
    );

    // A mistake the validator lets through: the task fails before any
    // action, its first line names the caller's workflow, no traceback.
    let program = "version: '2.0'\nlate:\n  tasks:\n    write:\n      action: std.echo output='written'\n      on-success: [next]\n    next:\n      action: std.ecko output=1\n";
    let reply = run(&engine, &t, program, json!({})).await;
    assert_eq!(reply.state, RunState::Failed, "{reply:?}");
    assert_eq!(reply.events[0]["actions"][0]["state"], "SUCCESS");
    assert_eq!(reply.events[1]["actions"], json!([]));
    assert_eq!(
        reply.error.as_deref(),
        Some(
            "Failed to run task [error=Failed to find action [action_name=std.ecko, namespace=], wf=late, task=next]:"
        )
    );
    assert_eq!(
        reply.events[1]["state_info"].as_str(),
        reply.error.as_deref()
    );
    assert_eq!(reply.result, Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn with_items_is_one_task_with_one_action_per_item() {
    let Some(url) = mistral_url() else { return };
    let engine = adapter(&url, "", "");
    let t = tenant("items");
    let program = "version: '2.0'\nloop:\n  tasks:\n    each:\n      with-items: x in <% [1, 2, 3] %>\n      action: std.echo output=<% $.x %>\n";
    let reply = run(&engine, &t, program, json!({})).await;
    assert_eq!(reply.state, RunState::Completed, "{reply:?}");
    assert_eq!(reply.events.len(), 1);
    let each = &reply.events[0];
    assert_eq!(each["with_items"], json!(true));
    assert_eq!(each["result"], json!([1, 2, 3]));
    let actions = each["actions"].as_array().unwrap();
    assert_eq!(actions.len(), 3);
    let mut outputs: Vec<i64> = actions
        .iter()
        .map(|a| {
            assert_eq!(a["name"], "std.echo");
            assert_eq!(a["state"], "SUCCESS");
            a["output"]["result"].as_i64().unwrap()
        })
        .collect();
    outputs.sort();
    assert_eq!(outputs, [1, 2, 3]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_taken_transition_is_the_next_tasks_trigger() {
    let Some(url) = mistral_url() else { return };
    let engine = adapter(&url, "", "");
    let t = tenant("branch");
    let program = "version: '2.0'\npick:\n  input: [go]\n  tasks:\n    decide:\n      action: std.noop\n      on-success:\n        - yes_branch: <% $.go %>\n        - no_branch: <% not $.go %>\n      on-complete: [always]\n    yes_branch:\n      action: std.echo output='yes'\n    no_branch:\n      action: std.echo output='no'\n    always:\n      action: std.noop\n";
    let reply = run(&engine, &t, program, json!({"go": true})).await;
    assert_eq!(reply.state, RunState::Completed, "{reply:?}");
    let tasks: Vec<&str> = reply
        .events
        .iter()
        .map(|e| e["task"].as_str().unwrap())
        .collect();
    assert_eq!(tasks.len(), 3, "{tasks:?}");
    assert_eq!(tasks[0], "decide");
    assert!(!tasks.contains(&"no_branch"), "the untaken arm has no task");
    let trigger = |name: &str| {
        reply.events.iter().find(|e| e["task"] == name).unwrap()["triggered_by"].clone()
    };
    assert_eq!(
        trigger("yes_branch"),
        json!([{"task": "decide", "event": "on-success"}])
    );
    assert_eq!(
        trigger("always"),
        json!([{"task": "decide", "event": "on-complete"}])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_past_its_deadline_is_cancelled() {
    let Some(url) = mistral_url() else { return };
    let engine = adapter(&url, "", "");
    let t = tenant("slow");
    let program = "version: '2.0'\nslow:\n  tasks:\n    nap:\n      action: std.sleep seconds=30\n      on-success: [after]\n    after:\n      action: std.noop\n";
    let reply = engine
        .run(
            &t,
            &pilotage_gateway::engines::RunOrder {
                program: &json!(program),
                input: &json!({}),
                context: None,
                dry_run: false,
                deadline: Duration::from_millis(1500),
                stop: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(reply.state, RunState::TimedOut, "{reply:?}");
    assert!(reply.error.unwrap().contains("cancelled"));
    let id = reply.engine_run_id.unwrap();
    let (_, execution) = mistral_get(&url, &t, &format!("/executions/{id}")).await;
    assert_eq!(execution["state"], "CANCELLED", "{execution}");
    let tasks: Vec<&str> = reply
        .events
        .iter()
        .map(|e| e["task"].as_str().unwrap())
        .collect();
    assert!(
        tasks.iter().all(|t| *t == "nap"),
        "nothing after the cancel: {tasks:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_create_the_validator_refuses_is_rejected_with_nothing_run() {
    let Some(url) = mistral_url() else { return };
    let engine = adapter(&url, "", "");
    let t = tenant("reject");
    for (program, first_line) in [
        (
            "version: '2.0'\nwf:\n  tasks:\n    t1:\n      actionn: std.noop\n",
            "Invalid DSL: Additional properties are not allowed ('actionn' was unexpected)",
        ),
        (
            "version: '2.0'\nwf:\n  tasks:\n    t1:\n      action: std.noop\n      on-success: [t2]\n",
            "Task 't2' not found.",
        ),
    ] {
        let reply = run(&engine, &t, program, json!({})).await;
        assert_eq!(reply.state, RunState::Rejected, "{reply:?}");
        assert_eq!(reply.problems.len(), 1);
        assert_eq!(reply.problems[0].text, first_line);
        assert!(reply.events.is_empty());
    }
    // Not YAML at all, and two workflows: refused before Mistral stores anything.
    let reply = run(&engine, &t, "version: '2.0'\nwf: [\n", json!({})).await;
    assert_eq!(reply.state, RunState::Rejected);
    assert_eq!(
        reply.problems[0].text,
        "Definition could not be parsed: while parsing a flow node"
    );
    assert!(reply.problems[0].location.is_some());
    let two = "version: '2.0'\na:\n  tasks: {t: {action: std.noop}}\nb:\n  tasks: {t: {action: std.noop}}\n";
    let reply = run(&engine, &t, two, json!({})).await;
    assert_eq!(reply.state, RunState::Rejected);
    assert!(reply.problems[0].text.contains("2 workflows"), "{reply:?}");

    assert!(executions(&url, &t).await.is_empty(), "nothing ran");
    assert_eq!(
        workflow_names(&url, &t).await,
        Vec::<String>::new(),
        "nothing was stored"
    );

    // Input the workflow does not take: nothing started either.
    match engine
        .run(
            &t,
            &pilotage_gateway::engines::RunOrder {
                program: &json!(HELLO),
                input: &json!({"nom": "x"}),
                context: None,
                dry_run: false,
                deadline: Duration::from_secs(30),
                stop: None,
            },
        )
        .await
    {
        Err(EngineError::NotStarted(m)) => assert!(m.contains("Invalid input"), "{m}"),
        other => panic!("bad input starts nothing: {other:?}"),
    }
    assert!(executions(&url, &t).await.is_empty());
    // No dry run: the language does not declare one.
    assert!(matches!(
        engine
            .run(
                &t,
                &pilotage_gateway::engines::RunOrder {
                    program: &json!(HELLO),
                    input: &json!({"name": "x"}),
                    context: None,
                    dry_run: true,
                    deadline: Duration::from_secs(5),
                    stop: None
                }
            )
            .await,
        Err(EngineError::Failed(_))
    ));
}

/// A proxy in front of Mistral that forwards every request and counts the
/// requests open at once; with `lose_first_start`, it answers the first
/// `POST /v2/executions` with 503 after Mistral has taken it (the start
/// happened, its answer was lost).
struct Proxy {
    url: String,
    most_open: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

async fn proxy(upstream: String, lose_first_start: bool) -> Proxy {
    use axum::body::Bytes;
    use axum::extract::Request;
    use axum::response::IntoResponse;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let dropped = Arc::new(AtomicBool::new(!lose_first_start));
    let open = Arc::new(AtomicUsize::new(0));
    let most_open = Arc::new(AtomicUsize::new(0));
    let client = reqwest::Client::new();
    let counted = most_open.clone();
    let app = axum::Router::new().fallback(move |req: Request| {
        let (dropped, client, upstream) = (dropped.clone(), client.clone(), upstream.clone());
        let (open, most_open) = (open.clone(), counted.clone());
        async move {
            let now = open.fetch_add(1, Ordering::SeqCst) + 1;
            most_open.fetch_max(now, Ordering::SeqCst);
            let (parts, body) = req.into_parts();
            let body: Bytes = axum::body::to_bytes(body, 1 << 20).await.unwrap();
            let path = parts.uri.path_and_query().unwrap().as_str();
            let base = upstream.strip_suffix("/v2").unwrap();
            let mut forward = client.request(parts.method.clone(), format!("{base}{path}"));
            for (k, v) in &parts.headers {
                if k != "host" && k != "content-length" {
                    forward = forward.header(k, v);
                }
            }
            let resp = forward.body(body).send().await.unwrap();
            let status = resp.status();
            let text = resp.bytes().await.unwrap();
            open.fetch_sub(1, Ordering::SeqCst);
            if parts.method == "POST"
                && parts.uri.path() == "/v2/executions"
                && !dropped.swap(true, Ordering::SeqCst)
            {
                return (axum::http::StatusCode::SERVICE_UNAVAILABLE, "lost").into_response();
            }
            (
                axum::http::StatusCode::from_u16(status.as_u16()).unwrap(),
                [("content-type", "application/json")],
                text,
            )
                .into_response()
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v2", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Proxy { url, most_open }
}

#[tokio::test(flavor = "multi_thread")]
async fn max_in_flight_bounds_the_calls_open_at_once() {
    let Some(url) = mistral_url() else { return };
    let proxy = proxy(url, false).await;
    let engine = adapter(&proxy.url, "max_in_flight = 3", "page_size = 1");
    let t = tenant("bound");
    // Six listings of 15 pages each, all at once.
    let one = || engine.catalog(&t, None);
    let all = tokio::join!(one(), one(), one(), one(), one(), one());
    for listed in [all.0, all.1, all.2, all.3, all.4, all.5] {
        assert_eq!(capabilities(listed.unwrap()).1.len(), 14);
    }
    let most = proxy.most_open.load(std::sync::atomic::Ordering::SeqCst);
    assert!((1..=3).contains(&most), "{most} calls were open at once");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_start_whose_answer_was_lost_is_sent_again_as_the_same_execution() {
    let Some(url) = mistral_url() else { return };
    let proxy = proxy(url.clone(), true).await;
    let engine = adapter(&proxy.url, "retries = 2", "");
    let t = tenant("lost");
    let reply = run(&engine, &t, HELLO, json!({"name": "twice"})).await;
    assert_eq!(reply.state, RunState::Completed, "{reply:?}");
    assert_eq!(reply.result, json!({"greeting": "hello twice!"}));
    assert_eq!(
        executions(&url, &t).await,
        [reply.engine_run_id.unwrap()],
        "one execution for two starts"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn tenants_never_meet() {
    let Some(url) = mistral_url() else { return };
    let engine = adapter(&url, "", "");
    let (a, b) = (tenant("iso-a"), tenant("iso-b"));
    let ra = run(&engine, &a, HELLO, json!({"name": "a"})).await;
    let rb = run(&engine, &b, HELLO, json!({"name": "b"})).await;
    assert_eq!(ra.state, RunState::Completed);
    assert_eq!(rb.state, RunState::Completed);
    let (ida, idb) = (ra.engine_run_id.unwrap(), rb.engine_run_id.unwrap());
    assert_eq!(executions(&url, &a).await, std::slice::from_ref(&ida));
    assert_eq!(executions(&url, &b).await, std::slice::from_ref(&idb));
    let (status, _) = mistral_get(&url, &b, &format!("/executions/{ida}")).await;
    assert_eq!(status, 404, "B cannot read A's execution");
    let name = |tenant: &str| {
        let url = url.clone();
        let id = if tenant == a {
            ida.clone()
        } else {
            idb.clone()
        };
        let tenant = tenant.to_string();
        async move {
            mistral_get(&url, &tenant, &format!("/executions/{id}"))
                .await
                .1["workflow_name"]
                .as_str()
                .unwrap()
                .to_string()
        }
    };
    assert_ne!(
        name(&a).await,
        name(&b).await,
        "owned names differ per tenant"
    );

    // A tenant outside the plug-in's alphabet runs in its mapped project.
    let odd = format!("Team {} / é", rand::random::<u32>());
    let reply = run(&engine, &odd, HELLO, json!({"name": "odd"})).await;
    assert_eq!(reply.state, RunState::Completed, "{reply:?}");
    let (_, execution) = mistral_get(
        &url,
        &odd,
        &format!("/executions/{}", reply.engine_run_id.unwrap()),
    )
    .await;
    assert_eq!(execution["project_id"], project(&odd));
    assert!(project(&odd).starts_with("x-"));
}

#[tokio::test(flavor = "multi_thread")]
async fn health_is_the_api_root() {
    let Some(url) = mistral_url() else { return };
    assert!(adapter(&url, "", "").healthy().await);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!("http://{}/v2", listener.local_addr().unwrap());
    drop(listener);
    let down = adapter(&closed, "retries = 0", "");
    assert!(!down.healthy().await);
    assert!(matches!(
        down.catalog("x", None).await,
        Err(EngineError::Unreachable(_))
    ));
}
