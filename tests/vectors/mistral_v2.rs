//! The official conformance vectors bound to `mistral/v2` programs: one test
//! per vector that applies to the language's declared capabilities, each
//! through the HTTP endpoint of a gateway in front of the real Mistral. The
//! vectors that do not apply, and why, are listed in `docs/conformance.md`
//! ("mistral/v2").

use crate::common::mistral::{
    EXECUTE, MISTRAL, Mistral, MistralEnv, TRACE, VALIDATE, echo_program, greet_program,
    run, validate,
};
use crate::common::answers::{codes, error_kind, status};
use crate::common::guides::closed_codes;
use crate::common::{Mcp, assert_shape, ports::free_port};
use serde_json::{Value, json};

/// A valid program whose second task fails: `partial`.
const SECOND_FAILS: &str = "version: '2.0'
second_fails:
  tasks:
    write:
      action: std.echo output='written'
      on-success:
        - boom
    boom:
      action: std.fail error_data='card declined'
";

/// Conditional transitions: `big` or `small` runs, never both.
const ROUTE: &str = "version: '2.0'
route:
  input:
    - amount
  output:
    route: <% $.route %>
  tasks:
    check:
      action: std.echo output=<% $.amount %>
      publish:
        size: <% task().result %>
      on-success:
        - big: <% $.size > 100 %>
        - small: <% $.size <= 100 %>
    big:
      action: std.echo output='review'
      publish:
        route: <% task().result %>
    small:
      action: std.echo output='auto'
      publish:
        route: <% task().result %>
";

/// with-items over an empty list: zero iterations.
const NO_ITEMS: &str = "version: '2.0'
no_items:
  input:
    - names: []
  tasks:
    each:
      with-items: n in <% $.names %>
      action: std.echo output=<% $.n %>
";

/// An ad-hoc action of one project: a catalog entry only that tenant sees.
/// A non-empty `mark` adds an optional parameter of that default, which
/// changes the entry's input schema.
fn shout_action(mark: &str) -> String {
    let extra = if mark.is_empty() {
        String::new()
    } else {
        format!("    - mark: \"{mark}\"\n")
    };
    format!(
        "version: '2.0'\nshout:\n  base: std.echo\n  base-input:\n    output: <% $.text %>\n  input:\n    - text\n{extra}"
    )
}

async fn catalog(c: &Mcp, args: Value) -> crate::common::CallResult {
    let mut args = args;
    args["language"] = json!(MISTRAL);
    c.call("pilotage_catalog", args).await
}

async fn catalog_version(c: &Mcp) -> String {
    catalog(c, json!({"verb": "list"})).await.structured["catalog_version"]
        .as_str()
        .expect("catalog_version")
        .to_string()
}

/// Everything Mistral shows of a project: its executions and workflows.
async fn observable(m: &Mistral, project: &str) -> (Vec<Value>, Vec<Value>) {
    (m.executions(project).await, m.workflows(project).await)
}

