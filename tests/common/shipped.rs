//! The shipped configurations as the suites run them.
//!
//! Each file under `tests/configs/` overlays the shipped configuration of
//! the same name under `deploy/` with what a test machine must change:
//! addresses, ports, paths, secrets and keys, nothing else ([`differences`]
//! and [`ALLOWED`]; the vectors' `shipped` module fails on any other key).
//! So a shipped default that breaks a vector fails the suite run against
//! that configuration (`PILOTAGE_TEST_SHIPPED=<file stem>`, in
//! `scripts/test`). A configuration for the engine's REST dialect `x` is
//! named `gateway.dialect-x.toml`: the reference engine is started on that
//! dialect for it.

use pilotage_gateway::config::Config;
use std::path::{Path, PathBuf};
use toml::Value;

/// The folder of the overlays.
pub const FOLDER: &str = "tests/configs";
/// The folder of the shipped configurations they overlay.
pub const SHIPPED_FOLDER: &str = "deploy";

/// Keys an overlay may set, as dotted paths; `*` matches one segment (a
/// table key or an array index) and a trailing `**` everything below.
pub const ALLOWED: &[&str] = &[
    // addresses and ports
    "server.listen",
    "server.instance",
    "server.allowed_hosts",
    "server.public_url",
    "engine.url",
    "engines.*.url",
    "store.redis_url",
    "store.sentinel.**",
    "store.cluster.**",
    "telemetry.otlp_endpoint",
    // paths
    "engine.ca_file",
    "engines.*.ca_file",
    "engines.*.n8n.tenants_dir",
    "language.*.guides_dir",
    "language.*.classifier",
    // secrets
    "session.secret",
    "session.secret_file",
    "session.previous_secrets",
    // keys
    "auth.key",
    "auth.key.**",
    "auth.keys_file",
];

/// The overlay the suite runs against, when `PILOTAGE_TEST_SHIPPED` names one.
pub fn selected() -> Option<String> {
    std::env::var("PILOTAGE_TEST_SHIPPED")
        .ok()
        .filter(|s| !s.is_empty())
}

/// One shipped configuration with its overlay applied.
pub struct Shipped {
    /// The shipped file (relative paths in it resolve from its folder).
    pub path: PathBuf,
    /// Its TOML as shipped.
    pub shipped: Value,
    /// The same with the overlay applied.
    pub merged: Value,
    /// The engine's REST dialect for it, if not the default.
    pub dialect: Option<String>,
}

impl Shipped {
    /// The overlay `tests/configs/<name>.toml` over `deploy/<name>.toml`.
    pub fn load(name: &str) -> Shipped {
        Self::from_overlay(&super::repo_path(&format!("{FOLDER}/{name}.toml")))
    }

    pub fn from_overlay(overlay_path: &Path) -> Shipped {
        let read = |p: &Path| -> Value {
            let text =
                std::fs::read_to_string(p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()));
            toml::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", p.display()))
        };
        let name = overlay_path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("an overlay's file name");
        let path = super::repo_path(&format!("{SHIPPED_FOLDER}/{name}"))
            .canonicalize()
            .unwrap_or_else(|e| {
                panic!(
                    "{}: every test configuration overlays the shipped file of its name, {SHIPPED_FOLDER}/{name}: {e}",
                    overlay_path.display()
                )
            });
        let dialect = name
            .strip_prefix("gateway.dialect-")
            .and_then(|rest| rest.strip_suffix(".toml"))
            .map(str::to_string);
        let shipped = read(&path);
        let mut merged = shipped.clone();
        merge(&mut merged, read(overlay_path));
        Shipped {
            path,
            shipped,
            merged,
            dialect,
        }
    }

    /// The merged configuration, as the gateway parses it.
    pub fn config(&self) -> Config {
        let text = toml::to_string(&self.merged).expect("serialise the merged configuration");
        Config::parse(&text, &self.path).expect("parse the merged configuration")
    }

    /// The keys the overlay changed that [`ALLOWED`] does not name.
    pub fn disallowed(&self) -> Vec<String> {
        differences(&self.shipped, &self.merged, "")
            .into_iter()
            .filter(|key| !ALLOWED.iter().any(|pattern| matches(pattern, key)))
            .collect()
    }
}

/// Tables merge key by key; any other value (an array of tables too) is
/// replaced whole by the overlay's.
fn merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Table(base), Value::Table(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(&key) {
                    Some(existing) => merge(existing, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, overlay) => *base = overlay,
    }
}

/// Dotted paths of every value that differs between `a` and `b` (leaves,
/// array elements by index, keys present on one side only).
pub fn differences(a: &Value, b: &Value, at: &str) -> Vec<String> {
    let join = |key: &str| {
        if at.is_empty() {
            key.to_string()
        } else {
            format!("{at}.{key}")
        }
    };
    match (a, b) {
        (Value::Table(x), Value::Table(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .flat_map(|k| match (x.get(k), y.get(k)) {
                    (Some(v), Some(w)) => differences(v, w, &join(k)),
                    _ => vec![join(k)],
                })
                .collect()
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .flat_map(|(i, (v, w))| differences(v, w, &join(&i.to_string())))
            .collect(),
        _ if a == b => Vec::new(),
        _ => vec![at.to_string()],
    }
}

/// Whether dotted `key` matches `pattern` (see [`ALLOWED`]).
pub fn matches(pattern: &str, key: &str) -> bool {
    let mut parts = key.split('.');
    for p in pattern.split('.') {
        if p == "**" {
            return parts.next().is_some();
        }
        match parts.next() {
            Some(k) if p == "*" || p == k => {}
            _ => return false,
        }
    }
    parts.next().is_none()
}

/// Visitors: callers that stand in for the suite's anonymous ones where the
/// shipped configuration refuses anonymous access (the compose deployment).
/// Each has a key of its own, so two visitors are two principals, as two
/// anonymous sessions are. Keys are what an overlay may add.
pub const VISITORS: usize = 256;

/// The bearer key of visitor `i`.
pub fn visitor_key(i: usize) -> String {
    format!("visitor-key-{i:03}")
}

/// Every visitor's key entry (tenant `acme`, as the suites' anonymous callers).
pub fn visitor_keys() -> Vec<pilotage_gateway::config::ApiKeyConfig> {
    (0..VISITORS)
        .map(|i| super::engine_env::key_entry(&format!("visitor-{i:03}"), "acme", &visitor_key(i)))
        .collect()
}

/// The next visitor's key, in turn.
pub fn next_visitor() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    visitor_key(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % VISITORS)
}
