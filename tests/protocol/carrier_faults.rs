//! Carrier answers of `/mcp` through the real endpoint (Part III §7.1): every
//! `Accept` that admits JSON gets the JSON answer, and every carrier fault
//! (400, 401, 404, 405, 406, 413, 415) is `application/json` with a JSON-RPC
//! error object, the §7.1 code, and the request id when it could be read.
//!
//! Requests go through a bare HTTP/1.1 client, so each header is exactly the
//! one under test (no client default `Accept` or `Content-Type`).

use crate::common::TestEnv;
use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use serde_json::{Value, json};
use std::time::Duration;

/// One HTTP answer of the gateway.
#[derive(Debug)]
struct Reply {
    status: u16,
    content_type: Option<String>,
    headers: hyper::HeaderMap,
    json: Value,
}

/// Sends exactly `headers` and `body`; asserts that any body that came back
/// is JSON declared as `application/json`.
async fn send(url: &str, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let uri: hyper::Uri = url.parse().expect("gateway url");
    let authority = uri.authority().expect("authority").to_string();
    let stream = tokio::net::TcpStream::connect(&authority)
        .await
        .expect("connect to the gateway");
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .expect("HTTP/1.1 handshake");
    tokio::spawn(conn);
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(uri.path())
        .header("host", &authority);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("request");
    let response = tokio::time::timeout(Duration::from_secs(60), sender.send_request(request))
        .await
        .expect("the gateway answers")
        .expect("an HTTP answer");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    let json = if bytes.is_empty() {
        Value::Null
    } else {
        assert_eq!(
            content_type.as_deref(),
            Some("application/json"),
            "HTTP {status}: a body that is not declared JSON: {}",
            String::from_utf8_lossy(&bytes)
        );
        serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            panic!(
                "HTTP {status}: body is not JSON ({e}): {}",
                String::from_utf8_lossy(&bytes)
            )
        })
    };
    Reply {
        status,
        content_type,
        headers,
        json,
    }
}

const JSON: (&str, &str) = ("content-type", "application/json");
const REVISION: (&str, &str) = ("mcp-protocol-version", "2025-11-25");

fn tools_list(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}).to_string()
}

fn initialize(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "carrier-test", "version": "1"}}})
    .to_string()
}

