//! `[engines.NAME.n8n]`: the n8n adapter's own settings (where the tenants'
//! secrets are, the risk table, polling) and their start-up checks. Secrets
//! come from files only: `tenants_dir/<tenant>/api-key` and
//! `tenants_dir/<tenant>/user.json` (`{"email", "password"}`), as
//! `scripts/n8n` writes them.

use super::risk::{RISKS, RiskRow, default_rows};
use crate::config::EngineConfig;
use crate::engines::adapter::own_table;
use crate::engines::pacing::{self, Pacing};
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The adapter's settings.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct N8nSettings {
    /// A folder with one folder per tenant holding `api-key` and
    /// `user.json` (relative: to the configuration file's folder). A tenant
    /// without a folder is served nothing.
    pub tenants_dir: PathBuf,
    /// Node type globs (and optional parameter conditions) → risk, first
    /// match wins. Replaces the built-in table when given; a node type no
    /// row names is destructive.
    pub risk: Vec<RiskRow>,
    /// First wait between two reads of a running execution; doubled after
    /// each read up to `max_poll_interval_ms`.
    pub poll_interval_ms: u64,
    /// Longest wait between two reads of a running execution.
    pub max_poll_interval_ms: u64,
}

impl Default for N8nSettings {
    fn default() -> Self {
        Self {
            tenants_dir: PathBuf::new(),
            risk: default_rows(),
            poll_interval_ms: 100,
            max_poll_interval_ms: 1000,
        }
    }
}

/// Default concurrent calls for an `n8n` engine: one n8n process on a
/// small machine; a catalog read alone parses 17.8 MB.
pub const DEFAULT_IN_FLIGHT: usize = 8;

/// The key of this adapter's own table under an engine's table.
pub const TABLE: &str = "n8n";

/// The settings of an engine table (the defaults when it has none), or why
/// its `[engine.n8n]` does not read.
/// A relative `tenants_dir` is resolved against the configuration file's
/// folder, as every other path of the file is.
pub fn read(config: &EngineConfig) -> Result<N8nSettings, String> {
    let mut settings: N8nSettings = own_table(config, TABLE)?;
    if !settings.tenants_dir.as_os_str().is_empty() && settings.tenants_dir.is_relative() {
        settings.tenants_dir = config.base_dir.join(&settings.tenants_dir);
    }
    Ok(settings)
}

/// The `kind = "n8n"` checks of an engine table, as (key under `engine`,
/// problem, fix).
pub fn engine_problems(engine: &EngineConfig) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let url = engine.url.trim_end_matches('/');
    if !(url.starts_with("http://") || url.starts_with("https://")) || url.contains("/api/v1") {
        out.push((
            "engine.url".into(),
            format!("'{}' is not the base URL of an n8n", engine.url),
            "give n8n's base URL without a path, e.g. http://127.0.0.1:5678 (as scripts/n8n url prints it)".into(),
        ));
    }
    match read(engine) {
        Ok(settings) => out.extend(settings.problems()),
        Err(why) => out.push((
            format!("engine.{TABLE}"),
            why,
            "correct the n8n table: tenants_dir, risk, poll_interval_ms, max_poll_interval_ms"
                .into(),
        )),
    }
    out
}

impl N8nSettings {
    /// The waits between two reads of a running execution.
    pub fn pacing(&self) -> Pacing {
        Pacing::from_ms(self.poll_interval_ms, self.max_poll_interval_ms)
    }

    /// The folder of `tenant`'s secrets, if the tenant name can be one
    /// (a plain name: no separators, no dots first).
    pub fn tenant_dir(&self, tenant: &str) -> Option<PathBuf> {
        let plain = !tenant.is_empty()
            && !tenant.starts_with('.')
            && tenant
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "._-@".contains(c));
        plain.then(|| self.tenants_dir.join(tenant))
    }

    /// (key under `engine.n8n`, problem, fix) for every wrong setting.
    pub fn problems(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let mut problem = |key: String, what: String, fix: String| {
            out.push((format!("engine.n8n.{key}"), what, fix));
        };
        if self.tenants_dir.as_os_str().is_empty() {
            problem(
                "tenants_dir".into(),
                "no folder of tenant secrets is named".into(),
                "set tenants_dir to a folder with <tenant>/api-key and <tenant>/user.json (scripts/n8n writes target/n8n/tenants)".into(),
            );
        } else if !self.tenants_dir.is_dir() {
            problem(
                "tenants_dir".into(),
                format!("'{}' is not a folder", self.tenants_dir.display()),
                "create it, or point tenants_dir at the folder scripts/n8n writes (target/n8n/tenants)".into(),
            );
        } else {
            for (tenant, what) in tenant_file_problems(&self.tenants_dir) {
                problem(
                    format!("tenants_dir.{tenant}"),
                    what,
                    "give each tenant folder an api-key file (the member's API key) and a user.json with its email and password".into(),
                );
            }
        }
        for (i, row) in self.risk.iter().enumerate() {
            for (key, what, fix) in row.problems() {
                problem(format!("risk[{i}].{key}"), what, fix);
            }
            if !RISKS.contains(&row.risk.as_str()) {
                problem(
                    format!("risk[{i}].risk"),
                    format!("'{}' is not a risk", row.risk),
                    format!("use one of: {}", RISKS.join(", ")),
                );
            }
        }
        let defaults = Self::default();
        for (key, what, fix) in pacing::problems(
            self.poll_interval_ms,
            self.max_poll_interval_ms,
            "the execution",
            (defaults.poll_interval_ms, defaults.max_poll_interval_ms),
        ) {
            problem(key.into(), what, fix);
        }
        out
    }
}

