//! The `n8n/v1` vectors of validate.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_unknown_name_b() {
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    let mut program = greet_program();
    program["nodes"][1]["type"] = json!("n8n-nodes-base.sett");
    let r = validate(&c, &program).await;
    assert_eq!(r.structured["valid"], false, "{}", r.structured);
    let closed = closed_codes(&c, N8N).await;
    let d = r.structured["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "unknown_capability")
        .unwrap_or_else(|| panic!("{}", r.structured))
        .clone();
    assert!(
        closed.contains(&d["code"].as_str().unwrap().to_string()),
        "{d}"
    );
    // The JSON Pointer dialect: the node's type.
    assert_eq!(d["path"], "/nodes/1/type", "{d}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_side_effect_free_g() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let before = observable(&n, &n.a).await;
    let mut broken = greet_program();
    broken["connections"]["Start"]["main"][0][0]["node"] = json!("Nowhere");
    for program in [greet_program(), second_fails_program(), broken] {
        validate(&c, &program).await;
    }
    assert_eq!(observable(&n, &n.a).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_warnings_only_g() {
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    // A node nothing connects never runs: a warning, not an error.
    let mut program = say_program("hi");
    program["nodes"]
        .as_array_mut()
        .unwrap()
        .push(node("Orphan", "noOp", 1.0, 480, json!({})));
    let r = validate(&c, &program).await;
    assert_eq!(r.structured["valid"], true, "{}", r.structured);
    let diagnostics = r.structured["diagnostics"].as_array().unwrap();
    assert!(!diagnostics.is_empty(), "{}", r.structured);
    assert!(
        diagnostics.iter().all(|d| d["severity"] == "warning"),
        "{}",
        r.structured
    );
    assert!(r.structured.get("plan").is_some());
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_reserved_chars_b() {
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    for name in ["Gre#et", "Gre/et"] {
        let mut program = greet_program();
        program["nodes"][1]["name"] = json!(name);
        program["connections"] = chain(&["Start", name]);
        let r = validate(&c, &program).await;
        assert_eq!(r.structured["valid"], false, "{}", r.structured);
        let d = r.structured["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["code"] == "reserved_character")
            .unwrap_or_else(|| panic!("{name}: {}", r.structured))
            .clone();
        assert!(d["message"].as_str().unwrap().contains(name), "{d}");
        // At the node's name.
        assert_eq!(d["path"], "/nodes/1/name", "{d}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_bounds_b() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let before = observable(&n, &n.a).await;
    let mut nodes = vec![manual_trigger()];
    let mut names = vec!["Start".to_string()];
    for i in 0..100 {
        let name = format!("N{i}");
        nodes.push(node(&name, "noOp", 1.0, 240 * (i + 1), json!({})));
        names.push(name);
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let many = workflow("many", nodes, chain(&names));
    assert_eq!(error_kind(&validate(&c, &many).await), "bounds_exceeded");
    let mut big = say_program("hi");
    big["nodes"][1]["notes"] = json!("x".repeat(270_000));
    let r = validate(&c, &big).await;
    assert_eq!(error_kind(&r), "bounds_exceeded");
    assert_shape(&r.structured, "RequestError");
    assert_eq!(observable(&n, &n.a).await, before);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_validate_constraint_fallback_b() {
    // n8n/v1 validates natively: every finding of the adapter and every
    // refusal of n8n's it can meet has a rule, so no program reaches the
    // catch-all. The vector's native-tier form: `constraint` is in the
    // closed set, and the rule file keeps an unmatched message as it.
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    assert!(
        closed_codes(&c, N8N)
            .await
            .contains(&"constraint".to_string())
    );
    let text = std::fs::read_to_string(crate::common::repo_path("classifiers/n8n-v1.toml"))
        .expect("the rule file");
    assert!(
        text.contains("constraint"),
        "the rule file names its catch-all"
    );
}