/// A JSON-RPC error object with `code` and `id`, at HTTP `status`.
fn assert_fault(reply: &Reply, status: u16, code: i64, id: Value, case: &str) {
    assert_eq!(reply.status, status, "{case}: {reply:?}");
    assert_eq!(reply.json["jsonrpc"], "2.0", "{case}: {reply:?}");
    assert_eq!(reply.json["error"]["code"], code, "{case}: {reply:?}");
    assert!(
        reply.json["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{case}: a message: {reply:?}"
    );
    assert_eq!(reply.json["id"], id, "{case}: the id: {reply:?}");
    assert!(reply.json.get("result").is_none(), "{case}");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_accept_that_admits_json_gets_the_json_answer() {
    let env = TestEnv::start().await;
    let variants: [&[(&str, &str)]; 7] = [
        &[],
        &[("accept", "*/*")],
        &[("accept", "application/*")],
        &[("accept", "application/json")],
        &[("accept", "application/json, text/event-stream")],
        &[("accept", "text/event-stream, application/json;q=0.5")],
        &[("accept", "text/html, */*;q=0.1")],
    ];
    for (i, accept) in variants.iter().enumerate() {
        let mut headers = vec![JSON];
        headers.extend_from_slice(accept);
        let init = send(&env.url, "POST", &headers, &initialize(i as u64)).await;
        assert_eq!(init.status, 200, "initialize with {accept:?}: {init:?}");
        assert_eq!(init.content_type.as_deref(), Some("application/json"));
        assert_eq!(init.json["id"], i as u64);
        assert!(init.json["result"]["capabilities"].is_object(), "{init:?}");
        assert!(init.headers.get("mcp-session-id").is_some());

        headers.push(REVISION);
        let list = send(&env.url, "POST", &headers, &tools_list(100 + i as u64)).await;
        assert_eq!(list.status, 200, "tools/list with {accept:?}: {list:?}");
        assert_eq!(list.json["id"], 100 + i as u64);
        assert!(
            list.json["result"]["tools"]
                .as_array()
                .is_some_and(|t| !t.is_empty()),
            "{list:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_accept_without_any_json_type_is_406() {
    let env = TestEnv::start().await;
    for accept in [
        "text/event-stream",
        "text/html",
        "application/xml",
        "application/json;q=0",
    ] {
        let reply = send(
            &env.url,
            "POST",
            &[JSON, REVISION, ("accept", accept)],
            &tools_list(7),
        )
        .await;
        assert_fault(&reply, 406, -32600, json!(7), accept);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bodies_that_are_not_json_rpc_messages_are_json_rpc_errors() {
    let env = TestEnv::start().await;
    let cases: [(&str, &str, i64, Value); 11] = [
        ("not JSON", "{ not json", -32700, Value::Null),
        ("empty body", "", -32700, Value::Null),
        (
            "params a number",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":60001}"#,
            -32600,
            json!(3),
        ),
        (
            "id null",
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/list"}"#,
            -32600,
            Value::Null,
        ),
        (
            "fractional id",
            r#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#,
            -32600,
            Value::Null,
        ),
        (
            "id beyond 64 bits",
            r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"tools/list"}"#,
            -32600,
            Value::Null,
        ),
        (
            "method null",
            r#"{"jsonrpc":"2.0","id":4,"method":null}"#,
            -32600,
            json!(4),
        ),
        (
            "duplicate jsonrpc member",
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":5,"method":"tools/list"}"#,
            -32600,
            json!(5),
        ),
        (
            "a batch",
            r#"[{"jsonrpc":"2.0","id":6,"method":"tools/list"}]"#,
            -32600,
            Value::Null,
        ),
        (
            "wrong version",
            r#"{"jsonrpc":"1.0","id":"a","method":"tools/list"}"#,
            -32600,
            json!("a"),
        ),
        ("a bare number", "60001", -32600, Value::Null),
    ];
    for (case, body, code, id) in cases {
        let reply = send(
            &env.url,
            "POST",
            &[JSON, REVISION, ("accept", "application/json")],
            body,
        )
        .await;
        assert_fault(&reply, 400, code, id, case);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_not_declared_json_is_415() {
    let env = TestEnv::start().await;
    let none = send(&env.url, "POST", &[REVISION], &tools_list(9)).await;
    assert_fault(&none, 415, -32600, json!(9), "no content type");
    let text = send(
        &env.url,
        "POST",
        &[REVISION, ("content-type", "text/plain")],
        &tools_list(10),
    )
    .await;
    assert_fault(&text, 415, -32600, json!(10), "text/plain");
    let charset = send(
        &env.url,
        "POST",
        &[
            REVISION,
            ("content-type", "application/json; charset=utf-8"),
        ],
        &tools_list(11),
    )
    .await;
    assert_eq!(charset.status, 200, "parameters are fine: {charset:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unsupported_protocol_revision_header_is_400() {
    let env = TestEnv::start().await;
    let reply = send(
        &env.url,
        "POST",
        &[JSON, ("mcp-protocol-version", "bogus")],
        &tools_list(12),
    )
    .await;
    assert_fault(
        &reply,
        400,
        -32600,
        json!(12),
        "mcp-protocol-version: bogus",
    );
    assert!(
        reply.json["error"]["message"]
            .as_str()
            .unwrap()
            .contains("bogus"),
        "{reply:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn other_http_methods_are_405() {
    let env = TestEnv::start().await;
    for method in ["GET", "PUT", "PATCH"] {
        let reply = send(&env.url, method, &[("accept", "text/event-stream")], "").await;
        assert_fault(&reply, 405, -32600, Value::Null, method);
        let allow = reply.headers.get("allow").and_then(|v| v.to_str().ok());
        assert_eq!(allow, Some("POST, DELETE"), "{method}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_sessions_keys_and_oversized_bodies_are_json_rpc_errors() {
    let env = TestEnv::with_config("tests/fixtures/features.toml", |c| {
        c.server.max_body_bytes = 64 * 1024;
    })
    .await;
    let session = send(
        &env.url,
        "POST",
        &[JSON, REVISION, ("mcp-session-id", "nope.1.00")],
        &tools_list(13),
    )
    .await;
    assert_fault(&session, 404, -32001, json!(13), "unknown session");
    let key = send(
        &env.url,
        "POST",
        &[JSON, REVISION, ("authorization", "Bearer not-a-key")],
        &tools_list(14),
    )
    .await;
    assert_fault(&key, 401, -32001, json!(14), "unknown key");
    assert!(key.headers.get("www-authenticate").is_some());
    let pad = "x".repeat(100 * 1024);
    let big = json!({"jsonrpc": "2.0", "id": 15, "method": "tools/list", "params": {"pad": pad}});
    let reply = send(&env.url, "POST", &[JSON, REVISION], &big.to_string()).await;
    assert_fault(&reply, 413, -32600, Value::Null, "oversized body");
    // DELETE without a session to end.
    let delete = send(&env.url, "DELETE", &[], "").await;
    assert_fault(&delete, 400, -32600, Value::Null, "DELETE without session");
}

#[tokio::test(flavor = "multi_thread")]
async fn only_a_calls_arguments_may_be_large() {
    let env = TestEnv::start().await;
    let pad = "x".repeat(100 * 1024);
    // A large program as a call's arguments is read and validated.
    let program = json!({"steps": [{"id": "a", "kind": "set", "value": pad}]});
    let call = json!({"jsonrpc": "2.0", "id": 21, "method": "tools/call",
        "params": {"name": "validate_workflow", "arguments": {"workflow": program}}});
    let served = send(&env.url, "POST", &[JSON, REVISION], &call.to_string()).await;
    assert_eq!(served.status, 200, "{served:?}");
    assert_eq!(served.json["id"], 21, "{served:?}");
    assert_eq!(
        served.json["result"]["structuredContent"]["valid"], true,
        "{served:?}"
    );
    // The same bytes anywhere else in a message are refused before rmcp reads it.
    let ping = json!({"jsonrpc": "2.0", "id": 22, "method": "ping", "params": {"pad": pad}});
    let reply = send(&env.url, "POST", &[JSON, REVISION], &ping.to_string()).await;
    assert_fault(&reply, 413, -32600, json!(22), "large ping");
    let meta = json!({"jsonrpc": "2.0", "id": "m", "method": "tools/call",
        "params": {"name": "validate_workflow", "_meta": {"pad": pad},
            "arguments": {"workflow": {"steps": []}}}});
    let reply = send(&env.url, "POST", &[JSON, REVISION], &meta.to_string()).await;
    assert_fault(&reply, 413, -32600, json!("m"), "large _meta");
    // Arguments that are not an object are no call's arguments object.
    let list = json!({"jsonrpc": "2.0", "id": 23, "method": "tools/call",
        "params": {"name": "validate_workflow", "arguments": [pad]}});
    let reply = send(&env.url, "POST", &[JSON, REVISION], &list.to_string()).await;
    assert_fault(&reply, 413, -32600, json!(23), "large arguments list");
    // A large body that is not JSON at all is still a parse error.
    let cut = &call.to_string()[..call.to_string().len() - 1];
    let reply = send(&env.url, "POST", &[JSON, REVISION], cut).await;
    assert_fault(&reply, 400, -32700, Value::Null, "large truncated body");
}
