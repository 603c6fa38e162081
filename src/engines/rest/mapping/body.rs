//! Request body placeholders and their encodings (`encodings` of the check
//! and run calls).

use serde::Deserialize;

/// How a placeholder's value is written into a request body.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Encoding {
    /// `boolean`, `milliseconds`, `seconds` (fractional when needed),
    /// `whole_seconds` (rounded up), `json` or `json_string`.
    Named(String),
    /// For a switch: the value sent when on, and the one sent when off.
    Pair([String; 2]),
}

/// Encodings of the body placeholders.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct Encodings {
    /// How `{{program}}` is written.
    pub program: Encoding,
    /// How `{{input}}` is written.
    pub input: Encoding,
    /// How `{{context}}` is written.
    pub context: Encoding,
    /// How `{{trace}}` is written.
    pub trace: Encoding,
    /// How `{{dry_run}}` is written.
    pub dry_run: Encoding,
    /// How `{{deadline}}` is written.
    pub deadline: Encoding,
}

impl Default for Encodings {
    fn default() -> Self {
        let named = |n: &str| Encoding::Named(n.into());
        Self {
            program: named("json"),
            input: named("json"),
            context: named("json"),
            trace: named("boolean"),
            dry_run: named("boolean"),
            deadline: named("milliseconds"),
        }
    }
}

/// The placeholders a body template may use.
pub const PLACEHOLDERS: [&str; 6] = [
    "program", "input", "context", "trace", "dry_run", "deadline",
];

/// A flat body template of `key = "{{placeholder}}"` pairs.
pub(super) fn template(pairs: &[(&str, &str)]) -> toml::Value {
    toml::Value::Table(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), toml::Value::String(v.to_string())))
            .collect(),
    )
}