/// (tenant, problem) for every tenant folder whose secrets do not read.
fn tenant_file_problems(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return vec![("".into(), format!("'{}' cannot be read", dir.display()))];
    };
    let mut folders: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        let tenant = folder
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if let Err(e) = super::tenants::TenantSecrets::read(&folder) {
            out.push((tenant, e.to_string()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use std::path::{Path, PathBuf};

    /// A tenants folder with `alpha` complete and, when asked, `beta`
    /// without its key.
    fn tenants(broken_beta: bool) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("n8n-tenants-{:x}", rand::random::<u64>()));
        let alpha = dir.join("alpha");
        std::fs::create_dir_all(&alpha).unwrap();
        std::fs::write(alpha.join("api-key"), "k").unwrap();
        std::fs::write(
            alpha.join("user.json"),
            r#"{"email": "alpha@x", "password": "Pw1"}"#,
        )
        .unwrap();
        if broken_beta {
            let beta = dir.join("beta");
            std::fs::create_dir_all(&beta).unwrap();
            std::fs::write(
                beta.join("user.json"),
                r#"{"email": "b@x", "password": "P"}"#,
            )
            .unwrap();
        }
        dir
    }

    /// "key: problem" of an `n8n` engine with `keys` and `settings`.
    fn n8n_problems(url: &str, keys: &str, settings: &str) -> Vec<String> {
        crate::engines::registry::engine_problems("n", "n8n", url, keys, settings)
    }

    #[test]
    fn an_n8n_engine_with_its_tenants_folder_is_valid_and_bounded() {
        let dir = tenants(false);
        let settings = format!("tenants_dir = \"{}\"", dir.display());
        let found = n8n_problems("http://127.0.0.1:5678", "", &settings);
        assert!(found.is_empty(), "{found:?}");
        let config = Config::parse(
            "[engine]\nurl = \"http://127.0.0.1:5678\"\nkind = \"n8n\"\n",
            Path::new("g.toml"),
        )
        .unwrap();
        assert_eq!(crate::engines::registry::max_in_flight(&config.engine), 8);
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn every_wrong_n8n_key_is_named_with_its_file_or_row() {
        let dir = tenants(true);
        let tenants_dir = format!("tenants_dir = \"{}\"", dir.display());
        for (url, settings, key) in [
            (
                "http://127.0.0.1:5678/api/v1",
                tenants_dir.clone(),
                "engines.n.url",
            ),
            (
                "http://127.0.0.1:5678",
                String::new(),
                "engines.n.n8n.tenants_dir",
            ),
            (
                "http://127.0.0.1:5678",
                "tenants_dir = \"/no/such/folder\"".into(),
                "engines.n.n8n.tenants_dir",
            ),
            (
                "http://127.0.0.1:5678",
                tenants_dir.clone(),
                "engines.n.n8n.tenants_dir.beta",
            ),
            (
                "http://127.0.0.1:5678",
                format!(
                    "{tenants_dir}\nrisk = [{{ node = \"n8n-nodes-base.set\", risk = \"harmless\" }}]"
                ),
                "engines.n.n8n.risk[0].risk",
            ),
            (
                "http://127.0.0.1:5678",
                format!("{tenants_dir}\nrisk = [{{ node = \"\", risk = \"safe\" }}]"),
                "engines.n.n8n.risk[0].node",
            ),
            (
                "http://127.0.0.1:5678",
                format!(
                    "{tenants_dir}\nrisk = [{{ node = \"x\", parameter = \"method\", risk = \"safe\" }}]"
                ),
                "engines.n.n8n.risk[0].in",
            ),
            (
                "http://127.0.0.1:5678",
                format!("{tenants_dir}\npoll_interval_ms = 0"),
                "engines.n.n8n.poll_interval_ms",
            ),
            (
                "http://127.0.0.1:5678",
                format!("{tenants_dir}\npoll_interval_ms = 500\nmax_poll_interval_ms = 100"),
                "engines.n.n8n.max_poll_interval_ms",
            ),
            (
                "http://127.0.0.1:5678",
                format!("{tenants_dir}\napi_key = \"inline\""),
                "engines.n.n8n",
            ),
        ] {
            let found = n8n_problems(url, "", &settings);
            assert!(
                found.iter().any(|p| p.starts_with(&format!("{key}:"))),
                "{key} not named for {settings:?}: {found:?}"
            );
        }
        let beta = n8n_problems("http://127.0.0.1:5678", "", &tenants_dir);
        assert!(beta.iter().any(|p| p.contains("api-key")), "{beta:?}");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn secrets_never_come_from_the_configuration_and_tenant_names_stay_in_the_folder() {
        let settings = super::N8nSettings {
            tenants_dir: "/t".into(),
            ..Default::default()
        };
        assert_eq!(
            settings.tenant_dir("alpha"),
            Some(PathBuf::from("/t/alpha"))
        );
        for bad in ["", "..", "../x", "a/b", ".hidden"] {
            assert_eq!(settings.tenant_dir(bad), None, "{bad:?}");
        }
    }
}
