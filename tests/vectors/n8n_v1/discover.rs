//! The `n8n/v1` vectors of discover and learn.

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn pil_discover_manifest_g() {
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    assert_shape(&manifest, "ManifestToolOutput");
    let lang = manifest["languages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == N8N)
        .expect("n8n/v1 declared")
        .clone();
    let tools = tool_names(&c).await;
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
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_learn_index_g() {
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    let r = c.call("pilotage_get_guide", json!({"language": N8N})).await;
    let guides = r.structured["guides"].as_array().unwrap();
    assert!(guides.iter().all(|g| g.get("body").is_none()));
    assert!(guides.iter().any(|g| g["level"] == "core"));
    let closed = with_topic(guides, "closed-sets");
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0]["level"], "reference");
    let core = guides.iter().find(|g| g["level"] == "core").unwrap();
    assert!(core["size_bytes"].as_u64().unwrap() < 8192, "{core}");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_learn_fetch_g() {
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    let r = c
        .call(
            "pilotage_get_guide",
            json!({"language": N8N, "id": "examples"}),
        )
        .await;
    assert!(!r.is_error, "{}", r.structured);
    assert_eq!(r.structured["guide"]["format"], "text/markdown");
    assert!(
        r.structured["guide"]["body"]
            .as_str()
            .unwrap()
            .contains("```json workflow")
    );
    let topic = c
        .call(
            "pilotage_get_guide",
            json!({"language": N8N, "id": "closed-sets", "topic": "trace-ids"}),
        )
        .await;
    assert!(
        topic.structured["guide"]["body"]
            .as_str()
            .unwrap()
            .contains("the node's name")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_learn_unknown_id_b() {
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    let r = c
        .call(
            "pilotage_get_guide",
            json!({"language": N8N, "id": "no-such-guide"}),
        )
        .await;
    assert_eq!(error_kind(&r), "not_found");
    assert_shape(&r.structured, "RequestError");
}
