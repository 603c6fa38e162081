//! The transport to n8n: the public API (`/api/v1/...`) with the tenant's
//! own API key (`X-N8N-API-KEY`), and what only a login may do (`/types/...`,
//! `/rest/...`) with the tenant's login cookie and a fixed `browser-id`
//! (n8n binds the cookie to it). Every call waits for one of
//! `max_in_flight` slots, has one deadline, and goes through the engine's
//! breaker and retry budget; only safe calls are repeated.

use super::N8nEngine;
use super::tenants::TenantSecrets;
use crate::engines::EngineError;
pub(super) use crate::engines::transport::CallError;
use crate::engines::transport::{self, Deadline, Reply};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::time::Duration;

/// The `browser-id` every login and cookie call carries.
const BROWSER_ID: &str = "pilotage-gateway";

/// How a call authenticates.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Auth {
    /// The tenant's API key (public API).
    Key,
    /// The tenant's login cookie (editor endpoints).
    Login,
}

/// One call to n8n.
pub(super) struct Request<'a> {
    pub(super) operation: &'static str,
    pub(super) method: Method,
    /// After the base URL (`/api/v1/workflows`).
    pub(super) path: &'a str,
    pub(super) body: Option<&'a Value>,
    pub(super) auth: Auth,
    pub(super) timeout: Duration,
    /// Safe to repeat (a read, a delete, a stop).
    pub(super) safe: bool,
}

/// One HTTP answer, read whole.
pub(super) struct Answer {
    pub(super) status: StatusCode,
    pub(super) text: String,
    pub(super) retry_after: Option<Duration>,
}

impl Reply for Answer {
    fn status(&self) -> StatusCode {
        self.status
    }
    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }
}

impl Answer {
    pub(super) fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Null)
    }

    /// n8n's own message (`message` of its error body), else the status.
    pub(super) fn message(&self) -> String {
        self.json()
            .get("message")
            .and_then(Value::as_str)
            .map(|m| m.lines().next().unwrap_or("").trim().to_string())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| format!("HTTP {}", self.status))
    }

    pub(super) fn error(&self) -> String {
        format!(
            "n8n answered HTTP {}: {}",
            self.status.as_u16(),
            self.message()
        )
    }
}

/// The `n8n-auth=...` pair of a login answer's `Set-Cookie` headers.
fn auth_cookie(headers: &reqwest::header::HeaderMap) -> Option<String> {
    headers
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .filter_map(|v| v.split(';').next())
        .find(|pair| pair.trim_start().starts_with("n8n-auth="))
        .map(|pair| pair.trim().to_string())
}

impl N8nEngine {
    /// The tenant's secrets, read from its folder on every use (a rotated
    /// key is picked up without a restart).
    pub(super) fn secrets(&self, tenant: &str) -> Result<TenantSecrets, EngineError> {
        let folder = self
            .settings
            .tenant_dir(tenant)
            .ok_or_else(|| EngineError::Failed(format!("the tenant '{tenant}' has no n8n user")))?;
        TenantSecrets::read(&folder).map_err(|e| {
            tracing::warn!(tenant, error = %e, "an n8n tenant's secrets do not read");
            EngineError::Failed(format!("the tenant '{tenant}' has no usable n8n user"))
        })
    }

    /// One call; a `Login` call logs in first when no cookie is kept, and
    /// once more when n8n refuses the kept one.
    pub(super) async fn call(&self, tenant: &str, r: Request<'_>) -> Result<Answer, EngineError> {
        let secrets = self.secrets(tenant)?;
        let mut fresh = false;
        loop {
            let cookie = match r.auth {
                Auth::Key => None,
                Auth::Login => Some(match self.cookie(tenant) {
                    Some(c) => c,
                    None => {
                        fresh = true;
                        self.login(tenant, &secrets).await?
                    }
                }),
            };
            let answer = self
                .link
                .resilience
                .call(r.safe, r.timeout, r.path, |deadline| {
                    self.attempt(&secrets, cookie.as_deref(), &r, deadline)
                })
                .await
                .map_err(EngineError::from)?;
            if answer.status == StatusCode::UNAUTHORIZED && r.auth == Auth::Login && !fresh {
                self.forget_cookie(tenant);
                fresh = true;
                continue;
            }
            return Ok(answer);
        }
    }

    /// A call whose answer must be a 2xx JSON body; anything else is a
    /// `Failed` naming `what` was being done.
    pub(super) async fn call_json(
        &self,
        tenant: &str,
        r: Request<'_>,
        what: &str,
    ) -> Result<Value, EngineError> {
        let answer = self.call(tenant, r).await?;
        if !answer.status.is_success() {
            return Err(EngineError::Failed(format!("{what}: {}", answer.error())));
        }
        serde_json::from_str(&answer.text)
            .map_err(|e| EngineError::Failed(format!("{what}: n8n answered invalid JSON: {e}")))
    }

