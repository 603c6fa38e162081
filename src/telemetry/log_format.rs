//! The JSON log line: one object per line, written straight into the
//! logging layer's buffer.
//!
//! `{"instance":…,"timestamp":…,"level":…,<the event's fields>,"target":…,
//! "spans":[{<fields>,"name":…}, …]}`: the instance's name first, so lines
//! from several gateways can be told apart after they are collected
//! together; the event's fields at the top level (`message` among them);
//! the spans it happened in from the outermost. The first two are the
//! request (`request_id`, `trace_id`) and the tool call (`tool`, `language`,
//! `tenant`) being served, read from their task scopes
//! (`TraceContext`, `ToolScope`) rather than from tracing spans.
//!
//! The same shape as tracing-subscriber's JSON format with a flattened
//! event and a span list, written without the intermediate maps and the
//! re-parsing of each span's fields that format does on every line: the
//! request log line is on every request's path.

use super::tool_call::ToolScope;
use super::trace_context::TraceContext;
use std::fmt::{self, Write};
use std::sync::OnceLock;
use tracing::field::{Field, Visit};
use tracing_subscriber::fmt::format::{FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// `"instance":"<name>",` once the configuration named it (lines logged
/// before that, while the configuration loads, go without).
static INSTANCE: OnceLock<String> = OnceLock::new();

/// Names this instance in every later log line.
pub fn set_instance(name: &str) {
    let mut member = String::from("\"instance\":");
    let _ = write_json_str(&mut member, name);
    member.push(',');
    let _ = INSTANCE.set(member);
}

/// The line format; spans' fields must be recorded by [`SpanFields`].
pub struct JsonLine;

/// A span's fields as the members of its JSON object, `,"a":1,"b":"x"`
/// (each with a leading comma), written as they are recorded; a field
/// recorded later is appended. The line format adds the braces and the
/// span's name. (tracing-subscriber's JSON fields build a map per span and
/// re-parse it to add a field: two spans a request, both on its path.)
pub struct SpanFields;

impl<'writer> FormatFields<'writer> for SpanFields {
    fn format_fields<R: tracing_subscriber::field::RecordFields>(
        &self,
        mut writer: Writer<'writer>,
        fields: R,
    ) -> fmt::Result {
        record_members(&mut writer, |v| fields.record(v))
    }

    fn add_fields(
        &self,
        current: &'writer mut FormattedFields<Self>,
        fields: &tracing::span::Record<'_>,
    ) -> fmt::Result {
        record_members(&mut current.fields, |v| fields.record(v))
    }
}

/// Writes the fields `record` visits as `,"name":value` each.
fn record_members(out: &mut impl Write, record: impl FnOnce(&mut dyn Visit)) -> fmt::Result {
    let mut fields = Fields {
        out,
        result: Ok(()),
    };
    record(&mut fields);
    fields.result
}

impl<S, N> FormatEvent<S, N> for JsonLine
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> fmt::Result {
        let meta = event.metadata();
        writer.write_char('{')?;
        if let Some(member) = INSTANCE.get() {
            writer.write_str(member)?;
        }
        writer.write_str("\"timestamp\":\"")?;
        super::timestamp::write_now(&mut writer)?;
        writer.write_str("\",\"level\":\"")?;
        writer.write_str(meta.level().as_str())?;
        writer.write_char('"')?;
        let mut fields = Fields {
            out: &mut writer,
            result: Ok(()),
        };
        event.record(&mut fields);
        fields.result?;
        writer.write_str(",\"target\":")?;
        write_json_str(&mut writer, meta.target())?;
        let mut spans = SpanList {
            out: &mut writer,
            open: false,
        };
        // The request and the tool call are task scopes, not tracing spans
        // (a span per request costs more than the line): written as spans
        // were, outermost first.
        TraceContext::with_current(|t| {
            spans.strings(
                "request",
                &[("request_id", &t.request_id), ("trace_id", &t.trace_id)],
            )
        })
        .transpose()?;
        ToolScope::with_current(|t| {
            spans.strings(
                "tools/call",
                &[
                    ("tool", &t.tool),
                    ("language", &t.language),
                    ("tenant", &t.tenant),
                ],
            )
        })
        .transpose()?;
        if let Some(scope) = ctx.event_scope() {
            for span in scope.from_root() {
                // Spans made for the collector only repeat the scopes above.
                if span.metadata().target() == super::span_context::EXPORTED {
                    continue;
                }
                let extensions = span.extensions();
                // `,"a":1,"b":2` → `{"a":1,"b":2,"name":…}`
                let members = extensions
                    .get::<FormattedFields<N>>()
                    .and_then(|f| f.fields.strip_prefix(','))
                    .unwrap_or_default();
                spans.object(span.name(), |out| {
                    if !members.is_empty() {
                        out.write_str(members)?;
                        out.write_char(',')?;
                    }
                    Ok(())
                })?;
            }
        }
        if spans.open {
            spans.out.write_char(']')?;
        }
        writer.write_str("}\n")
    }
}

