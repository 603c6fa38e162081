//! The manifest as a Client reads it (Part II §4, §5.1): the effective
//! capability map of each Language, and the conservative fallbacks for
//! values this Host does not recognise (Part II §1.3). A capability the Host
//! cannot trust to be declared is treated as undeclared, and the reason is
//! kept so the operator can see why.

use crate::values::MAJOR_VERSION;
use serde_json::Value;

/// A Language's execution mode (Part II §6.5.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Execution {
    Immediate,
    Deploy,
    Both,
}

/// The effective capability map of one Language (Part II §4.2), after the
/// dependency rules and the unknown-value fallbacks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caps {
    pub guides: bool,
    pub topic_fetch: bool,
    pub catalog: bool,
    pub search: bool,
    pub validate: bool,
    pub plan: bool,
    pub execute: bool,
    pub idempotency: bool,
    pub trace_fetch: bool,
}

/// One Language entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Language {
    pub name: String,
    pub title: String,
    pub validate_tool: Option<String>,
    pub execute_tool: Option<String>,
    pub trace_tool: Option<String>,
    pub caps: Caps,
    pub execution: Option<Execution>,
    /// The declared trace ceiling (`summary` or `full`).
    pub trace: Option<String>,
    pub retention: Option<String>,
    pub context_schema: Option<Value>,
    /// Why a capability the entry mentions is treated as undeclared.
    pub notes: Vec<String>,
}

/// A manifest the Host can use.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub version: String,
    pub languages: Vec<Language>,
}

/// Why a manifest cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    #[error("the manifest is not a JSON object")]
    NotAnObject,
    #[error("the manifest has no `pilotage` version")]
    NoVersion,
    #[error(
        "the server speaks Pilotage {0}; this Host implements major version {MAJOR_VERSION} and must not use it"
    )]
    UnsupportedMajor(String),
    #[error("the manifest declares no language")]
    NoLanguages,
}

impl Manifest {
    /// Reads a manifest. Unknown members are ignored (Part II §1.2); a
    /// higher major version is refused (Part II §11.1).
    pub fn parse(v: &Value) -> Result<Manifest, ManifestError> {
        let obj = v.as_object().ok_or(ManifestError::NotAnObject)?;
        let version = obj
            .get("pilotage")
            .and_then(Value::as_str)
            .ok_or(ManifestError::NoVersion)?
            .to_string();
        let major = version
            .split('.')
            .next()
            .and_then(|m| m.parse::<u64>().ok())
            .ok_or_else(|| ManifestError::UnsupportedMajor(version.clone()))?;
        if major != MAJOR_VERSION {
            return Err(ManifestError::UnsupportedMajor(version));
        }
        let server_caps = obj.get("capabilities");
        let languages: Vec<Language> = obj
            .get("languages")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|l| Language::parse(l, server_caps))
                    .collect()
            })
            .unwrap_or_default();
        if languages.is_empty() {
            return Err(ManifestError::NoLanguages);
        }
        Ok(Manifest { version, languages })
    }

    pub fn language(&self, name: &str) -> Option<&Language> {
        self.languages.iter().find(|l| l.name == name)
    }
}

/// The effective value of one capability: the Language-level declaration
/// replaces the Server-level one as a whole (Part II §4.2).
fn effective<'a>(
    lang: Option<&'a Value>,
    server: Option<&'a Value>,
    cap: &str,
) -> Option<&'a Value> {
    match lang.and_then(Value::as_object) {
        Some(l) if l.contains_key(cap) => l.get(cap),
        _ => server.and_then(|s| s.get(cap)),
    }
}

fn declared(v: Option<&Value>) -> bool {
    matches!(v, Some(Value::Bool(true)) | Some(Value::Object(_)))
}

