//! Who a web browser may reach the gateway as: the `Host` names it answers to
//! (`server.allowed_hosts`, defaulting to the loopback names when it listens
//! on loopback), the web origins allowed to call it (`server.allowed_origins`),
//! and the start-up checks that keep a gateway reachable from other machines
//! off the public credentials of the shipped demo configurations.

use super::{Config, ServerConfig};
use std::net::SocketAddr;

/// `allowed_hosts = ["*"]`: any `Host` (only behind a proxy that checks it).
pub const ANY_HOST: &str = "*";

/// The names a loopback listener is reached by; without a port, each
/// matches on any port.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The example configurations shipped for trying the gateway out: their
/// session secrets and API keys are public.
const SHIPPED_DEMOS: [(&str, &str); 4] = [
    (
        "deploy/gateway.local.toml",
        include_str!("../../deploy/gateway.local.toml"),
    ),
    (
        "deploy/gateway.dialect-b.toml",
        include_str!("../../deploy/gateway.dialect-b.toml"),
    ),
    (
        "deploy/gateway.dialect-c.toml",
        include_str!("../../deploy/gateway.dialect-c.toml"),
    ),
    (
        "deploy/gateway.mistral.toml",
        include_str!("../../deploy/gateway.mistral.toml"),
    ),
];

/// A `Host` value or an allow-list entry: a lower-case name (IPv6 without
/// brackets) and the port, when one is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostName {
    pub name: String,
    pub port: Option<u16>,
}

impl HostName {
    /// Reads `name[:port]` (`[v6]:port` for IPv6); `None` when it is not one.
    pub fn parse(text: &str) -> Option<HostName> {
        let authority = text.trim().parse::<axum::http::uri::Authority>().ok()?;
        // An authority may carry `user@`; a Host never does.
        if authority.as_str().contains('@') || authority.host().is_empty() {
            return None;
        }
        Some(HostName {
            name: authority
                .host()
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_ascii_lowercase(),
            port: authority.port_u16(),
        })
    }

    /// Whether a request's `Host` is this entry: the same name, and the same
    /// port when the entry names one.
    pub fn admits(&self, host: &HostName) -> bool {
        self.name == host.name && self.port.is_none_or(|p| host.port == Some(p))
    }
}

/// A web origin: scheme, lower-case host (IPv6 without brackets) and port,
/// the scheme's default when the serialization omits it (RFC 6454).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebOrigin {
    pub scheme: String,
    pub host: String,
    pub port: u16,
}

impl WebOrigin {
    /// Reads `http(s)://host[:port]`; `None` for anything else, `null`
    /// included (an opaque origin is nobody's own).
    pub fn parse(text: &str) -> Option<WebOrigin> {
        let uri = text.trim().parse::<axum::http::Uri>().ok()?;
        let scheme = uri.scheme_str()?.to_ascii_lowercase();
        let default_port = match scheme.as_str() {
            "http" => 80,
            "https" => 443,
            _ => return None,
        };
        // An origin has no path, query or user part.
        if !matches!(uri.path(), "" | "/") || uri.query().is_some() || text.contains('@') {
            return None;
        }
        let host = HostName::parse(uri.authority()?.as_str())?;
        Some(WebOrigin {
            scheme,
            port: host.port.unwrap_or(default_port),
            host: host.name,
        })
    }

    /// Whether this origin is the one a request's `Host` names: the same host
    /// and port (a `Host` without a port is on this scheme's default). Either
    /// scheme counts, so a page of a TLS proxy in front of the gateway is
    /// its own.
    pub fn is_host(&self, host: &HostName) -> bool {
        let default_port = if self.scheme == "https" { 443 } else { 80 };
        self.host == host.name && self.port == host.port.unwrap_or(default_port)
    }
}

/// Whether `listen` is a loopback address (only this machine can connect).
pub fn is_loopback(listen: &str) -> bool {
    listen
        .parse::<SocketAddr>()
        .is_ok_and(|a| a.ip().is_loopback())
}

/// The `Host` names the gateway answers to: the configured list, else the
/// loopback names on a loopback listener, else none (start-up refuses that).
pub fn host_allow_list(server: &ServerConfig) -> Vec<String> {
    if !server.allowed_hosts.is_empty() {
        server.allowed_hosts.clone()
    } else if is_loopback(&server.listen) {
        LOOPBACK_NAMES.map(String::from).to_vec()
    } else {
        Vec::new()
    }
}

/// The session secret and API key hashes of each shipped demo file.
fn shipped_demos() -> impl Iterator<Item = (&'static str, String, Vec<String>)> {
    SHIPPED_DEMOS.iter().filter_map(|(file, text)| {
        let demo: toml::Value = toml::from_str(text).ok()?;
        let secret = demo.get("session")?.get("secret")?.as_str()?.to_string();
        let keys = demo
            .get("auth")
            .and_then(|a| a.get("key"))
            .and_then(toml::Value::as_array)
            .map(|keys| {
                keys.iter()
                    .filter_map(|k| Some(k.get("sha256")?.as_str()?.to_ascii_lowercase()))
                    .collect()
            })
            .unwrap_or_default();
        Some((*file, secret, keys))
    })
}

/// The shipped demo file whose public session secret this configuration uses.
fn demo_secret(config: &Config) -> Option<&'static str> {
    shipped_demos().find_map(|(file, secret, _)| (config.session.secret == secret).then_some(file))
}

