//! `[engine.auth]` / `[engines.NAME.auth]`: what an engine table says about
//! the credentials the gateway presents to that engine, and its start-up
//! checks. Only paths and names are written in the TOML; every secret is
//! read from a file, so a table with an inline secret is refused, naming the
//! key and the `_file` key to use instead.

use serde::Deserialize;
use std::collections::BTreeMap;

/// The `auth` table as written. Its `Debug` shows the key names only: an
/// inline secret (refused at start) never reaches a log through it.
#[derive(Clone, Default, Deserialize)]
#[serde(transparent)]
pub struct AuthTable(pub toml::Table);

impl std::fmt::Debug for AuthTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// The OAuth 2.0 client-credentials grant (RFC 6749 §4.4).
#[derive(Debug, Clone, PartialEq)]
pub struct OAuthSettings {
    pub token_url: String,
    pub client_id: String,
    pub client_secret_file: String,
    pub scope: Option<String>,
    /// Sent as `audience` (the form some providers read).
    pub audience: Option<String>,
    /// Sent as `resource` (RFC 8707 resource indicator).
    pub resource: Option<String>,
}

/// The credentials of one engine, as paths and names.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuthSettings {
    /// `Authorization: Bearer <file contents>`.
    pub token_file: Option<String>,
    /// `Authorization: Basic` with `username` and the file's password.
    pub basic: Option<(String, String)>,
    /// Header name → file holding its value.
    pub headers: BTreeMap<String, String>,
    /// PEM certificate (chain) and private key for mutual TLS.
    pub client_cert: Option<(String, String)>,
    pub oauth: Option<OAuthSettings>,
    /// Where the token (file or OAuth) goes: `Authorization: Bearer` unless
    /// another header is named, which then carries the bare token (as
    /// OpenStack's `X-Auth-Token` does).
    pub token_header: Option<String>,
}

/// Keys that would hold a secret inline, and the key that takes its file.
const INLINE_SECRETS: &[(&str, &str)] = &[
    ("token", "token_file"),
    ("password", "password_file"),
    ("client_secret", "client_secret_file"),
    ("client_key", "client_key_file"),
    ("secret", "token_file"),
];

/// Every string key the table takes.
const STRING_KEYS: &[&str] = &[
    "token_file",
    "token_header",
    "username",
    "password_file",
    "client_cert_file",
    "client_key_file",
    "token_url",
    "client_id",
    "client_secret_file",
    "scope",
    "audience",
    "resource",
];

/// Headers the gateway sets itself, never taken from the table.
const RESERVED_HEADERS: &[&str] = &[
    "host",
    "content-length",
    "content-type",
    "transfer-encoding",
];

/// A problem as (key under `prefix`, problem, fix).
type Problem = (String, String, String);

