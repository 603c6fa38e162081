//! Transport and discovery through the real endpoint (Part III §1–3, §7.1,
//! §8): protocol revisions, signed sessions, carrier errors on both sides of
//! the nesting bound, body limits, authentication, health and readiness.

use crate::common::{ACME_AUDIT, ACME_OPS, Mcp, TestEnv, assert_shape, nested, valid_program};
use serde_json::{Value, json};

const EXT: &str = "io.github.jafarsa0/pilotage";

#[tokio::test(flavor = "multi_thread")]
async fn handshake_revisions_initialize_and_serve_tools() {
    let env = TestEnv::start().await;
    for revision in ["2025-06-18", "2025-11-25"] {
        let mut c = env.anonymous();
        c.protocol = revision.into();
        let init = c.initialize().await;
        assert_eq!(init["protocolVersion"], revision);
        assert!(init["capabilities"]["extensions"][EXT].is_object());
        assert_shape(&init["_meta"][EXT], "InitializeMetaValue");
        let tools = c.list_tools().await;
        assert!(tools.iter().any(|t| t["name"] == "pilotage_manifest"));
        for t in &tools {
            let name = t["name"].as_str().unwrap();
            assert!(
                t["outputSchema"]["anyOf"].is_array(),
                "{name}: anyOf output schema"
            );
            if name.starts_with("validate_") || name.starts_with("run_") {
                assert_shape(&t["_meta"][EXT], "ProgramDeclaration");
            }
        }
        let m = c.call("pilotage_manifest", json!({})).await;
        assert_eq!(m.structured, init["_meta"][EXT]["manifest"]);
    }
}

fn stateless_meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXT: {}}}})
}

