//! Against a real OpenID provider (`oidc-provider`): its key set found by
//! discovery from the issuer URL alone, its RFC 9068 access tokens driving
//! the loop, and a JWT of typ `JWT` from the same issuer, audience and key
//! refused unless the issuer is configured not to require `at+jwt`.

use super::common::{Mcp, TestEnv, valid_program};
use super::idp::{ALL_SCOPES, RESOURCE};
use super::provider::{AGENT, PLAIN_JWT, Provider, header};
use serde_json::{Value, json};

/// A gateway trusting `issuer` with no `jwks_uri`: the keys are discovered.
pub async fn gateway(issuer: &str, resource: &str, require_at_jwt_typ: bool) -> TestEnv {
    gateway_with(issuer, resource, require_at_jwt_typ, "RS256").await
}

/// Like [`gateway`], accepting `algorithm` only.
pub async fn gateway_with(
    issuer: &str,
    resource: &str,
    require_at_jwt_typ: bool,
    algorithm: &str,
) -> TestEnv {
    let oauth = format!(
        r#"
resource = "{resource}"

[[issuer]]
issuer = "{issuer}"
tenant_claim = "tenant"
require_at_jwt_typ = {require_at_jwt_typ}
algorithms = ["{algorithm}"]
"#
    );
    TestEnv::in_front_of(
        crate::common::dialect_engine(),
        "tests/fixtures/features.toml",
        |c| {
            c.auth.anonymous = false;
            c.auth.oauth = Some(toml::from_str(&oauth).expect("oauth config"));
        },
    )
    .await
}

/// validate → run (stored) → trace with `client`; returns the run id.
pub async fn drive_the_loop(client: &mut Mcp) -> Value {
    let init = client.initialize().await;
    // `mode` is asked for exactly when the token may also deploy.
    let both = init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"]["languages"][0]["execution"]
        == "both";
    let v = client
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await;
    assert_eq!(v.structured["valid"], true, "{}", v.structured);
    let mut args = json!({"workflow": valid_program(), "input": {"id": "cus_1"},
        "store": true, "expected_catalog_version": v.structured["catalog_version"]});
    if both {
        args["mode"] = json!("immediate");
    }
    let run = client.call("run_workflow", args).await;
    assert_eq!(
        run.structured["outcome"]["status"], "success",
        "{}",
        run.structured
    );
    let trace = client
        .call(
            "trace_workflow",
            json!({"run_id": run.structured["run_id"]}),
        )
        .await;
    assert!(!trace.is_error, "{}", trace.structured);
    assert_eq!(trace.structured["run_id"], run.structured["run_id"]);
    run.structured["run_id"].clone()
}

async fn status_of(url: &str, token: &str) -> (u16, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "oauth-test", "version": "1"}}});
    let (status, _, value) = Mcp::new(url, Some(token)).raw(&body.to_string()).await;
    (status, value)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_discovered_provider_s_access_token_drives_the_loop() {
    let provider = Provider::start(RESOURCE);
    let env = gateway(&provider.issuer, RESOURCE, true).await;
    let token = provider.token(AGENT, ALL_SCOPES, RESOURCE).await;
    assert_eq!(header(&token)["typ"], "at+jwt", "{}", header(&token));
    let mut client = Mcp::new(&env.url, Some(&token));
    drive_the_loop(&mut client).await;
    // The provider's scopes shape what a narrower token is offered.
    let narrow = provider
        .token(AGENT, "pilotage:learn pilotage:validate", RESOURCE)
        .await;
    let mut c = Mcp::new(&env.url, Some(&narrow));
    c.initialize().await;
    let names: Vec<String> = c
        .list_tools()
        .await
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect();
    assert!(
        names.contains(&"validate_workflow".to_string()),
        "{names:?}"
    );
    assert!(!names.contains(&"run_workflow".to_string()), "{names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_jwt_of_typ_jwt_is_no_access_token_unless_the_issuer_is_told_so() {
    let provider = Provider::start(RESOURCE);
    let strict = gateway(&provider.issuer, RESOURCE, true).await;
    let lenient = gateway(&provider.issuer, RESOURCE, false).await;
    let plain = provider.token(PLAIN_JWT, ALL_SCOPES, RESOURCE).await;
    assert_eq!(header(&plain)["typ"], "JWT", "{}", header(&plain));
    let (status, body) = status_of(&strict.url, &plain).await;
    assert_eq!(status, 401, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("at+jwt"), "{message}");
    // Everything else about it is right: with the switch off it is accepted.
    let (status, body) = status_of(&lenient.url, &plain).await;
    assert_eq!(status, 200, "{body}");
    let proper = provider.token(AGENT, ALL_SCOPES, RESOURCE).await;
    assert_eq!(status_of(&strict.url, &proper).await.0, 200);
}
