//! The `n8n/v1` vectors of traces (decisions, partial runs).

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_branch_decision_g() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let program = route_program();
    let v = validate(&c, &program).await;
    assert_eq!(v.structured["valid"], true, "{}", v.structured);
    let plan = v.structured["plan"]["steps"].as_array().unwrap().clone();
    let arm = |id: &str| {
        plan.iter()
            .find(|s| s["id"] == id)
            .unwrap_or_else(|| panic!("{id} in the plan {plan:?}"))["arm"]
            .clone()
    };
    let (big, small) = (arm("Big"), arm("Small"));
    // The If's two outputs are one branch, an arm each.
    assert_eq!(big["branch"], small["branch"], "{plan:?}");
    assert_ne!(big["label"], small["label"], "{plan:?}");
    let branch = big["branch"].as_str().unwrap().to_string();
    for (amount, taken, absent) in [(250, "Big", "Small"), (5, "Small", "Big")] {
        let r = run(
            &c,
            &program,
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
        assert!(decisions[0]["because"].is_string(), "{entry}");
        assert!(steps.iter().any(|s| s["id"] == taken));
        assert!(
            steps.iter().all(|s| s["id"] != absent),
            "untaken arm absent"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_trace_partial_b() {
    let n = N8nEnv::start().await;
    let c = n.session(&n.a).await;
    let r = run(&c, &second_fails_program(), json!({"trace_level": "full"})).await;
    assert_eq!(status(&r), "partial", "{}", r.structured);
    assert_eq!(r.structured["outcome"]["ok"], false);
    let ids: Vec<&str> = r.structured["trace"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        ["Start", "Write", "Boom"],
        "the executed prefix, in order"
    );
    assert!(
        r.structured["outcome"]["error"]
            .as_str()
            .unwrap()
            .contains("card declined")
    );
}
