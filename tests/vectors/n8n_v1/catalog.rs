//! The `n8n/v1` vectors of the catalog (lookup, versions).

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn pil_lookup_list_g() {
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
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
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    // A search narrows n8n's several hundred node types to less than a
    // page: Loop Over Items (splitInBatches) and Split Out.
    let query = json!({"verb": "list", "q": "n8n-nodes-base.split", "limit": 50});
    let all: Vec<String> = catalog(&c, query).await.structured["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert!(all.len() > 1, "{all:?}");
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..(all.len() + 2) {
        let mut args = json!({"verb": "list", "q": "n8n-nodes-base.split", "limit": 1});
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
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    let r = catalog(
        &c,
        json!({"verb": "get", "id": "n8n-nodes-base.noSuchNode"}),
    )
    .await;
    assert_eq!(error_kind(&r), "not_found");
    assert!(r.structured["catalog_version"].is_string());
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_catalog_version_stable_g() {
    let n = N8nEnv::start().await;
    let c = n.anonymous_session().await;
    assert_eq!(catalog_version(&c).await, catalog_version(&c).await);
    // Two tenants of one n8n see the same node types.
    let a = n.session(&n.a).await;
    let b = n.session(&n.b).await;
    let entry = |c: Mcp| async move {
        catalog(&c, json!({"verb": "get", "id": "n8n-nodes-base.set"}))
            .await
            .structured["entry"]
            .clone()
    };
    assert_eq!(entry(a).await, entry(b).await);
}
