//! Browser safety of the demo gateway, driven for real: a foreign `Host` or
//! `Origin` is refused with 403 and a JSON-RPC error while the gateway's own
//! origin and clients that send no `Origin` are served; headless Chromium
//! loads a page from another loopback port whose script calls the gateway
//! with `fetch` and a form post: both refused and the engine untouched, while
//! the same page from an origin listed in `server.allowed_origins` runs the
//! program. `serve` refuses the demo's public credentials off loopback.

mod common;

use axum::response::Html;
use common::{Engine, Mcp, TestEnv, repo_path, write_program};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

const DEMO: &str = "deploy/gateway.local.toml";

/// The demo gateway in front of a fresh engine, with `allowed_origins`.
async fn demo(allowed_origins: Vec<String>) -> TestEnv {
    TestEnv::in_front_of(Engine::spawn(&[]), DEMO, move |cfg| {
        cfg.server.allowed_origins = allowed_origins;
    })
    .await
}

/// host:port of the gateway.
fn authority(env: &TestEnv) -> String {
    env.url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string()
}

fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "browser-safety", "version": "1"}}})
    .to_string()
}

/// POSTs an `initialize` with the given extra headers.
async fn post(env: &TestEnv, headers: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap, Value) {
    let mut r = reqwest::Client::new()
        .post(&env.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(initialize_body());
    for (name, value) in headers {
        r = r.header(*name, *value);
    }
    let resp = r.send().await.expect("POST /mcp");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.json::<Value>().await.unwrap_or(Value::Null);
    (status, headers, body)
}

fn assert_refused(answer: &(u16, reqwest::header::HeaderMap, Value), status: u16, needle: &str) {
    let (got, headers, body) = answer;
    assert_eq!(*got, status, "{body}");
    assert_eq!(
        headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/json")
    );
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert_eq!(body["error"]["code"], -32600, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains(needle), "{message}");
}

#[tokio::test]
async fn a_foreign_host_or_origin_is_refused_and_the_gateways_own_are_served() {
    let listed = "https://inspector.example:6274".to_string();
    let env = demo(vec![listed.clone()]).await;
    let own = authority(&env);
    let port = own.rsplit(':').next().unwrap().to_string();

    // DNS rebinding: the attacker's name, pointed at this machine.
    let rebound = format!("attacker.example:{port}");
    assert_refused(
        &post(&env, &[("host", &rebound)]).await,
        403,
        "server.allowed_hosts",
    );
    assert_refused(&post(&env, &[("host", "localhost.:1")]).await, 403, "Host");
    for origin in [
        "http://attacker.example",
        "null",
        "http://127.0.0.1:1",
        &format!("https://attacker.example:{port}"),
    ] {
        let answer = post(&env, &[("origin", origin)]).await;
        assert_refused(&answer, 403, "server.allowed_origins");
        assert!(answer.1.get("access-control-allow-origin").is_none());
    }

    // No Origin (any client that is not a browser), and the loopback names.
    for host in [own.clone(), format!("localhost:{port}"), "localhost".into()] {
        let (status, headers, body) = post(&env, &[("host", &host)]).await;
        assert_eq!(status, 200, "Host {host}: {body}");
        assert!(headers.get("mcp-session-id").is_some());
    }
    // The gateway's own origin, under either loopback name.
    for (host, origin) in [
        (own.clone(), format!("http://{own}")),
        (
            format!("localhost:{port}"),
            format!("http://localhost:{port}"),
        ),
    ] {
        let (status, _, body) = post(&env, &[("host", &host), ("origin", &origin)]).await;
        assert_eq!(status, 200, "{origin}: {body}");
    }

    // A listed origin is served, with CORS headers, and its preflight answered.
    let (status, headers, body) = post(&env, &[("origin", &listed)]).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["access-control-allow-origin"], listed.as_str());
    assert!(
        headers["access-control-expose-headers"]
            .to_str()
            .unwrap()
            .contains("mcp-session-id")
    );
    let preflight = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, &env.url)
        .header("origin", &listed)
        .header("access-control-request-method", "POST")
        .header(
            "access-control-request-headers",
            "content-type, mcp-session-id",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 204);
    assert_eq!(
        preflight.headers()["access-control-allow-origin"],
        listed.as_str()
    );
    let allowed = preflight.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap();
    assert!(allowed.contains("mcp-session-id") && allowed.contains("authorization"));

    // A preflight of another origin is refused like its request.
    let foreign = reqwest::Client::new()
        .request(reqwest::Method::OPTIONS, &env.url)
        .header("origin", "http://attacker.example")
        .header("access-control-request-method", "POST")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);

    // The probes act on nothing and stay open to any Host.
    let health = reqwest::Client::new()
        .get(format!("http://{own}/healthz"))
        .header("host", &rebound)
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), 200);
}

