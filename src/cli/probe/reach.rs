//! Whether an engine answers at all, and if not, why: connection refused,
//! timed out, a TLS failure, or an HTTP answer saying the path is wrong.
//! The probe reports an unreachable engine as one line naming its URL and
//! the cause (rather than one line per mapping key, each blaming the key),
//! and `serve` logs it as a warning at start.

use crate::config::{Config, EngineConfig};
use std::error::Error as _;
use std::time::Duration;

/// The longest a reachability check waits.
const MOST: Duration = Duration::from_secs(5);

/// Why an engine does not answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreachable {
    /// The URL asked.
    pub url: String,
    /// The cause and the fix, in words.
    pub cause: String,
}

impl std::fmt::Display for Unreachable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "url {}: {}", self.url, self.cause)
    }
}

/// The path a reachability check asks: the REST adapter's health path (an
/// answer there means the base URL is right); for other adapters the base
/// URL itself, where any HTTP answer will do.
fn health_path(engine: &EngineConfig) -> Option<String> {
    (engine.kind == "rest").then(|| {
        crate::engines::rest::mapping::read(engine)
            .unwrap_or_default()
            .health_path
    })
}

/// `None` when `engine` answers; else why not.
pub async fn check(config: &Config, engine: &EngineConfig) -> Option<Unreachable> {
    crate::tls::install_crypto_provider();
    let ca = (!engine.ca_file.is_empty()).then(|| config.resolve(&engine.ca_file));
    let pem = crate::tls::read_ca("engine.ca_file", ca.as_deref())
        .ok()
        .flatten();
    let wait = Duration::from_millis(engine.timeout_ms).min(MOST);
    let http = reqwest::Client::builder()
        .connect_timeout(wait)
        .timeout(wait)
        .tls_certs_merge(crate::tls::http_roots(pem.as_deref()))
        .build()
        .ok()?;
    let base = engine.url.trim_end_matches('/');
    let path = health_path(engine);
    let url = format!("{base}{}", path.as_deref().unwrap_or(""));
    let cause = match http.get(&url).send().await {
        Ok(answer) if answer.status().as_u16() == 404 && path.is_some() => format!(
            "answered 404 Not Found: the engine is there but not at this path; engine.url is the base the mapping's paths are added to (health_path '{}'): fix the URL's path",
            path.unwrap_or_default()
        ),
        Ok(_) => return None,
        Err(e) => failure(&e, wait, url.starts_with("https://")),
    };
    Some(Unreachable {
        url: without_credentials(&url),
        cause,
    })
}

/// `url` without a user name or password, for reports and logs.
fn without_credentials(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.to_string()
        }
        Err(_) => url.to_string(),
    }
}

/// The cause of a request that got no HTTP answer, from the error chain.
/// Past a refused connection, a timeout and an unknown name, a failed
/// `https://` connection is its TLS handshake.
fn failure(e: &reqwest::Error, wait: Duration, https: bool) -> String {
    let mut chain = Vec::new();
    let mut source = e.source();
    let (mut refused, mut tls) = (false, false);
    while let Some(s) = source {
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            refused |= io.kind() == std::io::ErrorKind::ConnectionRefused;
            tls |= io
                .get_ref()
                .is_some_and(|inner| inner.downcast_ref::<rustls::Error>().is_some());
        }
        tls |= s.downcast_ref::<rustls::Error>().is_some();
        chain.push(s.to_string());
        source = s.source();
    }
    let text = chain.join(": ").to_lowercase();
    if refused || text.contains("connection refused") {
        "connection refused: nothing listens there; start the engine or fix engine.url (PILOTAGE_ENGINE_URL)".into()
    } else if e.is_timeout() || text.contains("timed out") {
        format!(
            "timed out after {} ms: the host does not answer; check engine.url, the network path and firewalls",
            wait.as_millis()
        )
    } else if text.contains("dns") || text.contains("resolve") || text.contains("lookup") {
        "the host name does not resolve: fix engine.url".into()
    } else if tls
        || (https && e.is_connect())
        || ["certificate", "tls", "handshake", "ssl"]
            .iter()
            .any(|w| text.contains(w))
    {
        format!(
            "TLS failure ({}): check the scheme (http or https), and name the engine's CA in engine.ca_file",
            chain.last().map_or("", String::as_str)
        )
    } else {
        format!(
            "no answer ({}): check engine.url",
            chain.last().map_or("", String::as_str)
        )
    }
}