    fn cookie(&self, tenant: &str) -> Option<String> {
        self.cookies
            .lock()
            .ok()
            .and_then(|c| c.get(tenant).cloned())
    }

    fn forget_cookie(&self, tenant: &str) {
        if let Ok(mut c) = self.cookies.lock() {
            c.remove(tenant);
        }
    }

    /// Logs the tenant's user in and keeps its cookie.
    async fn login(&self, tenant: &str, secrets: &TenantSecrets) -> Result<String, EngineError> {
        let body = json!({"emailOrLdapLoginId": secrets.email, "password": secrets.password});
        let body = &body;
        let (answer, cookie) = self
            .link
            .resilience
            .call(
                true,
                self.link.call_timeout,
                "/rest/login",
                |deadline| async move {
                    let _permit = transport::slot(&self.link.in_flight, &deadline, "n8n").await?;
                    let req = self
                        .link
                        .http
                        .post(format!("{}/rest/login", self.link.base))
                        .header("browser-id", BROWSER_ID)
                        .json(body)
                        .timeout(deadline.remaining());
                    let broken = |e| CallError::transport(e, &deadline, "n8n");
                    let resp = crate::telemetry::engine::send("login", req, self.link.metrics())
                        .await
                        .map_err(broken)?;
                    let cookie = auth_cookie(resp.headers());
                    let status = resp.status();
                    let retry_after = transport::retry_after(resp.headers());
                    let text = resp.text().await.map_err(broken)?;
                    Ok(LoginAnswer(
                        Answer {
                            status,
                            text,
                            retry_after,
                        },
                        cookie,
                    ))
                },
            )
            .await
            .map(|LoginAnswer(a, c)| (a, c))
            .map_err(EngineError::from)?;
        let Some(cookie) = cookie.filter(|_| answer.status.is_success()) else {
            tracing::warn!(tenant, error = %answer.error(), "an n8n tenant user cannot log in");
            return Err(EngineError::Failed(format!(
                "the tenant '{tenant}' cannot log in to n8n ({})",
                answer.status.as_u16()
            )));
        };
        if let Ok(mut c) = self.cookies.lock() {
            c.insert(tenant.to_string(), cookie.clone());
        }
        Ok(cookie)
    }

    async fn attempt(
        &self,
        secrets: &TenantSecrets,
        cookie: Option<&str>,
        r: &Request<'_>,
        deadline: Deadline,
    ) -> Result<Answer, CallError> {
        let _permit = transport::slot(&self.link.in_flight, &deadline, "n8n").await?;
        let mut req = self
            .link
            .http
            .request(r.method.clone(), format!("{}{}", self.link.base, r.path))
            .header(reqwest::header::ACCEPT, "application/json")
            .timeout(deadline.remaining());
        req = match cookie {
            Some(c) => req
                .header(reqwest::header::COOKIE, c)
                .header("browser-id", BROWSER_ID),
            None => req.header("X-N8N-API-KEY", &secrets.api_key),
        };
        if let Some(body) = r.body {
            req = req.json(body);
        }
        let req = self.link.credentials.apply(req).await?;
        let broken = |e| CallError::transport(e, &deadline, "n8n");
        let resp = crate::telemetry::engine::send(r.operation, req, self.link.metrics())
            .await
            .map_err(broken)?;
        let status = resp.status();
        let retry_after = transport::retry_after(resp.headers());
        let text = resp.text().await.map_err(broken)?;
        Ok(Answer {
            status,
            text,
            retry_after,
        })
    }
}

/// A login answer and its cookie, as the retry loop reads it.
struct LoginAnswer(Answer, Option<String>);

impl Reply for LoginAnswer {
    fn status(&self) -> StatusCode {
        self.0.status
    }
    fn retry_after(&self) -> Option<Duration> {
        self.0.retry_after
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue, SET_COOKIE};

    #[test]
    fn the_auth_cookie_is_picked_from_set_cookie() {
        let mut h = HeaderMap::new();
        h.append(SET_COOKIE, HeaderValue::from_static("other=1; Path=/"));
        h.append(
            SET_COOKIE,
            HeaderValue::from_static("n8n-auth=abc.def; Max-Age=604800; Path=/; HttpOnly"),
        );
        assert_eq!(auth_cookie(&h).as_deref(), Some("n8n-auth=abc.def"));
        assert_eq!(auth_cookie(&HeaderMap::new()), None);
    }

    #[test]
    fn errors_keep_n8ns_message() {
        let a = Answer {
            status: StatusCode::BAD_REQUEST,
            text: r#"{"message":"Unrecognized node type: n8n-nodes-base.x"}"#.into(),
            retry_after: None,
        };
        assert_eq!(
            a.error(),
            "n8n answered HTTP 400: Unrecognized node type: n8n-nodes-base.x"
        );
    }
}
