//! Learn vectors (Part II §6.2, Part III §4.1).

use crate::common::{LANG, STAGING, assert_shape};
use crate::support::{error_kind, session, with_topic};
use serde_json::json;

#[tokio::test(flavor = "multi_thread")]
async fn pil_learn_index_g() {
    let (_env, c) = session().await;
    let r = c
        .call("pilotage_get_guide", json!({"language": LANG}))
        .await;
    assert_shape(&r.structured, "GuideIndexResult");
    let guides = r.structured["guides"].as_array().unwrap();
    assert!(
        guides.iter().all(|g| g.get("body").is_none()),
        "index carries no body"
    );
    assert!(guides.iter().any(|g| g["level"] == "core"));
    let closed = with_topic(guides, "closed-sets");
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0]["level"], "reference");
    let core = guides.iter().find(|g| g["level"] == "core").unwrap();
    assert!(
        core["size_bytes"].as_u64().unwrap() <= 8192,
        "core guide under 8 KiB"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_learn_fetch_g() {
    let (_env, c) = session().await;
    let r = c
        .call(
            "pilotage_get_guide",
            json!({"language": LANG, "id": "core"}),
        )
        .await;
    assert_shape(&r.structured, "GuideFetchResult");
    let g = &r.structured["guide"];
    let body = g["body"].as_str().expect("body string");
    assert_eq!(g["format"], "text/markdown");
    assert_eq!(g["size_bytes"].as_u64().unwrap() as usize, body.len());
    // The topic form returns just one section.
    let t = c
        .call(
            "pilotage_get_guide",
            json!({"language": LANG, "id": "closed-sets", "topic": "scope-rules"}),
        )
        .await;
    assert!(!t.is_error);
    let section = t.structured["guide"]["body"].as_str().unwrap();
    assert!(section.contains("Scope") && section.len() < body.len() * 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_learn_unknown_id_b() {
    let (_env, c) = session().await;
    let r = c
        .call(
            "pilotage_get_guide",
            json!({"language": LANG, "id": "no-such-guide"}),
        )
        .await;
    assert_eq!(error_kind(&r), "not_found");
    assert_shape(&r.structured, "RequestError");
    assert!(
        r.structured["error"]["message"]
            .as_str()
            .unwrap()
            .contains("core"),
        "names the valid ids"
    );
    let r = c
        .call("pilotage_get_guide", json!({"language": "nope/v9"}))
        .await;
    assert_eq!(error_kind(&r), "not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_learn_topic_undeclared_b() {
    let (_env, c) = session().await;
    if !crate::support::staging_served("PIL-LEARN-TOPIC-UNDECLARED-B") {
        return;
    }
    let r = c
        .call(
            "pilotage_get_guide",
            json!({"language": STAGING, "id": "staging-closed-sets", "topic": "scope-rules"}),
        )
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
    assert_shape(&r.structured, "RequestError");
    // The same guide without topic works.
    let ok = c
        .call(
            "pilotage_get_guide",
            json!({"language": STAGING, "id": "staging-closed-sets"}),
        )
        .await;
    assert!(!ok.is_error);
}
