//! The credentials the gateway presents to one engine (`[engine.auth]`,
//! `[engines.NAME.auth]`): a bearer token, basic credentials, extra headers,
//! a client certificate for mutual TLS, or an OAuth 2.0 client-credentials
//! token. Secrets come from files, read once at start; they are marked
//! sensitive in every request, shown as `<redacted>` by `Debug`, and each
//! engine's client carries only its own. [`client_builder`] starts an
//! engine's HTTP client: its CA roots, its client certificate, and a redirect policy
//! that never leaves the engine's origin, so no credential follows a
//! redirect to another host.

mod oauth;
pub mod settings;

use reqwest::header::{HeaderName, HeaderValue};
use settings::AuthSettings;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Most redirects followed within the engine's origin.
const MAX_REDIRECTS: usize = 5;

/// A credential that cannot be read at start, or an OAuth token that cannot
/// be had. No variant carries a secret.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error("{key} '{path}': cannot read: {source}")]
    Unreadable {
        key: String,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{key} '{path}': {what}")]
    Unusable {
        key: String,
        path: PathBuf,
        what: String,
    },
    #[error("{key}: {problem} ({fix})")]
    Setting {
        key: String,
        problem: String,
        fix: String,
    },
    #[error("engine credentials: the OAuth token endpoint {url} cannot be reached: {detail}")]
    TokenUnreachable { url: String, detail: String },
    #[error(
        "engine credentials: the OAuth token endpoint {url} refused the client (HTTP {status}): {reason}"
    )]
    TokenRefused {
        url: String,
        status: u16,
        reason: String,
    },
    #[error("engine credentials: the OAuth token endpoint {url} answered no usable token: {what}")]
    TokenUnreadable { url: String, what: String },
}

/// What sets `Authorization` (or the configured token header) on each call.
enum Authorization {
    None,
    /// A bearer token or basic credentials, fixed at start.
    Fixed(HeaderValue),
    OAuth(Box<oauth::TokenSource>),
}

/// One engine's credentials, ready to send.
pub struct EngineCredentials {
    authorization: Authorization,
    /// The header the authorization goes in (`Authorization` unless set).
    token_header: HeaderName,
    headers: Vec<(HeaderName, HeaderValue)>,
    /// Certificate and key (PEM) for mutual TLS.
    identity: Option<Vec<u8>>,
}

impl std::fmt::Debug for EngineCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let authorization = match self.authorization {
            Authorization::None => "none",
            Authorization::Fixed(_) => "<redacted>",
            Authorization::OAuth(_) => "oauth client credentials",
        };
        f.debug_struct("EngineCredentials")
            .field("authorization", &authorization)
            .field(
                "headers",
                &self
                    .headers
                    .iter()
                    .map(|(n, _)| n.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("client_certificate", &self.identity.is_some())
            .finish()
    }
}

impl EngineCredentials {
    /// No credentials: only the tenant header is sent.
    pub fn none() -> Arc<Self> {
        Arc::new(Self {
            authorization: Authorization::None,
            token_header: reqwest::header::AUTHORIZATION,
            headers: Vec::new(),
            identity: None,
        })
    }

    /// Reads every file `settings` names (`resolve` maps a configured path
    /// to a file; `prefix` names the table in messages). The OAuth token is
    /// fetched on first use, through `token_http`.
    pub fn load(
        settings: &AuthSettings,
        prefix: &str,
        resolve: &dyn Fn(&str) -> PathBuf,
        token_http: impl FnOnce() -> reqwest::Client,
    ) -> Result<Arc<Self>, CredentialError> {
        let read = |key: &str, path: &str| -> Result<String, CredentialError> {
            let full = resolve(path);
            let text =
                std::fs::read_to_string(&full).map_err(|source| CredentialError::Unreadable {
                    key: format!("{prefix}.{key}"),
                    path: full.clone(),
                    source,
                })?;
            // A trailing newline is the editor's, not the secret's.
            let value = text.trim_end_matches(['\r', '\n']).to_string();
            if value.is_empty() {
                return Err(CredentialError::Unusable {
                    key: format!("{prefix}.{key}"),
                    path: full,
                    what: "the file is empty".into(),
                });
            }
            Ok(value)
        };
        let header = |key: &str, path: &str, value: String| {
            let mut v = HeaderValue::from_str(&value).map_err(|_| CredentialError::Unusable {
                key: format!("{prefix}.{key}"),
                path: resolve(path),
                what: "the value is not a header value (control characters?)".into(),
            })?;
            v.set_sensitive(true);
            Ok::<_, CredentialError>(v)
        };
        let token_header = settings
            .token_header
            .as_deref()
            .and_then(|h| HeaderName::from_bytes(h.as_bytes()).ok())
            .unwrap_or(reqwest::header::AUTHORIZATION);
        let bearer = token_header == reqwest::header::AUTHORIZATION;
        let authorization = if let Some(path) = &settings.token_file {
            let token = read("token_file", path)?;
            let value = if bearer {
                format!("Bearer {token}")
            } else {
                token
            };
            Authorization::Fixed(header("token_file", path, value)?)
        } else if let Some((user, path)) = &settings.basic {
            use base64::Engine as _;
            let password = read("password_file", path)?;
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
            Authorization::Fixed(header("password_file", path, format!("Basic {encoded}"))?)
        } else if let Some(o) = &settings.oauth {
            let secret = read("client_secret_file", &o.client_secret_file)?;
            Authorization::OAuth(Box::new(oauth::TokenSource::new(
                o.clone(),
                secret,
                token_http(),
                bearer,
            )))
        } else {
            Authorization::None
        };
        let mut headers = Vec::new();
        for (name, path) in &settings.headers {
            let key = format!("headers.{name}.file");
            let value = header(&key, path, read(&key, path)?)?;
            let name =
                HeaderName::from_bytes(name.as_bytes()).map_err(|_| CredentialError::Setting {
                    key: format!("{prefix}.headers.{name}"),
                    problem: "not a header name".into(),
                    fix: "use a valid header name".into(),
                })?;
            headers.push((name, value));
        }
        let identity = match &settings.client_cert {
            Some((cert, key)) => Some(identity(prefix, resolve, cert, key)?),
            None => None,
        };
        Ok(Arc::new(Self {
            authorization,
            token_header,
            headers,
            identity,
        }))
    }

