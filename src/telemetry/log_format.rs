//! The JSON log line: one object per line, written straight into the
//! logging layer's buffer.
//!
//! `{"instance":…,"timestamp":…,"level":…,<the event's fields>,"target":…,
//! "spans":[{<fields>,"name":…}, …]}`: the instance's name first, so lines
//! from several gateways can be told apart after they are collected
//! together; the event's fields at the top level (`message` among them);
//! the spans it happened in from the outermost (the request's span carries
//! `request_id` and `trace_id` into every line logged while serving it).
//!
//! The same shape as tracing-subscriber's JSON format with a flattened
//! event and a span list, written without the intermediate maps and the
//! re-parsing of each span's fields that format does on every line: the
//! request log line is on every request's path.

use std::fmt::{self, Write};
use std::sync::OnceLock;
use tracing::field::{Field, Visit};
use tracing_subscriber::fmt::format::{FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime};
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
        SystemTime.format_time(&mut writer)?;
        write!(writer, "\",\"level\":\"{}\"", meta.level())?;
        let mut fields = Fields {
            out: &mut writer,
            result: Ok(()),
        };
        event.record(&mut fields);
        fields.result?;
        writer.write_str(",\"target\":")?;
        write_json_str(&mut writer, meta.target())?;
        if let Some(scope) = ctx.event_scope() {
            writer.write_str(",\"spans\":[")?;
            for (i, span) in scope.from_root().enumerate() {
                if i > 0 {
                    writer.write_char(',')?;
                }
                let extensions = span.extensions();
                // `,"a":1,"b":2` → `{"a":1,"b":2,"name":…}`
                let members = extensions
                    .get::<FormattedFields<N>>()
                    .and_then(|f| f.fields.strip_prefix(','))
                    .unwrap_or_default();
                writer.write_char('{')?;
                if !members.is_empty() {
                    writer.write_str(members)?;
                    writer.write_char(',')?;
                }
                writer.write_str("\"name\":")?;
                write_json_str(&mut writer, span.name())?;
                writer.write_char('}')?;
            }
            writer.write_char(']')?;
        }
        writer.write_str("}\n")
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
        self.result = self
            .out
            .write_char(',')
            .and_then(|()| write_json_str(self.out, field.name()))
            .and_then(|()| self.out.write_char(':'))
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
        self.member(field, |out| write!(out, "{value}"));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.member(field, |out| write!(out, "{value}"));
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
            self.member(field, |out| write!(out, "{value:?}"));
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

    #[test]
    fn span_fields_are_one_json_object_and_later_ones_join_it() {
        use tracing::subscriber::with_default;
        use tracing_subscriber::layer::SubscriberExt;
        let lines = crate::telemetry::TestSink::default();
        let sink = lines.clone();
        let layer = tracing_subscriber::fmt::layer()
            .fmt_fields(SpanFields)
            .event_format(JsonLine)
            .with_writer(move || sink.clone());
        with_default(tracing_subscriber::registry().with(layer), || {
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
