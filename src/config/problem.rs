//! A problem found in a configuration, naming file, key and fix, and the
//! error of a configuration that cannot start.

/// One problem found in a configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigProblem {
    pub file: String,
    pub key: String,
    pub problem: String,
    pub fix: String,
}

impl ConfigProblem {
    /// Whether it is about an engine's runtime folder (written by that
    /// engine's installation, read only when the engine is called).
    pub fn is_runtime_folder(&self) -> bool {
        self.key
            .split('.')
            .any(|part| RUNTIME_FOLDER_KEYS.contains(&part))
    }
}

/// Engine keys that name folders an engine's installation fills.
const RUNTIME_FOLDER_KEYS: [&str; 1] = ["tenants_dir"];

impl std::fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: `{}`: {}; fix: {}",
            self.file, self.key, self.problem, self.fix
        )
    }
}

/// Loading failed: every problem found, not just the first.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration:\n{}", .0.iter().map(|p| format!("  - {p}")).collect::<Vec<_>>().join("\n"))]
pub struct ConfigError(pub Vec<ConfigProblem>);
