//! Where settings and secrets come from besides `gateway.toml`: environment
//! variables (one image serves every replica) and files (container secrets,
//! mounted read-only, never visible in `docker inspect`).
//!
//! Rules, in order:
//! 1. An environment variable that is unset or empty changes nothing, so a
//!    compose file's `${VAR:-}` never wipes out a value set in the file.
//! 2. A `*_FILE` variable (or the matching `*_file` key) names a file whose
//!    contents, without the trailing newline, replace the inline value.
//! 3. Giving one secret both inline in the environment and as a file is
//!    ambiguous and refused at start.
//!
//! Previous session secrets and the reloading of the keys file are in
//! `rotation.rs`.

use super::{ApiKeyConfig, Config, ConfigProblem};
use serde::Deserialize;
use std::path::Path;

/// The string settings environment variables and files can set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    Listen,
    Instance,
    EngineUrl,
    RedisUrl,
    RedisUrlFile,
    SessionSecret,
    SessionSecretFile,
    KeysFile,
}

impl Setting {
    /// The key as written in `gateway.toml` (for messages).
    fn key(self) -> &'static str {
        match self {
            Setting::Listen => "server.listen",
            Setting::Instance => "server.instance",
            Setting::EngineUrl => "engine.url",
            Setting::RedisUrl => "store.redis_url",
            Setting::RedisUrlFile => "store.redis_url_file",
            Setting::SessionSecret => "session.secret",
            Setting::SessionSecretFile => "session.secret_file",
            Setting::KeysFile => "auth.keys_file",
        }
    }

    fn of(self, config: &mut Config) -> &mut String {
        match self {
            Setting::Listen => &mut config.server.listen,
            Setting::Instance => &mut config.server.instance,
            Setting::EngineUrl => &mut config.engine.url,
            Setting::RedisUrl => &mut config.store.redis_url,
            Setting::RedisUrlFile => &mut config.store.redis_url_file,
            Setting::SessionSecret => &mut config.session.secret,
            Setting::SessionSecretFile => &mut config.session.secret_file,
            Setting::KeysFile => &mut config.auth.keys_file,
        }
    }
}

/// Plain overrides: variable and the setting it replaces.
const OVERRIDES: &[(&str, Setting)] = &[
    ("PILOTAGE_LISTEN", Setting::Listen),
    ("PILOTAGE_INSTANCE", Setting::Instance),
    ("PILOTAGE_ENGINE_URL", Setting::EngineUrl),
    ("PILOTAGE_REDIS_URL", Setting::RedisUrl),
    ("PILOTAGE_SESSION_SECRET", Setting::SessionSecret),
];

/// The file form of secrets: variable, the `*_file` setting it sets, and the
/// inline variable it must not be combined with.
const FILE_OVERRIDES: &[(&str, Setting, Option<&str>)] = &[
    (
        "PILOTAGE_SESSION_SECRET_FILE",
        Setting::SessionSecretFile,
        Some("PILOTAGE_SESSION_SECRET"),
    ),
    (
        "PILOTAGE_REDIS_URL_FILE",
        Setting::RedisUrlFile,
        Some("PILOTAGE_REDIS_URL"),
    ),
    ("PILOTAGE_API_KEYS_FILE", Setting::KeysFile, None),
];

/// A `*_file` setting and the setting its file's contents replace.
const SECRET_FILES: &[(Setting, Setting)] = &[
    (Setting::SessionSecretFile, Setting::SessionSecret),
    (Setting::RedisUrlFile, Setting::RedisUrl),
];

/// A file of API keys (`auth.keys_file`): the same `[[key]]` blocks as the
/// `[[auth.key]]` blocks of `gateway.toml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeysFile {
    #[serde(rename = "key", default)]
    keys: Vec<ApiKeyConfig>,
}

