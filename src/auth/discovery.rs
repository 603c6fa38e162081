//! Where an issuer publishes its signing keys, read from its metadata when
//! the configuration names no `jwks_uri`.
//!
//! Two documents are tried, in order: OpenID Connect Discovery's
//! `<issuer>/.well-known/openid-configuration`, then RFC 8414's
//! `/.well-known/oauth-authorization-server` inserted between the issuer's
//! host and path. A document counts only when its `issuer` is exactly the
//! configured one (RFC 8414 §3.3, OpenID Discovery §4.3): a metadata host
//! cannot speak for another issuer, and a mix-up is refused, not followed.

use serde_json::Value;

const OPENID: &str = "/.well-known/openid-configuration";
const RFC8414: &str = "/.well-known/oauth-authorization-server";

/// The metadata addresses of `issuer`, in the order they are tried.
pub fn metadata_urls(issuer: &str) -> Vec<String> {
    let mut out = vec![format!("{}{OPENID}", issuer.trim_end_matches('/'))];
    if let Ok(u) = reqwest::Url::parse(issuer) {
        let path = u.path().trim_end_matches('/');
        out.push(format!(
            "{}{RFC8414}{path}",
            u.origin().ascii_serialization()
        ));
    }
    out
}

/// The `jwks_uri` of `issuer`'s metadata; the error says what every
/// document answered (for the log only: it names internal addresses).
pub async fn jwks_uri(http: &reqwest::Client, issuer: &str) -> Result<String, String> {
    let mut failures = Vec::new();
    for url in metadata_urls(issuer) {
        match read(http, &url, issuer).await {
            Ok(uri) => return Ok(uri),
            Err(reason) => failures.push(format!("{url}: {reason}")),
        }
    }
    Err(format!(
        "no usable metadata for issuer {issuer}: {}",
        failures.join("; ")
    ))
}

async fn read(http: &reqwest::Client, url: &str, issuer: &str) -> Result<String, String> {
    let resp = http
        .get(url)
        .header("accept", "application/json")
        .send()
        .await
        .map_err(|e| e.to_string())?;
    if !resp.status().is_success() {
        return Err(format!("HTTP {}", resp.status()));
    }
    let doc: Value = resp.json().await.map_err(|e| e.to_string())?;
    let named = doc.get("issuer").and_then(Value::as_str).unwrap_or("");
    if named != issuer {
        return Err(format!("the document is for issuer '{named}'"));
    }
    let uri = doc
        .get("jwks_uri")
        .and_then(Value::as_str)
        .ok_or("the document has no jwks_uri")?;
    match reqwest::Url::parse(uri) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(uri.to_string()),
        _ => Err(format!("jwks_uri '{uri}' is not an http(s) URL")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openid_appends_and_rfc8414_inserts_before_the_path() {
        assert_eq!(
            metadata_urls("https://idp.example.com/realms/acme/"),
            [
                "https://idp.example.com/realms/acme/.well-known/openid-configuration",
                "https://idp.example.com/.well-known/oauth-authorization-server/realms/acme",
            ]
        );
        assert_eq!(
            metadata_urls("http://127.0.0.1:9000")[1],
            "http://127.0.0.1:9000/.well-known/oauth-authorization-server"
        );
    }
}