impl AuthTable {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The settings, or every problem with them (keys under `prefix`, e.g.
    /// `engines.billing.auth`). No message quotes a value: a misplaced
    /// secret stays out of logs.
    pub fn read(&self, prefix: &str) -> Result<AuthSettings, Vec<Problem>> {
        let mut problems = Vec::new();
        let mut strings = BTreeMap::new();
        let mut headers = BTreeMap::new();
        for (key, value) in &self.0 {
            let at = format!("{prefix}.{key}");
            if let Some((_, file_key)) = INLINE_SECRETS.iter().find(|(k, _)| k == key) {
                problems.push((
                    at,
                    "a secret written in the configuration file".into(),
                    format!(
                        "remove it; write the secret alone in a file readable only by the gateway and set {file_key} = \"path/to/file\""
                    ),
                ));
            } else if key == "headers" {
                read_headers(value, &at, &mut headers, &mut problems);
            } else if STRING_KEYS.contains(&key.as_str()) {
                match value.as_str() {
                    Some(s) if !s.trim().is_empty() => {
                        strings.insert(key.as_str(), s.to_string());
                    }
                    _ => problems.push((
                        at,
                        "not a non-empty string".into(),
                        "write a quoted path or name".into(),
                    )),
                }
            } else {
                problems.push((
                    at,
                    "not a key of an engine's auth table".into(),
                    format!(
                        "remove it; auth takes {}, headers (docs/engine-credentials.md)",
                        STRING_KEYS.join(", ")
                    ),
                ));
            }
        }
        let mut take = |k: &str| strings.remove(k);
        let token_file = take("token_file");
        let token_header = take("token_header").map(|h| h.to_ascii_lowercase());
        let basic = pair(
            prefix,
            ("username", take("username")),
            ("password_file", take("password_file")),
            &mut problems,
        );
        let client_cert = pair(
            prefix,
            ("client_cert_file", take("client_cert_file")),
            ("client_key_file", take("client_key_file")),
            &mut problems,
        );
        let oauth_keys = [
            take("token_url"),
            take("client_id"),
            take("client_secret_file"),
        ];
        let (scope, audience, resource) = (take("scope"), take("audience"), take("resource"));
        let oauth = match oauth_keys {
            [Some(token_url), Some(client_id), Some(client_secret_file)] => {
                if !(token_url.starts_with("https://") || token_url.starts_with("http://")) {
                    problems.push((
                        format!("{prefix}.token_url"),
                        "not an http(s) URL".into(),
                        "name the provider's token endpoint, e.g. https://idp.example/token".into(),
                    ));
                }
                Some(OAuthSettings {
                    token_url,
                    client_id,
                    client_secret_file,
                    scope,
                    audience,
                    resource,
                })
            }
            [None, None, None] => {
                if scope.is_some() || audience.is_some() || resource.is_some() {
                    problems.push((
                        format!("{prefix}.token_url"),
                        "scope, audience or resource set without a token endpoint".into(),
                        "set token_url, client_id and client_secret_file, or remove them".into(),
                    ));
                }
                None
            }
            _ => {
                problems.push((
                    format!("{prefix}.token_url"),
                    "OAuth client credentials need token_url, client_id and client_secret_file together".into(),
                    "set all three, or none".into(),
                ));
                None
            }
        };
        let authorizations = [token_file.is_some(), basic.is_some(), oauth.is_some()];
        if authorizations.iter().filter(|set| **set).count() > 1 {
            problems.push((
                prefix.to_string(),
                "more than one of token_file, username/password_file and token_url: each sets the Authorization header".into(),
                "keep one of them".into(),
            ));
        }
        if let Some(h) = &token_header {
            if token_file.is_none() && oauth.is_none() {
                problems.push((
                    format!("{prefix}.token_header"),
                    "no token to send: neither token_file nor token_url is set".into(),
                    "set token_file or the OAuth keys, or remove token_header".into(),
                ));
            }
            if reqwest::header::HeaderName::from_bytes(h.as_bytes()).is_err()
                || RESERVED_HEADERS.contains(&h.as_str())
            {
                problems.push((
                    format!("{prefix}.token_header"),
                    "not a header the gateway can send".into(),
                    "name a header such as X-Auth-Token, or remove it for Authorization: Bearer"
                        .into(),
                ));
            }
        }
        let settings = AuthSettings {
            token_file,
            basic,
            headers,
            client_cert,
            oauth,
            token_header,
        };
        let token_goes_to = settings
            .token_header
            .clone()
            .unwrap_or_else(|| "authorization".into());
        if settings.token_header.is_some() && settings.headers.contains_key(&token_goes_to) {
            problems.push((
                format!("{prefix}.headers.{token_goes_to}"),
                "token_header already sends the token in this header".into(),
                "remove it from headers".into(),
            ));
        }
        if settings.authorizes() && settings.headers.keys().any(|h| h == "authorization") {
            problems.push((
                format!("{prefix}.headers.authorization"),
                "Authorization is already set by the token, basic or OAuth settings".into(),
                "remove it from headers".into(),
            ));
        }
        if problems.is_empty() {
            Ok(settings)
        } else {
            Err(problems)
        }
    }

    /// The start-up problems of this table: its reading, and every file it
    /// names (`is_file` resolves relative paths like every other path of
    /// the configuration).
    pub fn problems(&self, prefix: &str, is_file: &dyn Fn(&str) -> bool) -> Vec<Problem> {
        let settings = match self.read(prefix) {
            Ok(s) => s,
            Err(problems) => return problems,
        };
        settings
            .files()
            .into_iter()
            .filter(|(_, path)| !is_file(path))
            .map(|(key, path)| {
                (
                    format!("{prefix}.{key}"),
                    format!("'{path}' is not a file"),
                    "name a readable file (relative paths start at the configuration's folder)"
                        .into(),
                )
            })
            .collect()
    }
}

impl AuthSettings {
    /// Whether one of the settings sets `Authorization`.
    pub fn authorizes(&self) -> bool {
        self.token_file.is_some() || self.basic.is_some() || self.oauth.is_some()
    }

