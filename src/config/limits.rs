//! `[limits]`: budgets of tool calls and concurrent runs, per caller.
//!
//! ```toml
//! [limits]
//! trusted_proxies = ["127.0.0.1", "10.0.0.0/8"]  # whose X-Forwarded-For is believed (default: none)
//! max_tracked_callers = 100000                   # callers whose budget state is kept (default)
//!
//! [limits.anonymous]          # each anonymous caller: per MCP session, else per client address
//! requests_per_second = 10
//! burst = 50
//! concurrent_runs = 4
//!
//! [limits.default]            # each API key without an entry of its own (default: none)
//! requests_per_second = 50
//! concurrent_runs = 16
//!
//! [[limits.key]]              # one API key, by its [[auth.key]] name
//! name = "billing-agent"
//! requests_per_second = 100
//! burst = 200
//! concurrent_runs = 32
//! ```

use serde::Deserialize;
use std::net::IpAddr;

/// Callers whose budget state an instance keeps by default: about 200 bytes
/// each, so 20 MB at most.
pub const DEFAULT_MAX_TRACKED_CALLERS: u64 = 100_000;

/// One budget; an absent member is not limited.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    /// Sustained tool calls per second.
    pub requests_per_second: Option<f64>,
    /// Tool calls allowed at once above the sustained rate (default: one
    /// second's worth, at least 1).
    pub burst: Option<u32>,
    /// Executes in progress at once.
    pub concurrent_runs: Option<u32>,
}

impl Limit {
    /// The built-in budget of each anonymous caller: enough for an agent
    /// working through the loop, not enough for one caller to take every
    /// engine slot.
    pub fn anonymous_default() -> Limit {
        Limit {
            requests_per_second: Some(10.0),
            burst: Some(50),
            concurrent_runs: Some(4),
        }
    }
}

/// The budget of one named API key.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KeyLimit {
    /// The `name` of the API key (`[[auth.key]]`) this budget applies to.
    pub name: String,
    #[serde(flatten)]
    pub limit: Limit,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsConfig {
    /// Addresses and CIDR blocks of the proxies in front of the gateway:
    /// only a connection from one of them has its `X-Forwarded-For` read.
    pub trusted_proxies: Vec<String>,
    /// The most callers whose budget state is kept at once; beyond it the
    /// least recently seen are forgotten (they start again with a full
    /// budget).
    pub max_tracked_callers: u64,
    /// The budget of each anonymous principal.
    pub anonymous: Limit,
    /// The budget of every API key without its own `[[limits.key]]`.
    pub default: Limit,
    /// Budgets of named API keys (`[[limits.key]]`).
    #[serde(rename = "key")]
    pub keys: Vec<KeyLimit>,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            trusted_proxies: Vec::new(),
            max_tracked_callers: DEFAULT_MAX_TRACKED_CALLERS,
            anonymous: Limit::anonymous_default(),
            default: Limit::default(),
            keys: Vec::new(),
        }
    }
}

/// One `trusted_proxies` entry: an address, or a block of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AddressBlock {
    network: IpAddr,
    prefix: u8,
}

impl AddressBlock {
    /// `"10.0.0.0/8"`, `"fd00::/8"` or a single address.
    pub fn parse(text: &str) -> Result<AddressBlock, String> {
        let (addr, prefix) = match text.trim().split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text.trim(), None),
        };
        let network: IpAddr = addr
            .parse()
            .map_err(|_| format!("'{text}' is not an IP address or CIDR block"))?;
        let max = if network.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            None => max,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("'{text}' has a prefix length outside 0..={max}"))?,
        };
        Ok(AddressBlock { network, prefix })
    }

    pub fn contains(&self, addr: IpAddr) -> bool {
        // An IPv4 peer on an IPv6 socket arrives as ::ffff:a.b.c.d.
        let addr = match addr {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, IpAddr::V4),
            v4 => v4,
        };
        let bits = u32::from(self.prefix);
        match (self.network, addr) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        }
    }
}

impl LimitsConfig {
    /// The trusted proxies, parsed (entries that do not parse are reported
    /// by [`Self::validate`] and left out here).
    pub fn trusted_proxy_blocks(&self) -> Vec<AddressBlock> {
        self.trusted_proxies
            .iter()
            .filter_map(|t| AddressBlock::parse(t).ok())
            .collect()
    }

    /// Problems as (key, problem, fix); `key_names` are the configured API keys.
    pub fn validate(&self, key_names: &[&str]) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        for (i, entry) in self.trusted_proxies.iter().enumerate() {
            if let Err(problem) = AddressBlock::parse(entry) {
                out.push((
                    format!("limits.trusted_proxies[{i}]"),
                    problem,
                    "give the proxy's address (\"10.0.0.5\") or its network (\"10.0.0.0/24\")"
                        .into(),
                ));
            }
        }
        if self.max_tracked_callers == 0 {
            out.push((
                "limits.max_tracked_callers".into(),
                "0 would keep no caller's budget".into(),
                format!("use at least 1 (default {DEFAULT_MAX_TRACKED_CALLERS})"),
            ));
        }
        let mut check = |at: String, l: &Limit| {
            if let Some(r) = l.requests_per_second
                && !(r.is_finite() && r > 0.0)
            {
                out.push((
                    format!("{at}.requests_per_second"),
                    format!("{r} is not a positive rate"),
                    "give tool calls per second above 0, or remove the member for no limit".into(),
                ));
            }
            if l.burst == Some(0) {
                out.push((
                    format!("{at}.burst"),
                    "0 would refuse every call".into(),
                    "use at least 1, or remove it (default: one second's worth)".into(),
                ));
            }
            if l.burst.is_some() && l.requests_per_second.is_none() {
                out.push((
                    format!("{at}.burst"),
                    "a burst without requests_per_second limits nothing".into(),
                    "add requests_per_second, or remove burst".into(),
                ));
            }
            if l.concurrent_runs == Some(0) {
                out.push((
                    format!("{at}.concurrent_runs"),
                    "0 would refuse every execute".into(),
                    "use at least 1, or remove it for no limit".into(),
                ));
            }
        };
        check("limits.anonymous".into(), &self.anonymous);
        check("limits.default".into(), &self.default);
        for (i, k) in self.keys.iter().enumerate() {
            check(format!("limits.key[{i}]"), &k.limit);
        }
        for (i, k) in self.keys.iter().enumerate() {
            if !key_names.contains(&k.name.as_str()) {
                out.push((
                    format!("limits.key[{i}].name"),
                    format!("no [[auth.key]] is named '{}'", k.name),
                    "use the name of a configured API key".into(),
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::AddressBlock;

    #[test]
    fn blocks_match_their_addresses_only() {
        let block = AddressBlock::parse("10.1.0.0/16").unwrap();
        assert!(block.contains("10.1.200.3".parse().unwrap()));
        assert!(!block.contains("10.2.0.1".parse().unwrap()));
        assert!(block.contains("::ffff:10.1.0.9".parse().unwrap()));
        let one = AddressBlock::parse("127.0.0.1").unwrap();
        assert!(one.contains("127.0.0.1".parse().unwrap()));
        assert!(!one.contains("127.0.0.2".parse().unwrap()));
        assert!(
            AddressBlock::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
        let v6 = AddressBlock::parse("fd00::/8").unwrap();
        assert!(v6.contains("fd12::1".parse().unwrap()));
        assert!(!v6.contains("10.0.0.1".parse().unwrap()));
        assert!(AddressBlock::parse("10.0.0.0/33").is_err());
        assert!(AddressBlock::parse("nginx").is_err());
    }
}