/// The first configured API key that is a shipped demo file's, as (its
/// index in `auth.key`, the file).
fn demo_key(config: &Config) -> Option<(usize, &'static str)> {
    shipped_demos().find_map(|(file, _, keys)| {
        config
            .auth
            .keys
            .iter()
            .position(|k| keys.contains(&k.sha256.to_ascii_lowercase()))
            .map(|i| (i, file))
    })
}

/// The shipped demo file whose public session secret or API key this
/// configuration uses, if any.
pub fn demo_credentials(config: &Config) -> Option<&'static str> {
    demo_secret(config).or_else(|| demo_key(config).map(|(_, file)| file))
}

/// Problems of the browser-facing settings, as (key, problem, fix).
pub fn problems(config: &Config) -> Vec<(String, String, String)> {
    let server = &config.server;
    let mut out = Vec::new();
    for (i, entry) in server.allowed_hosts.iter().enumerate() {
        if entry != ANY_HOST && HostName::parse(entry).is_none() {
            out.push((
                format!("server.allowed_hosts[{i}]"),
                format!("'{entry}' is not a host name"),
                "write name or name:port, e.g. \"gateway.example.com\" or \"[::1]:8080\"".into(),
            ));
        }
    }
    for (i, entry) in server.allowed_origins.iter().enumerate() {
        if WebOrigin::parse(entry).is_none() {
            out.push((
                format!("server.allowed_origins[{i}]"),
                format!("'{entry}' is not a web origin"),
                "write scheme://host[:port] without a path, e.g. \"https://app.example.com\""
                    .into(),
            ));
        }
    }
    // The rest concerns a gateway that other machines can reach.
    if is_loopback(&server.listen) || server.listen.parse::<SocketAddr>().is_err() {
        return out;
    }
    if server.allowed_hosts.is_empty() {
        out.push((
            "server.allowed_hosts".into(),
            format!(
                "empty while listening on {}, which is not loopback: a web page could reach the gateway under any name (DNS rebinding)",
                server.listen
            ),
            "list the names clients reach it by, e.g. allowed_hosts = [\"gateway.example.com\", \"localhost\"] (or [\"*\"] behind a proxy that checks Host itself), or listen on 127.0.0.1".into(),
        ));
    }
    let own = "or listen on 127.0.0.1";
    if let Some(demo) = demo_secret(config) {
        out.push((
            "session.secret".into(),
            format!(
                "the public session secret of the demo configuration {demo}, while listening on {}, which is not loopback: anyone could forge session ids",
                server.listen
            ),
            format!("set a secret of your own (`openssl rand -hex 32`, via PILOTAGE_SESSION_SECRET_FILE), {own}"),
        ));
    }
    if let Some((i, demo)) = demo_key(config) {
        out.push((
            format!("auth.key[{i}]"),
            format!(
                "the public API key of the demo configuration {demo}, while listening on {}, which is not loopback",
                server.listen
            ),
            format!("remove it and issue keys of your own (deploy/api_keys.example.toml), {own}"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_entries_without_a_port_match_every_port() {
        let entry = HostName::parse("LocalHost").unwrap();
        assert!(entry.admits(&HostName::parse("localhost:8080").unwrap()));
        assert!(entry.admits(&HostName::parse("localhost").unwrap()));
        assert!(!entry.admits(&HostName::parse("localhost.").unwrap()));
        let v6 = HostName::parse("[::1]:8080").unwrap();
        assert_eq!(v6.name, "::1");
        assert!(v6.admits(&HostName::parse("[::1]:8080").unwrap()));
        assert!(!v6.admits(&HostName::parse("[::1]:8081").unwrap()));
        assert!(!v6.admits(&HostName::parse("[::1]").unwrap()));
        assert!(HostName::parse("user@host").is_none());
        assert!(HostName::parse("").is_none());
    }

    #[test]
    fn origins_are_scheme_host_and_port() {
        let o = WebOrigin::parse("HTTPS://App.Example").unwrap();
        assert_eq!(
            (o.scheme.as_str(), o.host.as_str(), o.port),
            ("https", "app.example", 443)
        );
        assert_eq!(WebOrigin::parse("http://[::1]:9").unwrap().host, "::1");
        for no in [
            "null",
            "file://",
            "ftp://x",
            "http://x/path",
            "x.example",
            "http://u@x",
        ] {
            assert!(WebOrigin::parse(no).is_none(), "{no}");
        }
        let own = WebOrigin::parse("http://127.0.0.1:8080").unwrap();
        assert!(own.is_host(&HostName::parse("127.0.0.1:8080").unwrap()));
        assert!(!own.is_host(&HostName::parse("127.0.0.1:8081").unwrap()));
        assert!(!own.is_host(&HostName::parse("127.0.0.1").unwrap()));
        assert!(
            WebOrigin::parse("https://gw.example")
                .unwrap()
                .is_host(&HostName::parse("gw.example").unwrap())
        );
    }

    #[test]
    fn loopback_listeners_default_to_their_own_names() {
        let mut server = ServerConfig::default();
        assert_eq!(
            host_allow_list(&server),
            ["localhost", "127.0.0.1", "[::1]"]
        );
        server.listen = "[::1]:0".into();
        assert_eq!(host_allow_list(&server).len(), 3);
        server.listen = "0.0.0.0:8080".into();
        assert!(host_allow_list(&server).is_empty());
        server.allowed_hosts = vec!["gw".into()];
        assert_eq!(host_allow_list(&server), ["gw"]);
    }
}
