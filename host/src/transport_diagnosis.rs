//! Turns a failure of the HTTP/MCP transport into a sentence that says what
//! to fix: the wrong path (an HTTP 404 where the MCP endpoint should be), a
//! refused connection, a certificate the Host does not trust. The error
//! chain is read through `source()`, so rmcp's internal type names never
//! reach the operator.

use std::error::Error;

/// Where the gateway serves MCP; named in the hint for a 404.
const MCP_PATH: &str = "/mcp";

/// What went wrong, in the operator's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Diagnosis {
    /// The server answered, but not with an MCP endpoint at this URL.
    NotFound,
    /// Another HTTP status on the initialising POST.
    Status(u16),
    /// Nothing listens at the URL's host and port.
    Refused,
    /// The TLS handshake failed (certificate, name, protocol).
    Tls(String),
    /// An https:// URL reached a server that does not speak TLS there.
    NotTls,
    /// The host name does not resolve.
    Dns,
    /// The request timed out on the wire.
    TimedOut,
    /// Anything else: the innermost message of the chain.
    Other(String),
}

impl Diagnosis {
    /// Reads an error chain.
    pub fn of(error: &(dyn Error + 'static)) -> Diagnosis {
        let chain = chain(error);
        for e in &chain {
            if let Some(r) = e.downcast_ref::<reqwest::Error>()
                && let Some(status) = r.status()
            {
                return from_status(status.as_u16());
            }
            if let Some(s) =
                e.downcast_ref::<rmcp::transport::streamable_http_client::HttpStatusError>()
            {
                return from_status(s.status);
            }
            match e.downcast_ref::<HttpError>() {
                Some(HttpError::HttpStatus(s)) => return from_status(s.status),
                Some(HttpError::AuthRequired(_)) => return Diagnosis::Status(401),
                Some(HttpError::InsufficientScope(_)) => return Diagnosis::Status(403),
                // rmcp words some statuses as text: "HTTP 404 Not Found: …".
                Some(HttpError::UnexpectedServerResponse(text)) => {
                    if let Some(status) = status_in(text) {
                        return from_status(status);
                    }
                }
                _ => {}
            }
        }
        let texts: Vec<String> = chain.iter().map(|e| e.to_string()).collect();
        let lower = texts.join(" | ").to_lowercase();
        // rustls's words for a plain-HTTP answer to a TLS hello.
        if lower.contains("invalidcontenttype") {
            return Diagnosis::NotTls;
        }
        if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
            return Diagnosis::Tls(tls_detail(&texts));
        }
        if chain.iter().any(|e| {
            e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        }) || lower.contains("connection refused")
        {
            return Diagnosis::Refused;
        }
        if lower.contains("dns error") || lower.contains("failed to lookup address") {
            return Diagnosis::Dns;
        }
        if chain.iter().any(|e| {
            e.downcast_ref::<reqwest::Error>()
                .is_some_and(|r| r.is_timeout())
        }) {
            return Diagnosis::TimedOut;
        }
        Diagnosis::Other(innermost(&texts))
    }

    /// The sentence for the operator, naming the URL.
    pub fn message(&self, url: &str) -> String {
        match self {
            Diagnosis::NotFound => format!(
                "no MCP endpoint at {url} (HTTP 404); the gateway serves MCP at {MCP_PATH}, e.g. {}",
                suggested_url(url)
            ),
            Diagnosis::Status(401) => format!(
                "{url} refused the credentials (HTTP 401); give the API key with --key, --key-file or PILOTAGE_KEY"
            ),
            Diagnosis::Status(403) => {
                format!("{url} refused this key (HTTP 403); the key lacks access")
            }
            Diagnosis::Status(405) => format!(
                "{url} does not take MCP requests (HTTP 405); is it the MCP endpoint ({MCP_PATH})?"
            ),
            Diagnosis::Status(s) => format!("{url} answered HTTP {s} to the MCP request"),
            Diagnosis::Refused => format!(
                "cannot connect to {url}: connection refused (is the server running, and on this host and port?)"
            ),
            Diagnosis::Tls(detail) => format!(
                "TLS with {url} failed: {detail}; if the server's certificate comes from a private CA, give it with --ca-file PEM (or SSL_CERT_FILE)"
            ),
            Diagnosis::NotTls => format!(
                "TLS with {url} failed: the server there does not speak TLS (should the URL be http://?)"
            ),
            Diagnosis::Dns => format!("cannot resolve the host name of {url}"),
            Diagnosis::TimedOut => format!("{url} did not answer in time"),
            Diagnosis::Other(m) => format!("cannot talk to {url}: {m}"),
        }
    }
}

