//! The gateway as an OAuth 2.1 resource server, through the HTTP endpoint:
//! tokens signed by keys each test generates, verified against a JWKS the
//! test serves on 127.0.0.1 (rotation included); RFC 9728 metadata and the
//! 401/403 challenges; permissions from scopes shaping `tools/list` and the
//! manifest; risk ceilings from the issuer and a claim refusing a destructive
//! program (inline and promoted) before any side effect.

#[path = "../common/mod.rs"]
mod common;
mod discovery;
mod front;
mod idp;
mod logs;
mod provider;
mod real_provider;

use common::{ACME_OPS, Mcp, TestEnv, valid_program};
use idp::{ALL_SCOPES, Jwks, Key, RESOURCE, claims, now};
use serde_json::{Value, json};

const ISSUER_A: &str = "https://idp-a.test";
const ISSUER_B: &str = "https://idp-b.test";

/// A gateway without anonymous access that trusts two issuers: A (tenant from
/// the `tenant` claim, ceiling from the `max_risk` claim) and B (every token
/// acts for acme, capped at `write`).
async fn gateway(a: &Jwks, b: &Jwks, refetch_secs: u64) -> TestEnv {
    let oauth = format!(
        r#"
resource = "{RESOURCE}"
jwks_refetch_secs = {refetch_secs}

[[issuer]]
issuer = "{ISSUER_A}"
jwks_uri = "{}"
algorithms = ["EdDSA"]
tenant_claim = "tenant"
max_risk_claim = "max_risk"

[[issuer]]
issuer = "{ISSUER_B}"
jwks_uri = "{}"
algorithms = ["EdDSA"]
tenant = "acme"
max_risk = "write"
"#,
        a.url, b.url
    );
    let engine = crate::common::dialect_engine();
    TestEnv::in_front_of(engine, "tests/fixtures/features.toml", |c| {
        c.auth.anonymous = false;
        c.auth.oauth = Some(toml::from_str(&oauth).expect("oauth config"));
    })
    .await
}

struct Setup {
    env: TestEnv,
    key_a: Key,
    key_b: Key,
    jwks_a: Jwks,
    jwks_b: Jwks,
}

async fn setup(refetch_secs: u64) -> Setup {
    let key_a = Key::generate("a-1");
    let key_b = Key::generate("b-1");
    let jwks_a = Jwks::serve(&[&key_a]).await;
    let jwks_b = Jwks::serve(&[&key_b]).await;
    let env = gateway(&jwks_a, &jwks_b, refetch_secs).await;
    Setup {
        env,
        key_a,
        key_b,
        jwks_a,
        jwks_b,
    }
}

impl Setup {
    /// A token of issuer A for `sub` in `tenant` with `scope`.
    fn token_a(&self, sub: &str, tenant: &str, scope: &str, extra: Value) -> String {
        let mut extra = extra;
        extra["tenant"] = json!(tenant);
        self.key_a.sign(&claims(ISSUER_A, sub, scope, extra))
    }

    fn client(&self, token: &str) -> Mcp {
        Mcp::new(&self.env.url, Some(token))
    }

    fn origin(&self) -> String {
        self.env.url.trim_end_matches("/mcp").to_string()
    }
}

fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "oauth-test", "version": "1"}}})
    .to_string()
}

/// HTTP status, the `WWW-Authenticate` header and the body of an initialize
/// sent with `token`.
async fn attempt(s: &Setup, token: Option<&str>) -> (u16, String, Value) {
    let (status, headers, body) = Mcp::new(&s.env.url, token).raw(&initialize_body()).await;
    let challenge = headers
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    (status, challenge, body)
}

const METADATA: &str =
    "resource_metadata=\"https://gateway.test/.well-known/oauth-protected-resource/mcp\"";

