//! OAuth through the shipped proxies, as the compose profile `tls` runs
//! them: Debian's nginx with deploy/nginx-tls.conf (HTTPS with a private CA
//! made here by `openssl`) in front of nginx with deploy/nginx.conf in front
//! of a gateway whose resource is the HTTPS URL clients see. Only what differs
//! outside compose is rewritten in the shipped files: listen addresses,
//! upstream addresses, certificate and scratch paths.
//!
//! The client knows only the MCP URL and its client credentials: it finds
//! the metadata from the 401, the authorization server from the metadata,
//! the token endpoint from the server's discovery, and completes the loop.

use super::common::pki::Pki;
use super::common::ports::{free_port, rand_suffix};
use super::common::{Mcp, repo_path};
use super::idp::ALL_SCOPES;
use super::provider::{AGENT, PLAIN_JWT, Provider};
use super::real_provider::{drive_the_loop, gateway};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `text` with each `(from, to)` replaced; every `from` must occur, so a
/// change to the shipped file fails here instead of testing something else.
fn adapt(text: &str, edits: &[(&str, String)]) -> String {
    let mut out = text.to_string();
    for (from, to) in edits {
        assert!(
            out.contains(from),
            "the shipped file no longer has '{from}'"
        );
        out = out.replace(from, to);
    }
    out
}

/// Where nginx writes its scratch files, inside `dir`.
fn scratch_paths(dir: &Path) -> String {
    let d = dir.display();
    format!(
        "http {{\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n  \
         fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;"
    )
}

/// nginx, killed on drop.
struct Nginx(Child);

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_nginx(dir: &Path, name: &str, conf: &str, port: u16) -> Nginx {
    let sub = dir.join(name);
    std::fs::create_dir_all(&sub).expect("nginx dir");
    let file = sub.join("nginx.conf");
    std::fs::write(&file, conf).expect("write nginx.conf");
    let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("nginx");
    // As root the workers would switch to `nobody`, which may not read the
    // scratch folder: they stay the invoking user.
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    // One process, no workers: killing it on drop leaves nothing behind (a
    // killed master would orphan its workers).
    let globals = if root {
        "daemon off; master_process off; user root root;"
    } else {
        "daemon off; master_process off;"
    };
    let mut child = Command::new(nginx)
        .arg("-p")
        .arg(&sub)
        .arg("-c")
        .arg(&file)
        .args(["-e", "stderr", "-g", globals])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nginx (Debian's nginx package)");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("nginx ({name}) exited: {status}");
        }
        assert!(Instant::now() < deadline, "nginx ({name}) not listening");
        std::thread::sleep(Duration::from_millis(50));
    }
    Nginx(child)
}

/// The two proxies in front of `gateway_port`; returns them and the HTTPS port.
fn proxies(dir: &Path, gateway_port: u16, tls_port: u16) -> (Nginx, Nginx) {
    let d = dir.display();
    let balancer_port = free_port();
    let shipped = std::fs::read_to_string(repo_path("deploy/nginx.conf")).expect("nginx.conf");
    let balancer = adapt(
        &shipped,
        &[
            (
                "set $gateways gateway:8080;",
                format!("set $gateways 127.0.0.1:{gateway_port};"),
            ),
            ("listen 8080;", format!("listen 127.0.0.1:{balancer_port};")),
            ("pid /tmp/nginx.pid;", format!("pid {d}/balancer.pid;")),
            ("access_log /dev/stdout pilotage;", "access_log off;".into()),
            ("http {", scratch_paths(&dir.join("balancer"))),
        ],
    );
    let shipped =
        std::fs::read_to_string(repo_path("deploy/nginx-tls.conf")).expect("nginx-tls.conf");
    let tls = adapt(
        &shipped,
        &[
            (
                "set $balancer nginx:8080;",
                format!("set $balancer 127.0.0.1:{balancer_port};"),
            ),
            (
                "listen 8443 ssl;",
                format!("listen 127.0.0.1:{tls_port} ssl;"),
            ),
            ("/etc/nginx/tls/server.pem", format!("{d}/server.pem")),
            ("/etc/nginx/tls/server.key", format!("{d}/server.key")),
            ("pid /tmp/nginx.pid;", format!("pid {d}/tls.pid;")),
            ("access_log /dev/stdout tls;", "access_log off;".into()),
            ("http {", scratch_paths(&dir.join("tls"))),
        ],
    );
    let b = start_nginx(dir, "balancer", &balancer, balancer_port);
    let t = start_nginx(dir, "tls", &tls, tls_port);
    (b, t)
}

