//! Browser safety of `/mcp`, checked before anything reads the request: a
//! `Host` that is not one of the gateway's names (a page that re-pointed its
//! own name at the gateway: DNS rebinding) and an `Origin` that is neither
//! the gateway's own nor in `server.allowed_origins` are refused with HTTP
//! 403 and a JSON-RPC error object. Requests without `Origin` (every client
//! that is not a browser) pass. An allowed foreign origin gets CORS answers,
//! so a browser-based MCP client served from it can call.

use super::carrier::{INVALID_REQUEST, rpc_error};
use crate::config::ServerConfig;
use crate::config::browser::{ANY_HOST, HostName, WebOrigin, host_allow_list};
use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Response, StatusCode, Uri, header};
use serde_json::Value;

/// Request headers a browser-based MCP client sends.
const CLIENT_HEADERS: &str =
    "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id";
/// Answer headers such a client must be able to read.
const EXPOSED_HEADERS: &str = "mcp-session-id, www-authenticate";
/// How long a browser may reuse a preflight answer, in seconds.
const PREFLIGHT_MAX_AGE: &str = "600";

/// The `Host` and `Origin` allow-lists, read once from the configuration.
#[derive(Debug, Clone)]
pub struct BrowserGuard {
    /// `None`: any `Host` (`allowed_hosts = ["*"]`).
    hosts: Option<Vec<HostName>>,
    origins: Vec<WebOrigin>,
}

/// What the guard decided about one request.
pub enum Screened {
    /// No browser involved, or a page of the gateway's own origin.
    Pass,
    /// A listed foreign origin: the answer carries CORS headers for it.
    Cors(HeaderValue),
    /// Refused; `reject` names the reason in the request log.
    Refused {
        reject: &'static str,
        response: Response<Body>,
    },
}

impl BrowserGuard {
    pub fn new(server: &ServerConfig) -> BrowserGuard {
        let hosts = host_allow_list(server);
        BrowserGuard {
            hosts: (!hosts.iter().any(|h| h == ANY_HOST))
                .then(|| hosts.iter().filter_map(|h| HostName::parse(h)).collect()),
            origins: server
                .allowed_origins
                .iter()
                .filter_map(|o| WebOrigin::parse(o))
                .collect(),
        }
    }

    /// Checks `Host` (or HTTP/2's `:authority`), then `Origin`.
    pub fn screen(&self, headers: &HeaderMap, uri: &Uri) -> Screened {
        let host_text = match headers.get(header::HOST) {
            Some(v) => v.to_str().ok(),
            None => uri.authority().map(|a| a.as_str()),
        };
        let Some(host) = host_text.and_then(HostName::parse) else {
            return refused(
                "invalid_host",
                StatusCode::BAD_REQUEST,
                "Bad Request: the Host header is missing or is not a host name".into(),
            );
        };
        if let Some(names) = &self.hosts
            && !names.iter().any(|n| n.admits(&host))
        {
            return refused(
                "forbidden_host",
                StatusCode::FORBIDDEN,
                format!(
                    "Forbidden: Host '{}' is not a name of this gateway (server.allowed_hosts)",
                    host_text.unwrap_or_default()
                ),
            );
        }
        let mut origins = headers.get_all(header::ORIGIN).iter();
        let (Some(sent), None) = (origins.next(), origins.next()) else {
            return if headers.contains_key(header::ORIGIN) {
                forbidden_origin("several Origin headers")
            } else {
                Screened::Pass
            };
        };
        let text = sent.to_str().unwrap_or("");
        match WebOrigin::parse(text) {
            Some(origin) if origin.is_host(&host) => Screened::Pass,
            Some(origin) if self.origins.contains(&origin) => Screened::Cors(sent.clone()),
            _ => forbidden_origin(&format!("Origin '{text}'")),
        }
    }
}

fn forbidden_origin(what: &str) -> Screened {
    refused(
        "forbidden_origin",
        StatusCode::FORBIDDEN,
        format!(
            "Forbidden: {what} may not call this gateway: only its own origin and server.allowed_origins may"
        ),
    )
}

fn refused(reject: &'static str, status: StatusCode, message: String) -> Screened {
    Screened::Refused {
        reject,
        response: rpc_error(status, Value::Null, INVALID_REQUEST, &message),
    }
}

/// The answer to a CORS preflight from an allowed origin.
pub fn preflight(origin: &HeaderValue, request: &HeaderMap) -> Response<Body> {
    let mut r = Response::new(Body::empty());
    *r.status_mut() = StatusCode::NO_CONTENT;
    let h = r.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin.clone());
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static("POST, DELETE"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(CLIENT_HEADERS),
    );
    h.insert(
        header::ACCESS_CONTROL_MAX_AGE,
        HeaderValue::from_static(PREFLIGHT_MAX_AGE),
    );
    // The operator listed this origin, so it may reach a gateway on a
    // private address too (Private Network Access).
    if request.contains_key("access-control-request-private-network") {
        h.insert(
            "access-control-allow-private-network",
            HeaderValue::from_static("true"),
        );
    }
    h.insert(header::VARY, HeaderValue::from_static("Origin"));
    r
}

/// Lets the allowed `origin` read `response`.
pub fn allow(response: &mut Response<Body>, origin: HeaderValue) {
    let h = response.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static(EXPOSED_HEADERS),
    );
    h.insert(header::VARY, HeaderValue::from_static("Origin"));
}