    /// Every file named, as (key, path).
    pub fn files(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(p) = &self.token_file {
            out.push(("token_file".into(), p.clone()));
        }
        if let Some((_, p)) = &self.basic {
            out.push(("password_file".into(), p.clone()));
        }
        if let Some((cert, key)) = &self.client_cert {
            out.push(("client_cert_file".into(), cert.clone()));
            out.push(("client_key_file".into(), key.clone()));
        }
        if let Some(o) = &self.oauth {
            out.push(("client_secret_file".into(), o.client_secret_file.clone()));
        }
        for (name, p) in &self.headers {
            out.push((format!("headers.{name}.file"), p.clone()));
        }
        out
    }
}

/// Two keys that go together: both or neither.
fn pair(
    prefix: &str,
    (a, va): (&str, Option<String>),
    (b, vb): (&str, Option<String>),
    problems: &mut Vec<Problem>,
) -> Option<(String, String)> {
    match (va, vb) {
        (Some(x), Some(y)) => Some((x, y)),
        (None, None) => None,
        (present_a, _) => {
            let present = if present_a.is_some() { a } else { b };
            problems.push((
                format!("{prefix}.{present}"),
                format!("{a} and {b} go together"),
                format!("set both {a} and {b}, or neither"),
            ));
            None
        }
    }
}

/// `headers = { "X-Api-Key" = { file = "..." } }`, names lower-cased.
fn read_headers(
    value: &toml::Value,
    at: &str,
    headers: &mut BTreeMap<String, String>,
    problems: &mut Vec<Problem>,
) {
    let Some(table) = value.as_table() else {
        problems.push((
            at.to_string(),
            "not a table".into(),
            "write headers = { \"X-Api-Key\" = { file = \"path/to/file\" } }".into(),
        ));
        return;
    };
    for (name, source) in table {
        let key = format!("{at}.{name}");
        let lower = name.to_ascii_lowercase();
        if reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_err()
            || RESERVED_HEADERS.contains(&lower.as_str())
        {
            problems.push((
                key,
                "not a header the gateway can send".into(),
                format!(
                    "use a valid header name other than {}",
                    RESERVED_HEADERS.join(", ")
                ),
            ));
            continue;
        }
        let file = source
            .as_table()
            .filter(|t| t.len() == 1)
            .and_then(|t| t.get("file"))
            .and_then(toml::Value::as_str);
        match file {
            Some(path) if !path.trim().is_empty() => {
                headers.insert(lower, path.to_string());
            }
            _ => problems.push((
                key,
                if source.is_str() {
                    "a secret written in the configuration file".into()
                } else {
                    "not a { file = \"...\" } table".into()
                },
                format!(
                    "write the value alone in a file and set {name} = {{ file = \"path/to/file\" }}"
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(text: &str) -> AuthTable {
        AuthTable(toml::from_str(text).expect("toml"))
    }

    fn keys(text: &str) -> Vec<String> {
        table(text)
            .read("engine.auth")
            .expect_err("problems")
            .into_iter()
            .map(|(k, _, _)| k)
            .collect()
    }

    #[test]
    fn each_kind_reads() {
        let s = table(
            "username = \"svc\"\npassword_file = \"pw\"\nclient_cert_file = \"c.pem\"\nclient_key_file = \"k.pem\"\nheaders = { \"X-Api-Key\" = { file = \"key\" } }\n",
        )
        .read("engine.auth")
        .expect("valid");
        assert_eq!(s.basic, Some(("svc".into(), "pw".into())));
        assert_eq!(s.client_cert, Some(("c.pem".into(), "k.pem".into())));
        assert_eq!(s.headers.get("x-api-key").map(String::as_str), Some("key"));
        let o = table("token_url = \"https://idp/token\"\nclient_id = \"gw\"\nclient_secret_file = \"s\"\nscope = \"run\"\nresource = \"https://engine\"\n")
            .read("engine.auth")
            .expect("valid")
            .oauth
            .expect("oauth");
        assert_eq!(o.resource.as_deref(), Some("https://engine"));
    }

    #[test]
    fn inline_secrets_are_refused_without_quoting_them() {
        for (text, key) in [
            ("token = \"s3cr3t-value\"", "engine.auth.token"),
            (
                "username = \"u\"\npassword = \"s3cr3t-value\"",
                "engine.auth.password",
            ),
            (
                "headers = { \"X-Api-Key\" = \"s3cr3t-value\" }",
                "engine.auth.headers.X-Api-Key",
            ),
            (
                "client_secret = \"s3cr3t-value\"",
                "engine.auth.client_secret",
            ),
        ] {
            let problems = table(text).read("engine.auth").expect_err(text);
            assert!(problems.iter().any(|(k, _, _)| k == key), "{problems:?}");
            let all = format!("{problems:?}");
            assert!(!all.contains("s3cr3t-value"), "{all}");
            assert!(all.contains("file"), "the fix names a file: {all}");
        }
        assert!(!format!("{:?}", table("token = \"s3cr3t-value\"")).contains("s3cr3t"));
    }

    #[test]
    fn conflicting_or_partial_settings_are_named() {
        assert!(
            keys("token_file = \"t\"\nusername = \"u\"\npassword_file = \"p\"")
                .contains(&"engine.auth".to_string())
        );
        assert!(keys("username = \"u\"").contains(&"engine.auth.username".to_string()));
        assert!(
            keys("client_cert_file = \"c\"").contains(&"engine.auth.client_cert_file".to_string())
        );
        assert!(keys("token_url = \"https://i/t\"").contains(&"engine.auth.token_url".to_string()));
        assert!(keys("tokenfile = \"t\"").contains(&"engine.auth.tokenfile".to_string()));
        assert!(
            keys("headers = { Host = { file = \"h\" } }")
                .contains(&"engine.auth.headers.Host".to_string())
        );
        assert!(
            keys("token_file = \"t\"\nheaders = { Authorization = { file = \"h\" } }")
                .contains(&"engine.auth.headers.authorization".to_string())
        );
    }
}

/// The keys `[engine.auth]` takes, for the configuration's JSON Schema
/// (the table itself is read by [`AuthTable`], which refuses inline secrets
/// with a message naming the `_file` key to use).
#[derive(schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
pub struct AuthSchema {
    /// A file holding a bearer token sent to the engine.
    token_file: Option<String>,
    /// Send the token bare in this header instead of `Authorization`
    /// (e.g. `X-Auth-Token`).
    token_header: Option<String>,
    /// Basic credentials: the user name.
    username: Option<String>,
    /// Basic credentials: a file holding the password.
    password_file: Option<String>,
    /// Extra headers, each value from a file: `{ "X-Api-Key" = { file = "..." } }`.
    headers: Option<BTreeMap<String, HeaderFile>>,
    /// PEM client certificate for mutual TLS.
    client_cert_file: Option<String>,
    /// PEM key of the client certificate.
    client_key_file: Option<String>,
    /// OAuth 2.0 client credentials: the token endpoint.
    token_url: Option<String>,
    /// OAuth 2.0 client credentials: the client id.
    client_id: Option<String>,
    /// OAuth 2.0 client credentials: a file holding the client secret.
    client_secret_file: Option<String>,
    /// OAuth 2.0 client credentials: the scope asked for.
    scope: Option<String>,
    /// OAuth 2.0 client credentials: sent as `audience`.
    audience: Option<String>,
    /// OAuth 2.0 client credentials: sent as `resource` (RFC 8707).
    resource: Option<String>,
}

/// One extra header's value, read from a file.
#[derive(schemars::JsonSchema)]
#[schemars(deny_unknown_fields)]
#[allow(dead_code)]
pub struct HeaderFile {
    /// The file holding the header's value.
    file: String,
}
