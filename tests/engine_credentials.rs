//! Engine credentials against their real counterparts: nginx (started here
//! on 127.0.0.1) in front of the legacy engine requiring basic credentials
//! (an htpasswd file made with `openssl passwd`), a bearer token and an API
//! key header, or a client certificate (`ssl_verify_client`, a private CA
//! made with `openssl`); and a real OpenID provider (`oidc-provider`)
//! issuing the gateway's client-credentials tokens, which nginx checks
//! through `auth_request` against a verifier of the provider's signatures.
//! Each setup is tried without the credential first: validate must fail
//! with an engine error, so the credential is what makes it work.

mod common;
#[path = "oauth/provider.rs"]
#[allow(dead_code)]
mod provider;

use common::ports::{free_port, rand_suffix};
use common::{ACME_OPS, Engine, TestEnv, valid_program};
use pilotage_gateway::engines::credentials::settings::AuthTable;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A temporary folder, removed on drop.
struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!(
            "pilotage-creds-{name}-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).expect("temp dir");
        Dir(dir)
    }

    fn path(&self, file: &str) -> String {
        self.0.join(file).display().to_string()
    }

    fn write(&self, file: &str, text: &str) -> String {
        std::fs::write(self.0.join(file), text).expect("write");
        self.path(file)
    }

    /// `openssl ARGS` in this folder; its standard output.
    fn openssl(&self, args: &[&str]) -> String {
        let out = Command::new("openssl")
            .args(args)
            .current_dir(&self.0)
            .stdin(Stdio::null())
            .output()
            .expect("run openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// A CA, a server certificate for 127.0.0.1 and a client certificate,
    /// each signed by the CA (and a second CA the server does not trust).
    fn pki(&self) {
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        for ca in ["ca", "other-ca"] {
            let (key, pem, subj) = (
                format!("{ca}.key"),
                format!("{ca}.pem"),
                format!("/CN=pilotage test {ca}"),
            );
            let mut args = vec!["req", "-x509"];
            args.extend(ec);
            args.extend(["-keyout", &key, "-out", &pem, "-days", "2", "-subj", &subj]);
            self.openssl(&args);
        }
        self.write(
            "server.ext",
            "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
        );
        self.write(
            "client.ext",
            "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
        );
        for (name, ca) in [("server", "ca"), ("client", "ca"), ("stranger", "other-ca")] {
            let (key, csr, pem, subj) = (
                format!("{name}.key"),
                format!("{name}.csr"),
                format!("{name}.pem"),
                format!("/CN={name}"),
            );
            let mut args = vec!["req", "-new"];
            args.extend(ec);
            args.extend(["-keyout", &key, "-out", &csr, "-subj", &subj]);
            self.openssl(&args);
            let ext = if name == "server" {
                "server.ext"
            } else {
                "client.ext"
            };
            let (ca_pem, ca_key) = (format!("{ca}.pem"), format!("{ca}.key"));
            self.openssl(&[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                &ca_pem,
                "-CAkey",
                &ca_key,
                "-CAcreateserial",
                "-out",
                &pem,
                "-days",
                "2",
                "-extfile",
                ext,
            ]);
        }
    }
}

/// A child process killed on drop.
struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn nginx_binary() -> &'static str {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap_or("nginx")
}

