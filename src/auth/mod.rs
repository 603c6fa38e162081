//! Principals: who is calling, and in which engine tenant.
//!
//! A bearer API key maps to a named principal of one tenant (keys are kept as
//! SHA-256 in the configuration). With anonymous access on, a caller without a
//! key acts in the anonymous tenant: under `anonymous_scope = "session"` each
//! MCP session is a principal of its own (its runs and promotions stay private
//! to that session), under `"tenant"` every anonymous caller is one principal.
//! With `[auth.oauth]`, a bearer JWT access token from a configured issuer is
//! a principal too ([`oauth`]). Every principal carries its permissions and
//! risk ceiling ([`policy`]).

mod discovery;
mod jwks;
mod keys;
pub mod oauth;
pub mod policy;
mod reach;

pub use reach::Reach;

use crate::config::{AnonymousScope, AuthConfig};
use policy::{Permissions, RiskCeiling, RiskLevel};
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// The identity every Pilotage operation is computed under.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    /// Storage namespace of this principal: runs, idempotency keys and
    /// promoted programs live under it (`key:<tenant>:<name>` or
    /// `anon:<tenant>:<session>`).
    pub scope: String,
    /// Engine tenant whose catalog and world this principal uses.
    pub tenant: String,
    /// Whether a later request can be this same principal. It cannot for an
    /// anonymous request without a session under `anonymous_scope =
    /// "session"`: such a caller is never promised anything stored, and
    /// nothing is written to the store for it.
    pub lasting: bool,
    /// The stages this principal is offered.
    pub permissions: Permissions,
    /// The most its programs may do.
    pub ceiling: RiskCeiling,
    /// Its runs riskier than this wait for a person's approval.
    pub approve_above: Option<RiskLevel>,
}

/// Why a request carries no usable identity.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AuthError {
    #[error("unknown API key")]
    UnknownKey,
    #[error("this server requires an API key or an access token (Authorization: Bearer <token>)")]
    Missing,
    /// A bearer JWT that does not verify (RFC 6750 `invalid_token`).
    #[error("invalid access token: {0}")]
    InvalidToken(String),
    /// A valid token without the scopes every Pilotage caller needs.
    #[error("the access token lacks the scopes this resource requires: {scope}")]
    InsufficientScope { scope: String },
    /// The issuer's keys cannot be fetched, so no token can be checked now.
    #[error("access tokens cannot be checked right now: {0}")]
    Unavailable(String),
}

/// Resolves bearer keys to principals.
#[derive(Debug, Clone)]
pub struct Authenticator {
    keys: Arc<keys::KeyTable>,
    anonymous_tenant: Option<String>,
    anonymous_scope: AnonymousScope,
    anonymous_policy: crate::config::policy::Policy,
    oauth: Option<Arc<oauth::OAuthVerifier>>,
}

impl Authenticator {
    pub fn new(config: &AuthConfig) -> Self {
        Self {
            keys: Arc::new(keys::KeyTable::new(&config.keys)),
            anonymous_tenant: config.anonymous.then(|| config.anonymous_tenant.clone()),
            // Validated when the configuration loaded.
            anonymous_scope: config.scope().unwrap_or_default(),
            anonymous_policy: crate::config::policy::resolve(config.anonymous_policy()),
            oauth: config
                .oauth
                .as_ref()
                .map(|o| Arc::new(oauth::OAuthVerifier::new(o))),
        }
    }

    /// The principal of a request, like [`Self::principal`], with bearer
    /// JWT access tokens checked when OAuth is configured. A bearer value
    /// that is a configured API key stays that key.
    pub async fn resolve(
        &self,
        bearer: Option<&str>,
        session: Option<&str>,
    ) -> Result<Principal, AuthError> {
        if let (Some(token), Some(oauth)) = (bearer, &self.oauth)
            && !self.keys.contains(&hash(token))
            && oauth::OAuthVerifier::looks_like_jwt(token)
        {
            // Boxed: verifying a token (and fetching keys) is a large
            // future that every request's future would otherwise carry.
            return Box::pin(oauth.principal(token)).await;
        }
        self.principal(bearer, session)
    }

    /// The resource server, when OAuth is configured.
    pub fn oauth(&self) -> Option<&oauth::OAuthVerifier> {
        self.oauth.as_deref()
    }

