//! Refusals and answers that say the next step, through the real endpoint:
//! a program sent as a string is refused naming the fix without echoing it,
//! a misspelled parameter gets "did you mean", a test run says it was
//! simulated where a reader looks first, and an engine that does not answer
//! never puts its address in what the caller reads.

mod common;

use common::{Engine, TestEnv, write_program};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn a_program_sent_as_a_string_names_the_fix_and_is_not_echoed() {
    let env = TestEnv::start().await;
    let c = env.anonymous();
    let text =
        json!({"steps": [{"id": "marker_step_7731", "kind": "set", "value": 1}]}).to_string();
    let r = c
        .rpc(
            "tools/call",
            json!({"name": "validate_workflow", "arguments": {"workflow": text}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(message.contains("not a string"), "{message}");
    assert!(!message.contains("marker_step_7731"), "{message}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_misspelled_parameter_gets_did_you_mean() {
    let env = TestEnv::start().await;
    let c = env.anonymous();
    let program = json!({"steps": [{"id": "get", "kind": "call",
        "capability": "crm.get_customer", "with": {"idd": "cus_1"}}]});
    let r = c
        .call("validate_workflow", json!({"workflow": program}))
        .await;
    let diagnostics = r.structured["diagnostics"].as_array().unwrap();
    let unexpected = diagnostics
        .iter()
        .find(|d| d["code"] == "unexpected_parameter")
        .unwrap_or_else(|| panic!("{}", r.structured));
    let hint = unexpected["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("did you mean 'id'"), "{unexpected}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_test_run_says_it_was_simulated_first() {
    let env = TestEnv::start().await;
    let c = env.anonymous();
    let before = env.engine.digest("acme").await;
    let r = c
        .call(
            "run_workflow",
            json!({"workflow": write_program("gold"), "test_run": true}),
        )
        .await;
    assert!(r.text.starts_with("TEST RUN, simulated"), "{}", r.text);
    assert_eq!(r.structured["test_run"], true, "{}", r.structured);
    assert_eq!(env.engine.digest("acme").await, before, "no side effects");
    let real = c
        .call("run_workflow", json!({"workflow": write_program("gold")}))
        .await;
    assert!(!real.text.contains("TEST RUN"), "{}", real.text);
    assert!(real.structured.get("test_run").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_engine_that_does_not_answer_is_not_named_to_the_caller() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let env = TestEnv::in_front_of(
        Engine::external(url.clone()),
        "tests/fixtures/features.toml",
        |cfg| cfg.engine.retries = 0,
    )
    .await;
    let c = env.anonymous();
    let r = c
        .call(
            "pilotage_catalog",
            json!({"language": "workflow/v1", "verb": "list"}),
        )
        .await;
    assert_eq!(
        r.structured["error"]["kind"], "internal",
        "{}",
        r.structured
    );
    let seen = format!("{} {}", r.text, r.structured);
    assert!(!seen.contains(&port.to_string()), "{seen}");
    assert!(!seen.contains("127.0.0.1"), "{seen}");
    assert!(!seen.contains("error sending request"), "{seen}");
}
