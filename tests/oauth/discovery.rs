//! RFC 8414 discovery when the issuer publishes no OpenID configuration:
//! an authorization server on 127.0.0.1 whose issuer URL has a path, serving
//! only `/.well-known/oauth-authorization-server/<path>` and its JWKS. A
//! metadata document naming another issuer is not followed.

use super::common::Mcp;
use super::idp::{ALL_SCOPES, Key, RESOURCE, claims};
use super::real_provider::gateway_with;
use axum::http::StatusCode;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// An authorization server at `http://127.0.0.1:<port>/tenants/acme` whose
/// metadata says it is `claimed_issuer` (its own URL when `None`).
struct AuthorizationServer {
    issuer: String,
    metadata_fetches: Arc<AtomicUsize>,
}

async fn serve(key: &Key, claimed_issuer: Option<&str>) -> AuthorizationServer {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let issuer = format!("{base}/tenants/acme");
    let doc = json!({
        "issuer": claimed_issuer.unwrap_or(&issuer),
        "jwks_uri": format!("{base}/keys"),
        "token_endpoint": format!("{base}/token"),
    });
    let jwks = json!({"keys": [key.jwk()]});
    let fetches = Arc::new(AtomicUsize::new(0));
    let counted = fetches.clone();
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-authorization-server/tenants/acme",
            axum::routing::get(move || {
                counted.fetch_add(1, Ordering::SeqCst);
                let doc = doc.clone();
                async move { axum::Json(doc) }
            }),
        )
        .route(
            "/keys",
            axum::routing::get(move || {
                let jwks = jwks.clone();
                async move { axum::Json(jwks) }
            }),
        )
        .fallback(|| async { StatusCode::NOT_FOUND });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    AuthorizationServer {
        issuer,
        metadata_fetches: fetches,
    }
}

fn token(key: &Key, issuer: &str) -> String {
    key.sign(&claims(
        issuer,
        "disc",
        ALL_SCOPES,
        json!({"tenant": "acme"}),
    ))
}

async fn initialize(url: &str, token: &str) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "oauth-test", "version": "1"}}});
    let (status, _, value) = Mcp::new(url, Some(token)).raw(&body.to_string()).await;
    (status, value)
}

#[tokio::test(flavor = "multi_thread")]
async fn without_openid_configuration_the_rfc8414_metadata_names_the_keys() {
    let key = Key::generate("disc-1");
    let server = serve(&key, None).await;
    let env = gateway_with(&server.issuer, RESOURCE, true, "EdDSA").await;
    let t = token(&key, &server.issuer);
    let (status, body) = initialize(&env.url, &t).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(initialize(&env.url, &t).await.0, 200);
    assert_eq!(
        server.metadata_fetches.load(Ordering::SeqCst),
        1,
        "the metadata is read once, then the key set is cached"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_naming_another_issuer_is_not_followed() {
    let key = Key::generate("disc-2");
    let server = serve(&key, Some("https://someone-else.test")).await;
    let env = gateway_with(&server.issuer, RESOURCE, true, "EdDSA").await;
    let (status, body) = initialize(&env.url, &token(&key, &server.issuer)).await;
    assert_eq!(status, 503, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or("");
    assert!(
        !message.contains("127.0.0.1") && !message.contains("someone-else"),
        "no internal address or metadata detail reaches the caller: {message}"
    );
}