impl Config {
    /// Applies environment variables (see the module rules) and reads every
    /// secret file; returns the problems found (unreadable file, ambiguous
    /// source), each naming the variable or key and the fix.
    pub fn apply_env(&mut self, get: impl Fn(&str) -> Option<String>) -> Vec<ConfigProblem> {
        let get = |k: &str| get(k).filter(|v| !v.trim().is_empty());
        let mut problems = Vec::new();
        for (var, setting) in OVERRIDES {
            if let Some(v) = get(var) {
                *setting.of(self) = v;
            }
        }
        self.apply_engine_urls(&get);
        if let Some(v) = get("PILOTAGE_OTLP_TRACES_ENDPOINT") {
            self.telemetry.otlp_traces_endpoint = v;
        }
        if let Some(v) = get("PILOTAGE_REDIS_CLUSTER") {
            // Comma-separated node URLs, like the `store.redis_cluster` list.
            self.store.redis_cluster = v
                .split(',')
                .map(str::trim)
                .filter(|u| !u.is_empty())
                .map(str::to_string)
                .collect();
        }
        if let Some(v) = get("PILOTAGE_SESSION_PREVIOUS_SECRET_FILES") {
            self.session.previous_secret_files = v
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect();
        }
        if let Some(v) = get("PILOTAGE_OAUTH_RESOURCE") {
            match &mut self.auth.oauth {
                Some(oauth) => oauth.resource = v,
                None => problems.push(self.problem(
                    "PILOTAGE_OAUTH_RESOURCE",
                    "set, but the configuration has no [auth.oauth] section".into(),
                    "add [auth.oauth] with its issuers, or unset the variable",
                )),
            }
        }
        if let Some(v) = get("PILOTAGE_SEARCH_PATH") {
            self.server.search_path = v
                .split(':')
                .filter(|d| !d.is_empty())
                .map(str::to_string)
                .collect();
        }
        for (var, setting, inline) in FILE_OVERRIDES {
            let Some(path) = get(var) else { continue };
            if let Some(inline) = inline
                && get(inline).is_some()
            {
                problems.push(self.problem(
                    var,
                    format!("both {inline} and {var} are set"),
                    &format!("set only one of them (prefer {var} with a container secret)"),
                ));
                continue;
            }
            *setting.of(self) = path;
        }
        problems.extend(self.read_secret_files());
        problems
    }

    /// Reads `session.secret_file`, `store.redis_url_file` and
    /// `auth.keys_file` (relative paths against the configuration's folder).
    pub fn read_secret_files(&mut self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        for (file_setting, target) in SECRET_FILES {
            let path = file_setting.of(self).clone();
            if path.is_empty() {
                continue;
            }
            match self.read_file(&path) {
                Ok(text) => {
                    *target.of(self) = text.trim_end_matches(['\n', '\r']).to_string();
                }
                Err(e) => problems.push(self.problem(
                    file_setting.key(),
                    format!("cannot read '{path}': {e}"),
                    "name a readable file (relative paths start at the configuration's folder)",
                )),
            }
        }
        problems.extend(self.read_previous_secret_files());
        problems.extend(self.read_keys_file());
        problems
    }

    /// Adds the keys of `auth.keys_file`, if any, to `auth.keys`.
    pub(super) fn read_keys_file(&mut self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        if !self.auth.keys_file.is_empty() {
            let path = self.auth.keys_file.clone();
            match self
                .read_file(&path)
                .map(|t| toml::from_str::<KeysFile>(&t))
            {
                Ok(Ok(file)) => {
                    self.auth.keys_from_file += file.keys.len();
                    self.auth.keys.extend(file.keys);
                }
                Ok(Err(e)) => problems.push(self.problem(
                    "auth.keys_file",
                    format!("'{path}' is not a keys file: {}", e.message()),
                    "write one [[key]] block (name, tenant, sha256) per key",
                )),
                Err(e) => problems.push(self.problem(
                    "auth.keys_file",
                    format!("cannot read '{path}': {e}"),
                    "name a readable file (relative paths start at the configuration's folder)",
                )),
            }
        }
        problems
    }

    fn read_file(&self, path: &str) -> std::io::Result<String> {
        std::fs::read_to_string(self.resolve(path))
    }

    fn problem(&self, key: &str, problem: String, fix: &str) -> ConfigProblem {
        ConfigProblem {
            file: display(&self.source),
            key: key.into(),
            problem,
            fix: fix.into(),
        }
    }
}