// --- discover and learn ----------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn pil_discover_manifest_g() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    assert_shape(&manifest, "ManifestToolOutput");
    let lang = manifest["languages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == MISTRAL)
        .expect("mistral/v2 declared")
        .clone();
    let tools: Vec<String> = c
        .list_tools()
        .await
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    for key in ["validate", "execute", "trace"] {
        let name = lang["loop"][key].as_str().unwrap();
        assert!(tools.contains(&name.to_string()), "{name} in tools/list");
    }
    assert_eq!(lang["guides"], "pilotage_get_guide");
    assert_eq!(lang["catalog"], "pilotage_catalog");
    let caps = &lang["capabilities"];
    assert!(
        caps["execute"]["test_run"] != true,
        "no dry run declared: {caps}"
    );
    assert!(
        caps.get("trace_fetch").is_some_and(|v| v != false),
        "{caps}"
    );
    // Discovery changed nothing in Mistral.
    assert!(m.mistral.executions(&m.anonymous).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_learn_index_g() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = c
        .call("pilotage_get_guide", json!({"language": MISTRAL}))
        .await;
    let guides = r.structured["guides"].as_array().unwrap();
    assert!(guides.iter().all(|g| g.get("body").is_none()));
    assert!(guides.iter().any(|g| g["level"] == "core"));
    let closed: Vec<&Value> = guides
        .iter()
        .filter(|g| {
            g["topics"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t == "closed-sets")
        })
        .collect();
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0]["level"], "reference");
    // The core guide stays within Part II's size advice.
    let core = guides.iter().find(|g| g["level"] == "core").unwrap();
    assert!(core["size_bytes"].as_u64().unwrap() < 8192, "{core}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_learn_fetch_g() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = c
        .call(
            "pilotage_get_guide",
            json!({"language": MISTRAL, "id": "transitions"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.structured);
    assert_eq!(r.structured["guide"]["format"], "text/markdown");
    assert!(
        r.structured["guide"]["body"]
            .as_str()
            .unwrap()
            .contains("```yaml workflow")
    );
    let topic = c
        .call(
            "pilotage_get_guide",
            json!({"language": MISTRAL, "id": "closed-sets", "topic": "trace-ids"}),
        )
        .await;
    assert!(
        topic.structured["guide"]["body"]
            .as_str()
            .unwrap()
            .contains("#n")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_learn_unknown_id_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = c
        .call(
            "pilotage_get_guide",
            json!({"language": MISTRAL, "id": "no-such-guide"}),
        )
        .await;
    assert_eq!(error_kind(&r), "not_found");
    assert_shape(&r.structured, "RequestError");
}

// --- catalog ---------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn pil_lookup_list_g() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = catalog(&c, json!({"verb": "list"})).await;
    assert!(r.structured["catalog_version"].is_string());
    let items = r.structured["items"].as_array().unwrap();
    assert!(!items.is_empty());
    for e in items {
        assert!(e["risk"].is_string() && e["risk_hints"].is_object(), "{e}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_lookup_pagination_g() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let all: Vec<String> = catalog(&c, json!({"verb": "list", "limit": 100}))
        .await
        .structured["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert!(all.len() > 1, "{all:?}");
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..(all.len() + 2) {
        let mut args = json!({"verb": "list", "limit": 1});
        if let Some(cur) = &cursor {
            args["cursor"] = json!(cur);
        }
        let page = catalog(&c, args).await.structured;
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= 1);
        paged.extend(items.iter().map(|e| e["id"].as_str().unwrap().to_string()));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(paged, all, "the pages cover every entry once, in order");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_lookup_get_unknown_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = catalog(&c, json!({"verb": "get", "id": "no-such-entry"})).await;
    assert_eq!(error_kind(&r), "not_found");
    assert!(r.structured["catalog_version"].is_string());
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_lookup_unknown_baseline_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = catalog(
        &c,
        json!({"verb": "changed_since", "catalog_version": "cv_unknown_baseline"}),
    )
    .await;
    assert_eq!(error_kind(&r), "unknown_baseline");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_catalog_version_stable_g() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    assert_eq!(catalog_version(&c).await, catalog_version(&c).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_catalog_version_bumps_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    m.mistral
        .put_action(&m.a.tenant, &shout_action(""), false)
        .await;
    let first = catalog_version(&c).await;
    m.mistral
        .put_action(&m.a.tenant, &shout_action("!"), true)
        .await;
    let second = catalog_version(&c).await;
    assert_ne!(first, second, "a changed action changes the version");
    // changed_since names exactly the changed entry.
    let delta = catalog(
        &c,
        json!({"verb": "changed_since", "catalog_version": first}),
    )
    .await;
    assert!(!delta.is_error, "{}", delta.structured);
    assert!(
        delta.structured.to_string().contains("shout"),
        "{}",
        delta.structured
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_authz_invisible_entry_b() {
    let m = MistralEnv::start().await;
    // `shout` lives in tenant a's Mistral project only.
    m.mistral
        .put_action(&m.a.tenant, &shout_action(""), false)
        .await;
    let a = m.session(&m.a).await;
    let seen = catalog(&a, json!({"verb": "get", "id": "shout"})).await;
    assert!(!seen.is_error, "{}", seen.structured);
    let b = m.session(&m.b).await;
    let hidden = catalog(&b, json!({"verb": "get", "id": "shout"})).await;
    let unknown = catalog(&b, json!({"verb": "get", "id": "no-such-entry"})).await;
    assert_eq!(error_kind(&hidden), "not_found");
    assert_eq!(
        hidden.structured["error"]["message"]
            .as_str()
            .map(|s| s.replace("shout", "X")),
        unknown.structured["error"]["message"]
            .as_str()
            .map(|s| s.replace("no-such-entry", "X")),
    );
    // A close misspelling never suggests it to b.
    let v = validate(
        &b,
        "version: '2.0'\nwf:\n  tasks:\n    t:\n      action: shoutt text='x'\n",
    )
    .await;
    assert_eq!(v.structured["valid"], false);
    assert!(
        !v.structured.to_string().contains("\"shout\""),
        "{}",
        v.structured
    );
    assert!(
        !v.structured["diagnostics"][0]["hint"]
            .as_str()
            .unwrap_or("")
            .contains("shout ")
    );
}

// --- validate --------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_good_g() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = validate(&c, &greet_program()).await;
    assert!(!r.is_error);
    assert_eq!(r.structured["valid"], true, "{}", r.structured);
    assert!(
        r.structured["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["severity"] != "error")
    );
    assert_shape(&r.structured["plan"], "Plan");
    assert!(r.structured["catalog_version"].is_string());
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_unknown_name_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = validate(&c, &greet_program().replace("std.echo", "std.ehco")).await;
    assert_eq!(r.structured["valid"], false, "{}", r.structured);
    let closed = closed_codes(&c, MISTRAL).await;
    let d = &r.structured["diagnostics"][0];
    assert!(
        closed.contains(&d["code"].as_str().unwrap().to_string()),
        "{d}"
    );
    assert_eq!(d["code"], "unknown_capability");
    // The text-range dialect: the task `hello`, from its name on line 8.
    assert_eq!(d["path"]["start"], json!({"line": 8, "column": 5}), "{d}");
    assert!(d["path"]["end"]["line"].as_u64().unwrap() >= 9, "{d}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_side_effect_free_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let before = observable(&m.mistral, &m.a.tenant).await;
    for program in [
        greet_program(),
        SECOND_FAILS.to_string(),
        "not: [yaml".to_string(),
    ] {
        validate(&c, &program).await;
    }
    assert_eq!(observable(&m.mistral, &m.a.tenant).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_reserved_chars_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    for name in ["hel#lo", "hel/lo"] {
        let r = validate(&c, &greet_program().replace("hello:", &format!("{name}:"))).await;
        assert_eq!(r.structured["valid"], false, "{}", r.structured);
        let d = r.structured["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "reserved_character")
            .unwrap_or_else(|| panic!("{name}: {}", r.structured))
            .clone();
        assert!(d["message"].as_str().unwrap().contains(name), "{d}");
        // At the task's name, line 8.
        assert_eq!(d["path"]["start"], json!({"line": 8, "column": 5}), "{d}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_context_undeclared_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = c
        .call(
            VALIDATE,
            json!({"workflow": greet_program(), "context": {"any": "value"}}),
        )
        .await;
    assert!(!r.is_error, "{}", r.structured);
    assert_eq!(r.structured["valid"], false);
    assert!(codes(&r.structured).contains(&"context_binding".to_string()));
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_bounds_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let before = observable(&m.mistral, &m.a.tenant).await;
    let mut tasks = String::new();
    for i in 0..101 {
        tasks.push_str(&format!("    t{i}:\n      action: std.noop\n"));
    }
    let many = format!("version: '2.0'\nmany:\n  tasks:\n{tasks}");
    let r = validate(&c, &many).await;
    assert_eq!(error_kind(&r), "bounds_exceeded");
    assert_shape(&r.structured, "RequestError");
    let big = format!("{}# {}\n", greet_program(), "x".repeat(70_000));
    assert_eq!(error_kind(&validate(&c, &big).await), "bounds_exceeded");
    assert_eq!(observable(&m.mistral, &m.a.tenant).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_constraint_fallback_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    // Every task has an inbound transition: a message no rule classifies.
    let cycle = "version: '2.0'\ncycle:\n  tasks:\n    a:\n      action: std.noop\n      on-success:\n        - b\n    b:\n      action: std.noop\n      on-success:\n        - a\n";
    let r = validate(&c, cycle).await;
    assert_eq!(r.structured["valid"], false, "{}", r.structured);
    assert_eq!(codes(&r.structured), ["constraint"], "{}", r.structured);
    assert!(closed_codes(&c, MISTRAL).await.contains(&"constraint".to_string()));
}

// --- execute ---------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_success_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let cv = catalog_version(&c).await;
    let r = run(
        &c,
        &greet_program(),
        json!({"input": {"name": "world"}, "trace_level": "full", "expected_catalog_version": cv}),
    )
    .await;
    assert_shape(&r.structured, "ExecuteToolOutput");
    assert_eq!(
        r.structured["outcome"],
        json!({"ok": true, "status": "success", "error": null})
    );
    assert_eq!(r.structured["trace"]["level"], "full");
    assert_eq!(r.structured["output"], json!({"greeting": "hello world"}));
    let steps = r.structured["trace"]["steps"].as_array().unwrap();
    let hello: Vec<&Value> = steps.iter().filter(|s| s["id"] == "hello").collect();
    assert_eq!(hello.len(), 1, "{steps:?}");
    assert_eq!(
        hello[0]["input"],
        json!({"output": "hello world"}),
        "{steps:?}"
    );
    assert_eq!(hello[0]["calls"], "std.echo");
    assert_eq!(m.mistral.executions(&m.a.tenant).await.len(), 1);
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_guard_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let before = observable(&m.mistral, &m.a.tenant).await;
    let r = run(
        &c,
        &greet_program().replace("std.echo", "std.nope"),
        json!({}),
    )
    .await;
    assert_eq!(status(&r), "validation_error");
    assert!(!codes(&r.structured).is_empty());
    assert!(r.structured["run_id"].is_string());
    assert_eq!(observable(&m.mistral, &m.a.tenant).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_drift_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    m.mistral
        .put_action(&m.a.tenant, &shout_action(""), false)
        .await;
    let stale = catalog_version(&c).await;
    m.mistral
        .put_action(&m.a.tenant, &shout_action("!"), true)
        .await;
    let before = observable(&m.mistral, &m.a.tenant).await;
    let r = run(
        &c,
        &greet_program(),
        json!({"input": {"name": "x"}, "expected_catalog_version": stale}),
    )
    .await;
    assert_eq!(status(&r), "catalog_drift", "{}", r.structured);
    assert_eq!(observable(&m.mistral, &m.a.tenant).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_drift_before_validation_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = run(
        &c,
        &greet_program().replace("std.echo", "std.nope"),
        json!({"expected_catalog_version": "cv_stale"}),
    )
    .await;
    assert_eq!(status(&r), "catalog_drift", "{}", r.structured);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_promotion_drift_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    m.mistral
        .put_action(&m.a.tenant, &shout_action(""), false)
        .await;
    let program = "version: '2.0'\nloud:\n  tasks:\n    say:\n      action: shout text='hey'\n";
    let deployed = c
        .call(EXECUTE, json!({"workflow": program, "mode": "deploy"}))
        .await;
    assert_eq!(status(&deployed), "success", "{}", deployed.structured);
    let program_ref = deployed.structured["output"]["program_ref"].clone();
    // The action's parameters change after promotion.
    let changed = "version: '2.0'\nshout:\n  base: std.echo\n  base-input:\n    output: <% $.text %><% $.mark %>\n  input:\n    - text\n    - mark\n";
    m.mistral.put_action(&m.a.tenant, changed, true).await;
    let before = observable(&m.mistral, &m.a.tenant).await;
    let r = c
        .call(
            EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate"}),
        )
        .await;
    assert_eq!(status(&r), "promotion_drift", "{}", r.structured);
    assert_eq!(observable(&m.mistral, &m.a.tenant).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_both_runnables_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = c
        .call(
            EXECUTE,
            json!({"workflow": greet_program(), "program_ref": "prog_x", "mode": "immediate"}),
        )
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_no_runnable_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = c
        .call(EXECUTE, json!({"input": {"x": 1}, "mode": "immediate"}))
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_input_binding_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let deployed = c
        .call(
            EXECUTE,
            json!({"workflow": greet_program(), "mode": "deploy"}),
        )
        .await;
    let program_ref = deployed.structured["output"]["program_ref"].clone();
    let before = observable(&m.mistral, &m.a.tenant).await;
    let r = c
        .call(
            EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate", "input": {"name": 5, "extra": true}}),
        )
        .await;
    assert_eq!(status(&r), "validation_error", "{}", r.structured);
    let d = r.structured["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "input_binding")
        .unwrap_or_else(|| panic!("{}", r.structured))
        .clone();
    assert!(
        d["path"]
            .as_str()
            .is_some_and(|p| p.is_empty() || p.starts_with('/')),
        "{d}"
    );
    // Inline too: the workflow's input list.
    let r = run(&c, &greet_program(), json!({"input": {}})).await;
    assert_eq!(status(&r), "validation_error", "{}", r.structured);
    assert!(codes(&r.structured).contains(&"input_binding".to_string()));
    assert_eq!(observable(&m.mistral, &m.a.tenant).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_unknown_trace_level_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = run(&c, &greet_program(), json!({"trace_level": "verbose"})).await;
    assert_eq!(error_kind(&r), "invalid_request");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_test_run_undeclared_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let r = run(
        &c,
        &greet_program(),
        json!({"input": {"name": "x"}, "test_run": true}),
    )
    .await;
    assert_eq!(error_kind(&r), "invalid_request");
    assert!(m.mistral.executions(&m.a.tenant).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_mode_missing_b() {
    let m = MistralEnv::start().await;
    let c = m.anonymous_session().await;
    let r = c.call(EXECUTE, json!({"workflow": greet_program()})).await;
    assert_eq!(error_kind(&r), "invalid_request");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_idempotent_replay_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let args = json!({"workflow": greet_program(), "mode": "immediate",
        "input": {"name": "x"}, "idempotency_key": "key-1"});
    let first = c.call(EXECUTE, args.clone()).await;
    let second = c.call(EXECUTE, args).await;
    assert_eq!(status(&first), "success", "{}", first.structured);
    assert_eq!(first.structured, second.structured);
    assert_eq!(m.mistral.executions(&m.a.tenant).await.len(), 1);
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_idempotent_conflict_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let mut args = json!({"workflow": greet_program(), "mode": "immediate",
        "input": {"name": "x"}, "idempotency_key": "key-1"});
    c.call(EXECUTE, args.clone()).await;
    args["input"] = json!({"name": "y"});
    let r = c.call(EXECUTE, args).await;
    assert_eq!(error_kind(&r), "idempotency_conflict");
    assert_eq!(m.mistral.executions(&m.a.tenant).await.len(), 1);
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_trace_none_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let r = run(
        &c,
        &greet_program(),
        json!({"input": {"name": "x"}, "trace_level": "none"}),
    )
    .await;
    assert_eq!(status(&r), "success");
    assert!(r.structured["run_id"].is_string());
    assert!(r.structured.get("trace").is_none());
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_engine_error_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let program = "version: '2.0'\nfails:\n  tasks:\n    boom:\n      action: std.fail error_data='card declined'\n";
    let r = run(&c, program, json!({"trace_level": "full"})).await;
    assert_eq!(status(&r), "error", "{}", r.structured);
    assert_eq!(r.structured["outcome"]["ok"], false);
    assert!(
        r.structured["outcome"]["error"]
            .as_str()
            .is_some_and(|e| !e.is_empty()),
        "{}",
        r.structured
    );
    assert_eq!(
        r.structured["trace"]["steps"][0]["outcome"]["status"],
        "error"
    );
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_internal_b() {
    // Mistral unreachable: a closed port.
    let dead = format!("http://127.0.0.1:{}/v2", free_port());
    let m = MistralEnv::start_with(|cfg| {
        cfg.engines.get_mut(crate::common::mistral::ENGINE).unwrap().url = dead;
    })
    .await;
    let c = m.anonymous_session().await;
    let r = run(&c, &echo_program("x", "y"), json!({})).await;
    assert_eq!(error_kind(&r), "internal");
    assert_shape(&r.structured, "RequestError");
}

// --- trace -----------------------------------------------------------------------

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_branch_decision_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let v = validate(&c, ROUTE).await;
    assert_eq!(v.structured["valid"], true, "{}", v.structured);
    let plan = v.structured["plan"]["steps"].as_array().unwrap().clone();
    let arm = |id: &str| {
        plan.iter()
            .find(|s| s["id"] == id)
            .unwrap_or_else(|| panic!("{id} in the plan {plan:?}"))["arm"]
            .clone()
    };
    let (big, small) = (arm("big"), arm("small"));
    // The transitions of `check` are one branch construct, an arm each.
    assert_eq!(big["branch"], small["branch"], "{plan:?}");
    assert_ne!(big["label"], small["label"], "{plan:?}");
    let branch = big["branch"].as_str().unwrap().to_string();
    for (amount, taken, absent) in [(250, "big", "small"), (5, "small", "big")] {
        let r = run(
            &c,
            ROUTE,
            json!({"input": {"amount": amount}, "trace_level": "full"}),
        )
        .await;
        assert_eq!(status(&r), "success", "{}", r.structured);
        let steps = r.structured["trace"]["steps"].as_array().unwrap();
        let entry = steps
            .iter()
            .find(|s| s["id"] == branch.as_str())
            .unwrap_or_else(|| panic!("the branch {branch} in {steps:?}"));
        let decisions = entry["decisions"].as_array().unwrap();
        assert_eq!(decisions.len(), 1, "{entry}");
        assert_eq!(decisions[0]["at"], branch.as_str(), "{entry}");
        assert_eq!(decisions[0]["took"], arm(taken)["label"], "{entry}");
        assert!(
            decisions[0]["because"]
                .as_str()
                .is_some_and(|b| b.contains("$.size")),
            "{entry}"
        );
        assert!(entry.get("input").is_none() && entry.get("output").is_none());
        assert!(steps.iter().any(|s| s["id"] == taken));
        assert!(
            steps.iter().all(|s| s["id"] != absent),
            "untaken arm absent"
        );
    }
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_zero_iteration_loop_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let v = validate(&c, NO_ITEMS).await;
    let plan = v.structured["plan"]["steps"].as_array().unwrap().clone();
    let each = plan
        .iter()
        .find(|s| s["id"] == "each")
        .expect("each in the plan");
    let loop_id = each["loop"]
        .as_str()
        .unwrap_or_else(|| panic!("each is a loop body: {plan:?}"));
    let r = run(&c, NO_ITEMS, json!({"trace_level": "full"})).await;
    assert_eq!(status(&r), "success", "{}", r.structured);
    let steps = r.structured["trace"]["steps"].as_array().unwrap();
    let loops: Vec<&Value> = steps.iter().filter(|s| s["id"] == loop_id).collect();
    assert_eq!(loops.len(), 1, "one loop entry: {steps:?}");
    let decisions = loops[0]["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0]["took"], "exit");
    assert!(
        steps
            .iter()
            .all(|s| !s["id"].as_str().unwrap().starts_with("each#") && s["id"] != "each"),
        "no body entry: {steps:?}"
    );
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_partial_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let r = run(&c, SECOND_FAILS, json!({"trace_level": "full"})).await;
    assert_eq!(status(&r), "partial", "{}", r.structured);
    assert_eq!(r.structured["outcome"]["ok"], false);
    let ids: Vec<&str> = r.structured["trace"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str())
        .filter(|id| !id.contains('.'))
        .collect();
    assert_eq!(ids, ["write", "boom"], "the executed prefix, in order");
    assert!(
        r.structured["outcome"]["error"]
            .as_str()
            .unwrap()
            .contains("card declined")
    );
    m.clean().await;
}

async fn stored_run(c: &Mcp, extra: Value) -> crate::common::CallResult {
    let mut extra = extra;
    extra["input"] = json!({"name": "kept"});
    let r = run(c, &greet_program(), extra).await;
    assert_eq!(status(&r), "success", "{}", r.structured);
    r
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_store_false_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let r = stored_run(&c, json!({"store": false})).await;
    let f = c
        .call(TRACE, json!({"run_id": r.structured["run_id"]}))
        .await;
    assert_eq!(error_kind(&f), "not_found");
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_execute_store_retain_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let r = stored_run(&c, json!({"store": true, "trace_level": "none"})).await;
    assert!(r.structured.get("trace").is_none());
    let f = c
        .call(TRACE, json!({"run_id": r.structured["run_id"]}))
        .await;
    assert!(!f.is_error, "{}", f.structured);
    assert_eq!(f.structured["trace"]["level"], "full");
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_fetch_retained_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let r = stored_run(&c, json!({"store": true, "trace_level": "full"})).await;
    let f = c
        .call(TRACE, json!({"run_id": r.structured["run_id"]}))
        .await;
    assert_shape(&f.structured, "TraceFetchResponse");
    assert_eq!(f.structured["trace"], r.structured["trace"]);
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_fetch_level_g() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let r = stored_run(&c, json!({"store": true, "trace_level": "full"})).await;
    let f = c
        .call(
            TRACE,
            json!({"run_id": r.structured["run_id"], "trace_level": "summary"}),
        )
        .await;
    assert_eq!(
        f.structured["trace"]["level"], "summary",
        "{}",
        f.structured
    );
    assert!(
        f.structured["trace"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s.get("input").is_none())
    );
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_fetch_level_b() {
    let m = MistralEnv::start().await;
    let c = m.session(&m.a).await;
    let r = stored_run(&c, json!({"store": true})).await;
    let f = c
        .call(
            TRACE,
            json!({"run_id": r.structured["run_id"], "trace_level": "none"}),
        )
        .await;
    assert_eq!(error_kind(&f), "invalid_request");
    m.clean().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_fetch_indistinguishable_b() {
    let m = MistralEnv::start().await;
    let a = m.session(&m.a).await;
    let b = m.session(&m.b).await;
    let theirs = stored_run(&b, json!({"store": true})).await;
    let unstored = stored_run(&a, json!({"store": false})).await;
    let mut results = Vec::new();
    for id in [
        json!("run_00000000000000000000000000000000"),
        unstored.structured["run_id"].clone(),
        theirs.structured["run_id"].clone(),
    ] {
        let f = a.call(TRACE, json!({"run_id": id})).await;
        assert_eq!(error_kind(&f), "not_found");
        results.push(f.raw["result"].to_string());
    }
    assert!(
        results.windows(2).all(|w| w[0] == w[1]),
        "byte-identical: {results:?}"
    );
    m.clean().await;
}
