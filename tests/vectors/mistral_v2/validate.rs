//! The `mistral/v2` vectors of validate.

use super::*;

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
    assert!(
        closed_codes(&c, MISTRAL)
            .await
            .contains(&"constraint".to_string())
    );
}