/// The status code of a message that starts with `HTTP NNN`.
fn status_in(text: &str) -> Option<u16> {
    let code = text.strip_prefix("HTTP ")?.get(..3)?;
    code.parse().ok().filter(|c| (100..=599).contains(c))
}

fn from_status(status: u16) -> Diagnosis {
    if status == 404 {
        Diagnosis::NotFound
    } else {
        Diagnosis::Status(status)
    }
}

/// The HTTP client's error type inside rmcp's transport.
type HttpError = rmcp::transport::streamable_http_client::StreamableHttpError<reqwest::Error>;

/// The next error down. Two of rmcp's wrappers hold their cause without
/// exposing it as `source()`; they are opened here.
fn below<'a>(e: &'a (dyn Error + 'static)) -> Option<&'a (dyn Error + 'static)> {
    if let Some(rmcp::service::ClientInitializeError::TransportError { error, .. }) =
        e.downcast_ref::<rmcp::service::ClientInitializeError>()
    {
        return Some(error);
    }
    if let Some(HttpError::Client(inner)) = e.downcast_ref::<HttpError>() {
        return Some(inner);
    }
    e.source()
}

fn chain<'a>(error: &'a (dyn Error + 'static)) -> Vec<&'a (dyn Error + 'static)> {
    let mut out = vec![error];
    let mut cur = below(error);
    // Bounded: a cyclic chain must not hang the Host.
    while let Some(e) = cur
        && out.len() < 32
    {
        out.push(e);
        cur = below(e);
    }
    out
}

/// The innermost message: the lower layers say what happened, the outer
/// ones only where (and name internal types).
fn innermost(texts: &[String]) -> String {
    texts
        .iter()
        .rev()
        .find(|t| !t.is_empty() && !t.contains("::"))
        .cloned()
        .unwrap_or_else(|| "the transport failed".into())
}

/// The part of the chain that names the TLS problem.
fn tls_detail(texts: &[String]) -> String {
    texts
        .iter()
        .rev()
        .find(|t| {
            let l = t.to_lowercase();
            (l.contains("certificate") || l.contains("tls") || l.contains("handshake"))
                && !t.contains("::")
        })
        .cloned()
        .unwrap_or_else(|| innermost(texts))
}

/// The URL with its path replaced by the MCP path.
fn suggested_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return format!("http://127.0.0.1:8080{MCP_PATH}");
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    format!("{scheme}://{authority}{MCP_PATH}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_404_hint_keeps_the_authority_and_names_the_path() {
        let m = Diagnosis::NotFound.message("http://127.0.0.1:9/wrong/path");
        assert_eq!(
            m,
            "no MCP endpoint at http://127.0.0.1:9/wrong/path (HTTP 404); the gateway serves MCP at /mcp, e.g. http://127.0.0.1:9/mcp"
        );
        assert!(Diagnosis::NotFound.message("nonsense").contains("/mcp"));
    }

    #[test]
    fn a_status_worded_as_text_is_read() {
        assert_eq!(status_in("HTTP 404 Not Found: "), Some(404));
        assert_eq!(status_in("HTTP 4x"), None);
        assert_eq!(status_in("unexpected"), None);
        let e = HttpError::UnexpectedServerResponse("HTTP 404 Not Found: ".into());
        assert_eq!(Diagnosis::of(&e), Diagnosis::NotFound);
    }

    #[test]
    fn a_refused_io_error_is_named_with_the_url() {
        let e = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        let d = Diagnosis::of(&e);
        assert_eq!(d, Diagnosis::Refused);
        assert!(d.message("http://h:1/mcp").contains("http://h:1/mcp"));
    }

    #[test]
    fn internal_type_names_are_skipped() {
        let texts = vec![
            "Send message error Transport [a::b::C<x::Y>] boom".to_string(),
            "inner cause".to_string(),
            "".to_string(),
        ];
        assert_eq!(innermost(&texts), "inner cause");
    }
}