fn tool_names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unauthenticated_request_gets_401_with_the_metadata_pointer() {
    let s = setup(30).await;
    let (status, challenge, body) = attempt(&s, None).await;
    assert_eq!(status, 401, "{body}");
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(challenge.contains(METADATA), "{challenge}");
    assert!(
        !challenge.contains("error="),
        "no error code without credentials (RFC 6750 §3.1): {challenge}"
    );
    assert_eq!(body["jsonrpc"], "2.0", "a JSON-RPC error object: {body}");
    assert!(body["error"]["message"].is_string(), "{body}");
    let http = reqwest::Client::new();
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let doc: Value = http
            .get(format!("{}{path}", s.origin()))
            .send()
            .await
            .expect("metadata")
            .json()
            .await
            .expect("metadata JSON");
        assert_eq!(doc["resource"], RESOURCE, "{doc}");
        assert_eq!(
            doc["authorization_servers"],
            json!([ISSUER_A, ISSUER_B]),
            "{doc}"
        );
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]));
        let scopes = doc["scopes_supported"].as_array().expect("scopes");
        for p in ["learn", "validate", "execute", "deploy", "trace"] {
            assert!(scopes.contains(&json!(format!("pilotage:{p}"))), "{doc}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_valid_token_drives_the_loop_end_to_end_and_keys_keep_working() {
    let s = setup(30).await;
    let token = s.token_a("alice", "acme", ALL_SCOPES, json!({}));
    let mut c = s.client(&token);
    let init = c.initialize().await;
    assert_eq!(
        init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"]["languages"][0]["execution"],
        "both"
    );
    let guides = c
        .call("pilotage_get_guide", json!({"language": "workflow/v1"}))
        .await;
    assert!(!guides.is_error, "{}", guides.structured);
    let catalog = c
        .call(
            "pilotage_catalog",
            json!({"language": "workflow/v1", "verb": "get", "id": "crm.get_customer"}),
        )
        .await;
    assert_eq!(catalog.structured["entry"]["id"], "crm.get_customer");
    let v = c
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await;
    assert_eq!(v.structured["valid"], true, "{}", v.structured);
    let run = c
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "immediate", "input": {"id": "cus_1"},
                "store": true, "expected_catalog_version": v.structured["catalog_version"]}),
        )
        .await;
    assert_eq!(
        run.structured["outcome"]["status"], "success",
        "{}",
        run.structured
    );
    let fetched = c
        .call(
            "trace_workflow",
            json!({"run_id": run.structured["run_id"]}),
        )
        .await;
    assert_eq!(fetched.structured["run_id"], run.structured["run_id"]);
    // The session is bound to the token's subject: a fresh token of the same
    // subject keeps it, another subject's token with it is refused (404).
    let session = c.session.clone();
    let mut renewed = s.client(&s.token_a("alice", "acme", ALL_SCOPES, json!({"iat": now() + 1})));
    renewed.session = session.clone();
    let again = renewed
        .call(
            "trace_workflow",
            json!({"run_id": run.structured["run_id"]}),
        )
        .await;
    assert!(!again.is_error, "{}", again.structured);
    let mut other = s.client(&s.token_a("bob", "acme", ALL_SCOPES, json!({})));
    other.session = session;
    let (status, _, body) = other
        .raw(&json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}).to_string())
        .await;
    assert_eq!(status, 404, "{body}");
    // Static API keys work beside the tokens.
    let mut k = Mcp::new(&s.env.url, Some(ACME_OPS));
    k.initialize().await;
    let kv = k
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await;
    assert_eq!(kv.structured["valid"], true);
    let (status, _, _) = attempt(&s, Some("not-a-key-and-not-a-token")).await;
    assert_eq!(status, 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn expired_early_foreign_and_forged_tokens_get_401_invalid_token() {
    let s = setup(30).await;
    let stranger = Key::generate("a-1");
    let hs = {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256);
        header.typ = Some("at+jwt".into());
        header.kid = Some("a-1".into());
        jsonwebtoken::encode(
            &header,
            &claims(ISSUER_A, "h", ALL_SCOPES, json!({"tenant": "acme"})),
            &jsonwebtoken::EncodingKey::from_secret(b"shared-secret").expect("hmac key"),
        )
        .expect("hs256")
    };
    let plain_typ = {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
        header.kid = Some("a-1".into());
        header.typ = Some("JWT".into());
        s.key_a.sign_with(
            header,
            &claims(ISSUER_A, "x", ALL_SCOPES, json!({"tenant": "acme"})),
        )
    };
    let cases = [
        (
            "expired",
            s.token_a("x", "acme", ALL_SCOPES, json!({"exp": now() - 300})),
            "expired",
        ),
        (
            "not yet valid",
            s.token_a("x", "acme", ALL_SCOPES, json!({"nbf": now() + 600})),
            "nbf",
        ),
        (
            "wrong audience",
            s.token_a(
                "x",
                "acme",
                ALL_SCOPES,
                json!({"aud": "https://other.test/mcp"}),
            ),
            "aud",
        ),
        (
            "unknown issuer",
            s.key_a.sign(&claims(
                "https://evil.test",
                "x",
                ALL_SCOPES,
                json!({"tenant": "acme"}),
            )),
            "issuer",
        ),
        (
            "signed by an unpublished key under a published kid",
            stranger.sign(&claims(
                ISSUER_A,
                "x",
                ALL_SCOPES,
                json!({"tenant": "acme"}),
            )),
            "signature",
        ),
        ("an algorithm off the allow-list", hs, "algorithm"),
        (
            "a JWT that is not an access token (typ JWT)",
            plain_typ,
            "at+jwt",
        ),
        (
            "no tenant claim",
            s.key_a.sign(&claims(ISSUER_A, "x", ALL_SCOPES, json!({}))),
            "tenant",
        ),
        (
            "signed by issuer A's key but claiming issuer B",
            s.key_a.sign(&claims(ISSUER_B, "x", ALL_SCOPES, json!({}))),
            "signing key",
        ),
    ];
    for (what, token, says) in cases {
        let (status, challenge, body) = attempt(&s, Some(&token)).await;
        assert_eq!(status, 401, "{what}: {body}");
        assert!(
            challenge.contains("error=\"invalid_token\"") && challenge.contains(METADATA),
            "{what}: {challenge}"
        );
        let message = body["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains(says), "{what}: {message}");
    }
    // Inside the leeway an expired token still works: clocks drift.
    let skewed = s.token_a("x", "acme", ALL_SCOPES, json!({"exp": now() - 5}));
    let (status, _, body) = attempt(&s, Some(&skewed)).await;
    assert_eq!(status, 200, "{body}");
    let _ = s.key_b;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_token_without_learn_and_validate_gets_403_insufficient_scope() {
    let s = setup(30).await;
    let token = s.token_a("x", "acme", "pilotage:execute openid", json!({}));
    let (status, challenge, body) = attempt(&s, Some(&token)).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"pilotage:learn pilotage:validate\"")
            && challenge.contains(METADATA),
        "{challenge}"
    );
    // `scp` as a list is read too.
    let listed = s.key_a.sign(&claims(
        ISSUER_A,
        "x",
        "",
        json!({"tenant": "acme", "scp": ["pilotage:learn", "pilotage:validate"]}),
    ));
    let (status, _, body) = attempt(&s, Some(&listed)).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rotated_key_is_fetched_on_its_first_token_and_the_retired_one_refused() {
    let s = setup(0).await;
    let first = s.token_a("x", "acme", ALL_SCOPES, json!({}));
    assert_eq!(attempt(&s, Some(&first)).await.0, 200);
    assert_eq!(attempt(&s, Some(&first)).await.0, 200);
    assert_eq!(s.jwks_a.fetches(), 1, "the set is cached");
    let next = Key::generate("a-2");
    s.jwks_a.publish(&[&next]);
    let rotated = next.sign(&claims(
        ISSUER_A,
        "x",
        ALL_SCOPES,
        json!({"tenant": "acme"}),
    ));
    let (status, _, body) = attempt(&s, Some(&rotated)).await;
    assert_eq!(status, 200, "the new key is fetched: {body}");
    assert_eq!(s.jwks_a.fetches(), 2);
    let (status, _, body) = attempt(&s, Some(&first)).await;
    assert_eq!(status, 401, "the retired key no longer verifies: {body}");
}

/// A token of issuer A, for this resource and unexpired, signed by a key
/// the issuer never published under a made-up key id.
fn forged(kid: &str) -> String {
    Key::generate(kid).sign(&claims(
        ISSUER_A,
        "x",
        ALL_SCOPES,
        json!({"tenant": "acme"}),
    ))
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_key_ids_do_not_make_the_gateway_flood_the_issuer() {
    let s = setup(3600).await;
    let first = s.token_a("x", "acme", ALL_SCOPES, json!({}));
    assert_eq!(attempt(&s, Some(&first)).await.0, 200);
    assert_eq!(s.jwks_a.fetches(), 1);
    // Tokens whose audience or expiry is wrong never cause a fetch.
    for extra in [
        json!({"tenant": "acme", "aud": "https://other.test/mcp"}),
        json!({"tenant": "acme", "exp": now() - 3600}),
    ] {
        let token =
            Key::generate("made-up-implausible").sign(&claims(ISSUER_A, "x", ALL_SCOPES, extra));
        assert_eq!(attempt(&s, Some(&token)).await.0, 401);
    }
    assert_eq!(s.jwks_a.fetches(), 1, "implausible tokens fetch nothing");
    // Twenty made-up key ids at once: one fetch answers them all.
    let started = std::time::Instant::now();
    let mut attempts = tokio::task::JoinSet::new();
    for i in 0..20 {
        let (url, token) = (s.env.url.clone(), forged(&format!("made-up-{i}")));
        attempts.spawn(async move { Mcp::new(&url, Some(&token)).raw(&initialize_body()).await.0 });
    }
    let statuses = attempts.join_all().await;
    assert!(statuses.iter().all(|st| *st == 401), "{statuses:?}");
    assert!(
        s.jwks_a.fetches() <= 3,
        "at most one fetch per interval: {}",
        s.jwks_a.fetches()
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_eq!(attempt(&s, Some(&first)).await.0, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forged_key_id_cannot_hold_back_a_real_rotation() {
    let s = setup(3600).await;
    let first = s.token_a("x", "acme", ALL_SCOPES, json!({}));
    assert_eq!(attempt(&s, Some(&first)).await.0, 200);
    // A made-up key id makes the gateway fetch; the issuer rotates right
    // after, and the first token with the new key comes at once.
    assert_eq!(attempt(&s, Some(&forged("made-up"))).await.0, 401);
    let fetched = s.jwks_a.fetches();
    assert_eq!(fetched, 2, "the made-up key id was looked for");
    let next = Key::generate("a-2");
    s.jwks_a.publish(&[&s.key_a, &next]);
    let rotated = next.sign(&claims(
        ISSUER_A,
        "x",
        ALL_SCOPES,
        json!({"tenant": "acme"}),
    ));
    let started = std::time::Instant::now();
    let (status, _, body) = attempt(&s, Some(&rotated)).await;
    assert_eq!(status, 200, "the new key is fetched: {body}");
    assert!(
        started.elapsed() < std::time::Duration::from_millis(1500),
        "accepted within the refetch interval: {:?}",
        started.elapsed()
    );
    assert_eq!(s.jwks_a.fetches(), fetched + 1);
    // The same after another forged token arriving while the first waits.
    let third = Key::generate("a-3");
    s.jwks_a.publish(&[&s.key_a, &next, &third]);
    let rotated = third.sign(&claims(
        ISSUER_A,
        "x",
        ALL_SCOPES,
        json!({"tenant": "acme"}),
    ));
    let (forged_status, (status, _, body)) = tokio::join!(
        async { attempt(&s, Some(&forged("made-up-2"))).await.0 },
        async {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            attempt(&s, Some(&rotated)).await
        }
    );
    assert_eq!(forged_status, 401);
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_identity_provider_outage_keeps_known_keys_and_answers_503_without_them() {
    let s = setup(3600).await;
    let first = s.token_a("x", "acme", ALL_SCOPES, json!({}));
    assert_eq!(attempt(&s, Some(&first)).await.0, 200);
    s.jwks_a.fail(true);
    assert_eq!(
        attempt(&s, Some(&first)).await.0,
        200,
        "known keys keep working"
    );
    // Issuer B is down from the start: nothing can check its tokens.
    s.jwks_b.fail(true);
    let token_b = s.key_b.sign(&claims(ISSUER_B, "y", ALL_SCOPES, json!({})));
    for _ in 0..3 {
        let (status, challenge, body) = attempt(&s, Some(&token_b)).await;
        assert_eq!(status, 503, "{body}");
        assert!(
            challenge.is_empty(),
            "the token itself may be fine: {challenge}"
        );
        assert_eq!(body["jsonrpc"], "2.0", "{body}");
        // The caller learns that keys are missing, never where the gateway
        // fetches them from or what its HTTP client said.
        let message = body["error"]["message"].as_str().unwrap_or("");
        assert!(message.contains("cannot be checked"), "{body}");
        for internal in [s.jwks_b.url.as_str(), "127.0.0.1", "HTTP 500", "jwks"] {
            assert!(!message.contains(internal), "{internal} in {body}");
        }
    }
    assert_eq!(
        s.jwks_b.fetches(),
        1,
        "an outage is asked once per interval"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn one_tenants_token_cannot_tell_anothers_runs_from_none() {
    let s = setup(30).await;
    let ours = s.client(&s.token_a("alice", "acme", ALL_SCOPES, json!({})));
    let stored = ours
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "immediate",
                "input": {"id": "cus_1"}, "store": true}),
        )
        .await;
    assert_eq!(stored.structured["outcome"]["status"], "success");
    let run_id = stored.structured["run_id"].clone();
    let mine = ours.call("trace_workflow", json!({"run_id": run_id})).await;
    assert!(!mine.is_error);
    for other in [
        s.token_a("mallory", "globex", ALL_SCOPES, json!({})),
        s.token_a("bob", "acme", ALL_SCOPES, json!({})),
    ] {
        let c = s.client(&other);
        let theirs = c.call("trace_workflow", json!({"run_id": run_id})).await;
        let none = c
            .call(
                "trace_workflow",
                json!({"run_id": "run_00000000000000000000000000000000"}),
            )
            .await;
        assert_eq!(theirs.structured["error"]["kind"], "not_found");
        assert_eq!(
            theirs.raw["result"].to_string(),
            none.raw["result"].to_string(),
            "byte-identical"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_validate_only_token_is_offered_no_execute_deploy_or_trace() {
    let s = setup(30).await;
    let token = s.token_a("v", "acme", "pilotage:learn pilotage:validate", json!({}));
    let mut c = s.client(&token);
    let init = c.initialize().await;
    let tools = tool_names(&c.list_tools().await);
    assert_eq!(
        tools,
        vec![
            "pilotage_manifest",
            "pilotage_get_guide",
            "pilotage_catalog",
            "validate_workflow",
            "validate_staging_workflow"
        ]
    );
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    crate::common::assert_shape(&manifest, "Manifest");
    assert_eq!(
        init["_meta"]["io.github.jafarsa0/pilotage"]["manifest"], manifest,
        "initialize carries the same, filtered manifest"
    );
    for lang in manifest["languages"].as_array().expect("languages") {
        assert_eq!(lang["loop"].as_object().expect("loop").len(), 1, "{lang}");
        assert!(lang["loop"]["validate"].is_string());
        assert!(lang["capabilities"].get("execute").is_none(), "{lang}");
        assert!(lang["capabilities"].get("trace_fetch").is_none(), "{lang}");
        assert!(lang.get("execution").is_none() && lang.get("retention").is_none());
    }
    let v = c
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await;
    assert_eq!(v.structured["valid"], true);
    // A call anyway: the answer to a tool that does not exist.
    let hidden = c
        .rpc(
            "tools/call",
            json!({"name": "run_workflow", "arguments": {"workflow": valid_program()}}),
        )
        .await;
    let absent = c
        .rpc(
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
        )
        .await;
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    // Not even its argument schema answers: wrong types get the same reply.
    let mistyped = c
        .rpc(
            "tools/call",
            json!({"name": "run_workflow", "arguments": {"workflow": 5, "store": "yes"}}),
        )
        .await;
    assert_eq!(mistyped["error"], hidden["error"], "{mistyped}");
    assert_eq!(
        hidden["error"]["message"]
            .as_str()
            .map(|m| m.replace("run_workflow", "X")),
        absent["error"]["message"]
            .as_str()
            .map(|m| m.replace("no_such_tool", "X")),
    );
    let trace = c
        .rpc(
            "tools/call",
            json!({"name": "trace_workflow", "arguments": {"run_id": "run_1"}}),
        )
        .await;
    assert_eq!(trace["error"]["code"], -32602, "{trace}");
}

#[tokio::test(flavor = "multi_thread")]
async fn execute_without_deploy_is_immediate_only() {
    let s = setup(30).await;
    let scope = "pilotage:learn pilotage:validate pilotage:execute pilotage:trace";
    let c = s.client(&s.token_a("e", "acme", scope, json!({})));
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    crate::common::assert_shape(&manifest, "Manifest");
    assert_eq!(manifest["languages"][0]["execution"], "immediate");
    assert_eq!(manifest["languages"][0]["loop"]["trace"], "trace_workflow");
    let tools = c.list_tools().await;
    let run = tools
        .iter()
        .find(|t| t["name"] == "run_workflow")
        .expect("run_workflow");
    assert!(run["inputSchema"]["properties"].get("mode").is_none());
    let deploy = c
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "deploy"}),
        )
        .await;
    assert_eq!(
        deploy.structured["error"]["kind"], "invalid_request",
        "{}",
        deploy.structured
    );
    let ran = c
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "input": {"id": "cus_1"}}),
        )
        .await;
    assert_eq!(ran.structured["outcome"]["status"], "success");
}

fn delete_program() -> Value {
    json!({"name": "forget", "steps": [{"id": "forget", "kind": "call",
        "capability": "crm.delete_customer", "with": {"id": "cus_2"}}]})
}

#[tokio::test(flavor = "multi_thread")]
async fn a_destructive_program_is_refused_above_the_ceiling_and_runs_for_one_allowed() {
    let s = setup(30).await;
    let capped_b = s
        .key_b
        .sign(&claims(ISSUER_B, "writer", ALL_SCOPES, json!({})));
    let capped_a = s.token_a("writer", "acme", ALL_SCOPES, json!({"max_risk": "write"}));
    for token in [capped_b, capped_a] {
        let c = s.client(&token);
        let v = c
            .call("validate_workflow", json!({"workflow": delete_program()}))
            .await
            .structured;
        assert_eq!(v["valid"], false, "{v}");
        let d = &v["diagnostics"][0];
        assert_eq!(d["code"], "risk_ceiling", "{v}");
        assert_eq!(d["path"], "/steps/0");
        assert!(
            d["message"]
                .as_str()
                .unwrap_or("")
                .contains("max_risk \"write\""),
            "{d}"
        );
        let before = s.env.engine.digest("acme").await;
        let r = c
            .call(
                "run_workflow",
                json!({"workflow": delete_program(), "mode": "immediate"}),
            )
            .await
            .structured;
        assert_eq!(r["outcome"]["status"], "validation_error", "{r}");
        assert_eq!(r["diagnostics"][0]["code"], "risk_ceiling");
        assert_eq!(
            s.env.engine.digest("acme").await,
            before,
            "refused before any side effect"
        );
        // Within the ceiling the same caller writes.
        let w = c
            .call(
                "run_workflow",
                json!({"workflow": crate::common::write_program("gold"), "mode": "immediate"}),
            )
            .await
            .structured;
        assert_eq!(w["outcome"]["status"], "success", "{w}");
    }
    let before = s.env.engine.digest("acme").await;
    let allowed = s.client(&s.token_a("admin", "acme", ALL_SCOPES, json!({})));
    let r = allowed
        .call(
            "run_workflow",
            json!({"workflow": delete_program(), "mode": "immediate"}),
        )
        .await
        .structured;
    assert_eq!(r["outcome"]["status"], "success", "{r}");
    assert_eq!(r["output"], json!({"id": "cus_2", "deleted": true}), "{r}");
    assert_ne!(
        s.env.engine.digest("acme").await,
        before,
        "the customer is gone"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_promoted_program_is_checked_against_todays_ceiling_at_execute() {
    let s = setup(30).await;
    let free = s.client(&s.token_a("ops", "acme", ALL_SCOPES, json!({})));
    let deployed = free
        .call(
            "run_workflow",
            json!({"workflow": delete_program(), "mode": "deploy"}),
        )
        .await
        .structured;
    let program_ref = deployed["output"]["program_ref"].clone();
    assert!(program_ref.is_string(), "{deployed}");
    let before = s.env.engine.digest("acme").await;
    // The same subject, now with a token capped at write.
    let capped = s.client(&s.token_a("ops", "acme", ALL_SCOPES, json!({"max_risk": "write"})));
    let r = capped
        .call(
            "run_workflow",
            json!({"program_ref": program_ref, "mode": "immediate"}),
        )
        .await
        .structured;
    assert_eq!(r["outcome"]["status"], "validation_error", "{r}");
    assert_eq!(r["diagnostics"][0]["code"], "risk_ceiling", "{r}");
    assert_eq!(s.env.engine.digest("acme").await, before, "nothing ran");
    let r = free
        .call(
            "run_workflow",
            json!({"program_ref": program_ref, "mode": "immediate"}),
        )
        .await
        .structured;
    assert_eq!(r["outcome"]["status"], "success", "{r}");
    assert_ne!(s.env.engine.digest("acme").await, before);
}