/// What the page's script does: a JSON `fetch` of a `tools/call` that runs a
/// write, the same call as a simple (`no-cors`, `text/plain`) request, and
/// as a form post; then it writes what it saw into the page.
fn page(gateway: &str, call: &str) -> String {
    // text/plain form fields arrive as `name=value`: the name carries the
    // call up to a last member whose value the form's `=` opens.
    let field = serde_json::to_string(&format!("{},\"pad\":\"", &call[..call.len() - 1])).unwrap();
    format!(
        r#"<!doctype html><html><body>
<pre id="out">pending</pre>
<iframe name="sink"></iframe>
<form id="form" method="POST" action="{gateway}" enctype="text/plain" target="sink"></form>
<script>
const GATEWAY = "{gateway}";
const CALL = {call_js};
const seen = {{}};
async function main() {{
  try {{
    const r = await fetch(GATEWAY, {{method: "POST", body: CALL,
      headers: {{"content-type": "application/json", "accept": "application/json, text/event-stream"}}}});
    seen.fetch = {{status: r.status, body: await r.text()}};
  }} catch (e) {{ seen.fetch = {{error: String(e)}}; }}
  try {{
    const r = await fetch(GATEWAY, {{method: "POST", mode: "no-cors", body: CALL,
      headers: {{"content-type": "text/plain"}}}});
    seen.simple = {{type: r.type}};
  }} catch (e) {{ seen.simple = {{error: String(e)}}; }}
  const input = document.createElement("input");
  input.name = {field};
  input.value = "\"}}";
  const form = document.getElementById("form");
  form.appendChild(input);
  const sent = new Promise(done => document.querySelector("iframe").onload = done);
  form.submit();
  await Promise.race([sent, new Promise(done => setTimeout(done, 3000))]);
  document.getElementById("out").textContent = "SEEN:" + JSON.stringify(seen) + ":END";
}}
main();
</script></body></html>"#,
        call_js = serde_json::to_string(call).unwrap(),
    )
}

