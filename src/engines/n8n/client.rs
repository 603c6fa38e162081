//! What n8n's calls carry and how its answers read: the public API
//! (`/api/v1/...`) with the tenant's own API key (`X-N8N-API-KEY`), and what
//! only a login may do (`/types/...`, `/rest/...`) with the tenant's login
//! cookie and a fixed `browser-id` (n8n binds the cookie to it). The slots,
//! the deadline, the breaker and the repetition of safe calls are
//! `engines::http_client`'s.

use super::N8nEngine;
use super::tenants::TenantSecrets;
use crate::engines::EngineError;
pub(super) use crate::engines::http_client::{Answer, Call};
use reqwest::header::{ACCEPT, COOKIE};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

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

/// How n8n's answers read.
pub(super) trait N8nAnswer {
    /// n8n's own message (`message` of its error body), else the status.
    fn message(&self) -> String;
    fn error(&self) -> String;
}

impl N8nAnswer for Answer {
    fn message(&self) -> String {
        self.json()
            .get("message")
            .and_then(Value::as_str)
            .map(|m| m.lines().next().unwrap_or("").trim().to_string())
            .filter(|m| !m.is_empty())
            .unwrap_or_else(|| format!("HTTP {}", self.status))
    }

    fn error(&self) -> String {
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

    /// One call with `body`; a `Login` call logs in first when no cookie is
    /// kept, and once more when n8n refuses the kept one.
    pub(super) async fn call(
        &self,
        tenant: &str,
        call: Call<'_>,
        auth: Auth,
        body: Option<&Value>,
    ) -> Result<Answer, EngineError> {
        let secrets = self.secrets(tenant)?;
        let mut fresh = false;
        loop {
            let cookie = match auth {
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
                .call(&call, |req| {
                    let req = req.header(ACCEPT, "application/json");
                    let req = match &cookie {
                        Some(c) => req.header(COOKIE, c).header("browser-id", BROWSER_ID),
                        None => req.header("X-N8N-API-KEY", &secrets.api_key),
                    };
                    match body {
                        Some(body) => req.json(body),
                        None => req,
                    }
                })
                .await?;
            if answer.status == StatusCode::UNAUTHORIZED && auth == Auth::Login && !fresh {
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
        call: Call<'_>,
        auth: Auth,
        what: &str,
    ) -> Result<Value, EngineError> {
        let answer = self.call(tenant, call, auth, None).await?;
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
        // The login is the tenant's own: the engine's credentials stay out.
        let login = Call::safe("login", Method::POST, "/rest/login").without_credentials();
        let answer = self
            .link
            .call(&login, |req| {
                req.header("browser-id", BROWSER_ID).json(&body)
            })
            .await?;
        let cookie = auth_cookie(&answer.headers);
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
        let a = Answer::new(
            StatusCode::BAD_REQUEST,
            HeaderMap::new(),
            r#"{"message":"Unrecognized node type: n8n-nodes-base.x"}"#.into(),
        );
        assert_eq!(
            a.error(),
            "n8n answered HTTP 400: Unrecognized node type: n8n-nodes-base.x"
        );
    }
}
