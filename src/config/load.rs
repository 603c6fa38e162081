//! Reading `gateway.toml`: parsing, the environment overrides, and the
//! start-up validation, one `problems()` per section; the engines' own tables
//! are checked by their adapters' rows in `engines::registry`.

use super::{Config, ConfigError, ConfigProblem, DEFAULT_ENGINE};
use crate::engines::registry;
use std::path::{Path, PathBuf};

impl Config {
    /// Reads, applies environment overrides, and validates.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let (config, problems) = Self::load_with_problems(path)?;
        if problems.is_empty() {
            Ok(config)
        } else {
            Err(ConfigError(problems))
        }
    }

    /// For work on rule files alone (`classify`): like [`Self::load`], but
    /// a problem with an engine's runtime folders (what an engine's
    /// installation writes, such as n8n's tenant secrets) comes back as a
    /// warning, since no engine is reached.
    pub fn load_for_rules(path: &Path) -> Result<(Config, Vec<ConfigProblem>), ConfigError> {
        let (config, problems) = Self::load_with_problems(path)?;
        let (warnings, problems): (Vec<_>, Vec<_>) = problems
            .into_iter()
            .partition(ConfigProblem::is_runtime_folder);
        if problems.is_empty() {
            Ok((config, warnings))
        } else {
            Err(ConfigError(problems))
        }
    }

    /// Reads and applies environment overrides; every problem found.
    fn load_with_problems(path: &Path) -> Result<(Config, Vec<ConfigProblem>), ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            ConfigError(vec![ConfigProblem {
                file: file.clone(),
                key: "(file)".into(),
                problem: format!("cannot read: {e}"),
                fix: "pass an existing file with --config".into(),
            }])
        })?;
        let mut config = Self::parse(&text, path)?;
        let mut problems = config.apply_env(|k| std::env::var(k).ok());
        let variables: Vec<String> = std::env::vars_os()
            .filter_map(|(k, _)| k.into_string().ok())
            .collect();
        problems.extend(config.unknown_engine_url_variables(variables.iter().map(String::as_str)));
        problems.extend(config.validate());
        Ok((config, problems))
    }

    /// Parses TOML text; `path` names the source in messages and anchors
    /// relative paths.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let file = path.display().to_string();
        let mut config: Config = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].lines().count().max(1))
                .unwrap_or(0);
            ConfigError(vec![ConfigProblem {
                file: if line > 0 {
                    format!("{file}:{line}")
                } else {
                    file.clone()
                },
                key: "(syntax)".into(),
                problem: e.message().to_string(),
                fix: "correct the TOML at that line (see deploy/gateway.local.toml for a complete example)".into(),
            }])
        })?;
        config.base_dir = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        config.source = path.to_path_buf();
        for engine in std::iter::once(&mut config.engine).chain(config.engines.values_mut()) {
            engine.base_dir = config.base_dir.clone();
        }
        Ok(config)
    }

    /// Every problem, each naming file, key and fix.
    pub fn validate(&self) -> Vec<ConfigProblem> {
        let file = self.source.display().to_string();
        let is_file = |path: &str| self.resolve(path).is_file();
        let engine_timeout = self
            .engines
            .values()
            .map(|e| e.timeout_ms)
            .fold(self.engine.timeout_ms, u64::max);
        let key_names: Vec<&str> = self.auth.keys.iter().map(|k| k.name.as_str()).collect();
        let mut found = self.server.problems();
        found.extend(self.session.problems());
        found.extend(self.previous_secret_problems());
        found.extend(self.engine_problems());
        found.extend(self.store.problems(engine_timeout, is_file));
        found.extend(self.cache.validate());
        found.extend(self.tasks.validate());
        found.extend(self.auth.problems());
        found.extend(self.telemetry.problems());
        found.extend(self.limits.validate(&key_names));
        found.extend(self.language_problems());
        found.extend(super::browser::problems(self));
        found
            .into_iter()
            .map(|(key, problem, fix)| ConfigProblem {
                file: file.clone(),
                key,
                problem,
                fix,
            })
            .collect()
    }

    /// Settings that start but bend the specification, each as one line
    /// naming file and key (printed by `check-config`, logged at start).
    pub fn warnings(&self) -> Vec<String> {
        let file = self.source.display().to_string();
        self.cache
            .warnings()
            .into_iter()
            .map(|(key, warning)| format!("{file}: `{key}`: warning: {warning}"))
            .collect()
    }

    /// Problems of `[engine]`, of every `[engines.NAME]` and of the
    /// languages' engine names. An adapter's checks name keys under
    /// `engine`; a named engine's are moved under `engines.NAME`.
    fn engine_problems(&self) -> Vec<(String, String, String)> {
        let is_file = |path: &str| self.resolve(path).is_file();
        let mut out = self.engine.problems("engine", is_file);
        out.extend(registry::problems(&self.engine));
        for (name, engine) in &self.engines {
            let prefix = format!("engines.{name}");
            if name == DEFAULT_ENGINE {
                out.push((
                    prefix.clone(),
                    format!("'{DEFAULT_ENGINE}' names the [engine] table"),
                    "give this engine another name, or move it to [engine]".into(),
                ));
            }
            out.extend(engine.problems(&prefix, is_file));
            for (key, what, fix) in registry::problems(engine) {
                let key = key
                    .strip_prefix("engine")
                    .map_or(key.clone(), |rest| format!("{prefix}{rest}"));
                out.push((key, what, fix));
            }
        }
        for (i, lang) in self.languages.iter().enumerate() {
            if let Some(name) = &lang.engine
                && name != DEFAULT_ENGINE
                && !self.engines.contains_key(name)
            {
                let mut known = vec![DEFAULT_ENGINE.to_string()];
                known.extend(self.engines.keys().cloned());
                out.push((
                    format!("language[{i}].engine"),
                    format!("no engine is called '{name}'"),
                    format!(
                        "use one of: {} (or declare [engines.{name}])",
                        known.join(", ")
                    ),
                ));
            }
        }
        out
    }

    /// Problems of the `[[language]]` list: none declared, names or tool
    /// names used twice, and each language's own keys.
    fn language_problems(&self) -> Vec<(String, String, String)> {
        let mut out = Vec::new();
        let mut problem = |key: &str, what: String, fix: &str| {
            out.push((key.to_string(), what, fix.to_string()));
        };
        if self.languages.is_empty() {
            problem(
                "language",
                "no [[language]] declared".into(),
                "declare at least one language (see deploy/gateway.local.toml)",
            );
        }
        let mut tool_names = std::collections::BTreeSet::new();
        let mut names = std::collections::BTreeSet::new();
        for (i, lang) in self.languages.iter().enumerate() {
            if !names.insert(lang.name.clone()) {
                problem(
                    &format!("language[{i}].name"),
                    format!("'{}' declared twice", lang.name),
                    "give each language a distinct name",
                );
            }
            for p in lang.validate(self, i) {
                problem(&p.0, p.1, &p.2);
            }
            for tool in lang.tools.declared(&lang.capabilities) {
                if !tool_names.insert(tool.to_string()) {
                    problem(
                        &format!("language[{i}].tools"),
                        format!("tool name '{tool}' is used twice"),
                        "give every loop tool a distinct name",
                    );
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::AuthConfig;
    use serde::Deserialize;

    /// The problems' keys of the conformance configuration with `auth`
    /// (TOML under `[auth]`) in place of its own.
    fn problems(auth: &str) -> Vec<String> {
        #[derive(Deserialize)]
        struct Only {
            auth: AuthConfig,
        }
        let mut c = Config::parse(
            include_str!("../../tests/fixtures/features.toml"),
            Path::new("gateway.toml"),
        )
        .expect("parse");
        c.auth = toml::from_str::<Only>(&format!("[auth]\n{auth}"))
            .expect("auth TOML")
            .auth;
        c.validate().into_iter().map(|p| p.key).collect()
    }

    #[test]
    fn key_policies_are_validated_by_key() {
        let key = |extra: &str| {
            format!(
                "[[auth.key]]\nname = \"k\"\ntenant = \"acme\"\nsha256 = \"{}\"\n{extra}",
                "a".repeat(64)
            )
        };
        assert!(
            !problems(&key(
                "permissions = [\"learn\", \"validate\"]\nmax_risk = \"write\""
            ))
            .iter()
            .any(|k| k.starts_with("auth"))
        );
        let bad = problems(&key(
            "permissions = [\"execute\"]\nmax_risk = \"loud\"\nforbid_risk_hints = [\"readOnly\"]",
        ));
        for k in [
            "auth.key[0].permissions",
            "auth.key[0].max_risk",
            "auth.key[0].forbid_risk_hints",
        ] {
            assert!(bad.contains(&k.to_string()), "{k} missing from {bad:?}");
        }
        let anonymous = problems(
            "anonymous = true\nanonymous_tenant = \"acme\"\nanonymous_permissions = [\"validate\"]\nanonymous_max_risk = \"all\"",
        );
        for k in ["auth.anonymous_permissions", "auth.anonymous_max_risk"] {
            assert!(
                anonymous.contains(&k.to_string()),
                "{k} missing from {anonymous:?}"
            );
        }
        let unknown = problems(&key("permissions = [\"learn\", \"validate\", \"fly\"]"));
        assert!(unknown.contains(&"auth.key[0].permissions".to_string()));
        // An OAuth resource server alone is someone who can call.
        let oauth = problems(
            "[auth.oauth]\nresource = \"https://gw.example.com/mcp\"\n[[auth.oauth.issuer]]\nissuer = \"https://idp\"\njwks_uri = \"https://idp/jwks\"\ntenant = \"acme\"",
        );
        assert!(!oauth.iter().any(|k| k.starts_with("auth")), "{oauth:?}");
    }

    #[test]
    fn the_search_path_is_tried_before_the_config_directory() {
        let dir = std::env::temp_dir().join(format!("pilotage-search-{}", std::process::id()));
        let shared = dir.join("shared");
        std::fs::create_dir_all(shared.join("rules")).unwrap();
        std::fs::write(shared.join("rules/x.toml"), "").unwrap();
        let mut config = Config::parse(
            "[engine]\nurl = \"http://127.0.0.1:1\"\n",
            &dir.join("etc/gateway.toml"),
        )
        .unwrap();
        config.apply_env(|k| {
            (k == "PILOTAGE_SEARCH_PATH").then(|| format!("missing:{}", shared.display()))
        });
        assert_eq!(config.resolve("rules/x.toml"), shared.join("rules/x.toml"));
        assert_eq!(
            config.resolve("rules/y.toml"),
            dir.join("etc/rules/y.toml"),
            "not found on the search path: next to the file"
        );
        assert_eq!(config.resolve("/abs/z"), Path::new("/abs/z"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