/// Serves `html` at `/` on a listener already bound (another origin).
fn serve_page(listener: tokio::net::TcpListener, html: String) {
    let router = axum::Router::new().route(
        "/",
        axum::routing::get(move || {
            let html = html.clone();
            async move { Html(html) }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
}

/// What a browser reaches after DNS rebinding, when the attacker's name
/// resolves to the gateway: one origin serving the attacker's page at `/`
/// and the gateway at `/mcp`. A proxy on the page's port plays that part,
/// handing `/mcp` requests on untouched, `Host` and `Origin` included.
fn serve_rebound(listener: tokio::net::TcpListener, html: String, gateway: String) {
    let forward = move |req: axum::extract::Request| {
        let gateway = gateway.clone();
        async move {
            let (parts, body) = req.into_parts();
            let body = axum::body::to_bytes(body, 1 << 20).await.unwrap();
            let mut out = reqwest::Client::new()
                .request(parts.method, &gateway)
                .body(body);
            for (name, value) in &parts.headers {
                out = out.header(name, value);
            }
            let answer = out.send().await.unwrap();
            let status = answer.status();
            let text = answer.text().await.unwrap();
            (status, [("content-type", "application/json")], text)
        }
    };
    let router = axum::Router::new()
        .route(
            "/",
            axum::routing::get(move || {
                let html = html.clone();
                async move { Html(html) }
            }),
        )
        .route("/mcp", axum::routing::any(forward));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
}

/// Runs headless Chromium on `url` and returns what the page's script saw.
async fn chromium(url: &str, extra: &[&str]) -> Value {
    let binary = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| {
            std::process::Command::new(b)
                .arg("--version")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .expect("Chromium is not installed: run scripts/install-deps (Debian's chromium package)");
    let profile = std::env::temp_dir().join(format!(
        "pilotage-chromium-{}-{}",
        std::process::id(),
        url.rsplit(':').next().unwrap_or("0").trim_end_matches('/')
    ));
    let child = tokio::process::Command::new(binary)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
        ])
        .args(extra)
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--virtual-time-budget=15000", "--dump-dom", url])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start chromium");
    let out = tokio::time::timeout(Duration::from_secs(90), child.wait_with_output())
        .await
        .expect("chromium finished within 90 s")
        .expect("chromium output");
    let _ = std::fs::remove_dir_all(&profile);
    let dom = String::from_utf8_lossy(&out.stdout).to_string();
    let seen = dom
        .split_once("SEEN:")
        .and_then(|(_, rest)| rest.split_once(":END"))
        .map(|(json, _)| {
            json.replace("&lt;", "<")
                .replace("&gt;", ">")
                .replace("&amp;", "&")
        })
        .unwrap_or_else(|| panic!("the page's script did not finish: {dom}"));
    serde_json::from_str(&seen).unwrap_or_else(|e| panic!("{e}: {seen}"))
}

/// Requests `/mcp` answered with `status`, by the gateway's own count.
async fn answered(env: &TestEnv, status: u16) -> u64 {
    let text = reqwest::get(format!("http://{}/metrics", authority(env)))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter(|l| l.starts_with("pilotage_http_requests_total{"))
        .filter(|l| l.contains(&format!("code=\"{status}\"")))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

#[tokio::test]
async fn a_page_of_another_origin_cannot_drive_the_gateway_in_chromium_but_a_listed_one_can() {
    let foreign = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let listed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let listed_origin = format!("http://{}", listed.local_addr().unwrap());
    let env = demo(vec![listed_origin.clone()]).await;
    let manifest = Mcp::new(&env.url, None)
        .call("pilotage_manifest", json!({}))
        .await
        .structured;
    let execute = manifest["languages"][0]["loop"]["execute"]
        .as_str()
        .unwrap()
        .to_string();
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": execute, "arguments": {"workflow": write_program("gold")}}})
    .to_string();
    let html = page(&env.url, &call);
    let foreign_url = format!("http://{}/", foreign.local_addr().unwrap());
    serve_page(foreign, html.clone());
    serve_page(listed, html);

    let before = env.engine.state("acme").await;
    let refused_before = answered(&env, 403).await;
    let seen = chromium(&foreign_url, &[]).await;
    // The JSON call needs a preflight, which is refused: the call never goes.
    assert!(seen["fetch"]["error"].is_string(), "{seen}");
    assert_eq!(seen["simple"]["type"], "opaque", "{seen}");
    // The preflight, the simple request and the form post: all three
    // reached the gateway and were refused there.
    assert_eq!(answered(&env, 403).await - refused_before, 3, "{seen}");
    let after = env.engine.state("acme").await;
    assert_eq!(
        after["runs"], before["runs"],
        "a refused page ran a program"
    );
    assert_eq!(after["digest"], before["digest"]);

    let seen = chromium(&format!("{listed_origin}/"), &[]).await;
    assert_eq!(seen["fetch"]["status"], 200, "{seen}");
    let reply: Value = serde_json::from_str(seen["fetch"]["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        reply["result"]["structuredContent"]["outcome"]["status"], "success",
        "{reply}"
    );
    let ran = env.engine.state("acme").await;
    assert_eq!(ran["runs"], before["runs"].as_u64().unwrap() + 1, "{ran}");
    assert_ne!(ran["digest"], before["digest"]);
}

/// `serve` with the demo file on an address other machines can reach.
#[test]
fn serve_refuses_the_demo_credentials_off_loopback() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
        .args(["serve", "--config", DEMO])
        .env("PILOTAGE_LISTEN", "0.0.0.0:0")
        .current_dir(repo_path(""))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{text}");
    assert!(
        text.contains(DEMO) && text.contains("`server.allowed_hosts`"),
        "{text}"
    );
    assert!(
        text.contains("demo configuration deploy/gateway.local.toml"),
        "{text}"
    );
    assert!(text.contains("fix:"), "{text}");
}

/// On loopback the demo serves, and says its credentials are public.
#[tokio::test]
async fn serve_warns_about_the_demo_credentials_on_loopback() {
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
        .args(["serve"])
        .env("PILOTAGE_LISTEN", "127.0.0.1:0")
        .env_remove("PILOTAGE_CONFIG")
        .current_dir(repo_path(""))
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let warning = tokio::time::timeout(Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("public session secret") {
                return Some(line);
            }
        }
        None
    })
    .await
    .ok()
    .flatten()
    .expect("no warning about the demo credentials");
    assert!(
        warning.contains("WARN") && warning.contains(DEMO),
        "{warning}"
    );
    let _ = child.kill().await;
}

#[tokio::test]
async fn a_rebound_name_cannot_drive_the_gateway_in_chromium() {
    let env = demo(Vec::new()).await;
    let execute = Mcp::new(&env.url, None)
        .call("pilotage_manifest", json!({}))
        .await
        .structured["languages"][0]["loop"]["execute"]
        .as_str()
        .unwrap()
        .to_string();
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
        "name": execute, "arguments": {"workflow": write_program("gold")}}})
    .to_string();
    let rebound = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = rebound.local_addr().unwrap().port();
    serve_rebound(rebound, page("/mcp", &call), env.url.clone());

    let before = env.engine.state("acme").await;
    let refused_before = answered(&env, 403).await;
    // The attacker's name now resolves to this machine.
    let seen = chromium(
        &format!("http://rebind.test:{port}/"),
        &["--host-resolver-rules=MAP rebind.test 127.0.0.1"],
    )
    .await;
    assert_eq!(seen["fetch"]["status"], 403, "{seen}");
    let reply: Value = serde_json::from_str(seen["fetch"]["body"].as_str().unwrap()).unwrap();
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("server.allowed_hosts"),
        "{reply}"
    );
    // The JSON fetch, the simple request and the form post.
    assert_eq!(answered(&env, 403).await - refused_before, 3, "{seen}");
    let after = env.engine.state("acme").await;
    assert_eq!(
        after["runs"], before["runs"],
        "a rebound page ran a program"
    );
    assert_eq!(after["digest"], before["digest"]);
}
