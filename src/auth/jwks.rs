//! One issuer's signing keys (its JWKS), fetched over HTTP and cached.
//!
//! The set is fetched on first use and again once it is older than its
//! maximum age. Its address is configured or, when it is not, read from the
//! issuer's metadata ([`super::discovery`]) and read again after a failure.
//!
//! A token naming a key id the cached set lacks usually means the issuer
//! rotated its keys, so the set is fetched again, but at most once per
//! `unknown_kid_interval` (a second by default): a token arriving sooner
//! waits, without holding up other tokens, for the next fetch, which then
//! answers every token waiting for it. Made-up key ids thus cost the issuer
//! one request per interval whatever their number, and can never close the
//! window in which a real rotation is seen: a token with the new key is
//! accepted at most one interval after the issuer publishes it. A failed
//! fetch keeps the keys already known and is not retried for `retry_after`;
//! while no key is known, tokens of that issuer cannot be checked.

use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// A usable public key from the set.
#[derive(Clone)]
pub struct SigningKey {
    pub key: DecodingKey,
    /// The `alg` the set pins this key to, if any.
    pub algorithm: Option<Algorithm>,
}

/// Why no key set is available: for the log, never for the caller (it
/// names internal addresses and the HTTP client's error).
#[derive(Debug, Clone, thiserror::Error)]
#[error("the JWKS at {uri} cannot be fetched: {reason}")]
pub struct JwksError {
    pub uri: String,
    pub reason: String,
}

/// Where the set is published.
enum Source {
    Configured(String),
    /// Read from the metadata of this issuer.
    Discovered(String),
}

/// How the cache refetches.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    /// A set older than this is fetched again.
    pub max_age: Duration,
    /// After a failed fetch the issuer is not asked again before this.
    pub retry_after: Duration,
    /// The shortest time between two fetches for unknown key ids.
    pub unknown_kid_interval: Duration,
}

/// The cached key set of one issuer.
pub struct JwksCache {
    source: Source,
    http: reqwest::Client,
    timing: Timing,
    /// Held across a fetch, so concurrent misses cause one request; never
    /// held while a token waits for the next allowed fetch.
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    keys: Arc<HashMap<String, SigningKey>>,
    /// The set's address: configured, or found by the last discovery.
    uri: Option<String>,
    fetched_at: Option<Instant>,
    last_attempt: Option<Instant>,
    last_error: Option<String>,
}

impl State {
    fn failing(&self, retry_after: Duration) -> bool {
        self.last_error.is_some() && self.last_attempt.is_some_and(|t| t.elapsed() < retry_after)
    }
}

impl JwksCache {
    /// The set at `jwks_uri`, or (without one) at the address `issuer`'s
    /// metadata names.
    pub fn new(
        issuer: &str,
        jwks_uri: Option<&str>,
        http: reqwest::Client,
        timing: Timing,
    ) -> Self {
        let source = match jwks_uri {
            Some(uri) => Source::Configured(uri.to_string()),
            None => Source::Discovered(issuer.to_string()),
        };
        Self {
            source,
            http,
            timing,
            state: tokio::sync::Mutex::new(State::default()),
        }
    }

    /// The key `kid` names (a token without `kid` matches a set of exactly
    /// one key); `Ok(None)` when the issuer publishes no such key. An unknown
    /// key id makes the set be fetched again only when `may_refetch` (the
    /// token's signature-independent claims hold).
    pub async fn key(
        &self,
        kid: Option<&str>,
        may_refetch: bool,
    ) -> Result<Option<SigningKey>, JwksError> {
        let arrived = Instant::now();
        let mut st = self.state.lock().await;
        let stale = st
            .fetched_at
            .is_none_or(|t| t.elapsed() >= self.timing.max_age);
        if stale && !st.failing(self.timing.retry_after) {
            self.refresh(&mut st).await;
        }
        if st.keys.is_empty() {
            return Err(self.unavailable(&st));
        }
        if let Some(k) = find(&st.keys, kid) {
            return Ok(Some(k));
        }
        if !may_refetch || st.failing(self.timing.retry_after) {
            return Ok(None);
        }
        // The issuer may have rotated since the last fetch. Within the
        // interval of the last one, wait for the next: the lock is released
        // meanwhile, and a fetch another token made after this one arrived
        // answers this one too.
        if let Some(next) = st
            .last_attempt
            .map(|t| t + self.timing.unknown_kid_interval)
            && next > Instant::now()
        {
            drop(st);
            tokio::time::sleep_until(next).await;
            st = self.state.lock().await;
            if let Some(k) = find(&st.keys, kid) {
                return Ok(Some(k));
            }
            let answered = st.last_attempt.is_some_and(|t| t >= arrived);
            let too_soon = st
                .last_attempt
                .is_some_and(|t| t.elapsed() < self.timing.unknown_kid_interval);
            if answered || too_soon || st.failing(self.timing.retry_after) {
                return Ok(None);
            }
        }
        self.refresh(&mut st).await;
        Ok(find(&st.keys, kid))
    }

    fn unavailable(&self, st: &State) -> JwksError {
        JwksError {
            uri: st.uri.clone().unwrap_or_else(|| match &self.source {
                Source::Configured(uri) => uri.clone(),
                Source::Discovered(issuer) => format!("(metadata of {issuer})"),
            }),
            reason: st
                .last_error
                .clone()
                .unwrap_or_else(|| "no signing key published".into()),
        }
    }

    /// Fetches the set; a failure keeps the keys already known and is
    /// remembered for the log while none are.
    async fn refresh(&self, st: &mut State) {
        st.last_attempt = Some(Instant::now());
        let uri = match (&self.source, &st.uri) {
            (Source::Configured(uri), _) => Ok(uri.clone()),
            (Source::Discovered(_), Some(uri)) => Ok(uri.clone()),
            (Source::Discovered(issuer), None) => {
                super::discovery::jwks_uri(&self.http, issuer).await
            }
        };
        let result = match uri {
            Ok(uri) => {
                st.uri = Some(uri.clone());
                self.fetch(&uri).await
            }
            Err(reason) => Err(reason),
        };
        match result {
            Ok(keys) => {
                st.keys = Arc::new(keys);
                st.fetched_at = Some(Instant::now());
                st.last_error = None;
            }
            Err(reason) => {
                tracing::warn!(uri = st.uri.as_deref().unwrap_or(""), %reason,
                    known_keys = st.keys.len(),
                    "JWKS fetch failed; keeping the keys already known");
                // A discovered address may have moved: discover again.
                if matches!(self.source, Source::Discovered(_)) {
                    st.uri = None;
                }
                st.last_error = Some(reason);
            }
        }
    }

    async fn fetch(&self, uri: &str) -> Result<HashMap<String, SigningKey>, String> {
        let resp = self
            .http
            .get(uri)
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
