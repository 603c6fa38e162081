//! A real OpenID provider for the tests: `oidc-provider` from npm (pinned in
//! tests/oauth/provider/package-lock.json, installed with `npm ci` on first
//! use), started by tests/oauth/provider/provider.mjs on a free loopback
//! port, and a client of its token endpoint (client credentials with a
//! resource indicator).

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The agent client: tokens of typ `at+jwt`.
pub const AGENT: (&str, &str) = ("agent", "agent-secret");
/// A client whose tokens carry the header typ `JWT`, as an ID token does.
pub const PLAIN_JWT: (&str, &str) = ("plain-jwt", "plain-secret");

/// One install at a time: tests of this binary run in parallel.
static INSTALL: Mutex<()> = Mutex::new(());

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oauth/provider")
}

/// `npm ci` unless the pinned package is already installed.
fn install() {
    let _once = INSTALL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = dir();
    if dir
        .join("node_modules/oidc-provider/package.json")
        .is_file()
    {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .status()
        .expect("run npm (Node.js 20 or later is needed for the OAuth tests)");
    assert!(status.success(), "npm ci in {} failed", dir.display());
}

/// The provider process, killed on drop.
pub struct Provider {
    child: Child,
    pub issuer: String,
    http: reqwest::Client,
    /// Tokens issued so far, by client id (read by tests/engine_credentials.rs).
    #[allow(dead_code)]
    grants: Arc<Mutex<Vec<String>>>,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Provider {
    /// A provider issuing tokens for `resource` (at most 30 s to start).
    pub fn start(resource: &str) -> Provider {
        Self::start_with(&[resource])
    }

    /// A provider started with `args` (RESOURCE [ENGINE_RESOURCE [ENGINE_TTL]]).
    pub fn start_with(args: &[&str]) -> Provider {
        install();
        let mut child = Command::new("node")
            .arg("provider.mjs")
            .args(args)
            .current_dir(dir())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start node provider.mjs");
        let stdout = child.stdout.take().expect("provider stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        let grants = Arc::new(Mutex::new(Vec::new()));
        let seen = grants.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if let Some(issuer) = line.strip_prefix("issuer ") {
                    let _ = tx.send(issuer.to_string());
                } else if let Some(client) = line.strip_prefix("grant ") {
                    seen.lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(client.to_string());
                }
            }
        });
        let issuer = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(issuer) => issuer,
            Err(_) => {
                let _ = child.kill();
                panic!("the OpenID provider did not start within 30 s");
            }
        };
        Provider {
            child,
            issuer,
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(10))
                .build()
                .expect("http client"),
            grants,
        }
    }

    /// How many tokens `client` has been issued.
    #[allow(dead_code)]
    pub fn grants_to(&self, client: &str) -> usize {
        self.grants
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .filter(|c| *c == client)
            .count()
    }

    /// The provider's own discovery document.
    pub async fn configuration(&self) -> Value {
        self.http
            .get(format!("{}/.well-known/openid-configuration", self.issuer))
            .send()
            .await
            .expect("discovery")
            .json()
            .await
            .expect("discovery JSON")
    }

    /// An access token for `resource` with `scope`, from the token endpoint
    /// `token_endpoint` (as discovered), for `client`.
    pub async fn token_at(
        &self,
        token_endpoint: &str,
        client: (&str, &str),
        scope: &str,
        resource: &str,
    ) -> String {
        let resp = self
            .http
            .post(token_endpoint)
            .basic_auth(client.0, Some(client.1))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[
                ("grant_type", "client_credentials"),
                ("scope", scope),
                ("resource", resource),
            ]))
            .send()
            .await
            .expect("token request");
        let status = resp.status();
        let body: Value = resp.json().await.expect("token response JSON");
        assert!(status.is_success(), "token endpoint: HTTP {status}: {body}");
        assert_eq!(body["token_type"], "Bearer", "{body}");
        body["access_token"]
            .as_str()
            .expect("access_token")
            .to_string()
    }

    /// Like [`Self::token_at`], at the token endpoint its metadata names.
    pub async fn token(&self, client: (&str, &str), scope: &str, resource: &str) -> String {
        let endpoint = self.configuration().await["token_endpoint"]
            .as_str()
            .expect("token_endpoint")
            .to_string();
        self.token_at(&endpoint, client, scope, resource).await
    }
}

/// An `application/x-www-form-urlencoded` body.
fn form(pairs: &[(&str, &str)]) -> String {
    let encode = |s: &str| {
        s.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect::<String>()
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The decoded header of a compact JWS.
pub fn header(token: &str) -> Value {
    use base64::Engine as _;
    let part = token.split('.').next().expect("header part");
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part)
        .expect("base64url header");
    serde_json::from_slice(&bytes).expect("header JSON")
}