fn sub_feature(v: Option<&Value>, sub: &str) -> bool {
    v.and_then(Value::as_object)
        .and_then(|o| o.get(sub))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn string(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

impl Language {
    fn parse(v: &Value, server_caps: Option<&Value>) -> Option<Language> {
        let name = string(v, "name")?;
        let lang_caps = v.get("capabilities");
        let cap = |c: &str| effective(lang_caps, server_caps, c);
        let mut notes = Vec::new();
        let mut caps = Caps {
            guides: declared(cap("guides")),
            topic_fetch: sub_feature(cap("guides"), "topic_fetch"),
            catalog: declared(cap("catalog")),
            search: sub_feature(cap("catalog"), "search"),
            validate: declared(cap("validate")),
            plan: declared(cap("plan")),
            execute: declared(cap("execute")),
            idempotency: sub_feature(cap("execute"), "idempotency"),
            trace_fetch: declared(cap("trace_fetch")),
        };
        let lp = v.get("loop");
        let loop_name = |k: &str| {
            lp.and_then(|l| l.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };

        // Fields that condition a capability: an unknown value makes the
        // conditioned capability undeclared (Part II §1.3).
        let locator = string(v, "locator");
        if caps.validate
            && !matches!(
                locator.as_deref(),
                Some("json-pointer") | Some("text-range")
            )
        {
            notes.push(format!(
                "validate treated as undeclared: unknown locator {}",
                show(locator.as_deref())
            ));
            caps.validate = false;
        }
        let execution = match string(v, "execution").as_deref() {
            Some("immediate") => Some(Execution::Immediate),
            Some("deploy") => Some(Execution::Deploy),
            Some("both") => Some(Execution::Both),
            other => {
                if caps.execute {
                    notes.push(format!(
                        "execute treated as undeclared: unknown execution mode {}",
                        show(other)
                    ));
                    caps.execute = false;
                }
                None
            }
        };
        let trace = string(v, "trace");
        if caps.execute && !matches!(trace.as_deref(), Some("summary") | Some("full")) {
            notes.push(format!(
                "execute treated as undeclared: unknown trace level {}",
                show(trace.as_deref())
            ));
            caps.execute = false;
        }
        let retention = string(v, "retention");
        if caps.execute && !retention.as_deref().is_some_and(known_retention) {
            notes.push(format!(
                "execute treated as undeclared: unknown retention {}",
                show(retention.as_deref())
            ));
            caps.execute = false;
        }
        let (validate_tool, execute_tool, trace_tool) = (
            loop_name("validate"),
            loop_name("execute"),
            loop_name("trace"),
        );
        if caps.validate && validate_tool.is_none() {
            notes.push("validate treated as undeclared: no loop.validate tool".into());
            caps.validate = false;
        }
        if caps.execute && execute_tool.is_none() {
            notes.push("execute treated as undeclared: no loop.execute tool".into());
            caps.execute = false;
        }

        // Dependencies (Part II §4.3 rule 3): a capability whose dependency
        // is missing cannot be relied on.
        if !caps.guides && caps.validate {
            notes.push("validate treated as undeclared: guides is not declared".into());
            caps.validate = false;
        }
        caps.plan &= caps.validate;
        if !caps.validate {
            caps.execute = false;
        }
        caps.trace_fetch &= caps.execute && trace_tool.is_some();
        caps.idempotency &= caps.execute;
        caps.search &= caps.catalog;
        caps.topic_fetch &= caps.guides;

        Some(Language {
            title: string(v, "title").unwrap_or_else(|| name.clone()),
            name,
            validate_tool,
            execute_tool,
            trace_tool,
            caps,
            execution,
            trace,
            retention,
            context_schema: v.get("context_schema").cloned(),
            notes,
        })
    }
}

fn show(v: Option<&str>) -> String {
    v.map(|s| format!("{s:?}"))
        .unwrap_or_else(|| "(absent)".into())
}

/// `none`, `session` or an ISO 8601 duration (Part II §6.6).
fn known_retention(r: &str) -> bool {
    r == "none" || r == "session" || is_iso8601_duration(r)
}

/// An ISO 8601 duration, read as the gateway reads it (`pilotage-duration`).
pub fn is_iso8601_duration(s: &str) -> bool {
    pilotage_duration::parse(s).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Value {
        json!({"name": "workflow/v1", "title": "W", "guides": "pilotage_get_guide",
            "catalog": "pilotage_catalog",
            "loop": {"validate": "validate_workflow", "execute": "run_workflow", "trace": "trace_workflow"},
            "capabilities": {"guides": true, "catalog": {"search": true}, "validate": true, "plan": true,
                "execute": {"idempotency": true}, "trace_fetch": true},
            "locator": "json-pointer", "execution": "both", "trace": "full", "retention": "PT24H"})
    }

    #[test]
    fn reads_the_effective_capabilities() {
        let m =
            Manifest::parse(&json!({"pilotage": "1.1", "languages": [entry()]})).expect("manifest");
        let l = &m.languages[0];
        assert!(l.caps.validate && l.caps.plan && l.caps.execute && l.caps.trace_fetch);
        assert!(l.caps.search && l.caps.idempotency && !l.caps.topic_fetch);
        assert_eq!(l.execution, Some(Execution::Both));
        assert!(l.notes.is_empty());
    }

    #[test]
    fn language_level_declaration_replaces_the_server_level_one() {
        let mut e = entry();
        e["capabilities"] = json!({"catalog": true});
        let m = Manifest::parse(&json!({"pilotage": "1.1", "languages": [e],
            "capabilities": {"guides": {"topic_fetch": true}, "validate": true, "catalog": {"search": true}}}))
        .expect("manifest");
        let c = &m.languages[0].caps;
        assert!(c.guides && c.topic_fetch && c.validate && c.catalog);
        assert!(
            !c.search,
            "the language's `catalog: true` replaces the server's sub-features"
        );
        assert!(!c.execute && !c.plan);
    }

    #[test]
    fn unknown_conditioning_values_undeclare_the_capability() {
        let mut e = entry();
        e["execution"] = json!("eventually");
        let m = Manifest::parse(&json!({"pilotage": "1.1", "languages": [e]})).expect("manifest");
        assert!(!m.languages[0].caps.execute && !m.languages[0].caps.trace_fetch);
        assert!(m.languages[0].caps.validate);
        assert_eq!(m.languages[0].notes.len(), 1);

        let mut e = entry();
        e["locator"] = json!("xpath");
        let m = Manifest::parse(&json!({"pilotage": "1.1", "languages": [e]})).expect("manifest");
        assert!(!m.languages[0].caps.validate && !m.languages[0].caps.execute);

        let mut e = entry();
        e["retention"] = json!("forever");
        let m = Manifest::parse(&json!({"pilotage": "1.1", "languages": [e]})).expect("manifest");
        assert!(!m.languages[0].caps.execute);
    }

    #[test]
    fn a_higher_major_version_is_refused() {
        let err = Manifest::parse(&json!({"pilotage": "2.0", "languages": [entry()]})).unwrap_err();
        assert!(matches!(err, ManifestError::UnsupportedMajor(_)));
        assert!(Manifest::parse(&json!({"pilotage": "1.7", "languages": [entry()]})).is_ok());
        assert_eq!(
            Manifest::parse(&json!({"pilotage": "1.1", "languages": []})).unwrap_err(),
            ManifestError::NoLanguages
        );
    }

    #[test]
    fn iso8601_durations() {
        for ok in ["PT24H", "P1D", "P1Y2M4DT5H6M7.5S", "PT0.5S", "P2W", "P1M"] {
            assert!(is_iso8601_duration(ok), "{ok}");
        }
        for bad in [
            "P",
            "PT",
            "24H",
            "P1H",
            "PT1D",
            "P1.5D",
            "PT1S2M",
            "P-1D",
            "PT.5S",
            "PT1H1H",
            // Weeks stand alone in ISO 8601 durations.
            "P1Y2M3W4DT5H6M7.5S",
        ] {
            assert!(!is_iso8601_duration(bad), "{bad}");
        }
    }
}