/// POSTs one stateless (2026-07-28) request.
async fn stateless(url: &str, method: &str, mut params: Value, name: Option<&str>) -> Value {
    params["_meta"] = stateless_meta();
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(n) = name {
        req = req.header("mcp-name", n);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let resp = req.body(body.to_string()).send().await.expect("post");
    assert_eq!(resp.status(), 200);
    resp.json().await.expect("json")
}

#[tokio::test(flavor = "multi_thread")]
async fn stateless_revision_discovers_and_calls_without_initialize() {
    let env = TestEnv::start().await;
    let d = stateless(&env.url, "server/discover", json!({}), None).await;
    let result = &d["result"];
    assert!(
        result["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert!(result["capabilities"]["extensions"][EXT].is_object(), "{d}");
    assert!(
        result["instructions"]
            .as_str()
            .unwrap()
            .contains("pilotage_manifest")
    );
    assert_shape(&result["_meta"][EXT], "InitializeMetaValue");
    let call = stateless(
        &env.url,
        "tools/call",
        json!({"name": "pilotage_manifest", "arguments": {}}),
        Some("pilotage_manifest"),
    )
    .await;
    assert_eq!(
        call["result"]["structuredContent"],
        result["_meta"][EXT]["manifest"]
    );
}

/// The manifest and catalog pages are written once and shared by the calls
/// that ask for them again: each revision still gets its own shape, and a
/// repeated call the same content as the first.
#[tokio::test(flavor = "multi_thread")]
async fn shared_answers_are_the_same_on_every_revision_and_every_call() {
    let env = TestEnv::start().await;
    let page_args = json!({"language": "workflow/v1", "verb": "list", "limit": 2});
    for (tool, args) in [
        ("pilotage_manifest", json!({})),
        ("pilotage_catalog", page_args),
    ] {
        let modern = stateless(
            &env.url,
            "tools/call",
            json!({"name": tool, "arguments": args}),
            Some(tool),
        )
        .await;
        let modern = &modern["result"];
        assert_eq!(modern["resultType"], "complete", "{modern}");
        assert_eq!(modern["isError"], false, "{modern}");
        for revision in ["2025-06-18", "2025-11-25"] {
            let mut c = env.anonymous();
            c.protocol = revision.into();
            let first = c.call(tool, args.clone()).await;
            let again = c.call(tool, args.clone()).await;
            assert!(!first.is_error, "{}", first.raw);
            assert_eq!(
                first.raw["result"], again.raw["result"],
                "{tool} {revision}"
            );
            assert!(
                first.raw["result"].get("resultType").is_none(),
                "{}",
                first.raw
            );
            assert_eq!(
                first.structured, modern["structuredContent"],
                "{tool} {revision}"
            );
            assert_eq!(first.raw["result"]["content"], modern["content"], "{tool}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_signed_bound_to_the_principal_and_revocable() {
    let env = TestEnv::start().await;
    let mut c = env.client(ACME_OPS);
    c.initialize().await;
    let token = c.session.clone().unwrap();
    assert!(!c.call("pilotage_manifest", json!({})).await.is_error);
    // Forged: one character of the signature changed.
    let mut forged = Mcp::new(&env.url, Some(ACME_OPS));
    let last = token.chars().last().unwrap();
    forged.session = Some(format!(
        "{}{}",
        &token[..token.len() - 1],
        if last == '0' { '1' } else { '0' }
    ));
    let (status, _, _) = forged
        .raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .await;
    assert_eq!(status, 404);
    // Unknown.
    forged.session = Some("nope".into());
    let (status, _, _) = forged
        .raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .await;
    assert_eq!(status, 404);
    // The token with another principal's key.
    let mut other = Mcp::new(&env.url, Some(ACME_AUDIT));
    other.session = Some(token.clone());
    let (status, _, _) = other
        .raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .await;
    assert_eq!(
        status, 404,
        "a session is bound to the principal that opened it"
    );
    // DELETE ends it.
    let resp = reqwest::Client::new()
        .delete(&env.url)
        .bearer_auth(ACME_OPS)
        .header("mcp-session-id", &token)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "DELETE: {}", resp.status());
    let (status, _, _) = c
        .raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .await;
    assert_eq!(status, 404, "revoked");
}

#[tokio::test(flavor = "multi_thread")]
async fn anonymous_sessions_are_separate_principals() {
    let env = TestEnv::start().await;
    let mut a = env.anonymous();
    a.initialize().await;
    let mut b = env.anonymous();
    b.initialize().await;
    let r = a
        .call("run_workflow", json!({"workflow": valid_program(), "mode": "immediate", "input": {"id": "cus_1"}, "store": true}))
        .await;
    let id = r.structured["run_id"].clone();
    assert!(
        !a.call("trace_workflow", json!({"run_id": id}))
            .await
            .is_error
    );
    let theirs = b.call("trace_workflow", json!({"run_id": id})).await;
    assert_eq!(theirs.structured["error"]["kind"], "not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_keys_are_refused_at_http_level() {
    let env = TestEnv::start().await;
    let c = Mcp::new(&env.url, Some("not-a-key"));
    let (status, headers, body) = c
        .raw(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string())
        .await;
    assert_eq!(status, 401);
    assert!(headers.get("www-authenticate").is_some());
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("API key")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn nesting_is_a_bound_below_the_parser_limit_and_a_parse_error_above_it() {
    let env = TestEnv::start().await;
    let mut c = env.anonymous();
    c.initialize().await;
    // Below the parser's 128 levels: the Pilotage bound answers.
    let r = c
        .call("validate_workflow", json!({"workflow": nested(30)}))
        .await;
    assert_eq!(r.structured["error"]["kind"], "bounds_exceeded");
    // Above it: the arguments cannot be read into a tree, a parse error.
    // A plain call's are read by its handler, which answers its id; any
    // other message cannot be read at all.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "validate_workflow", "arguments": {"workflow": nested(70)}}});
    let (status, _, v) = c.raw(&body.to_string()).await;
    assert!(status < 500);
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert_eq!(v["id"], 1, "{v}");
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "validate_workflow", "arguments": {"workflow": nested(70)}, "_meta": {}}});
    let (status, _, v) = c.raw(&body.to_string()).await;
    assert!(status < 500);
    assert_eq!(v["error"]["code"], -32700, "{v}");
}

#[tokio::test(flavor = "multi_thread")]
async fn size_bound_answers_before_the_transport_limit() {
    let env = TestEnv::start().await;
    let mut c = env.anonymous();
    c.initialize().await;
    // 300 KiB of program: over the 256 KiB program bound, under the 4 MiB body limit.
    let big = "x".repeat(300 * 1024);
    let program = json!({"steps": [{"id": "s", "kind": "set", "value": big}]});
    let r = c
        .call("validate_workflow", json!({"workflow": program}))
        .await;
    assert_eq!(r.structured["error"]["kind"], "bounds_exceeded");
    // Over the transport limit: a JSON-RPC error, not a hang or a 5xx.
    let huge = "y".repeat(5 * 1024 * 1024);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "validate_workflow", "arguments": {"workflow": {"steps": [], "pad": huge}}}});
    let (status, _, v) = c.raw(&body.to_string()).await;
    assert_eq!(status, 413);
    assert_eq!(v["error"]["code"], -32600);
}

#[tokio::test(flavor = "multi_thread")]
async fn health_and_readiness_follow_the_engine() {
    let env = TestEnv::start().await;
    let base = env.url.trim_end_matches("/mcp").to_string();
    let http = reqwest::Client::new();
    let health = http.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), 200);
    let ready = http.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    let metrics = http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("pilotage_mcp_requests_total"));
    drop(env.engine);
    let ready = http.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503, "not ready without the engine");
    // Calls that need the engine are `internal` request errors, never a 5xx.
    let mut c = Mcp::new(&env.url, None);
    c.initialize().await;
    let r = c
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await;
    assert_eq!(r.structured["error"]["kind"], "internal");
}