/// nginx on a free loopback port with `server` as its server block body
/// (after the `listen` line, `tls` adding `ssl`).
fn nginx(dir: &Dir, tls: bool, server: &str) -> (Process, u16) {
    let port = free_port();
    let d = dir.0.display();
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    let user = if root { "user root root;" } else { "" };
    let ssl = if tls { " ssl" } else { "" };
    // One process, no workers: killing it leaves nothing behind (a killed
    // master would orphan its workers).
    let conf = format!(
        "{user}\ndaemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/nginx.err warn;\n\
         events {{ worker_connections 64; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
           fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
           server {{\n    listen 127.0.0.1:{port}{ssl};\n{server}\n  }}\n}}\n"
    );
    let conf_path = dir.write("nginx.conf", &conf);
    let mut child = Command::new(nginx_binary())
        .args([
            "-p",
            &d.to_string(),
            "-c",
            &conf_path,
            "-e",
            &dir.path("nginx.err"),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start nginx");
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(dir.path("nginx.err")).unwrap_or_default();
            panic!("nginx exited: {status}: {log}");
        }
        assert!(Instant::now() < deadline, "nginx not listening after 20 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    (Process(child), port)
}

/// The auth table of `text`.
fn auth(text: &str) -> AuthTable {
    AuthTable(toml::from_str(text).expect("auth table"))
}

/// A gateway in front of `engine` whose engine URL is `url`, with `auth`.
async fn gateway(engine: Engine, url: &str, ca: Option<String>, auth: AuthTable) -> TestEnv {
    let url = url.to_string();
    TestEnv::in_front_of(engine, "tests/fixtures/features.toml", move |cfg| {
        cfg.engine.url = url;
        cfg.engine.retries = 0;
        if let Some(ca) = ca {
            cfg.engine.ca_file = ca;
        }
        cfg.engine.auth = auth;
    })
    .await
}

/// validate then run through the gateway's MCP endpoint.
async fn validate_and_run(env: &TestEnv) {
    let mut client = env.client(ACME_OPS);
    client.initialize().await;
    let v = client
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await;
    assert_eq!(v.structured["valid"], true, "{}", v.raw);
    let r = client
        .call(
            "run_workflow",
            json!({"workflow": valid_program(), "mode": "immediate", "input": {"id": "cus_1"},
                "expected_catalog_version": v.structured["catalog_version"]}),
        )
        .await;
    assert_eq!(r.structured["outcome"]["status"], "success", "{}", r.raw);
    assert_eq!(r.structured["output"]["name"], "Ada", "{}", r.raw);
}

/// validate refused with an engine error; the error text, for more checks.
async fn validate_fails(env: &TestEnv) -> String {
    let mut client = env.client(ACME_OPS);
    client.initialize().await;
    let v = client
        .call("validate_workflow", json!({"workflow": valid_program()}))
        .await;
    assert_ne!(v.structured["valid"], true, "{}", v.raw);
    let text = v.raw.to_string();
    assert!(
        text.contains("engine"),
        "the failure names the engine: {text}"
    );
    text
}

#[tokio::test(flavor = "multi_thread")]
async fn basic_credentials_from_a_file() {
    let dir = Dir::new("basic");
    let hash = dir.openssl(&["passwd", "-apr1", "engine-pass-1"]);
    dir.write("htpasswd", &format!("svc:{}", hash.trim()));
    let password = dir.write("password", "engine-pass-1\n");
    let wrong = dir.write("wrong", "engine-pass-2\n");
    let engine = Engine::spawn(&[]);
    let upstream = engine.url.clone();
    let (_nginx, port) = nginx(
        &dir,
        false,
        &format!(
            "    auth_basic \"engine\";\n    auth_basic_user_file {};\n    location / {{ proxy_pass {upstream}; }}",
            dir.path("htpasswd")
        ),
    );
    let url = format!("http://127.0.0.1:{port}");
    let none = gateway(Engine::spawn(&[]), &url, None, AuthTable::default()).await;
    assert!(
        validate_fails(&none)
            .await
            .contains("the workflow engine failed")
    );
    let bad = gateway(
        Engine::spawn(&[]),
        &url,
        None,
        auth(&format!("username = \"svc\"\npassword_file = \"{wrong}\"")),
    )
    .await;
    let text = validate_fails(&bad).await;
    assert!(
        !text.contains("engine-pass"),
        "no secret in the answer: {text}"
    );
    let good = gateway(
        engine,
        &url,
        None,
        auth(&format!(
            "username = \"svc\"\npassword_file = \"{password}\""
        )),
    )
    .await;
    validate_and_run(&good).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bearer_token_and_an_api_key_header_from_files() {
    let dir = Dir::new("bearer");
    let token = dir.write("token", "tok-3f9a\n");
    let key = dir.write("api-key", "key-77\n");
    let engine = Engine::spawn(&[]);
    let upstream = engine.url.clone();
    let (_nginx, port) = nginx(
        &dir,
        false,
        &format!(
            "    location / {{\n      if ($http_authorization != \"Bearer tok-3f9a\") {{ return 401; }}\n      \
             if ($http_x_api_key != \"key-77\") {{ return 403; }}\n      proxy_pass {upstream};\n    }}"
        ),
    );
    let url = format!("http://127.0.0.1:{port}");
    let none = gateway(Engine::spawn(&[]), &url, None, AuthTable::default()).await;
    assert!(
        validate_fails(&none)
            .await
            .contains("the workflow engine failed")
    );
    let token_only = gateway(
        Engine::spawn(&[]),
        &url,
        None,
        auth(&format!("token_file = \"{token}\"")),
    )
    .await;
    assert!(
        validate_fails(&token_only)
            .await
            .contains("the workflow engine failed")
    );
    let both = gateway(
        engine,
        &url,
        None,
        auth(&format!(
            "token_file = \"{token}\"\nheaders = {{ \"X-Api-Key\" = {{ file = \"{key}\" }} }}"
        )),
    )
    .await;
    validate_and_run(&both).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_certificate_for_mutual_tls() {
    let dir = Dir::new("mtls");
    dir.pki();
    let engine = Engine::spawn(&[]);
    let upstream = engine.url.clone();
    let (_nginx, port) = nginx(
        &dir,
        true,
        &format!(
            "    ssl_certificate {};\n    ssl_certificate_key {};\n    ssl_client_certificate {};\n    \
             ssl_verify_client on;\n    location / {{ proxy_pass {upstream}; }}",
            dir.path("server.pem"),
            dir.path("server.key"),
            dir.path("ca.pem")
        ),
    );
    let url = format!("https://127.0.0.1:{port}");
    let ca = Some(dir.path("ca.pem"));
    let none = gateway(Engine::spawn(&[]), &url, ca.clone(), AuthTable::default()).await;
    validate_fails(&none).await;
    let stranger = gateway(
        Engine::spawn(&[]),
        &url,
        ca.clone(),
        auth(&format!(
            "client_cert_file = \"{}\"\nclient_key_file = \"{}\"",
            dir.path("stranger.pem"),
            dir.path("stranger.key")
        )),
    )
    .await;
    validate_fails(&stranger).await;
    let good = gateway(
        engine,
        &url,
        ca,
        auth(&format!(
            "client_cert_file = \"{}\"\nclient_key_file = \"{}\"",
            dir.path("client.pem"),
            dir.path("client.key")
        )),
    )
    .await;
    validate_and_run(&good).await;
}

/// Checks `Authorization` against the provider's key set, as a resource
/// server would: RS256, the provider as issuer, `audience` as audience.
/// Records every distinct token it accepted.
struct Verifier {
    url: String,
    accepted: Arc<Mutex<BTreeSet<String>>>,
}

impl Verifier {
    async fn start(issuer: &str, audience: &str) -> Verifier {
        let http = reqwest::Client::new();
        let config: Value = http
            .get(format!("{issuer}/.well-known/openid-configuration"))
            .send()
            .await
            .expect("discovery")
            .json()
            .await
            .expect("discovery JSON");
        let jwks: jsonwebtoken::jwk::JwkSet = http
            .get(config["jwks_uri"].as_str().expect("jwks_uri"))
            .send()
            .await
            .expect("jwks")
            .json()
            .await
            .expect("jwks JSON");
        let mut validation = jsonwebtoken::Validation::new(jsonwebtoken::Algorithm::RS256);
        validation.set_issuer(&[issuer]);
        validation.set_audience(&[audience]);
        let accepted = Arc::new(Mutex::new(BTreeSet::new()));
        let seen = accepted.clone();
        let check = move |headers: axum::http::HeaderMap| {
            let token = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .map(str::to_string);
            let ok = token.as_ref().is_some_and(|t| {
                jwks.keys.iter().any(|k| {
                    jsonwebtoken::DecodingKey::from_jwk(k).is_ok_and(|key| {
                        jsonwebtoken::decode::<Value>(t, &key, &validation).is_ok()
                    })
                })
            });
            if ok && let Some(t) = token {
                seen.lock().expect("accepted").insert(t);
            }
            async move {
                if ok {
                    axum::http::StatusCode::NO_CONTENT
                } else {
                    axum::http::StatusCode::UNAUTHORIZED
                }
            }
        };
        let app = axum::Router::new().route("/verify", axum::routing::get(check));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}/verify", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Verifier { url, accepted }
    }

    fn tokens(&self) -> usize {
        self.accepted.lock().expect("accepted").len()
    }
}

const ENGINE_RESOURCE: &str = "https://engine.test/";

#[tokio::test(flavor = "multi_thread")]
async fn oauth_client_credentials_from_a_real_provider_are_cached_and_refreshed() {
    let provider =
        provider::Provider::start_with(&["https://gateway.test/mcp", ENGINE_RESOURCE, "4"]);
    let token_url = provider.configuration().await["token_endpoint"]
        .as_str()
        .expect("token_endpoint")
        .to_string();
    let verifier = Verifier::start(&provider.issuer, ENGINE_RESOURCE).await;
    let dir = Dir::new("oauth");
    let secret = dir.write("client-secret", "gateway-secret\n");
    let wrong = dir.write("wrong-secret", "not-the-secret\n");
    let engine = Engine::spawn(&[]);
    let upstream = engine.url.clone();
    let (_nginx, port) = nginx(
        &dir,
        false,
        &format!(
            "    location = /_verify {{ internal; proxy_pass {}; proxy_pass_request_body off; \
             proxy_set_header Content-Length \"\"; }}\n    \
             location / {{ auth_request /_verify; proxy_pass {upstream}; }}",
            verifier.url
        ),
    );
    let url = format!("http://127.0.0.1:{port}");
    let none = gateway(Engine::spawn(&[]), &url, None, AuthTable::default()).await;
    assert!(
        validate_fails(&none)
            .await
            .contains("the workflow engine failed")
    );
    let oauth = |secret: &str| {
        auth(&format!(
            "token_url = \"{token_url}\"\nclient_id = \"gateway\"\nclient_secret_file = \"{secret}\"\n\
             scope = \"engine:run\"\nresource = \"{ENGINE_RESOURCE}\""
        ))
    };
    // A refused client is an engine error; the token endpoint's address
    // and answer stay in the gateway's log, never in the caller's answer.
    let refused = gateway(Engine::spawn(&[]), &url, None, oauth(&wrong)).await;
    let text = validate_fails(&refused).await;
    assert!(text.contains("the workflow engine failed"), "{text}");
    assert!(
        !text.contains("invalid_client") && !text.contains(&url),
        "{text}"
    );
    assert!(!text.contains("not-the-secret"), "{text}");
    assert_eq!(provider.grants_to("gateway"), 0);

    let env = gateway(engine, &url, None, oauth(&secret)).await;
    validate_and_run(&env).await;
    validate_and_run(&env).await;
    // Every call of both loops carried the same token: fetched once.
    assert_eq!(provider.grants_to("gateway"), 1);
    assert_eq!(verifier.tokens(), 1);
    // The token lives 4 s and is replaced ahead of its expiry.
    tokio::time::sleep(Duration::from_millis(4200)).await;
    validate_and_run(&env).await;
    assert_eq!(provider.grants_to("gateway"), 2);
    assert_eq!(verifier.tokens(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_inline_secret_is_refused_by_the_configuration_check() {
    let path = common::repo_path("tests/fixtures/features.toml");
    let text = std::fs::read_to_string(&path).expect("read config");
    let mut cfg = pilotage_gateway::config::Config::parse(&text, &path).expect("parse");
    cfg.engine.auth = auth("token = \"s3cr3t-inline\"");
    let problems = cfg.validate();
    let problem = problems
        .iter()
        .find(|p| p.key == "engine.auth.token")
        .unwrap_or_else(|| panic!("{problems:?}"));
    assert!(problem.fix.contains("token_file"), "{problem:?}");
    assert!(!format!("{problems:?}").contains("s3cr3t"));
    assert!(
        !format!("{cfg:?}").contains("s3cr3t"),
        "Debug shows no secret"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn credentials_never_follow_a_redirect_to_another_origin() {
    // Another origin that records what reaches it.
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = seen.clone();
    let app = axum::Router::new().fallback(move |headers: axum::http::HeaderMap| {
        let auth = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("none")
            .to_string();
        record.lock().expect("seen").push(auth);
        async { axum::http::StatusCode::NOT_FOUND }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let elsewhere = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    let dir = Dir::new("redirect");
    let token = dir.write("token", "tok-redirect\n");
    let (_nginx, port) = nginx(
        &dir,
        false,
        &format!("    location / {{ return 307 {elsewhere}$request_uri; }}"),
    );
    let url = format!("http://127.0.0.1:{port}");
    let env = gateway(
        Engine::spawn(&[]),
        &url,
        None,
        auth(&format!("token_file = \"{token}\"")),
    )
    .await;
    validate_fails(&env).await;
    assert!(
        seen.lock().expect("seen").is_empty(),
        "a request followed the redirect: {:?}",
        seen.lock().expect("seen")
    );
}