fn display(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    const BASE: &str = r#"
[session]
secret = "from-the-file-0123456789"
[engine]
url = "http://127.0.0.1:7070"
[auth]
anonymous = true
anonymous_tenant = "acme"
"#;

    fn config_in(dir: &Path, extra: &str) -> Config {
        let path = dir.join("gateway.toml");
        Config::parse(&format!("{BASE}{extra}"), &path).expect("parse")
    }

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| map.get(k).cloned()
    }

    fn temp_dir(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("pilotage-secrets-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        dir
    }

    #[test]
    fn empty_variables_leave_the_file_alone() {
        let dir = temp_dir("empty");
        let mut c = config_in(&dir, "");
        let problems = c.apply_env(env(&[
            ("PILOTAGE_SESSION_SECRET", ""),
            ("PILOTAGE_ENGINE_URL", "  "),
            ("PILOTAGE_SESSION_SECRET_FILE", ""),
        ]));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(c.session.secret, "from-the-file-0123456789");
        assert_eq!(c.engine.url, "http://127.0.0.1:7070");
    }

    #[test]
    fn a_set_variable_wins_over_the_file() {
        let dir = temp_dir("set");
        let mut c = config_in(&dir, "");
        c.apply_env(env(&[(
            "PILOTAGE_SESSION_SECRET",
            "from-the-environment-42",
        )]));
        assert_eq!(c.session.secret, "from-the-environment-42");
    }

    #[test]
    fn secret_file_from_the_environment_without_its_newline() {
        let dir = temp_dir("envfile");
        std::fs::write(dir.join("secret"), "a-secret-from-a-file-xyz\n").unwrap();
        let path = dir.join("secret").display().to_string();
        let mut c = config_in(&dir, "");
        let problems = c.apply_env(env(&[("PILOTAGE_SESSION_SECRET_FILE", &path)]));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(c.session.secret, "a-secret-from-a-file-xyz");
    }

    #[test]
    fn secret_file_key_resolves_against_the_config_folder() {
        let dir = temp_dir("keyfile");
        std::fs::write(dir.join("session.secret"), "relative-secret-file-value").unwrap();
        let mut c = config_in(&dir, "");
        c.session.secret_file = "session.secret".into();
        let problems = c.apply_env(env(&[]));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(c.session.secret, "relative-secret-file-value");
    }

    #[test]
    fn unreadable_secret_file_names_the_key() {
        let dir = temp_dir("missing");
        let mut c = config_in(&dir, "");
        let problems = c.apply_env(env(&[(
            "PILOTAGE_SESSION_SECRET_FILE",
            "/nonexistent/secret",
        )]));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].key, "session.secret_file");
        assert!(problems[0].problem.contains("/nonexistent/secret"));
    }

    #[test]
    fn inline_and_file_together_are_refused() {
        let dir = temp_dir("both");
        std::fs::write(dir.join("secret"), "x-secret-from-a-file-x").unwrap();
        let path = dir.join("secret").display().to_string();
        let mut c = config_in(&dir, "");
        let problems = c.apply_env(env(&[
            ("PILOTAGE_SESSION_SECRET", "inline-secret-value-123"),
            ("PILOTAGE_SESSION_SECRET_FILE", &path),
        ]));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].key, "PILOTAGE_SESSION_SECRET_FILE");
    }

    #[test]
    fn api_keys_file_adds_keys() {
        let dir = temp_dir("keys");
        std::fs::write(
            dir.join("keys.toml"),
            "[[key]]\nname = \"ci\"\ntenant = \"acme\"\nsha256 = \"e2b3e1e2e33342be927c417095dae1b134accda8be5501aa427e6cb2b5ecd3ab\"\n",
        )
        .unwrap();
        let path = dir.join("keys.toml").display().to_string();
        let mut c = config_in(&dir, "");
        let problems = c.apply_env(env(&[("PILOTAGE_API_KEYS_FILE", &path)]));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(c.auth.keys.len(), 1);
        assert_eq!(c.auth.keys[0].name, "ci");
    }

    #[test]
    fn malformed_api_keys_file_is_a_problem() {
        let dir = temp_dir("badkeys");
        std::fs::write(dir.join("keys.toml"), "[[key]]\nname = \"ci\"\n").unwrap();
        let mut c = config_in(&dir, "");
        c.auth.keys_file = "keys.toml".into();
        let problems = c.apply_env(env(&[]));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].key, "auth.keys_file");
    }

    #[test]
    fn redis_url_from_a_file() {
        let dir = temp_dir("redis");
        std::fs::write(dir.join("redis-url"), "redis://:pw@redis:6379/0\n").unwrap();
        let mut c = config_in(&dir, "");
        c.store.redis_url_file = "redis-url".into();
        assert!(c.apply_env(env(&[])).is_empty());
        assert_eq!(c.store.redis_url, "redis://:pw@redis:6379/0");
    }

    #[test]
    fn the_oauth_resource_from_the_environment_needs_an_oauth_section() {
        let dir = temp_dir("resource");
        let mut without = config_in(&dir, "");
        let problems = without.apply_env(env(&[(
            "PILOTAGE_OAUTH_RESOURCE",
            "https://127.0.0.1:8443/mcp",
        )]));
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].key, "PILOTAGE_OAUTH_RESOURCE");
        let mut with = config_in(
            &dir,
            "[auth.oauth]\nresource = \"https://gw.example.com/mcp\"\n",
        );
        assert!(
            with.apply_env(env(&[(
                "PILOTAGE_OAUTH_RESOURCE",
                "https://127.0.0.1:8443/mcp"
            )]))
            .is_empty()
        );
        assert_eq!(
            with.auth.oauth.map(|o| o.resource).as_deref(),
            Some("https://127.0.0.1:8443/mcp")
        );
    }

    #[test]
    fn redis_cluster_nodes_from_the_environment() {
        let dir = temp_dir("cluster");
        let mut c = config_in(&dir, "");
        let nodes = "redis://10.0.0.1:6379, redis://10.0.0.2:6379,";
        assert!(
            c.apply_env(env(&[("PILOTAGE_REDIS_CLUSTER", nodes)]))
                .is_empty()
        );
        assert_eq!(
            c.store.redis_cluster,
            ["redis://10.0.0.1:6379", "redis://10.0.0.2:6379"]
        );
    }
}
