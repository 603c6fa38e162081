//! `[auth.oauth]`: the gateway as an OAuth 2.1 resource server (MCP
//! authorization, RFC 9728). Bearer access tokens are JWTs from one or more
//! configured issuers, checked against each issuer's JWKS; the tenant comes
//! from a claim, the permissions from scopes, the risk ceiling from the issuer
//! (and optionally a claim).

use crate::auth::policy::{FORBIDDABLE_HINTS, Permission, RiskCeiling, RiskLevel};
use serde::Deserialize;

/// The resource server.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OAuthConfig {
    /// This resource's identifier: the canonical URL of the MCP endpoint
    /// (e.g. `https://gateway.example.com/mcp`). Tokens must name it in
    /// `aud`; the protected-resource metadata publishes it.
    pub resource: String,
    /// Seconds of clock skew tolerated on `exp` and `nbf`.
    #[serde(default = "default_leeway")]
    pub leeway_secs: u64,
    /// Prefix of the scopes that grant permissions: with `"pilotage:"` the
    /// scope `pilotage:execute` grants `execute`.
    #[serde(default = "default_scope_prefix")]
    pub scope_prefix: String,
    /// How long a fetched JWKS is used before it is fetched again.
    #[serde(default = "default_jwks_max_age")]
    pub jwks_max_age_secs: u64,
    /// After a failed fetch of an issuer's JWKS (or its metadata), the issuer
    /// is not asked again for this many seconds; the keys already known stay
    /// in use meanwhile.
    #[serde(default = "default_jwks_refetch")]
    pub jwks_refetch_secs: u64,
    /// A token naming a key id the cached JWKS lacks (and whose `iss`, `aud`
    /// and `exp` are right) makes the gateway fetch the JWKS again, the
    /// issuer having rotated its keys: at most one fetch per this many
    /// milliseconds per issuer, every such token waiting for the next one.
    /// Made-up key ids thus cost the issuer at most one request per
    /// interval and can never hold back a real rotation for longer.
    #[serde(default = "default_jwks_unknown_kid_interval")]
    pub jwks_unknown_kid_interval_ms: u64,
    /// Upper bound of one JWKS fetch.
    #[serde(default = "default_jwks_timeout")]
    pub jwks_timeout_ms: u64,
    /// The trusted identity providers (`[[auth.oauth.issuer]]`).
    #[serde(rename = "issuer", default)]
    pub issuers: Vec<IssuerConfig>,
}

fn default_leeway() -> u64 {
    30
}
fn default_scope_prefix() -> String {
    "pilotage:".into()
}
fn default_jwks_max_age() -> u64 {
    3600
}
fn default_jwks_refetch() -> u64 {
    30
}
fn default_jwks_unknown_kid_interval() -> u64 {
    1000
}
fn default_jwks_timeout() -> u64 {
    5000
}

/// One trusted authorization server.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IssuerConfig {
    /// Exactly the `iss` its tokens carry (and the authorization server the
    /// metadata names).
    pub issuer: String,
    /// Where its signing keys are published. Absent: read from the issuer's
    /// metadata (`/.well-known/openid-configuration`, else RFC 8414's
    /// `/.well-known/oauth-authorization-server`), see `auth::discovery`.
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// Refuse tokens whose header `typ` is not `at+jwt` (RFC 9068 §4), so an
    /// ID token or another signed JWT of the issuer is never taken for an
    /// access token. Turn off only for a provider that omits `typ` from its
    /// access tokens.
    #[serde(default = "default_true")]
    pub require_at_jwt_typ: bool,
    /// Signature algorithms accepted from this issuer; anything else is
    /// refused, whatever the token header says.
    #[serde(default = "default_algorithms")]
    pub algorithms: Vec<String>,
    /// The claim whose string value is the engine tenant.
    #[serde(default)]
    pub tenant_claim: Option<String>,
    /// A fixed tenant for every token of this issuer (instead of a claim).
    #[serde(default)]
    pub tenant: Option<String>,
    /// Ceiling for every principal of this issuer.
    #[serde(default)]
    pub max_risk: Option<String>,
    /// Risk hints no step of this issuer's programs may carry (`destructive`,
    /// `openWorld`).
    #[serde(default)]
    pub forbid_risk_hints: Vec<String>,
    /// A claim that may lower the ceiling per token (a risk level, e.g.
    /// `"write"`); it can never raise it above `max_risk`.
    #[serde(default)]
    pub max_risk_claim: Option<String>,
}

fn default_true() -> bool {
    true
}

fn default_algorithms() -> Vec<String> {
    vec!["RS256".into(), "ES256".into()]
}

/// The asymmetric algorithms a JWKS can carry public keys for; shared-secret
/// HMAC algorithms are never accepted from a published key set.
pub const ALLOWED_ALGORITHMS: [&str; 9] = [
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];

