//! Bearer JWT access tokens (MCP authorization; OAuth 2.1 resource server).
//!
//! A token is accepted when: its `iss` is a configured issuer; its header
//! `typ` says it is an access token (`at+jwt`, RFC 9068 §4; an issuer may be
//! configured not to require it); its header
//! `alg` is on that issuer's allow-list (and matches the key's own `alg`);
//! its signature verifies with the issuer's JWKS key named by `kid`; `aud`
//! names this resource; `exp` and `nbf` hold within the configured leeway; and
//! it carries `sub` and a tenant. Scopes then give the permissions; a token
//! without the Pilotage floor (`learn` and `validate`) is refused with
//! `insufficient_scope`.

use super::jwks::{JwksCache, Timing};
use super::policy::{Permission, Permissions, RiskCeiling};
use super::{AuthError, Principal};
use crate::config::{IssuerConfig, OAuthConfig};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Verifies tokens of every configured issuer.
pub struct OAuthVerifier {
    pub config: OAuthConfig,
    issuers: Vec<Issuer>,
}

struct Issuer {
    config: IssuerConfig,
    algorithms: Vec<Algorithm>,
    ceiling: RiskCeiling,
    jwks: JwksCache,
}

impl std::fmt::Debug for OAuthVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthVerifier")
            .field("resource", &self.config.resource)
            .finish_non_exhaustive()
    }
}

impl OAuthVerifier {
    /// From a configuration `Config::validate` accepted.
    pub fn new(config: &OAuthConfig) -> Self {
        let http = reqwest::Client::builder()
            .timeout(Duration::from_millis(config.jwks_timeout_ms))
            .build()
            .unwrap_or_default();
        let timing = Timing {
            max_age: Duration::from_secs(config.jwks_max_age_secs),
            retry_after: Duration::from_secs(config.jwks_refetch_secs),
            unknown_kid_interval: Duration::from_millis(config.jwks_unknown_kid_interval_ms),
        };
        let issuers = config
            .issuers
            .iter()
            .map(|i| Issuer {
                algorithms: i
                    .algorithms
                    .iter()
                    .filter_map(|a| a.parse::<Algorithm>().ok())
                    .collect(),
                ceiling: RiskCeiling::parse(i.max_risk.as_deref(), &i.forbid_risk_hints)
                    .unwrap_or_default(),
                jwks: JwksCache::new(&i.issuer, i.jwks_uri.as_deref(), http.clone(), timing),
                config: i.clone(),
            })
            .collect();
        Self {
            config: config.clone(),
            issuers,
        }
    }

    /// Whether `token` has the shape of a JWS (three base64url parts), so it
    /// is checked as a token rather than looked up as an API key.
    pub fn looks_like_jwt(token: &str) -> bool {
        let parts: Vec<&str> = token.split('.').collect();
        parts.len() == 3
            && parts[..2].iter().all(|p| {
                !p.is_empty()
                    && p.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            })
    }

    /// The principal a valid token stands for.
    pub async fn principal(&self, token: &str) -> Result<Principal, AuthError> {
        let (issuer, claims) = self.verified(token).await?;
        let sub = claims.get("sub").and_then(Value::as_str).unwrap_or("");
        let tenant = tenant_of(issuer, &claims)?;
        let permissions = self.permissions(&claims);
        if !permissions.has_floor() {
            return Err(AuthError::InsufficientScope {
                scope: Permissions::FLOOR
                    .iter()
                    .map(|p| self.config.scope_for(*p))
                    .collect::<Vec<_>>()
                    .join(" "),
            });
        }
        let ceiling = ceiling_of(issuer, &claims)?;
        // The storage namespace must be stable for the same subject of the
        // same issuer, and apart from every key and other issuer.
        let issuer_tag = &hex::encode(Sha256::digest(issuer.config.issuer.as_bytes()))[..12];
        Ok(Principal {
            scope: format!("jwt:{tenant}:{issuer_tag}:{sub}"),
            tenant,
            lasting: true,
            permissions,
            ceiling,
            approve_above: None,
        })
    }