/// The quoted `name` parameter of a `WWW-Authenticate` challenge.
fn challenge_param(challenge: &str, name: &str) -> Option<String> {
    let start = challenge.find(&format!("{name}=\""))? + name.len() + 2;
    let len = challenge[start..].find('"')?;
    Some(challenge[start..start + len].to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_discovers_everything_from_the_401_through_the_shipped_tls_proxy() {
    // A CA and a certificate for 127.0.0.1; the proxies' files go beside them.
    let scratch = Pki::new(std::env::temp_dir().join(format!(
        "pilotage-oauth-front-{}-{}",
        std::process::id(),
        rand_suffix()
    )));
    let tls_port = free_port();
    let resource = format!("https://127.0.0.1:{tls_port}/mcp");
    let provider = Provider::start(&resource);
    let env = gateway(&provider.issuer, &resource, true).await;
    let gateway_port: u16 = env
        .url
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .expect("gateway port");
    let (_balancer, _tls) = proxies(&scratch.dir, gateway_port, tls_port);
    let ca = std::fs::read(scratch.path("ca.pem")).expect("ca.pem");
    let http = reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(&ca).expect("CA")])
        .timeout(Duration::from_secs(30))
        .build()
        .expect("https client");

    // 1. The MCP endpoint refuses and points at its metadata.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "oauth-front-test", "version": "1"}}});
    let (status, headers, answer) = Mcp::with_http(&resource, None, http.clone())
        .raw(&body.to_string())
        .await;
    assert_eq!(status, 401, "{answer}");
    let challenge = headers
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .expect("WWW-Authenticate")
        .to_string();
    let metadata_url = challenge_param(&challenge, "resource_metadata").expect("resource_metadata");
    assert_eq!(
        metadata_url,
        format!("https://127.0.0.1:{tls_port}/.well-known/oauth-protected-resource/mcp")
    );
    let scope = challenge_param(&challenge, "scope").expect("scope");

    // 2. The metadata, through both proxies, names the resource and its
    // authorization server.
    let resp = http.get(&metadata_url).send().await.expect("metadata");
    assert_eq!(resp.status(), 200);
    let doc: Value = resp.json().await.expect("metadata JSON");
    assert_eq!(doc["resource"], resource.as_str(), "{doc}");
    let server = doc["authorization_servers"][0]
        .as_str()
        .expect("authorization server")
        .to_string();
    assert_eq!(server, provider.issuer);
    let bare = http
        .get(format!(
            "https://127.0.0.1:{tls_port}/.well-known/oauth-protected-resource"
        ))
        .send()
        .await
        .expect("bare metadata");
    assert_eq!(bare.status(), 200);

    // 3. The authorization server's own discovery names its token endpoint.
    let discovery: Value = reqwest::get(format!("{server}/.well-known/openid-configuration"))
        .await
        .expect("discovery")
        .json()
        .await
        .expect("discovery JSON");
    assert_eq!(discovery["issuer"], server.as_str());
    let token_endpoint = discovery["token_endpoint"]
        .as_str()
        .expect("token_endpoint");
    let scopes = format!("{scope} pilotage:execute pilotage:trace");
    let token = provider
        .token_at(token_endpoint, AGENT, &scopes, &resource)
        .await;

    // 4. The loop, through the proxies, with that token.
    let mut client = Mcp::with_http(&resource, Some(&token), http.clone());
    drive_the_loop(&mut client).await;

    // A JWT of typ `JWT` from the same server is refused there too.
    let plain = provider
        .token_at(token_endpoint, PLAIN_JWT, ALL_SCOPES, &resource)
        .await;
    let (status, headers, answer) = Mcp::with_http(&resource, Some(&plain), http)
        .raw(&body.to_string())
        .await;
    assert_eq!(status, 401, "{answer}");
    let challenge = headers
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
}
