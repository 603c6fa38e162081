//! The JSON log line format: tracing-subscriber's JSON lines with this
//! instance's name as the first member of every line, so lines from several
//! gateways can be told apart after they are collected together.

use std::sync::OnceLock;
use tracing_subscriber::fmt::format::{FormatEvent, FormatFields, Writer};
use tracing_subscriber::fmt::{FmtContext, FormattedFields};
use tracing_subscriber::registry::LookupSpan;

/// `"instance":"<name>",` once the configuration named it (lines logged
/// before that, while the configuration loads, go without).
static INSTANCE: OnceLock<String> = OnceLock::new();

/// Names this instance in every later log line.
pub fn set_instance(name: &str) {
    let member = serde_json::to_string(name).unwrap_or_else(|_| "\"\"".into());
    let _ = INSTANCE.set(format!("\"instance\":{member},"));
}

/// Wraps a JSON event formatter and inserts the instance member.
pub struct WithInstance<F>(pub F);

impl<S, N, F> FormatEvent<S, N> for WithInstance<F>
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    F: FormatEvent<S, N>,
    FormattedFields<N>: 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let Some(member) = INSTANCE.get() else {
            return self.0.format_event(ctx, writer, event);
        };
        let mut line = String::new();
        self.0.format_event(ctx, Writer::new(&mut line), event)?;
        match line.strip_prefix('{') {
            Some(rest) => {
                writer.write_char('{')?;
                writer.write_str(member)?;
                writer.write_str(rest)
            }
            None => writer.write_str(&line),
        }
    }
}