/// The line's `"spans"` member, opened by its first object.
struct SpanList<'a, W: Write> {
    out: &'a mut W,
    open: bool,
}

impl<W: Write> SpanList<'_, W> {
    /// `{<members>"name":<name>}`; `members` ends with a comma when it
    /// writes any.
    fn object(&mut self, name: &str, members: impl FnOnce(&mut W) -> fmt::Result) -> fmt::Result {
        self.out
            .write_str(if self.open { "," } else { ",\"spans\":[" })?;
        self.open = true;
        self.out.write_char('{')?;
        members(self.out)?;
        self.out.write_str("\"name\":")?;
        write_json_str(self.out, name)?;
        self.out.write_char('}')
    }

    /// A span whose members are strings; their names are the format's own
    /// (never escaped).
    fn strings(&mut self, name: &str, members: &[(&str, &str)]) -> fmt::Result {
        self.object(name, |out| {
            for (key, value) in members {
                out.write_char('"')?;
                out.write_str(key)?;
                out.write_str("\":")?;
                write_json_str(out, value)?;
                out.write_char(',')?;
            }
            Ok(())
        })
    }
}

/// Writes each field as `,"name":value`.
struct Fields<'a, W: Write> {
    out: &'a mut W,
    result: fmt::Result,
}

impl<W: Write> Fields<'_, W> {
    fn member(&mut self, field: &Field, value: impl FnOnce(&mut W) -> fmt::Result) {
        if self.result.is_err() {
            return;
        }
        let name = field.name();
        // Field names are identifiers: written in one piece unless one
        // ever needs escaping.
        self.result = if name
            .bytes()
            .all(|b| b.is_ascii_graphic() && b != b'"' && b != b'\\')
        {
            self.out
                .write_str(",\"")
                .and_then(|()| self.out.write_str(name))
                .and_then(|()| self.out.write_str("\":"))
        } else {
            self.out
                .write_char(',')
                .and_then(|()| write_json_str(self.out, name))
                .and_then(|()| self.out.write_char(':'))
        }
        .and_then(|()| value(self.out));
    }
}

impl<W: Write> Visit for Fields<'_, W> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.member(field, |out| write_json_str(out, value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.member(field, |out| write!(out, "{value}"));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.member(field, |out| {
            out.write_str(itoa::Buffer::new().format(value))
        });
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.member(field, |out| {
            out.write_str(itoa::Buffer::new().format(value))
        });
    }

    fn record_i128(&mut self, field: &Field, value: i128) {
        self.member(field, |out| write!(out, "{value}"));
    }

    fn record_u128(&mut self, field: &Field, value: u128) {
        self.member(field, |out| write!(out, "{value}"));
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        // JSON has no NaN or infinity.
        if value.is_finite() {
            self.member(field, |out| {
                out.write_str(ryu::Buffer::new().format_finite(value))
            });
        } else {
            self.member(field, |out| out.write_str("null"));
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.member(field, |out| {
            out.write_char('"')?;
            write!(Escaped(out), "{value:?}")?;
            out.write_char('"')
        });
    }
}

