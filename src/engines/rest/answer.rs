//! Reading an engine answer through the mapping: what its HTTP status means,
//! where its error text is, and the value tables of levels and states.

use super::mapping::{EngineMapping, LevelMeaning, StateMeaning};
use crate::engines::json_path::{pick, value_text};
use reqwest::StatusCode;
use serde_json::Value;
use std::collections::BTreeMap;

/// The meaning of `status` in a status table: an exact code (`"422"`) wins
/// over its class (`"4xx"`).
pub fn status_meaning<T: Copy>(table: &BTreeMap<String, T>, status: StatusCode) -> Option<T> {
    let code = status.as_u16();
    table
        .get(&code.to_string())
        .or_else(|| table.get(&format!("{}xx", code / 100)))
        .copied()
}

/// Whether a status-table key is a code or a class.
pub fn is_status_key(key: &str) -> bool {
    let b = key.as_bytes();
    b.len() == 3
        && (1..=5).contains(&(b[0].wrapping_sub(b'0')))
        && (b[1..].iter().all(u8::is_ascii_digit) || &b[1..] == b"xx")
}

/// The error text of an error body: the first of `paths` that holds a value,
/// else `HTTP <status>`.
pub fn error_text(body: &Value, paths: &[&str], status: StatusCode) -> String {
    paths
        .iter()
        .filter(|p| !p.is_empty())
        .find_map(|p| pick(body, p).and_then(value_text))
        .unwrap_or_else(|| format!("HTTP {status}"))
}

/// The mapping's error paths, after an optional call-specific one.
pub fn error_paths<'a>(mapping: &'a EngineMapping, first: &'a str) -> Vec<&'a str> {
    std::iter::once(first)
        .chain(mapping.error_paths.iter().map(String::as_str))
        .collect()
}

/// What a problem level means; an unknown level is an error (fail closed).
pub fn level_meaning(mapping: &EngineMapping, level: Option<&str>) -> Result<LevelMeaning, String> {
    let c = &mapping.check;
    let Some(level) = level else {
        return Err(String::new());
    };
    let same = |a: &str, b: &str| {
        if mapping.case_insensitive_values {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    };
    if same(level, &c.error_level) {
        Ok(LevelMeaning::Error)
    } else if same(level, &c.warning_level) {
        Ok(LevelMeaning::Warning)
    } else {
        mapping
            .lookup(&c.levels, level)
            .copied()
            .ok_or_else(|| level.to_string())
    }
}

/// What a run state value means; `Err` carries the unknown value.
pub fn state_meaning(
    mapping: &EngineMapping,
    state: Option<&Value>,
) -> Result<StateMeaning, String> {
    let text = state.and_then(value_text).unwrap_or_default();
    mapping
        .lookup(&mapping.run.states, &text)
        .copied()
        .ok_or(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exact_codes_win_over_classes() {
        let table = BTreeMap::from([("4xx".to_string(), 1), ("422".to_string(), 2)]);
        assert_eq!(
            status_meaning(&table, StatusCode::UNPROCESSABLE_ENTITY),
            Some(2)
        );
        assert_eq!(status_meaning(&table, StatusCode::NOT_FOUND), Some(1));
        assert_eq!(status_meaning(&table, StatusCode::OK), None);
        for good in ["200", "4xx", "503"] {
            assert!(is_status_key(good), "{good}");
        }
        for bad in ["20", "4XX", "x00", "600", "2x0"] {
            assert!(!is_status_key(bad), "{bad}");
        }
    }

    #[test]
    fn error_text_follows_the_paths() {
        let body = json!({"fault": {"message": "validator down"}});
        assert_eq!(
            error_text(
                &body,
                &["error", "fault.message"],
                StatusCode::INTERNAL_SERVER_ERROR
            ),
            "validator down"
        );
        assert_eq!(
            error_text(&json!({}), &["error"], StatusCode::INTERNAL_SERVER_ERROR),
            "HTTP 500 Internal Server Error"
        );
    }

    #[test]
    fn unknown_levels_and_states_are_named() {
        let mut mapping = EngineMapping::default();
        assert_eq!(
            level_meaning(&mapping, Some("WARN")),
            Ok(LevelMeaning::Warning)
        );
        assert_eq!(level_meaning(&mapping, Some("FATAL")), Err("FATAL".into()));
        mapping.case_insensitive_values = true;
        assert_eq!(
            level_meaning(&mapping, Some("warn")),
            Ok(LevelMeaning::Warning)
        );
        assert_eq!(
            state_meaning(&mapping, Some(&json!("completed"))),
            Ok(StateMeaning::Completed)
        );
        assert_eq!(
            state_meaning(&mapping, Some(&json!("Paused"))),
            Err("Paused".into())
        );
    }
}
