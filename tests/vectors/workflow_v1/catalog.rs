//! Lookup vectors (Part II §5.4, §6.3, Part III §4.2).

use crate::common::{GLOBEX, LANG, STAGING, assert_shape, valid_program};
use crate::support::{catalog_version, error_kind, run, session, validate};
use serde_json::{Value, json};
use std::collections::BTreeSet;

#[tokio::test(flavor = "multi_thread")]
async fn pil_lookup_list_g() {
    let (_env, c) = session().await;
    let r = c
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "list"}),
        )
        .await;
    assert_shape(&r.structured, "CatalogListResult");
    assert!(
        r.structured["catalog_version"]
            .as_str()
            .unwrap()
            .starts_with("cv_")
    );
    let items = r.structured["items"].as_array().unwrap();
    assert!(!items.is_empty());
    for e in items {
        assert_shape(e, "CatalogEntry");
        assert!(e["risk"].is_string() && e["risk_hints"].is_object(), "{e}");
        // Volatile engine fields never reach an entry.
        assert!(e.get("usage_count").is_none() && e.get("updated_at").is_none());
    }
}

/// Every entry id visible to the caller, by following cursors.
async fn all_ids(c: &crate::common::Mcp, limit: Option<u64>) -> Vec<String> {
    let mut ids = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..100 {
        let mut args = json!({"language": LANG, "verb": "list"});
        if let Some(l) = limit {
            args["limit"] = json!(l);
        }
        if let Some(cur) = &cursor {
            args["cursor"] = json!(cur);
        }
        let r = c.call("pilotage_catalog", args).await;
        assert!(!r.is_error, "{}", r.structured);
        for e in r.structured["items"].as_array().unwrap() {
            ids.push(e["id"].as_str().unwrap().to_string());
        }
        match r.structured["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => return ids,
        }
    }
    panic!("pagination did not end");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_lookup_pagination_g() {
    let (_env, c) = session().await;
    let first = c
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "list", "limit": 1}),
        )
        .await;
    assert_eq!(first.structured["items"].as_array().unwrap().len(), 1);
    assert!(
        first.structured["next_cursor"].is_string(),
        "more results remain"
    );
    let paged = all_ids(&c, Some(1)).await;
    let big_pages = all_ids(&c, None).await;
    let unique: BTreeSet<_> = paged.iter().collect();
    assert_eq!(unique.len(), paged.len(), "no entry twice");
    assert_eq!(
        paged, big_pages,
        "pages of 1 cover exactly what larger pages cover"
    );
    assert!(
        paged.len() >= 11,
        "every visible capability listed: {paged:?}"
    );
    // A forged cursor is a request error, not a crash.
    let bad = c
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "list", "cursor": "cur_forged"}),
        )
        .await;
    assert_eq!(error_kind(&bad), "invalid_request");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_lookup_get_unknown_b() {
    let (_env, c) = session().await;
    let r = c
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "get", "id": "no-such-entry"}),
        )
        .await;
    assert_eq!(error_kind(&r), "not_found");
    assert_shape(&r.structured, "RequestError");
    assert!(
        r.structured["catalog_version"]
            .as_str()
            .unwrap()
            .starts_with("cv_")
    );
    let ok = c
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "get", "id": "util.echo"}),
        )
        .await;
    assert_shape(&ok.structured, "CatalogGetResult");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_lookup_changed_undeclared_b() {
    let (_env, c) = session().await;
    if crate::support::staging_served("PIL-LOOKUP-CHANGED-UNDECLARED-B") {
        let token = catalog_version(&c).await;
        let r = c
            .call(
                "pilotage_catalog",
                json!({"language": STAGING, "verb": "changed_since", "catalog_version": token}),
            )
            .await;
        assert_eq!(error_kind(&r), "invalid_request");
        assert_shape(&r.structured, "RequestError");
        // Search is undeclared for the staging language.
        let r = c
            .call(
                "pilotage_catalog",
                json!({"language": STAGING, "verb": "list", "q": "echo"}),
            )
            .await;
        assert_eq!(error_kind(&r), "invalid_request");
    }
    // A member that does not apply to the verb is also invalid_request.
    let r = c
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "list", "id": "util.echo"}),
        )
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
    assert_shape(&r.structured, "RequestError");
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_lookup_unknown_baseline_b() {
    let (_env, c) = session().await;
    let r = c
        .call("pilotage_catalog", json!({"language": LANG, "verb": "changed_since", "catalog_version": "cv_unknown_baseline"}))
        .await;
    assert_eq!(error_kind(&r), "unknown_baseline");
    assert_shape(&r.structured, "RequestError");
    // The current token is a known baseline with no changes.
    let token = catalog_version(&c).await;
    let same = c
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "changed_since", "catalog_version": token}),
        )
        .await;
    assert_shape(&same.structured, "CatalogChangedResult");
    assert_eq!(same.structured["changes"], json!([]));
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_catalog_version_stable_g() {
    let (_env, c) = session().await;
    let a = catalog_version(&c).await;
    // A run moves the engine's usage counters; the token must not move.
    let r = run(&c, valid_program(), json!({"input": {"id": "cus_1"}})).await;
    assert_eq!(
        r.structured["outcome"]["status"], "success",
        "{}",
        r.structured
    );
    let b = catalog_version(&c).await;
    assert_eq!(a, b);
    // Another caller with the same visible catalog gets the same token.
    let other = crate::common::Mcp::new(&c.url, Some(crate::common::ACME_OPS));
    assert_eq!(catalog_version(&other).await, a);
    // A caller with a different visible catalog gets another token.
    let globex = crate::common::Mcp::new(&c.url, Some(GLOBEX));
    assert_ne!(catalog_version(&globex).await, a);
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_catalog_version_bumps_g() {
    let (env, c) = session().await;
    let before = catalog_version(&c).await;
    let mut cap: Value = env.engine.capability("acme", "util.echo").await;
    cap["doc"] = json!("Echo a value back (edited)");
    env.engine
        .put_capability("util.echo", &cap, Some("acme"))
        .await;
    let after = catalog_version(&c).await;
    assert_ne!(
        before, after,
        "a visible description change moves catalog_version"
    );
    let changes = c
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "changed_since", "catalog_version": before}),
        )
        .await;
    assert_eq!(
        changes.structured["changes"],
        json!([{"id": "util.echo", "change": "modified"}])
    );
    // Validate answers with the new token too.
    let v = validate(&c, valid_program()).await;
    assert_eq!(v.structured["catalog_version"], json!(after));
    // A change invisible to globex does not move globex's token.
    let g = crate::common::Mcp::new(&c.url, Some(GLOBEX));
    let g1 = catalog_version(&g).await;
    let mut mail = env.engine.capability("acme", "mail.send").await;
    mail["doc"] = json!("changed for acme only");
    env.engine
        .put_capability("mail.send", &mail, Some("acme"))
        .await;
    assert_eq!(catalog_version(&g).await, g1);
    env.engine.reset().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_authz_invisible_entry_b() {
    let (_env, _c) = session().await;
    let g = crate::common::Mcp::new(&_c.url, Some(GLOBEX));
    let hidden = g
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "get", "id": "mail.send"}),
        )
        .await;
    let absent = g
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "get", "id": "mail.sendx"}),
        )
        .await;
    assert_eq!(error_kind(&hidden), "not_found");
    assert_eq!(
        hidden.raw["result"], absent.raw["result"],
        "invisible and nonexistent are indistinguishable"
    );
    // No hint ever names the invisible entry, and validation cannot tell the two apart.
    let prog = |cap: &str| {
        json!({"steps": [{"id": "m", "kind": "call", "capability": cap,
        "with": {"to": "a@b.c", "subject": "s", "body": "b"}}]})
    };
    let v_hidden = g
        .call("validate_workflow", json!({"workflow": prog("mail.send")}))
        .await;
    let v_near = g
        .call("validate_workflow", json!({"workflow": prog("mail.sen")}))
        .await;
    assert_eq!(v_hidden.structured["valid"], false);
    let diags = v_hidden.structured["diagnostics"].as_array().unwrap();
    assert_eq!(
        diags.len(),
        1,
        "only the unknown name is reported: {diags:?}"
    );
    assert_eq!(diags[0]["code"], "unknown_capability");
    assert_eq!(diags[0]["message"], "unknown capability 'mail.send'");
    let all = format!("{}{}", v_hidden.raw, v_near.raw);
    assert!(
        !all.contains("mail.send'?")
            && !v_near
                .raw
                .to_string()
                .contains("\"hint\":\"close match: mail.send")
    );
    let near_diags = v_near.structured["diagnostics"].as_array().unwrap();
    assert_eq!(near_diags.len(), 1);
    assert_eq!(near_diags[0]["message"], "unknown capability 'mail.sen'");
    assert_eq!(diags[0].get("hint"), near_diags[0].get("hint"));
    // The engine's global "did you mean" never reaches the caller.
    let typo = g
        .call("validate_workflow", json!({"workflow": prog("mail.sendd")}))
        .await;
    assert!(!typo.raw.to_string().contains("mail.send'"), "{}", typo.raw);
}