    /// The principal of a request: its bearer key if any; otherwise, when
    /// anonymous access is on, the anonymous principal of the tenant or of
    /// `session` (per `anonymous_scope`), or a fresh one for a sessionless
    /// request under the session scope.
    pub fn principal(
        &self,
        bearer: Option<&str>,
        session: Option<&str>,
    ) -> Result<Principal, AuthError> {
        if let Some(key) = bearer {
            let k = self.keys.get(&hash(key)).ok_or(AuthError::UnknownKey)?;
            return Ok(Principal {
                scope: format!("key:{}:{}", k.tenant, k.name),
                tenant: k.tenant.clone(),
                lasting: true,
                permissions: k.permissions,
                ceiling: k.ceiling,
                approve_above: k.approve_above,
            });
        }
        let tenant = self.anonymous_tenant.as_ref().ok_or(AuthError::Missing)?;
        let (scope, lasting) = match (self.anonymous_scope, session) {
            (AnonymousScope::Tenant, _) => (format!("anon:{tenant}:tenant"), true),
            (AnonymousScope::Session, Some(id)) => (format!("anon:{tenant}:{id}"), true),
            // Without a session nothing ties two anonymous requests together,
            // so each is a principal of its own that no later request can be.
            (AnonymousScope::Session, None) => (
                format!(
                    "anon:{tenant}:request-{}",
                    crate::random_id::as_str(&crate::random_id::random_hex())
                ),
                false,
            ),
        };
        let permissions = if lasting {
            self.anonymous_policy.permissions
        } else {
            self.anonymous_policy.permissions.for_a_passing_caller()
        };
        Ok(Principal {
            scope,
            tenant: tenant.clone(),
            lasting,
            permissions,
            ceiling: self.anonymous_policy.ceiling,
            approve_above: self.anonymous_policy.approve_above,
        })
    }

    /// Puts `keys` in force instead of the current API keys (a reloaded
    /// keys file); requests already past authentication are not affected.
    pub fn replace_keys(&self, keys: &[crate::config::ApiKeyConfig]) {
        self.keys.replace(keys);
    }

    /// How many API keys are in force.
    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// Whether calls without a key are served at all.
    pub fn anonymous_enabled(&self) -> bool {
        self.anonymous_tenant.is_some()
    }
}

fn hash(key: &str) -> String {
    hex::encode(Sha256::digest(key.as_bytes()))
}

/// `Authorization: Bearer <key>` → key.
pub fn bearer(headers: &axum::http::HeaderMap) -> Option<&str> {
    let value = headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, key) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| key.trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ApiKeyConfig;

    fn auth(anonymous: bool) -> Authenticator {
        scoped(anonymous, AnonymousScope::Session)
    }

    fn scoped(anonymous: bool, anonymous_scope: AnonymousScope) -> Authenticator {
        Authenticator::new(&AuthConfig {
            anonymous,
            anonymous_tenant: "acme".into(),
            anonymous_scope: anonymous_scope.as_str().into(),
            anonymous_permissions: Some(vec!["learn".into(), "validate".into()]),
            anonymous_max_risk: Some("safe".into()),
            anonymous_forbid_risk_hints: Vec::new(),
            keys: vec![ApiKeyConfig {
                name: "ops".into(),
                tenant: "globex".into(),
                sha256: hex::encode(Sha256::digest(b"secret-key")),
                permissions: None,
                max_risk: None,
                forbid_risk_hints: Vec::new(),
                approve_above: None,
            }],
            ..AuthConfig::default()
        })
    }

    #[test]
    fn keys_and_anonymous_sessions() {
        let a = auth(true);
        let p = a.principal(Some("secret-key"), None).unwrap();
        assert_eq!(p.tenant, "globex");
        assert_eq!(a.principal(Some("nope"), None), Err(AuthError::UnknownKey));
        let s1 = a.principal(None, Some("s1")).unwrap();
        let s2 = a.principal(None, Some("s2")).unwrap();
        assert_eq!(s1.tenant, "acme");
        assert_ne!(s1.scope, s2.scope);
        assert_eq!(auth(false).principal(None, None), Err(AuthError::Missing));
        let lone1 = a.principal(None, None).unwrap();
        let lone2 = a.principal(None, None).unwrap();
        assert_ne!(
            lone1.scope, lone2.scope,
            "sessionless anonymous requests share nothing"
        );
        assert!(
            !lone1.lasting,
            "no later request can be a sessionless caller"
        );
        assert!(s1.lasting && p.lasting);
        // Anonymous callers get the configured policy; keys their own.
        assert!(!s1.permissions.has(policy::Permission::Execute));
        assert_eq!(s1.ceiling.max_risk, Some(policy::RiskLevel::Safe));
        assert_eq!(p.permissions, Permissions::ALL);
        assert!(p.ceiling.is_none());
    }

    #[test]
    fn tenant_scope_makes_every_anonymous_caller_one_principal() {
        let a = scoped(true, AnonymousScope::Tenant);
        let lone = a.principal(None, None).unwrap();
        let session = a.principal(None, Some("s1")).unwrap();
        assert_eq!(lone, session);
        assert!(lone.lasting);
        assert_eq!(lone.tenant, "acme");
        let keyed = a.principal(Some("secret-key"), None).unwrap();
        assert_ne!(keyed.scope, lone.scope, "keys stay principals of their own");
    }
}