    /// `req` with this engine's credentials. An OAuth token is fetched
    /// first when none is held or the held one is about to expire.
    pub async fn apply(
        &self,
        mut req: reqwest::RequestBuilder,
    ) -> Result<reqwest::RequestBuilder, CredentialError> {
        for (name, value) in &self.headers {
            req = req.header(name, value.clone());
        }
        Ok(match &self.authorization {
            Authorization::None => req,
            Authorization::Fixed(v) => req.header(&self.token_header, v.clone()),
            Authorization::OAuth(source) => {
                req.header(&self.token_header, source.authorization().await?)
            }
        })
    }

    /// Whether a health probe `req` sent with these credentials (as engine
    /// operation `health`) answers 2xx within `req`'s own timeout.
    pub async fn probe(
        &self,
        req: reqwest::RequestBuilder,
        metrics: Option<&crate::metrics::Metrics>,
    ) -> bool {
        let Ok(req) = self.apply(req).await else {
            return false;
        };
        crate::telemetry::engine::send("health", req, metrics)
            .await
            .is_ok_and(|r| r.status().is_success())
    }

    /// The engine answered 401: a held OAuth token is dropped so the next
    /// call fetches a new one (the provider may have revoked it).
    pub fn refused(&self) {
        if let Authorization::OAuth(source) = &self.authorization {
            source.forget();
        }
    }
}

/// The PEM identity of `cert` and `key`, checked now so a wrong file stops
/// the start naming its key.
fn identity(
    prefix: &str,
    resolve: &dyn Fn(&str) -> PathBuf,
    cert: &str,
    key: &str,
) -> Result<Vec<u8>, CredentialError> {
    let read = |k: &str, p: &str| {
        let full = resolve(p);
        std::fs::read(&full).map_err(|source| CredentialError::Unreadable {
            key: format!("{prefix}.{k}"),
            path: full,
            source,
        })
    };
    let mut pem = read("client_cert_file", cert)?;
    pem.push(b'\n');
    pem.extend(read("client_key_file", key)?);
    reqwest::Identity::from_pem(&pem).map_err(|e| CredentialError::Unusable {
        key: format!("{prefix}.client_cert_file"),
        path: resolve(cert),
        what: format!("not a PEM certificate and private key pair ({e})"),
    })?;
    Ok(pem)
}

/// The HTTP client of one engine, to be finished by its adapter: `roots`
/// trusted besides the system's, the engine's client certificate, and
/// redirects followed only within the origin of the request (scheme, host
/// and port), at most five.
pub fn client_builder(
    connect_timeout: Duration,
    roots: Vec<reqwest::Certificate>,
    credentials: &EngineCredentials,
) -> reqwest::ClientBuilder {
    crate::tls::install_crypto_provider();
    let mut builder = reqwest::Client::builder()
        .tcp_nodelay(true)
        .connect_timeout(connect_timeout)
        .tls_certs_merge(roots)
        .redirect(same_origin_redirects());
    if let Some(pem) = &credentials.identity
        && let Ok(identity) = reqwest::Identity::from_pem(pem)
    {
        builder = builder.identity(identity);
    }
    builder
}

/// The client of a token endpoint: the same trusted roots, no redirects
/// (a token request carries the client secret), and `timeout` per request.
pub fn token_client(timeout: Duration, roots: Vec<reqwest::Certificate>) -> reqwest::Client {
    crate::tls::install_crypto_provider();
    reqwest::Client::builder()
        .timeout(timeout)
        .tls_certs_merge(roots)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}

fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let first = attempt.previous().first();
        let same = first.is_some_and(|f| {
            f.scheme() == attempt.url().scheme()
                && f.host_str() == attempt.url().host_str()
                && f.port_or_known_default() == attempt.url().port_or_known_default()
        });
        if !same {
            attempt.stop()
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    })
}

/// The credentials of the engine table `engine` (`prefix` names it:
/// `engine` or `engines.NAME`), files resolved by `resolve`.
pub fn for_engine(
    engine: &crate::config::EngineConfig,
    prefix: &str,
    resolve: &dyn Fn(&str) -> PathBuf,
    roots: &[reqwest::Certificate],
) -> Result<Arc<EngineCredentials>, CredentialError> {
    if engine.auth.is_empty() {
        return Ok(EngineCredentials::none());
    }
    let prefix = format!("{prefix}.auth");
    let settings = engine.auth.read(&prefix).map_err(|problems| {
        let (key, problem, fix) = problems.into_iter().next().unwrap_or_default();
        CredentialError::Setting { key, problem, fix }
    })?;
    let timeout = Duration::from_millis(engine.timeout_ms.max(1000));
    EngineCredentials::load(&settings, &prefix, resolve, || {
        token_client(timeout, roots.to_vec())
    })
}