fn is_http_url(s: &str) -> bool {
    reqwest::Url::parse(s).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

impl OAuthConfig {
    /// (key, problem, fix) triples.
    pub fn validate(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let mut problem = |k: String, p: String, f: &str| out.push((k, p, f.to_string()));
        match reqwest::Url::parse(&self.resource) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.fragment().is_none() => {}
            _ => problem(
                "auth.oauth.resource".into(),
                format!(
                    "'{}' is not an http(s) URL without a fragment",
                    self.resource
                ),
                "set the canonical URL of this gateway's MCP endpoint, e.g. https://gateway.example.com/mcp",
            ),
        }
        if self.issuers.is_empty() {
            problem(
                "auth.oauth.issuer".into(),
                "OAuth is on but no [[auth.oauth.issuer]] is declared".into(),
                "declare the identity provider(s) whose tokens this gateway accepts",
            );
        }
        let mut seen = std::collections::BTreeSet::new();
        for (i, iss) in self.issuers.iter().enumerate() {
            let key = |k: &str| format!("auth.oauth.issuer[{i}].{k}");
            if iss.issuer.is_empty() || !seen.insert(iss.issuer.clone()) {
                problem(
                    key("issuer"),
                    format!("'{}' is empty or declared twice", iss.issuer),
                    "set the exact `iss` value of the identity provider's tokens, once",
                );
            }
            if let Some(uri) = &iss.jwks_uri
                && !is_http_url(uri)
            {
                problem(
                    key("jwks_uri"),
                    format!("'{uri}' is not an http(s) URL"),
                    "set the jwks_uri from the provider's metadata (.well-known/openid-configuration), or leave it out to have it discovered",
                );
            }
            if iss.jwks_uri.is_none() && !is_http_url(&iss.issuer) {
                problem(
                    key("issuer"),
                    format!(
                        "'{}' is not an http(s) URL, so its metadata cannot be discovered",
                        iss.issuer
                    ),
                    "set jwks_uri, or use the provider's issuer URL",
                );
            }
            if iss.algorithms.is_empty() {
                problem(
                    key("algorithms"),
                    "no algorithm allowed: no token could verify".into(),
                    "list the provider's signing algorithms, e.g. [\"RS256\"]",
                );
            }
            for a in &iss.algorithms {
                if !ALLOWED_ALGORITHMS.contains(&a.as_str()) {
                    problem(
                        key("algorithms"),
                        format!("'{a}' is not an asymmetric JWS algorithm"),
                        &format!("use some of {}", ALLOWED_ALGORITHMS.join(", ")),
                    );
                }
            }
            match (&iss.tenant_claim, &iss.tenant) {
                (Some(c), None) if !c.is_empty() => {}
                (None, Some(t)) if !t.is_empty() => {}
                _ => problem(
                    key("tenant_claim"),
                    "name exactly one of tenant_claim and tenant".into(),
                    "set tenant_claim to the claim carrying the engine tenant, or tenant to a fixed one",
                ),
            }
            if let Some(m) = &iss.max_risk
                && RiskLevel::parse(m).is_none()
            {
                problem(
                    key("max_risk"),
                    format!("'{m}' is not a risk level"),
                    &format!("use one of {}", RiskLevel::NAMES.join(", ")),
                );
            }
            if let Err(h) = RiskCeiling::parse(None, &iss.forbid_risk_hints) {
                problem(
                    key("forbid_risk_hints"),
                    format!("'{h}' cannot be forbidden"),
                    &format!("use some of {}", FORBIDDABLE_HINTS.join(", ")),
                );
            }
        }
        out
    }

    /// The scope that grants `p`.
    pub fn scope_for(&self, p: Permission) -> String {
        format!("{}{}", self.scope_prefix, p.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> OAuthConfig {
        toml::from_str(text).expect("oauth TOML")
    }

    #[test]
    fn a_complete_resource_server_is_accepted() {
        let c = parse(
            r#"resource = "https://gw.example.com/mcp"
            [[issuer]]
            issuer = "https://idp.example.com"
            jwks_uri = "https://idp.example.com/jwks"
            tenant_claim = "tenant"
            max_risk = "write"
            forbid_risk_hints = ["openWorld"]"#,
        );
        assert_eq!(c.validate(), Vec::new());
        assert_eq!(c.scope_for(Permission::Deploy), "pilotage:deploy");
        assert_eq!(c.issuers[0].algorithms, vec!["RS256", "ES256"]);
        assert!(c.issuers[0].require_at_jwt_typ, "RFC 9068 typ by default");
    }

    #[test]
    fn the_key_set_may_be_left_to_discovery_from_an_issuer_url() {
        let c = parse(
            r#"resource = "https://gw.example.com/mcp"
            [[issuer]]
            issuer = "https://idp.example.com/realms/acme"
            tenant = "acme"
            require_at_jwt_typ = false"#,
        );
        assert_eq!(c.validate(), Vec::new());
        assert_eq!(c.issuers[0].jwks_uri, None);
        assert!(!c.issuers[0].require_at_jwt_typ);
        let opaque = parse(
            r#"resource = "https://gw.example.com/mcp"
            [[issuer]]
            issuer = "urn:example:idp"
            tenant = "acme""#,
        );
        assert_eq!(opaque.validate()[0].0, "auth.oauth.issuer[0].issuer");
    }

    #[test]
    fn every_problem_names_its_key() {
        let c = parse(
            r#"resource = "gw.example.com"
            [[issuer]]
            issuer = "https://idp.example.com"
            jwks_uri = "file:///jwks"
            algorithms = ["HS256"]
            max_risk = "huge"
            forbid_risk_hints = ["readOnly"]
            [[issuer]]
            issuer = "https://idp.example.com"
            jwks_uri = "https://idp.example.com/jwks"
            tenant_claim = "t"
            tenant = "acme""#,
        );
        let keys: Vec<String> = c.validate().into_iter().map(|p| p.0).collect();
        for k in [
            "auth.oauth.resource",
            "auth.oauth.issuer[0].jwks_uri",
            "auth.oauth.issuer[0].algorithms",
            "auth.oauth.issuer[0].tenant_claim",
            "auth.oauth.issuer[0].max_risk",
            "auth.oauth.issuer[0].forbid_risk_hints",
            "auth.oauth.issuer[1].issuer",
            "auth.oauth.issuer[1].tenant_claim",
        ] {
            assert!(keys.contains(&k.to_string()), "{k} missing from {keys:?}");
        }
        let none = parse(r#"resource = "https://gw.example.com/mcp""#);
        assert_eq!(none.validate()[0].0, "auth.oauth.issuer");
    }
}
