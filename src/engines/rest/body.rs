//! Request bodies from the mapping's JSON templates.
//!
//! A template is a TOML table whose string values may be a whole placeholder,
//! `"{{program}}"`; each placeholder is written in its declared encoding. A
//! placeholder with no value (no context given) drops its key. Any other value
//! is sent as written, so nested objects and constant fields are plain TOML.

use super::mapping::{Encoding, Encodings, PLACEHOLDERS};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;
use std::time::Duration;

/// The values a request can fill in.
#[derive(Debug, Default)]
pub struct Fill<'a> {
    pub program: Option<&'a Value>,
    pub input: Option<&'a Value>,
    pub context: Option<&'a Value>,
    pub trace: Option<bool>,
    pub dry_run: Option<bool>,
    pub deadline: Option<Duration>,
}

/// The placeholder name of a template string, if it is one (`{{name}}`).
pub fn placeholder(text: &str) -> Option<&str> {
    text.strip_prefix("{{")?.strip_suffix("}}").map(str::trim)
}

/// A rendered request body. The program, input and context are borrowed,
/// not copied: the body is only ever written out, and a copy of a large
/// program's tree is several times its text.
#[derive(Debug)]
pub enum Rendered<'a> {
    Owned(Value),
    Borrowed(&'a Value),
    Object(Vec<(String, Rendered<'a>)>),
    Array(Vec<Rendered<'a>>),
}

impl Serialize for Rendered<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Rendered::Owned(v) => v.serialize(s),
            Rendered::Borrowed(v) => v.serialize(s),
            Rendered::Object(members) => {
                let mut map = s.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
            Rendered::Array(items) => s.collect_seq(items),
        }
    }
}

/// The body's JSON text in a buffer of exactly its size: a large program's
/// text would otherwise pass through a buffer doubling towards it.
pub fn to_json(body: &Rendered<'_>) -> Vec<u8> {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // JSON values (string keys only) always serialise, and writing into
    // memory cannot fail.
    let _ = serde_json::to_writer(&mut count, body);
    let mut out = Vec::with_capacity(count.0);
    let _ = serde_json::to_writer(&mut out, body);
    out
}

/// Renders `template` with `fill`.
pub fn render<'a>(template: &toml::Value, encodings: &Encodings, fill: &Fill<'a>) -> Rendered<'a> {
    render_value(template, encodings, fill).unwrap_or(Rendered::Owned(Value::Null))
}

fn render_value<'a>(
    template: &toml::Value,
    encodings: &Encodings,
    fill: &Fill<'a>,
) -> Option<Rendered<'a>> {
    match template {
        toml::Value::String(s) => match placeholder(s) {
            Some(name) => encode(name, encodings, fill),
            None => Some(Rendered::Owned(Value::String(s.clone()))),
        },
        toml::Value::Table(table) => {
            let mut out: Vec<(String, Rendered<'a>)> = Vec::with_capacity(table.len());
            for (key, value) in table {
                if let Some(v) = render_value(value, encodings, fill) {
                    out.push((key.clone(), v));
                }
            }
            Some(Rendered::Object(out))
        }
        toml::Value::Array(items) => Some(Rendered::Array(
            items
                .iter()
                .map(|i| render_value(i, encodings, fill).unwrap_or(Rendered::Owned(Value::Null)))
                .collect(),
        )),
        other => serde_json::to_value(other).ok().map(Rendered::Owned),
    }
}

fn encode<'a>(name: &str, encodings: &Encodings, fill: &Fill<'a>) -> Option<Rendered<'a>> {
    let owned = |v: Option<Value>| v.map(Rendered::Owned);
    match name {
        "program" => json_value(fill.program?, &encodings.program),
        "input" => json_value(fill.input?, &encodings.input),
        "context" => json_value(fill.context?, &encodings.context),
        "trace" => owned(switch(fill.trace?, &encodings.trace)),
        "dry_run" => owned(switch(fill.dry_run?, &encodings.dry_run)),
        "deadline" => owned(duration(fill.deadline?, &encodings.deadline)),
        _ => None,
    }
}

fn json_value<'a>(value: &'a Value, encoding: &Encoding) -> Option<Rendered<'a>> {
    match encoding {
        Encoding::Named(n) if n == "json_string" => {
            Some(Rendered::Owned(Value::String(value.to_string())))
        }
        _ => Some(Rendered::Borrowed(value)),
    }
}

fn switch(on: bool, encoding: &Encoding) -> Option<Value> {
    match encoding {
        Encoding::Pair([yes, no]) => Some(Value::String(if on { yes } else { no }.clone())),
        _ => Some(Value::Bool(on)),
    }
}

