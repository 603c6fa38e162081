//! The `mistral/v2` vectors of the catalog (lookup, versions, visibility).

use super::*;

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
