//! validate asks n8n itself what it refuses when a workflow is created,
//! through the HTTP endpoint of a gateway in front of a real n8n: a program
//! n8n refuses at create is invalid at validate with a closed code at the
//! member n8n names, exactly as execute then meets it; a program n8n takes
//! is valid; nothing stays behind in n8n, and a probe an earlier gateway
//! left behind is removed.

use crate::common::answers::status;
use crate::common::n8n_gateway::{N8nEnv, run, say_program, validate};
use serde_json::json;

/// A probe's name as the adapter makes them (`pilotage-probe-` + 16 hex).
const LEFTOVER: &str = "pilotage-probe-0000000000000000";

#[tokio::test(flavor = "multi_thread")]
async fn validate_refuses_what_n8n_refuses_at_create_and_leaves_nothing() {
    let env = N8nEnv::start().await;
    let n8n_key = env.a.n8n_key.clone();
    // A probe left behind by a gateway that stopped between create and delete.
    let mut leftover = say_program("left behind");
    leftover["name"] = json!(LEFTOVER);
    let (code, created) = env.n8n.create_workflow(&leftover, &n8n_key).await;
    assert_eq!(code, 200, "{created}");
    let c = env.session(&env.a).await;

    // n8n's own schema refuses this setting; the gateway's checks do not know it.
    let mut refused = say_program("refused");
    refused["settings"] = json!({"saveDataErrorExecution": "sometimes"});
    let verdict = validate(&c, &refused).await;
    assert_eq!(verdict.structured["valid"], false, "{}", verdict.structured);
    let d = &verdict.structured["diagnostics"][0];
    assert_eq!(d["code"], "invalid_value", "{d}");
    assert_eq!(d["path"], "/settings/saveDataErrorExecution", "{d}");

    // execute meets the same refusal: validate and execute agree.
    let ran = run(&c, &refused, json!({})).await;
    assert_eq!(status(&ran), "validation_error", "{}", ran.structured);

    // What n8n takes is valid.
    let fine = validate(&c, &say_program("fine")).await;
    assert_eq!(fine.structured["valid"], true, "{}", fine.structured);

    // Nothing of the probes stays, the earlier leftover included.
    let left: Vec<String> = env
        .n8n
        .gateway_workflows(&n8n_key)
        .await
        .into_iter()
        .filter(|n| n.starts_with("pilotage-probe-"))
        .collect();
    assert!(left.is_empty(), "probes left in n8n: {left:?}");
}
