//! How many worker threads the gateway's runtime starts.
//!
//! By default, one per CPU the process may use. When an engine listens on
//! this machine (a loopback URL: the demo, a sidecar), the gateway and the
//! engine share those CPUs, and a runtime with a thread on each one keeps
//! waking threads that then wait for a CPU the engine holds: on two CPUs,
//! one thread answered a cached verdict for about a third less CPU and
//! 1.3 times as many calls per second (docs/performance.md, "Fifteenth
//! pass"). So the default then takes half of them.

use super::Config;

/// More threads than this only adds switching.
pub const MOST: usize = 512;

impl Config {
    /// `[server] threads`, or when 0, the CPUs this process may use, halved
    /// (at least one) when an engine is on this machine.
    pub fn runtime_threads(&self) -> usize {
        if self.server.threads > 0 {
            return self.server.threads;
        }
        let cpus = std::thread::available_parallelism().map_or(1, usize::from);
        if self.an_engine_on_this_machine() {
            (cpus / 2).max(1)
        } else {
            cpus
        }
    }

    fn an_engine_on_this_machine(&self) -> bool {
        std::iter::once(&self.engine)
            .chain(self.engines.values())
            .any(|engine| on_loopback(&engine.url))
    }
}

/// Whether `url` names this machine: a loopback address or `localhost`.
fn on_loopback(url: &str) -> bool {
    let Ok(url) = reqwest::Url::parse(url) else {
        return false;
    };
    let host = url.host_str().unwrap_or_default();
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    match bare.parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback(),
        Err(_) => host.eq_ignore_ascii_case("localhost"),
    }
}

#[cfg(test)]
mod tests {
    use super::on_loopback;

    #[test]
    fn an_engine_on_loopback_or_localhost_is_on_this_machine() {
        for url in [
            "http://127.0.0.1:8081",
            "http://127.0.0.2/v2",
            "http://[::1]:9000",
            "http://LocalHost:8989/api",
        ] {
            assert!(on_loopback(url), "{url}");
        }
        for url in [
            "http://engine:8081",
            "https://10.0.0.5/v2",
            "http://[2001:db8::1]/",
            "not a url",
        ] {
            assert!(!on_loopback(url), "{url}");
        }
    }
}