/// `text` as a JSON string.
fn write_json_str(out: &mut impl Write, text: &str) -> fmt::Result {
    out.write_char('"')?;
    Escaped(out).write_str(text)?;
    out.write_char('"')
}

/// Escapes what it is given for the inside of a JSON string.
struct Escaped<'a, W: Write>(&'a mut W);

impl<W: Write> Write for Escaped<'_, W> {
    fn write_str(&mut self, text: &str) -> fmt::Result {
        let mut plain = 0;
        for (i, byte) in text.bytes().enumerate() {
            let escape = match byte {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0..=0x1f => "",
                _ => continue,
            };
            self.0.write_str(&text[plain..i])?;
            if escape.is_empty() {
                write!(self.0, "\\u{byte:04x}")?;
            } else {
                self.0.write_str(escape)?;
            }
            plain = i + 1;
        }
        self.0.write_str(&text[plain..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A subscriber that writes this format's lines where the test reads them.
    fn capture() -> (crate::telemetry::TestSink, impl tracing::Subscriber) {
        use tracing_subscriber::layer::SubscriberExt;
        let lines = crate::telemetry::TestSink::default();
        let sink = lines.clone();
        let layer = tracing_subscriber::fmt::layer()
            .fmt_fields(SpanFields)
            .event_format(JsonLine)
            .with_writer(move || sink.clone());
        (lines, tracing_subscriber::registry().with(layer))
    }

    #[test]
    fn span_fields_are_one_json_object_and_later_ones_join_it() {
        let (lines, subscriber) = capture();
        tracing::subscriber::with_default(subscriber, || {
            let outer = tracing::info_span!("outer", empty = tracing::field::Empty);
            let inner = outer.in_scope(|| {
                tracing::info_span!("inner", a = 1, b = "q\"", late = tracing::field::Empty)
            });
            inner.record("late", 2.5);
            outer.record("empty", true);
            outer.in_scope(|| inner.in_scope(|| tracing::info!(n = 3, "hello")));
        });
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        let line: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["message"], "hello");
        assert_eq!(line["n"], 3);
        assert_eq!(
            line["spans"],
            serde_json::json!([
                {"empty": true, "name": "outer"},
                {"a": 1, "b": "q\"", "late": 2.5, "name": "inner"}
            ])
        );
    }

    #[tokio::test]
    async fn the_request_and_tool_call_scopes_lead_the_span_list() {
        use tracing::Instrument;
        let (lines, subscriber) = capture();
        let _default = tracing::subscriber::set_default(subscriber);
        let mut trace = TraceContext::from_headers(&Default::default());
        trace.request_id = "req-1".into();
        let tool = ToolScope {
            tool: "run_workflow".into(),
            language: "workflow/v1".into(),
            tenant: "acme".into(),
        };
        let exported =
            tracing::info_span!(target: super::super::span_context::EXPORTED, "tools/call");
        let logged = async {
            let engine = tracing::info_span!("engine", operation = "run");
            engine.in_scope(|| tracing::info!("inside"));
        };
        trace
            .clone()
            .scope(tool.run(logged.instrument(exported)))
            .await;
        tracing::info!("outside");
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(
            lines[0]["spans"],
            serde_json::json!([
                {"request_id": "req-1", "trace_id": trace.trace_id, "name": "request"},
                {"tool": "run_workflow", "language": "workflow/v1", "tenant": "acme", "name": "tools/call"},
                {"operation": "run", "name": "engine"}
            ])
        );
        assert_eq!(lines[1]["message"], "outside");
        assert!(lines[1].get("spans").is_none(), "{}", lines[1]);
    }

    #[test]
    fn strings_escape_as_json_does() {
        for text in [
            "plain",
            "q\"b\\s",
            "line\nnext\ttab\r",
            "\u{1}\u{1f}",
            "é ✓ 😀",
            "",
        ] {
            let mut out = String::new();
            write_json_str(&mut out, text).unwrap();
            assert_eq!(serde_json::from_str::<String>(&out).unwrap(), text, "{out}");
            assert_eq!(out, serde_json::to_string(text).unwrap());
        }
    }
}
