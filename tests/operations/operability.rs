//! The real `pilotage-gateway serve` binary as an operator sees it: one JSON
//! log line per HTTP request with its request id, W3C trace context reaching
//! the engine, and the drain on SIGTERM.

use crate::common::served::Served;
use crate::common::{Engine, repo_path, valid_program};
use serde_json::{Value, json};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Upper bound of every wait in this file.
const BOUND: Duration = Duration::from_secs(30);

/// `serve` with the conformance configuration plus `server_extra` lines in
/// `[server]`, in front of `engine`, without Redis.
fn start(engine: &Engine, server_extra: &str) -> Served {
    let text = std::fs::read_to_string(repo_path("tests/fixtures/features.toml"))
        .expect("conformance config");
    let text = text.replacen(
        "instance = \"test\"",
        &format!("instance = \"ops-test\"\n{server_extra}"),
        1,
    );
    Served::spawn(
        &text,
        &[
            ("PILOTAGE_ENGINE_URL", &engine.url),
            ("PILOTAGE_REDIS_URL", ""),
        ],
    )
}

/// The request log line of the request with this id.
fn request_line(served: &Served, id: &str) -> Value {
    served.wait_line(|l| l["message"] == "request" && request_id(l) == Some(id.to_string()))
}

fn request_id(line: &Value) -> Option<String> {
    line["spans"]
        .as_array()?
        .iter()
        .find_map(|s| s["request_id"].as_str().map(str::to_string))
}

/// Declares a 1,000-byte body, sends 10 bytes of it, then ends its side of
/// the connection.
async fn cut_body_short(url: &str, request_id: &str) {
    use tokio::io::AsyncWriteExt;
    let address = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let mut socket = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nx-request-id: {request_id}\r\n\
         Content-Length: 1000\r\n\r\n{{\"jsonrpc\":"
    );
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.shutdown().await.unwrap();
    // Whatever the gateway answers (if anything) before it closes.
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::io::AsyncReadExt::read_to_end(&mut socket, &mut rest),
    )
    .await;
}

async fn post(url: &str, headers: &[(&str, &str)], body: Value) -> reqwest::Response {
    let mut r = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string());
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    r.send().await.expect("POST /mcp")
}

