//! One issuer's signing keys (its JWKS), fetched over HTTP and cached.
//!
//! The set is fetched on first use and again once it is older than its
//! maximum age. A token naming a key id the cached set lacks usually means the
//! issuer rotated its keys, so the set is fetched again at once, but at most
//! once per `refetch_after`: a stream of tokens with made-up key ids costs the
//! issuer one request per interval, not one per token. A failed refresh keeps
//! the keys already known; while none are known, tokens of that issuer cannot
//! be checked (and the issuer is asked again after the same interval).

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A usable public key from the set.
#[derive(Clone)]
pub struct SigningKey {
    pub key: DecodingKey,
    /// The `alg` the set pins this key to, if any.
    pub algorithm: Option<Algorithm>,
}

/// Why no key set is available.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the JWKS at {uri} cannot be fetched: {reason}")]
pub struct JwksError {
    pub uri: String,
    pub reason: String,
}

/// The cached key set of one issuer.
pub struct JwksCache {
    uri: String,
    http: reqwest::Client,
    max_age: Duration,
    refetch_after: Duration,
    /// Held across a fetch, so concurrent misses cause one request.
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    keys: Arc<HashMap<String, SigningKey>>,
    fetched_at: Option<Instant>,
    last_attempt: Option<Instant>,
    last_error: Option<String>,
}

impl JwksCache {
    pub fn new(
        uri: &str,
        http: reqwest::Client,
        max_age: Duration,
        refetch_after: Duration,
    ) -> Self {
        Self {
            uri: uri.to_string(),
            http,
            max_age,
            refetch_after,
            state: tokio::sync::Mutex::new(State::default()),
        }
    }

    /// The key `kid` names (a token without `kid` matches a set of exactly
    /// one key); `Ok(None)` when the issuer publishes no such key.
    pub async fn key(&self, kid: Option<&str>) -> Result<Option<SigningKey>, JwksError> {
        let mut st = self.state.lock().await;
        // Every fetch, successful or not, waits out the refetch interval, so
        // neither made-up key ids nor an unreachable issuer cause a request
        // per token.
        let may_fetch = st
            .last_attempt
            .is_none_or(|t| t.elapsed() >= self.refetch_after);
        let stale = st.fetched_at.is_none_or(|t| t.elapsed() >= self.max_age);
        let mut fetched = false;
        if stale && may_fetch {
            self.refresh(&mut st).await;
            fetched = true;
        }
        if st.keys.is_empty() {
            return Err(JwksError {
                uri: self.uri.clone(),
                reason: st
                    .last_error
                    .clone()
                    .unwrap_or_else(|| "no signing key published".into()),
            });
        }
        if let Some(k) = find(&st.keys, kid) {
            return Ok(Some(k));
        }
        // An unknown key id: the issuer may have rotated since the last fetch.
        if !fetched && may_fetch {
            self.refresh(&mut st).await;
            return Ok(find(&st.keys, kid));
        }
        Ok(None)
    }

    /// Fetches the set; a failure keeps the keys already known and is
    /// remembered for the answer while none are.
    async fn refresh(&self, st: &mut State) {
        st.last_attempt = Some(Instant::now());
        match self.fetch().await {
            Ok(keys) => {
                st.keys = Arc::new(keys);
                st.fetched_at = Some(Instant::now());
                st.last_error = None;
            }
            Err(reason) => {
                tracing::warn!(uri = %self.uri, %reason, known_keys = st.keys.len(),
                    "JWKS fetch failed; keeping the keys already known");
                st.last_error = Some(reason);
            }
        }
    }

    async fn fetch(&self) -> Result<HashMap<String, SigningKey>, String> {
        let resp = self
            .http
            .get(&self.uri)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| e.to_string())?;
        if !resp.status().is_success() {
            return Err(format!("HTTP {}", resp.status()));
        }
        let body: Value = resp.json().await.map_err(|e| e.to_string())?;
        let keys = body
            .get("keys")
            .and_then(Value::as_array)
            .ok_or("no 'keys' array")?;
        let mut out = HashMap::new();
        for raw in keys {
            // Encryption keys and key types this build cannot use are skipped,
            // so one exotic key does not hide the others.
            if raw.get("use").and_then(Value::as_str) == Some("enc") {
                continue;
            }
            let Ok(jwk) = serde_json::from_value::<Jwk>(raw.clone()) else {
                continue;
            };
            let Ok(key) = DecodingKey::from_jwk(&jwk) else {
                continue;
            };
            let algorithm = jwk
                .common
                .key_algorithm
                .and_then(|a| a.to_string().parse::<Algorithm>().ok());
            let kid = jwk.common.key_id.clone().unwrap_or_default();
            out.insert(kid, SigningKey { key, algorithm });
        }
        Ok(out)
    }
}

fn find(keys: &HashMap<String, SigningKey>, kid: Option<&str>) -> Option<SigningKey> {
    match kid {
        Some(k) => keys.get(k).cloned(),
        None if keys.len() == 1 => keys.values().next().cloned(),
        None => None,
    }
}