#[tokio::test(flavor = "multi_thread")]
async fn sessionless_anonymous_requests_are_promised_nothing_stored() {
    let env = TestEnv::start().await;
    // Under anonymous_scope "session" no later request can be this caller:
    // what it discovers declares retention "none", and a retained run is
    // refused rather than promised.
    let discovered = stateless(&env.url, "server/discover", json!({}), None).await;
    let languages = &discovered["result"]["_meta"][EXT]["manifest"]["languages"];
    let declared = languages
        .as_array()
        .and_then(|l| l.iter().find(|l| l["name"] == "workflow/v1"))
        .unwrap_or_else(|| panic!("{discovered}"));
    assert_eq!(declared["retention"], "none", "{declared}");
    // Its only mode is "immediate", so it names none (Part III §4.4).
    assert_eq!(declared["execution"], "immediate", "{declared}");
    let run = stateless(
        &env.url,
        "tools/call",
        json!({"name": "run_workflow", "arguments": {"workflow": valid_program(),
            "input": {"id": "cus_1"}, "store": true}}),
        Some("run_workflow"),
    )
    .await;
    assert_eq!(
        run["result"]["structuredContent"]["error"]["kind"], "unsupported",
        "{run}"
    );
    let run = stateless(
        &env.url,
        "tools/call",
        json!({"name": "run_workflow", "arguments": {"workflow": valid_program(),
            "input": {"id": "cus_1"}}}),
        Some("run_workflow"),
    )
    .await;
    let run_id = run["result"]["structuredContent"]["run_id"].clone();
    assert!(run_id.is_string(), "{run}");
    // Nothing is kept for it, so no trace tool is offered to it.
    let fetch = stateless(
        &env.url,
        "tools/call",
        json!({"name": "trace_workflow", "arguments": {"run_id": run_id}}),
        Some("trace_workflow"),
    )
    .await;
    assert_eq!(fetch["error"]["code"], -32602, "{fetch}");
    // The same runs are reachable through an API key, across requests.
    let keyed = Mcp::new(&env.url, Some(ACME_OPS));
    let r = keyed
        .call("run_workflow", json!({"workflow": valid_program(), "mode": "immediate", "input": {"id": "cus_1"}, "store": true}))
        .await;
    let again = Mcp::new(&env.url, Some(ACME_OPS));
    let f = again
        .call("trace_workflow", json!({"run_id": r.structured["run_id"]}))
        .await;
    assert!(!f.is_error, "{}", f.structured);
}
