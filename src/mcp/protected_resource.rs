//! OAuth 2.0 Protected Resource Metadata (RFC 9728) and the answers that
//! point at it: 401 with `WWW-Authenticate: Bearer resource_metadata="…"`
//! for a missing or invalid token, 403 with `error="insufficient_scope"` for
//! a token without the scopes every caller needs (MCP authorization,
//! revisions 2025-06-18 and later).

use super::carrier::{INTERNAL_ERROR, SESSION_ERROR, rpc_error};
use crate::auth::AuthError;
use crate::auth::oauth::OAuthVerifier;
use crate::auth::policy::{Permission, Permissions};
use axum::body::Body;
use axum::http::{HeaderValue, Response, StatusCode, header};
use serde_json::{Value, json};

/// The well-known path prefix (RFC 9728 §3).
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// Where the metadata of `resource` lives: the well-known prefix inserted
/// between the host and the resource's path (RFC 9728 §3.1).
pub fn metadata_url(resource: &str) -> String {
    match reqwest::Url::parse(resource) {
        Ok(u) => {
            let path = u.path().trim_end_matches('/');
            let mut out = format!("{}{WELL_KNOWN}{path}", u.origin().ascii_serialization());
            if let Some(q) = u.query() {
                out.push('?');
                out.push_str(q);
            }
            out
        }
        Err(_) => format!("{}{WELL_KNOWN}", resource.trim_end_matches('/')),
    }
}

/// The metadata document.
pub fn document(oauth: &OAuthVerifier) -> Value {
    let scopes: Vec<String> = Permission::ALL
        .into_iter()
        .map(|p| oauth.config.scope_for(p))
        .collect();
    json!({
        "resource": oauth.config.resource,
        "authorization_servers": oauth.authorization_servers(),
        "bearer_methods_supported": ["header"],
        "scopes_supported": scopes,
        "resource_name": "Pilotage gateway",
    })
}

/// The answer to a request whose credentials are refused. The reason is
/// logged as a structured field (`auth_refusal`, with the gateway's own
/// description: never the token or key itself).
pub fn refusal(e: AuthError, oauth: Option<&OAuthVerifier>, id: Value) -> Response<Body> {
    tracing::info!(auth_refusal = refusal_kind(&e), detail = %e, "credentials refused");
    let status = match &e {
        AuthError::InsufficientScope { .. } => StatusCode::FORBIDDEN,
        AuthError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        _ => StatusCode::UNAUTHORIZED,
    };
    let code = if status == StatusCode::SERVICE_UNAVAILABLE {
        INTERNAL_ERROR
    } else {
        SESSION_ERROR
    };
    let mut r = rpc_error(status, id, code, &e.to_string());
    if status == StatusCode::SERVICE_UNAVAILABLE {
        return r;
    }
    let challenge = match oauth {
        None => "Bearer".to_string(),
        Some(o) => challenge(&e, o),
    };
    if let Ok(v) = HeaderValue::from_str(&challenge) {
        r.headers_mut().insert(header::WWW_AUTHENTICATE, v);
    }
    r
}

/// The refusal as a short stable name, for the log and alerting rules.
fn refusal_kind(e: &AuthError) -> &'static str {
    match e {
        AuthError::UnknownKey => "unknown_api_key",
        AuthError::Missing => "no_credentials",
        AuthError::InvalidToken(_) => "invalid_token",
        AuthError::InsufficientScope { .. } => "insufficient_scope",
        AuthError::Unavailable(_) => "keys_unavailable",
    }
}

/// The `Bearer` challenge (RFC 6750 §3, RFC 9728 §5.1).
fn challenge(e: &AuthError, oauth: &OAuthVerifier) -> String {
    let mut params = vec![format!(
        "resource_metadata=\"{}\"",
        metadata_url(&oauth.config.resource)
    )];
    let floor = Permissions::FLOOR
        .iter()
        .map(|p| oauth.config.scope_for(*p))
        .collect::<Vec<_>>()
        .join(" ");
    match e {
        // No credentials: no error code (RFC 6750 §3.1), the scopes to ask for.
        AuthError::Missing => params.push(format!("scope=\"{}\"", quoted(&floor))),
        AuthError::InsufficientScope { scope } => {
            params.push("error=\"insufficient_scope\"".into());
            params.push(format!("scope=\"{}\"", quoted(scope)));
            params.push(format!("error_description=\"{}\"", quoted(&e.to_string())));
        }
        _ => {
            params.push("error=\"invalid_token\"".into());
            params.push(format!("error_description=\"{}\"", quoted(&e.to_string())));
        }
    }
    format!("Bearer {}", params.join(", "))
}

/// Text safe inside a quoted-string: RFC 6750 allows no `"` or `\` there.
fn quoted(s: &str) -> String {
    s.chars()
        .filter(|c| *c != '"' && *c != '\\' && (' '..='~').contains(c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_sits_between_host_and_path() {
        assert_eq!(
            metadata_url("https://gw.example.com/mcp"),
            "https://gw.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8080/"),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
    }
}
