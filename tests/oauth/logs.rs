//! What the real `pilotage-gateway serve` binary logs about refused tokens,
//! and what it keeps from the caller: every refusal's reason as structured
//! fields (`auth_refusal`, `detail`) without the token itself; an
//! unreachable key set answered 503 without its address or the HTTP
//! client's error, which the log keeps.

use super::common::ports::free_port;
use super::common::served::Served;
use super::common::{Engine, Mcp, repo_path};
use super::idp::{ALL_SCOPES, Jwks, Key, RESOURCE, claims};
use serde_json::json;

const GOOD_ISSUER: &str = "https://idp-logs.test";
const DOWN_ISSUER: &str = "https://idp-down.test";

/// `serve` with the conformance configuration plus `oauth` (TOML), in
/// front of `engine`, without Redis.
fn start(engine: &Engine, oauth: &str) -> Served {
    let text = std::fs::read_to_string(repo_path("tests/fixtures/features.toml"))
        .expect("conformance config");
    Served::spawn(
        &format!("{text}\n{oauth}"),
        &[
            ("PILOTAGE_ENGINE_URL", &engine.url),
            ("PILOTAGE_REDIS_URL", ""),
        ],
    )
}

async fn initialize(base: &str, token: &str) -> (u16, String) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "oauth-logs-test", "version": "1"}}});
    let (status, headers, value) = Mcp::new(&format!("{base}/mcp"), Some(token))
        .raw(&body.to_string())
        .await;
    let challenge = headers
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    (status, format!("{challenge}\n{value}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn refusals_are_logged_with_their_reason_and_internal_addresses_stay_in_the_log() {
    let key = Key::generate("logs-1");
    let jwks = Jwks::serve(&[&key]).await;
    // Nothing listens there: the key set of this issuer cannot be fetched.
    let down = format!("http://127.0.0.1:{}/internal/keys", free_port());
    let oauth = format!(
        r#"
[auth.oauth]
resource = "{RESOURCE}"

[[auth.oauth.issuer]]
issuer = "{GOOD_ISSUER}"
jwks_uri = "{}"
algorithms = ["EdDSA"]
tenant = "acme"

[[auth.oauth.issuer]]
issuer = "{DOWN_ISSUER}"
jwks_uri = "{down}"
algorithms = ["EdDSA"]
tenant = "acme"
"#,
        jwks.url
    );
    let engine = Engine::spawn(&[]);
    let served = start(&engine, &oauth);

    let wrong_audience = key.sign(&claims(
        GOOD_ISSUER,
        "mallory",
        ALL_SCOPES,
        json!({"aud": "https://elsewhere.test/mcp"}),
    ));
    let (status, _) = initialize(&served.base, &wrong_audience).await;
    assert_eq!(status, 401);
    let line = served.wait_line(|l| l["auth_refusal"] == "invalid_token");
    let detail = line["detail"].as_str().unwrap_or("");
    assert!(detail.contains("aud"), "{line}");

    let for_down = key.sign(&claims(DOWN_ISSUER, "bob", ALL_SCOPES, json!({})));
    let (status, answer) = initialize(&served.base, &for_down).await;
    assert_eq!(status, 503, "{answer}");
    let port = down.trim_start_matches("http://127.0.0.1:");
    for internal in [
        down.as_str(),
        "/internal/keys",
        port,
        "error sending request",
        "onnect",
    ] {
        assert!(
            !answer.contains(internal),
            "'{internal}' reaches the caller: {answer}"
        );
    }
    served.wait_line(|l| l["auth_refusal"] == "keys_unavailable");
    let kept = served.wait_line(|l| l["uri"] == down.as_str());
    assert!(kept["reason"].is_string(), "{kept}");

    // No token ever reaches the log, whole or in part.
    let log = served.lines().join("\n");
    for token in [&wrong_audience, &for_down] {
        let signature = token.rsplit('.').next().unwrap_or("");
        assert!(!log.contains(signature), "a token in the log:\n{log}");
    }
}