    /// The token's claims, once its issuer is trusted and its signature,
    /// algorithm, audience and times verify.
    async fn verified(&self, token: &str) -> Result<(&Issuer, Value), AuthError> {
        let invalid = |m: &str| AuthError::InvalidToken(m.to_string());
        let header =
            jsonwebtoken::decode_header(token).map_err(|_| invalid("malformed token header"))?;
        // The issuer decides which keys and algorithms apply; its claim is
        // read unverified only to pick them, and verified below.
        let unverified: Value = jsonwebtoken::dangerous::insecure_decode_claims(token)
            .map_err(|_| invalid("malformed token claims"))?;
        let iss = unverified.get("iss").and_then(Value::as_str).unwrap_or("");
        let issuer = self
            .issuers
            .iter()
            .find(|i| i.config.issuer == iss)
            .ok_or_else(|| invalid("the token's issuer is not trusted by this resource"))?;
        if issuer.config.require_at_jwt_typ && !is_access_token_typ(header.typ.as_deref()) {
            // The value itself is the caller's and is not repeated.
            return Err(invalid(
                "the token is not an access token (its typ must be at+jwt, RFC 9068)",
            ));
        }
        if !issuer.algorithms.contains(&header.alg) {
            return Err(invalid(&format!(
                "algorithm {:?} is not accepted from this issuer",
                header.alg
            )));
        }
        // Only a token that would pass every check but its signature may
        // make the key set be fetched again.
        let may_refetch = self.plausible(&unverified);
        let key = issuer
            .jwks
            .key(header.kid.as_deref(), may_refetch)
            .await
            .map_err(|e| {
                tracing::warn!(issuer = %iss, uri = %e.uri, reason = %e.reason,
                    "access token refused: the issuer's signing keys cannot be fetched");
                AuthError::Unavailable("the issuer's signing keys cannot be fetched".into())
            })?
            .ok_or_else(|| invalid("the token's signing key is not in the issuer's JWKS"))?;
        if key.algorithm.is_some_and(|a| a != header.alg) {
            return Err(invalid("the token's algorithm does not match its key"));
        }
        let mut validation = Validation::new(header.alg);
        validation.algorithms = vec![header.alg];
        validation.set_issuer(&[&issuer.config.issuer]);
        validation.set_audience(&[&self.config.resource]);
        validation.leeway = self.config.leeway_secs;
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        let data = jsonwebtoken::decode::<Value>(token, &key.key, &validation).map_err(|e| {
            invalid(match e.kind() {
                ErrorKind::ExpiredSignature => "the token has expired",
                ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)",
                ErrorKind::InvalidAudience => "the token is not issued for this resource (aud)",
                ErrorKind::InvalidIssuer => "the token's issuer is not trusted by this resource",
                ErrorKind::InvalidSignature => "the token's signature does not verify",
                ErrorKind::MissingRequiredClaim(_) => {
                    "the token lacks a required claim (exp, iss, aud, sub)"
                }
                _ => "the token cannot be verified",
            })
        })?;
        Ok((issuer, data.claims))
    }

    /// Whether the claims a signature cannot change the reading of hold
    /// (`aud` names this resource, `exp` is ahead), as read before the
    /// signature is checked.
    fn plausible(&self, claims: &Value) -> bool {
        let aud = match claims.get("aud") {
            Some(Value::String(a)) => a == &self.config.resource,
            Some(Value::Array(list)) => list
                .iter()
                .any(|a| a.as_str() == Some(&self.config.resource)),
            _ => false,
        };
        let now = jsonwebtoken::get_current_timestamp();
        let exp = claims
            .get("exp")
            .and_then(Value::as_u64)
            .is_some_and(|exp| exp.saturating_add(self.config.leeway_secs) > now);
        aud && exp
    }

    /// Permissions granted by the token's scopes (`scope`, space-separated,
    /// or `scp`, a list or a string).
    fn permissions(&self, claims: &Value) -> Permissions {
        let mut scopes: Vec<String> = Vec::new();
        for name in ["scope", "scp"] {
            match claims.get(name) {
                Some(Value::String(s)) => scopes.extend(s.split_whitespace().map(str::to_string)),
                Some(Value::Array(a)) => {
                    scopes.extend(a.iter().filter_map(Value::as_str).map(str::to_string))
                }
                _ => {}
            }
        }
        Permissions::from_iter(
            Permission::ALL
                .into_iter()
                .filter(|p| scopes.contains(&self.config.scope_for(*p))),
        )
    }

    /// The issuer identifiers, for the protected-resource metadata.
    pub fn authorization_servers(&self) -> Vec<String> {
        self.issuers
            .iter()
            .map(|i| i.config.issuer.clone())
            .collect()
    }
}

/// The principal's tenant: the issuer's, or the token's tenant claim.
fn tenant_of(issuer: &Issuer, claims: &Value) -> Result<String, AuthError> {
    let invalid = |m: &str| AuthError::InvalidToken(m.to_string());
    let tenant = match (&issuer.config.tenant, &issuer.config.tenant_claim) {
        (Some(t), _) => t.clone(),
        (None, Some(claim)) => claims
            .get(claim)
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or_else(|| invalid(&format!("the token has no tenant claim '{claim}'")))?
            .to_string(),
        (None, None) => return Err(invalid("no tenant configured for this issuer")),
    };
    Ok(tenant)
}

/// The issuer's risk ceiling, lowered by the token's risk claim if any.
fn ceiling_of(issuer: &Issuer, claims: &Value) -> Result<RiskCeiling, AuthError> {
    let invalid = |m: &str| AuthError::InvalidToken(m.to_string());
    let mut ceiling = issuer.ceiling;
    if let Some(claim) = &issuer.config.max_risk_claim
        && let Some(v) = claims.get(claim)
    {
        let level = v
            .as_str()
            .and_then(super::policy::RiskLevel::parse)
            .ok_or_else(|| invalid(&format!("claim '{claim}' is not a risk level")))?;
        ceiling = ceiling.and(RiskCeiling {
            max_risk: Some(level),
            ..RiskCeiling::NONE
        });
    }
    Ok(ceiling)
}

/// RFC 9068 §4: `at+jwt`, or its full media type, in any case.
fn is_access_token_typ(typ: Option<&str>) -> bool {
    typ.is_some_and(|t| {
        let t = t.to_ascii_lowercase();
        t == "at+jwt" || t == "application/at+jwt"
    })
}

#[cfg(test)]
mod tests {
    use super::is_access_token_typ;

    #[test]
    fn only_the_access_token_media_type_is_an_access_token() {
        for typ in [
            "at+jwt",
            "AT+JWT",
            "application/at+jwt",
            "Application/AT+JWT",
        ] {
            assert!(is_access_token_typ(Some(typ)), "{typ}");
        }
        for typ in [None, Some("JWT"), Some("jwt"), Some("at+jwt2"), Some("")] {
            assert!(!is_access_token_typ(typ), "{typ:?}");
        }
    }
}
