//! An engine's OAuth 2.0 client-credentials token (RFC 6749 §4.4): fetched
//! from the token endpoint on first use, kept until shortly before it
//! expires, then fetched again. One fetch at a time per engine: callers
//! arriving while it runs wait for its token instead of asking too.

use super::CredentialError;
use super::settings::OAuthSettings;
use reqwest::header::HeaderValue;
use std::time::{Duration, Instant};

/// How long a token without `expires_in` is kept.
const UNDATED_LIFETIME: Duration = Duration::from_secs(60);
/// The most a token is refreshed ahead of its expiry.
const MOST_AHEAD: Duration = Duration::from_secs(60);

/// A token held for reuse.
struct Held {
    authorization: HeaderValue,
    refresh_at: Instant,
}

/// The client of one token endpoint.
pub(super) struct TokenSource {
    settings: OAuthSettings,
    secret: String,
    http: reqwest::Client,
    held: tokio::sync::Mutex<Option<Held>>,
    /// `Bearer <token>` (for `Authorization`), else the bare token.
    bearer: bool,
}

impl TokenSource {
    pub(super) fn new(
        settings: OAuthSettings,
        secret: String,
        http: reqwest::Client,
        bearer: bool,
    ) -> Self {
        Self {
            settings,
            secret,
            http,
            held: tokio::sync::Mutex::new(None),
            bearer,
        }
    }

    /// `Bearer <token>` (or the bare token), from the cache while it is
    /// fresh.
    pub(super) async fn authorization(&self) -> Result<HeaderValue, CredentialError> {
        let mut held = self.held.lock().await;
        if let Some(h) = held.as_ref()
            && Instant::now() < h.refresh_at
        {
            return Ok(h.authorization.clone());
        }
        let fresh = self.fetch().await?;
        let value = fresh.authorization.clone();
        *held = Some(fresh);
        Ok(value)
    }

    /// Drops the cached token (the engine refused it): the next call
    /// fetches a new one.
    pub(super) fn forget(&self) {
        if let Ok(mut held) = self.held.try_lock() {
            *held = None;
        }
    }

    async fn fetch(&self) -> Result<Held, CredentialError> {
        let url = &self.settings.token_url;
        let mut form = vec![("grant_type", "client_credentials")];
        for (name, value) in [
            ("scope", &self.settings.scope),
            ("audience", &self.settings.audience),
            ("resource", &self.settings.resource),
        ] {
            if let Some(v) = value {
                form.push((name, v.as_str()));
            }
        }
        let started = Instant::now();
        // client_secret_basic (RFC 6749 §2.3.1: id and secret form-encoded).
        let resp = self
            .http
            .post(url)
            .basic_auth(
                form_encode(&self.settings.client_id),
                Some(form_encode(&self.secret)),
            )
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(reqwest::header::ACCEPT, "application/json")
            .body(
                form.iter()
                    .map(|(k, v)| format!("{}={}", form_encode(k), form_encode(v)))
                    .collect::<Vec<_>>()
                    .join("&"),
            )
            .send()
            .await
            .map_err(|e| CredentialError::TokenUnreachable {
                url: url.clone(),
                detail: without_url(&e),
            })?;
        let status = resp.status();
        let body: serde_json::Value = resp.json().await.unwrap_or_default();
        if !status.is_success() {
            // The provider's own error code and description (RFC 6749 §5.2).
            let reason = ["error", "error_description"]
                .iter()
                .filter_map(|k| body.get(*k).and_then(|v| v.as_str()))
                .map(|s| s.chars().take(200).collect::<String>())
                .collect::<Vec<_>>()
                .join(": ");
            return Err(CredentialError::TokenRefused {
                url: url.clone(),
                status: status.as_u16(),
                reason: if reason.is_empty() {
                    "no OAuth error in the answer".into()
                } else {
                    reason
                },
            });
        }
        let unreadable = |what: &str| CredentialError::TokenUnreadable {
            url: url.clone(),
            what: what.to_string(),
        };
        let token = body
            .get("access_token")
            .and_then(|v| v.as_str())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| unreadable("no access_token"))?;
        let kind = body
            .get("token_type")
            .and_then(|v| v.as_str())
            .unwrap_or("");
        if !kind.eq_ignore_ascii_case("bearer") {
            return Err(unreadable("token_type is not Bearer"));
        }
        let value = if self.bearer {
            format!("Bearer {token}")
        } else {
            token.to_string()
        };
        let mut authorization = HeaderValue::from_str(&value)
            .map_err(|_| unreadable("the access token is not a header value"))?;
        authorization.set_sensitive(true);
        let lifetime = body
            .get("expires_in")
            .and_then(|v| v.as_u64())
            .map_or(UNDATED_LIFETIME, Duration::from_secs);
        Ok(Held {
            authorization,
            refresh_at: started + lifetime - ahead(lifetime),
        })
    }
}

/// How long before its expiry a token of `lifetime` is replaced: a fifth of
/// its life, at most a minute, so a call never carries one about to lapse.
fn ahead(lifetime: Duration) -> Duration {
    (lifetime / 5).min(MOST_AHEAD)
}

/// A transport error without its URL (the message names the endpoint once).
fn without_url(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "connection failed"
    } else {
        "request failed"
    };
    kind.to_string()
}

/// `application/x-www-form-urlencoded` encoding of one value.
fn form_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_replaced_ahead_of_expiry() {
        assert_eq!(ahead(Duration::from_secs(5)), Duration::from_secs(1));
        assert_eq!(ahead(Duration::from_secs(3600)), MOST_AHEAD);
        assert_eq!(ahead(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn form_values_are_encoded() {
        assert_eq!(form_encode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
    }
}