#[tokio::test(flavor = "multi_thread")]
async fn request_ids_logs_and_trace_context_follow_a_request_into_the_engine() {
    let engine = Engine::spawn(&[]);
    let served = start(&engine, "");
    let url = format!("{}/mcp", served.base);
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let traceparent = format!("00-{trace_id}-00f067aa0ba902b7-01");
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "run_workflow", "arguments": {"workflow": valid_program(), "input": {"id": "cus_1"}}}});
    let r = post(
        &url,
        &[
            ("x-request-id", "req-ops-1"),
            ("traceparent", &traceparent),
            ("tracestate", "vendor=abc"),
        ],
        call,
    )
    .await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-request-id"], "req-ops-1");
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["result"]["structuredContent"]["outcome"]["status"], "success",
        "{body}"
    );
    // The engine saw the caller's trace id, with a span id of the gateway's.
    let seen: Vec<String> = engine
        .stdout_lines()
        .into_iter()
        .filter(|l| l.starts_with("trace-context ") && l.contains(trace_id))
        .collect();
    assert!(
        seen.iter()
            .any(|l| l.contains("/run ") && l.contains("tracestate=vendor=abc")),
        "no run call carried the trace context: {:?}",
        engine.stdout_lines()
    );
    assert!(
        seen.iter().all(|l| !l.contains("00f067aa0ba902b7")),
        "engine calls are children of the request, with span ids of their own: {seen:?}"
    );
    // One line for the request, with everything an operator filters on.
    let line = request_line(&served, "req-ops-1");
    assert_eq!(line["level"], "INFO", "{line}");
    assert_eq!(line["rpc_method"], "tools/call");
    assert_eq!(line["tool"], "run_workflow");
    assert_eq!(line["language"], "workflow/v1");
    assert_eq!(line["tenant"], "acme");
    assert_eq!(line["principal_kind"], "anonymous");
    assert_eq!(line["outcome"], "success");
    assert_eq!(line["status"], 200);
    assert!(
        line["duration_ms"].is_f64(),
        "sub-millisecond duration: {line}"
    );
    let spans = line["spans"].as_array().unwrap();
    assert!(spans.iter().any(|s| s["trace_id"] == trace_id), "{line}");

    // Without an id the gateway makes one, returns it and logs it.
    let mut c = served.client(None);
    c.initialize().await;
    let (status, headers, _) = c
        .raw(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string())
        .await;
    assert_eq!(status, 200);
    let generated = headers["x-request-id"].to_str().unwrap().to_string();
    assert!(
        generated.len() == 32 && generated.bytes().all(|b| b.is_ascii_hexdigit()),
        "128 random bits in hex: {generated}"
    );
    let line = request_line(&served, &generated);
    assert_eq!(line["rpc_method"], "tools/list");
    let session = c.session.clone().unwrap();

    // A carrier error: logged as the request's fields, not as a library dump.
    let unknown = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "no_such_tool", "arguments": {}}});
    let r = post(&url, &[("x-request-id", "req-carrier")], unknown).await;
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32602, "{body}");
    let line = request_line(&served, "req-carrier");
    assert_eq!(line["outcome"], "carrier_error");
    assert_eq!(line["rpc_error_code"], -32602);
    assert!(line["rpc_error"].as_str().unwrap().contains("no_such_tool"));

    // Rejects: each logged once, at its level, with what was refused.
    let init = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"});
    let r = post(
        &url,
        &[
            ("x-request-id", "req-401"),
            ("authorization", "Bearer wrong-key"),
        ],
        init.clone(),
    )
    .await;
    assert_eq!(r.status(), 401);
    let line = request_line(&served, "req-401");
    assert_eq!(line["level"], "WARN");
    assert_eq!(line["reject"], "unauthorized");
    let r = post(
        &url,
        &[
            ("x-request-id", "req-404"),
            ("mcp-session-id", "x.1.forged"),
        ],
        init.clone(),
    )
    .await;
    assert_eq!(r.status(), 404);
    let line = request_line(&served, "req-404");
    assert_eq!(line["level"], "INFO");
    assert_eq!(line["reject"], "session_not_found");
    let r = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "text/html")
        .header("x-request-id", "req-406")
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 406);
    let line = request_line(&served, "req-406");
    assert_eq!(line["status"], 406);
    assert_eq!(line["reject"], "not_acceptable");
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(5 * 1024 * 1024));
    let r = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("x-request-id", "req-413")
        .body(big)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    assert_eq!(request_line(&served, "req-413")["reject"], "too_large");
    // A caller that goes away mid-body sent nothing too large.
    cut_body_short(&url, "req-cut").await;
    let line = request_line(&served, "req-cut");
    assert_eq!(line["reject"], "body_incomplete", "{line}");
    assert_eq!(line["status"], 400, "{line}");

    // Every line names the instance; none carries a key or a session id.
    let all = served.lines();
    for l in &all {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}"));
        assert_eq!(v["instance"], "ops-test", "{l}");
        assert!(!l.contains("wrong-key"), "a bearer key in the log: {l}");
        assert!(!l.contains(&session), "a session id in the log: {l}");
        assert!(!l.contains("ErrorData {"), "a Debug dump in the log: {l}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_drains_readyz_503_new_requests_served_runs_finish_then_exit() {
    let engine = Engine::spawn(&[]);
    let mut served = start(&engine, "drain_ms = 3000\ndrain_timeout_ms = 20000");
    let url = format!("{}/mcp", served.base);
    // A run that takes 4 s, longer than the drain window.
    let slow = json!({"steps": [{"id": "nap", "kind": "call", "capability": "util.sleep", "with": {"ms": 4000}}]});
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "run_workflow", "arguments": {"workflow": slow}}});
    let in_flight = tokio::spawn({
        let url = url.clone();
        async move {
            let r = post(&url, &[("x-request-id", "req-slow")], call).await;
            (
                r.status().as_u16(),
                r.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    });
    let deadline = Instant::now() + BOUND;
    while served.metric("pilotage_runs_in_flight").await < 1.0 {
        assert!(Instant::now() < deadline, "the slow run never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = served.child.id().to_string();
    let killed = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    assert!(killed.success());
    served.wait_line(|l| {
        l["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("drain started"))
    });
    let ready = reqwest::get(format!("{}/readyz", served.base))
        .await
        .unwrap();
    assert_eq!(ready.status(), 503, "readyz during the drain");
    assert_eq!(ready.json::<Value>().await.unwrap()["draining"], true);
    // A new request during the window is still served.
    let mut c = served.client(None);
    c.initialize().await;
    let m = c.call("pilotage_manifest", json!({})).await;
    assert!(!m.is_error);
    assert_eq!(served.metric("pilotage_draining").await, 1.0);
    // The run in flight finishes and answers.
    let (status, body) = in_flight.await.unwrap();
    assert_eq!(status, 200);
    assert_eq!(
        body["result"]["structuredContent"]["outcome"]["status"], "success",
        "{body}"
    );
    // Then the process exits by itself, cleanly, having logged every phase.
    let deadline = Instant::now() + BOUND;
    let exit = loop {
        if let Some(s) = served.child.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < deadline, "the gateway did not exit");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(exit.success(), "{exit:?}");
    let messages: Vec<String> = served
        .json_lines()
        .iter()
        .filter_map(|l| l["message"].as_str().map(str::to_string))
        .collect();
    let phase = |p: &str| messages.iter().position(|m| m.starts_with(p));
    let (started, window, drained) = (
        phase("drain started").unwrap(),
        phase("drain window over").expect("window phase logged"),
        phase("drained").expect("drained phase logged"),
    );
    assert!(started < window && window < drained, "{messages:?}");
    let slow_line = request_line(&served, "req-slow");
    assert_eq!(slow_line["outcome"], "success");
}

/// A tiny OTLP/HTTP receiver: keeps every JSON body POSTed to /v1/traces.
async fn otlp_receiver() -> (String, Arc<Mutex<Vec<Value>>>) {
    let got = Arc::new(Mutex::new(Vec::new()));
    let kept = got.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let kept = kept.clone();
            async move {
                if let Ok(v) = serde_json::from_slice::<Value>(&body) {
                    kept.lock().unwrap().push(v);
                }
                ([("content-type", "application/json")], "{}")
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, got)
}

/// Every exported span: (name, traceId, spanId, parentSpanId).
fn spans(exports: &[Value]) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    for e in exports {
        for rs in e["resourceSpans"].as_array().into_iter().flatten() {
            for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                for s in ss["spans"].as_array().into_iter().flatten() {
                    let f = |k: &str| s[k].as_str().unwrap_or_default().to_string();
                    out.push((f("name"), f("traceId"), f("spanId"), f("parentSpanId")));
                }
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn spans_are_exported_over_otlp_as_one_trace_from_the_caller_into_the_engine() {
    let (endpoint, exports) = otlp_receiver().await;
    let engine = Engine::spawn(&[]);
    let mut served = start(
        &engine,
        &format!("drain_ms = 0\n\n[telemetry]\notlp_traces_endpoint = \"{endpoint}\""),
    );
    let trace_id = "0af7651916cd43dd8448eb211c80319c";
    let caller_span = "b7ad6b7169203331";
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "run_workflow", "arguments": {"workflow": valid_program(), "input": {"id": "cus_1"}}}});
    let r = post(
        &format!("{}/mcp", served.base),
        &[("traceparent", &format!("00-{trace_id}-{caller_span}-01"))],
        call,
    )
    .await;
    assert_eq!(r.status(), 200);
    // The exporter flushes at exit.
    let pid = served.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + BOUND;
    while served.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the gateway did not exit");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let exports = exports.lock().unwrap().clone();
    let all = spans(&exports);
    let ours: Vec<_> = all.iter().filter(|s| s.1 == trace_id).collect();
    let named = |n: &str| ours.iter().find(|s| s.0 == n).cloned();
    let request = named("request").unwrap_or_else(|| panic!("no request span in {all:?}"));
    assert_eq!(
        request.3, caller_span,
        "the request span is the caller's child"
    );
    let tool = named("tools/call").expect("a tools/call span");
    // Descends from the request (through the MCP transport's own span).
    let mut parent = tool.3.clone();
    let mut hops = 0;
    while parent != request.2 {
        let up = ours.iter().find(|s| s.2 == parent);
        parent = up
            .unwrap_or_else(|| panic!("tools/call does not descend from the request: {all:?}"))
            .3
            .clone();
        hops += 1;
        assert!(hops < 10, "{all:?}");
    }
    let engine_spans: Vec<_> = ours.iter().filter(|s| s.0 == "engine").collect();
    assert!(!engine_spans.is_empty(), "{all:?}");
    // The engine was told the exported engine span as its parent.
    let seen: Vec<String> = engine
        .stdout_lines()
        .into_iter()
        .filter(|l| l.starts_with("trace-context ") && l.contains(trace_id))
        .collect();
    assert!(!seen.is_empty(), "{:?}", engine.stdout_lines());
    for line in &seen {
        assert!(
            engine_spans
                .iter()
                .any(|s| line.contains(&format!("{trace_id}-{}-", s.2))),
            "{line} names no exported engine span: {engine_spans:?}"
        );
    }
    let service = exports[0]["resourceSpans"][0]["resource"]["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == "service.name")
        .cloned()
        .unwrap();
    assert_eq!(service["value"]["stringValue"], "pilotage-gateway");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_drain_that_outlasts_its_timeout_exits_and_says_what_was_in_flight() {
    let engine = Engine::spawn(&[]);
    let mut served = start(&engine, "drain_ms = 0\ndrain_timeout_ms = 300");
    let url = format!("{}/mcp", served.base);
    let slow = json!({"steps": [{"id": "nap", "kind": "call", "capability": "util.sleep", "with": {"ms": 5000}}]});
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "run_workflow", "arguments": {"workflow": slow}}});
    let in_flight = tokio::spawn(async move {
        reqwest::Client::new()
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(call.to_string())
            .send()
            .await
            .map(|r| r.status().as_u16())
    });
    let deadline = Instant::now() + BOUND;
    while served.metric("pilotage_runs_in_flight").await < 1.0 {
        assert!(Instant::now() < deadline, "the slow run never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let pid = served.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let line = served.wait_line(|l| {
        l["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("drain timeout"))
    });
    assert_eq!(line["level"], "WARN");
    assert_eq!(line["runs_in_flight"], 1, "{line}");
    assert_eq!(line["requests_in_flight"], 1, "{line}");
    let deadline = Instant::now() + BOUND;
    while served.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the gateway did not exit");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The caller of the abandoned run sees its connection end, not a hang.
    let _ = tokio::time::timeout(BOUND, in_flight)
        .await
        .expect("the caller was answered or cut off");
}
