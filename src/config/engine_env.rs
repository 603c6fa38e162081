//! Environment overrides of a named engine's URL: `PILOTAGE_ENGINES_<NAME>_URL`
//! replaces `[engines.NAME] url`, as `PILOTAGE_ENGINE_URL` replaces
//! `[engine] url`, so one configuration file serves a host install and a
//! container network alike (a compose profile points its gateway at another
//! service this way).
//!
//! `<NAME>` is the engine's name in upper case with every character other
//! than a letter or digit written `_`. A variable of that shape that names no
//! engine of the file is refused at start: a typo would otherwise leave the
//! file's URL in force without a word.

use super::{Config, ConfigProblem};

const PREFIX: &str = "PILOTAGE_ENGINES_";
const SUFFIX: &str = "_URL";

/// The variable that overrides engine `name`'s URL.
pub fn url_variable(name: &str) -> String {
    let upper: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{PREFIX}{upper}{SUFFIX}")
}

impl Config {
    /// Sets each named engine's URL from its variable (unset or empty changes
    /// nothing, as for every override).
    pub(super) fn apply_engine_urls(&mut self, get: &impl Fn(&str) -> Option<String>) {
        for (name, engine) in self.engines.iter_mut() {
            if let Some(url) = get(&url_variable(name)) {
                engine.url = url;
            }
        }
    }

    /// Problems for `PILOTAGE_ENGINES_*_URL` variables among `names` (the
    /// environment's variable names) that match no named engine.
    pub fn unknown_engine_url_variables<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Vec<ConfigProblem> {
        let known: Vec<String> = self.engines.keys().map(|n| url_variable(n)).collect();
        names
            .into_iter()
            .filter(|v| v.starts_with(PREFIX) && v.ends_with(SUFFIX) && v.len() > PREFIX.len() + SUFFIX.len())
            .filter(|v| !known.iter().any(|k| k == v))
            .map(|v| ConfigProblem {
                file: self.source.display().to_string(),
                key: v.to_string(),
                problem: "names no engine of this file".into(),
                fix: if known.is_empty() {
                    "unset it, or declare the engine as [engines.NAME] (the default engine's URL is PILOTAGE_ENGINE_URL)".into()
                } else {
                    format!("unset it or use one of: {}", known.join(", "))
                },
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    const TWO_ENGINES: &str = r#"
[engine]
url = "http://127.0.0.1:7070"
[engines.orders]
url = "http://127.0.0.1:8989/v2"
[engines.side-b]
url = "http://127.0.0.1:7071"
"#;

    fn config() -> Config {
        Config::parse(TWO_ENGINES, Path::new("gateway.toml")).expect("parse")
    }

    #[test]
    fn names_become_upper_case_variables() {
        assert_eq!(url_variable("orders"), "PILOTAGE_ENGINES_ORDERS_URL");
        assert_eq!(url_variable("side-b.2"), "PILOTAGE_ENGINES_SIDE_B_2_URL");
    }

    #[test]
    fn a_set_variable_replaces_only_its_engine() {
        let mut c = config();
        let problems = c.apply_env(|k| {
            (k == "PILOTAGE_ENGINES_ORDERS_URL").then(|| "http://orders:8989/v2".to_string())
        });
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(c.engines["orders"].url, "http://orders:8989/v2");
        assert_eq!(c.engines["side-b"].url, "http://127.0.0.1:7071");
        assert_eq!(c.engine.url, "http://127.0.0.1:7070");
    }

    #[test]
    fn an_empty_variable_keeps_the_file() {
        let mut c = config();
        c.apply_env(|k| (k == "PILOTAGE_ENGINES_ORDERS_URL").then(|| " ".to_string()));
        assert_eq!(c.engines["orders"].url, "http://127.0.0.1:8989/v2");
    }

    #[test]
    fn a_variable_naming_no_engine_is_a_problem() {
        let c = config();
        let problems = c.unknown_engine_url_variables([
            "PILOTAGE_ENGINES_ORDERS_URL",
            "PILOTAGE_ENGINES_ORDRES_URL",
            "PILOTAGE_ENGINE_URL",
            "HOME",
        ]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].key, "PILOTAGE_ENGINES_ORDRES_URL");
        assert!(
            problems[0].fix.contains("PILOTAGE_ENGINES_ORDERS_URL"),
            "{}",
            problems[0].fix
        );
    }
}
