//! A test identity provider: Ed25519 signing keys generated per test, a JWKS
//! served on 127.0.0.1 (whose keys the test rotates, and which counts its
//! fetches), and access tokens minted with any claims.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

/// The audience every gateway under test is configured with.
pub const RESOURCE: &str = "https://gateway.test/mcp";

/// One signing key.
#[derive(Clone)]
pub struct Key {
    pub kid: String,
    encoding: EncodingKey,
    public_x: String,
}

impl Key {
    /// A fresh random Ed25519 key.
    pub fn generate(kid: &str) -> Key {
        let seed: [u8; 32] = rand::random();
        let signing = ed25519_dalek::SigningKey::from_bytes(&seed);
        // PKCS#8 v1 wrapping of an Ed25519 seed (RFC 8410 §7): a fixed
        // 16-byte prefix, then the 32 seed bytes.
        let mut der = hex_bytes("302e020100300506032b657004220420");
        der.extend_from_slice(&seed);
        Key {
            kid: kid.to_string(),
            encoding: EncodingKey::from_ed_der(&der),
            public_x: URL_SAFE_NO_PAD.encode(signing.verifying_key().to_bytes()),
        }
    }

    pub fn jwk(&self) -> Value {
        json!({"kty": "OKP", "crv": "Ed25519", "x": self.public_x, "kid": self.kid,
            "alg": "EdDSA", "use": "sig"})
    }

    /// An access token (typ `at+jwt`, RFC 9068) with `claims` signed by
    /// this key.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.typ = Some("at+jwt".into());
        header.kid = Some(self.kid.clone());
        self.sign_with(header, claims)
    }

    /// `claims` signed by this key under `header`.
    pub fn sign_with(&self, header: Header, claims: &Value) -> String {
        jsonwebtoken::encode(&header, claims, &self.encoding).expect("sign")
    }
}

fn hex_bytes(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// A JWKS endpoint on 127.0.0.1.
#[derive(Clone)]
pub struct Jwks {
    pub url: String,
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
    /// While set, every fetch answers HTTP 500 (an identity provider outage).
    failing: Arc<std::sync::atomic::AtomicBool>,
}

impl Jwks {
    /// Serves `keys` until the test ends.
    pub async fn serve(keys: &[&Key]) -> Jwks {
        let state = Jwks {
            url: String::new(),
            keys: Arc::new(Mutex::new(keys.iter().map(|k| k.jwk()).collect())),
            fetches: Arc::new(AtomicUsize::new(0)),
            failing: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        };
        let served = state.clone();
        let app = axum::Router::new().route(
            "/jwks",
            axum::routing::get(move || {
                let s = served.clone();
                async move {
                    s.fetches.fetch_add(1, Ordering::SeqCst);
                    if s.failing.load(Ordering::SeqCst) {
                        return Err(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
                    }
                    let keys = s.keys.lock().expect("keys").clone();
                    Ok(axum::Json(json!({"keys": keys})))
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind JWKS");
        let url = format!("http://{}/jwks", listener.local_addr().expect("addr"));
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Jwks { url, ..state }
    }

    /// Publishes exactly `keys` from now on (a rotation).
    pub fn publish(&self, keys: &[&Key]) {
        *self.keys.lock().expect("keys") = keys.iter().map(|k| k.jwk()).collect();
    }

    /// Starts or ends an outage.
    pub fn fail(&self, failing: bool) {
        self.failing.store(failing, Ordering::SeqCst);
    }

    /// How many times the JWKS has been fetched.
    pub fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

/// Claims of a token valid for the next hour; `extra` overrides or adds.
pub fn claims(issuer: &str, sub: &str, scope: &str, extra: Value) -> Value {
    let now = now();
    let mut c = json!({"iss": issuer, "sub": sub, "aud": RESOURCE, "iat": now,
        "nbf": now, "exp": now + 3600, "scope": scope});
    if let (Some(c), Some(extra)) = (c.as_object_mut(), extra.as_object()) {
        for (k, v) in extra {
            c.insert(k.clone(), v.clone());
        }
    }
    c
}

/// Every Pilotage scope.
pub const ALL_SCOPES: &str =
    "pilotage:learn pilotage:validate pilotage:execute pilotage:deploy pilotage:trace";