fn duration(d: Duration, encoding: &Encoding) -> Option<Value> {
    let ms = d.as_millis() as u64;
    Some(match encoding {
        // Whole seconds stay integers; anything else keeps its milliseconds.
        Encoding::Named(n) if n == "seconds" && ms.is_multiple_of(1000) => Value::from(ms / 1000),
        Encoding::Named(n) if n == "seconds" => Value::from(ms as f64 / 1000.0),
        Encoding::Named(n) if n == "whole_seconds" => Value::from(seconds_up(d)),
        _ => Value::from(ms),
    })
}

/// Whole seconds, rounded up so the engine never gets less time than asked.
fn seconds_up(d: Duration) -> u64 {
    d.as_millis().div_ceil(1000) as u64
}

/// The deadline the engine is actually given under `encoding`.
pub fn effective_deadline(d: Duration, encoding: &Encoding) -> Duration {
    match encoding {
        Encoding::Named(n) if n == "whole_seconds" => Duration::from_secs(seconds_up(d)),
        _ => d,
    }
}

/// Which encodings fit which placeholder (for configuration checks).
pub fn encoding_problem(placeholder: &str, encoding: &Encoding) -> Option<String> {
    let allowed: &[&str] = match placeholder {
        "program" | "input" | "context" => &["json", "json_string"],
        "trace" | "dry_run" => &["boolean"],
        "deadline" => &["milliseconds", "seconds", "whole_seconds"],
        _ => &[],
    };
    match encoding {
        Encoding::Named(n) if allowed.contains(&n.as_str()) => None,
        Encoding::Pair(_) if matches!(placeholder, "trace" | "dry_run") => None,
        other => Some(format!(
            "{other:?} is not an encoding of {{{{{placeholder}}}}}: use {}{}",
            allowed.join(" or "),
            if matches!(placeholder, "trace" | "dry_run") {
                ", or a pair [\"value when on\", \"value when off\"]"
            } else {
                ""
            }
        )),
    }
}

/// Every template string that looks like a placeholder but names none we know,
/// with its dotted key.
pub fn unknown_placeholders(template: &toml::Value, at: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match template {
        toml::Value::String(s) => {
            if let Some(name) = placeholder(s)
                && !PLACEHOLDERS.contains(&name)
            {
                out.push((at.to_string(), name.to_string()));
            }
        }
        toml::Value::Table(t) => {
            for (k, v) in t {
                out.extend(unknown_placeholders(v, &format!("{at}.{k}")));
            }
        }
        toml::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                out.extend(unknown_placeholders(v, &format!("{at}[{i}]")));
            }
        }
        _ => {}
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_templates_with_encodings() {
        let template: toml::Value = toml::from_str(
            r#"
            spec = { document = "{{program}}", context = "{{context}}" }
            options = { mode = "{{dry_run}}", record = "{{trace}}", timeoutSeconds = "{{deadline}}", tag = "gateway" }
            "#,
        )
        .unwrap();
        let encodings = Encodings {
            dry_run: Encoding::Pair(["SIMULATE".into(), "LIVE".into()]),
            deadline: Encoding::Named("seconds".into()),
            program: Encoding::Named("json_string".into()),
            ..Encodings::default()
        };
        let program = json!({"steps": []});
        let body = render(
            &template,
            &encodings,
            &Fill {
                program: Some(&program),
                trace: Some(true),
                dry_run: Some(true),
                deadline: Some(Duration::from_millis(2500)),
                ..Fill::default()
            },
        );
        assert_eq!(
            serde_json::to_value(&body).unwrap(),
            json!({"spec": {"document": "{\"steps\":[]}"},
                "options": {"mode": "SIMULATE", "record": true, "timeoutSeconds": 2.5, "tag": "gateway"}})
        );
        let whole = Encodings {
            deadline: Encoding::Named("whole_seconds".into()),
            ..Encodings::default()
        };
        let fill = Fill {
            deadline: Some(Duration::from_millis(1500)),
            ..Fill::default()
        };
        let flat: toml::Value = toml::from_str(r#"t = "{{deadline}}""#).unwrap();
        let text = |r: Rendered<'_>| serde_json::to_value(&r).unwrap();
        assert_eq!(text(render(&flat, &whole, &fill)), json!({"t": 2}));
        assert_eq!(
            text(render(&flat, &Encodings::default(), &fill)),
            json!({"t": 1500})
        );
    }

    #[test]
    fn unknown_placeholders_and_encodings_are_named() {
        let template: toml::Value = toml::from_str(r#"a = { b = "{{programme}}" }"#).unwrap();
        assert_eq!(
            unknown_placeholders(&template, "run.body"),
            [("run.body.a.b".to_string(), "programme".to_string())]
        );
        assert!(encoding_problem("deadline", &Encoding::Named("minutes".into())).is_some());
        assert!(encoding_problem("dry_run", &Encoding::Pair(["A".into(), "B".into()])).is_none());
        assert!(encoding_problem("deadline", &Encoding::Pair(["A".into(), "B".into()])).is_some());
    }
}
