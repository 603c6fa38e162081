//! The `mistral/v2` vectors of traces (decisions, loops, partial runs).

use super::*;

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
