//! `[engine.mapping.check]`: the validator call and how its answer is read.

use super::Encodings;
use super::body::template;
use serde::Deserialize;
use std::collections::BTreeMap;

/// What a problem's level means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LevelMeaning {
    Error,
    Warning,
}

/// What an HTTP status of a check answer means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckMeaning {
    /// The body is the validator's answer (problems at `problems`).
    Answer,
    /// The validator failed: an `internal` request error.
    Error,
}

/// The validator endpoint.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct CheckMapping {
    /// The validator call (POST).
    pub path: String,
    /// Request body template (placeholders `{{program}}`, `{{context}}`).
    #[schemars(with = "serde_json::Value")]
    pub body: toml::Value,
    /// How each placeholder of `body` is written.
    pub encodings: Encodings,
    /// HTTP status (`"422"`, or a class `"4xx"`) → meaning; a status not
    /// listed is an error.
    pub status: BTreeMap<String, CheckMeaning>,
    /// Response field holding the problems array.
    pub problems: String,
    /// Field of a problem's message.
    pub text: String,
    /// Field of a problem's location in the program.
    pub location: String,
    /// Field of a problem's level.
    pub level: String,
    /// The level value meaning an error, and the one meaning a warning.
    pub error_level: String,
    /// The level value meaning a warning.
    pub warning_level: String,
    /// Further level values and their meaning. A level in none of these is
    /// logged and counts as an error (fail closed).
    pub levels: BTreeMap<String, LevelMeaning>,
}

impl Default for CheckMapping {
    fn default() -> Self {
        Self {
            path: "/api/v1/workflows/check".into(),
            body: template(&[("workflow", "{{program}}"), ("context", "{{context}}")]),
            encodings: Encodings::default(),
            status: BTreeMap::from([("2xx".into(), CheckMeaning::Answer)]),
            problems: "problems".into(),
            text: "text".into(),
            location: "where".into(),
            level: "level".into(),
            error_level: "ERROR".into(),
            warning_level: "WARN".into(),
            levels: BTreeMap::new(),
        }
    }
}
