//! `[auth]`: who may call (API keys, OAuth issuers, anonymous access) and
//! what each caller may do, with the start-up checks of those keys.

use super::OAuthConfig;
use super::policy;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct AuthConfig {
    /// Anonymous access: callers without a key act inside `anonymous_tenant`.
    pub anonymous: bool,
    /// The engine tenant anonymous callers act in.
    pub anonymous_tenant: String,
    /// Who an anonymous principal is: `"session"` (each MCP session) or
    /// `"tenant"` (every anonymous caller); see [`AnonymousScope`].
    pub anonymous_scope: String,
    /// What anonymous callers may do, as for a key: permissions (all when
    /// absent) and a risk ceiling.
    pub anonymous_permissions: Option<Vec<String>>,
    /// The riskiest level an anonymous caller's programs may reach (`safe` <
    /// `write` < `external` < `destructive`); absent: no ceiling.
    pub anonymous_max_risk: Option<String>,
    /// Risk hints no step of an anonymous caller's programs may carry
    /// (`destructive`, `openWorld`).
    pub anonymous_forbid_risk_hints: Vec<String>,
    /// Anonymous callers' runs riskier than this wait for a person's
    /// approval (held as a task); absent: none waits.
    pub anonymous_approve_above: Option<String>,
    /// API keys (`[[auth.key]]`), each sent as `Authorization: Bearer KEY`.
    #[serde(rename = "key")]
    pub keys: Vec<ApiKeyConfig>,
    /// A file of more `[[key]]` blocks (`PILOTAGE_API_KEYS_FILE`), so keys
    /// can be mounted as a container secret.
    pub keys_file: String,
    /// How many of `keys` (the last ones) came from `keys_file`.
    #[serde(skip)]
    pub keys_from_file: usize,
    /// Bearer JWT access tokens from identity providers, beside the keys.
    pub oauth: Option<OAuthConfig>,
}

impl Default for AuthConfig {
    fn default() -> Self {
        Self {
            anonymous: false,
            anonymous_tenant: String::new(),
            anonymous_scope: AnonymousScope::Session.as_str().into(),
            anonymous_permissions: None,
            anonymous_max_risk: None,
            anonymous_forbid_risk_hints: Vec::new(),
            anonymous_approve_above: None,
            keys: Vec::new(),
            keys_file: String::new(),
            keys_from_file: 0,
            oauth: None,
        }
    }
}

impl AuthConfig {
    /// The configured scope; `None` for a value `validate` reports.
    pub fn scope(&self) -> Option<AnonymousScope> {
        AnonymousScope::parse(&self.anonymous_scope)
    }
}

/// What one anonymous principal covers (`auth.anonymous_scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnonymousScope {
    /// Each MCP session is a principal of its own. A request without a session
    /// belongs to nobody a later request can be, so nothing is stored for it.
    #[default]
    Session,
    /// Every anonymous caller is one principal of the anonymous tenant: a local
    /// or single-user install, where clients without sessions (revision
    /// 2026-07-28) still fetch their stored runs.
    Tenant,
}

impl AnonymousScope {
    pub fn parse(value: &str) -> Option<AnonymousScope> {
        match value {
            "session" => Some(AnonymousScope::Session),
            "tenant" => Some(AnonymousScope::Tenant),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AnonymousScope::Session => "session",
            AnonymousScope::Tenant => "tenant",
        }
    }
}

/// One API key. Only its SHA-256 is stored.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApiKeyConfig {
    /// Principal name (appears in logs, never in responses).
    pub name: String,
    /// The engine tenant this key acts in.
    pub tenant: String,
    /// Lowercase hex SHA-256 of the bearer key.
    pub sha256: String,
    /// What this key may do (`learn`, `validate`, `execute`, `deploy`,
    /// `trace`); absent means all of them.
    #[serde(default)]
    pub permissions: Option<Vec<String>>,
    /// The riskiest level a program of this key may reach.
    #[serde(default)]
    pub max_risk: Option<String>,
    /// Risk hints no step of this key's programs may carry.
    #[serde(default)]
    pub forbid_risk_hints: Vec<String>,
    /// This key's runs riskier than this level (`safe` < `write` <
    /// `external` < `destructive`) wait for a person's approval: called as a
    /// task they are held until approved; absent: none waits.
    #[serde(default)]
    pub approve_above: Option<String>,
}

impl ApiKeyConfig {
    /// The policy fields as written.
    pub fn policy(&self) -> crate::config::policy::PolicyFields<'_> {
        crate::config::policy::PolicyFields {
            permissions: self.permissions.as_deref(),
            max_risk: self.max_risk.as_deref(),
            forbid_risk_hints: &self.forbid_risk_hints,
            approve_above: self.approve_above.as_deref(),
        }
    }
}

impl AuthConfig {
    /// The anonymous callers' policy fields as written.
    pub fn anonymous_policy(&self) -> crate::config::policy::PolicyFields<'_> {
        crate::config::policy::PolicyFields {
            permissions: self.anonymous_permissions.as_deref(),
            max_risk: self.anonymous_max_risk.as_deref(),
            forbid_risk_hints: &self.anonymous_forbid_risk_hints,
            approve_above: self.anonymous_approve_above.as_deref(),
        }
    }
}

impl AuthConfig {
    /// (key, problem, fix) for every wrong `[auth]` key.
    pub fn problems(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let mut problem = |key: &str, what: String, fix: &str| {
            out.push((key.to_string(), what, fix.to_string()));
        };
        if self.anonymous && self.anonymous_tenant.is_empty() {
            problem(
                "auth.anonymous_tenant",
                "anonymous access is on but names no tenant".into(),
                "set anonymous_tenant, or anonymous = false",
            );
        }
        if self.scope().is_none() {
            problem(
                "auth.anonymous_scope",
                format!("'{}' is not an anonymous scope", self.anonymous_scope),
                "use \"session\" (each MCP session is its own anonymous principal) or \"tenant\" (every anonymous caller is one principal: a local or single-user install)",
            );
        }
        if !self.anonymous && self.keys.is_empty() && self.oauth.is_none() {
            problem(
                "auth",
                "no API key, no OAuth issuer and anonymous access off: nobody could call".into(),
                "add [[auth.key]] entries, an [auth.oauth] resource server, or set anonymous = true",
            );
        }
        if let Some(oauth) = &self.oauth {
            for p in oauth.validate() {
                problem(&p.0, p.1, &p.2);
            }
        }
        for (i, key) in self.keys.iter().enumerate() {
            if key.sha256.len() != 64 || !key.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
                problem(
                    &format!("auth.key[{i}].sha256"),
                    "not a 64-digit hex SHA-256".into(),
                    "store the key as `printf %s KEY | sha256sum`",
                );
            }
            if key.tenant.is_empty() {
                problem(
                    &format!("auth.key[{i}].tenant"),
                    "empty tenant".into(),
                    "name the engine tenant this key acts for",
                );
            }
            for p in policy::problems(&format!("auth.key[{i}]."), key.policy()) {
                problem(&p.0, p.1, &p.2);
            }
        }
        for p in policy::problems("auth.anonymous_", self.anonymous_policy()) {
            problem(&p.0, p.1, &p.2);
        }
        out
    }
}
