//! Command-line entry points other than `serve`, and the process-wide pieces
//! `main` sets up (logging, the server's life).

pub mod check_config;
pub mod classify;
pub mod demo;
pub mod demo_files;
pub mod probe;

/// JSON logs on stderr, each line naming the instance; `RUST_LOG` filters
/// (default `info`; rmcp only at `error` unless `RUST_LOG` names it: it logs
/// each carrier error as a Rust Debug dump, and the request log line already
/// says what was refused).
/// Keep the guard until the process ends: dropping it ends the logging.
pub fn init_logging() -> crate::telemetry::log_writer::LogGuard {
    init_tracing(None)
}

/// `RUST_LOG` (default `info`), with the MCP library at `error` unless the
/// filter names it: `RUST_LOG=info` alone must not bring its Debug dumps back.
fn log_directives(rust_log: Option<&str>) -> String {
    let base = rust_log.filter(|s| !s.trim().is_empty()).unwrap_or("info");
    if base.contains("rmcp") {
        base.to_string()
    } else {
        format!("{base},rmcp=error")
    }
}

/// The logs, and the spans to an OTLP collector when `tracer` is given.
/// Lines are written to stderr by a thread of their own, in batches
/// (`telemetry/log_writer.rs`), so a request never waits on the pipe or file
/// behind stderr; nothing is dropped. The guard writes out what is queued
/// when dropped.
fn init_tracing(
    tracer: Option<opentelemetry_sdk::trace::SdkTracer>,
) -> crate::telemetry::log_writer::LogGuard {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let filter = tracing_subscriber::EnvFilter::new(log_directives(
        std::env::var("RUST_LOG").ok().as_deref(),
    ));
    let (stderr, guard) = crate::telemetry::log_writer::spawn(std::io::stderr());
    // The span list carries the request span (request_id, trace_id) into
    // every line logged while serving a request, however deep.
    let logs = tracing_subscriber::fmt::layer()
        .fmt_fields(crate::telemetry::log_format::SpanFields)
        .event_format(crate::telemetry::log_format::JsonLine)
        .with_writer(stderr);
    let spans = tracer.map(|t| tracing_opentelemetry::layer().with_tracer(t));
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(logs)
        .with(spans)
        .try_init();
    guard
}

/// Builds the application and serves it until shutdown; start-up failures
/// are printed for the operator.
pub async fn run_server(config: crate::config::Config) -> std::process::ExitCode {
    use std::process::ExitCode;
    crate::telemetry::log_format::set_instance(&config.server.instance);
    let _logs = match crate::telemetry::otlp::tracer(&config) {
        Ok(tracer) => init_tracing(tracer),
        Err(e) => {
            eprintln!("cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Off loopback the configuration check already refused these.
    if let Some(demo) = crate::config::browser::demo_credentials(&config) {
        tracing::warn!(
            demo_file = demo,
            listen = %config.server.listen,
            "serving with the public session secret or API key of the demo configuration: anyone who can reach this address can forge sessions or call as demo-key; set a secret and keys of your own (docs/operations.md) before it listens off loopback"
        );
    }
    for warning in config.warnings() {
        tracing::warn!("{warning}");
    }
    // Start whatever the engines say; an operator reads why one is silent.
    tokio::spawn(warn_of_silent_engines(config.clone()));
    let served = match crate::app::build(config).await {
        Ok(app) => crate::app::serve(app).await,
        Err(e) => {
            eprintln!("cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    crate::telemetry::otlp::flush();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("server error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logs a warning for every configured engine that does not answer, naming
/// its URL and the cause. Start-up goes on: the engine may come up later,
/// and `/readyz` tells the balancer meanwhile.
async fn warn_of_silent_engines(config: crate::config::Config) {
    let engines = std::iter::once(("engine".to_string(), &config.engine)).chain(
        config
            .engines
            .iter()
            .map(|(name, e)| (format!("engines.{name}"), e)),
    );
    for (key, engine) in engines {
        if let Some(unreachable) = probe::reach::check(&config, engine).await {
            tracing::warn!(
                engine = key,
                url = unreachable.url,
                cause = unreachable.cause,
                "the engine does not answer: calls that need it fail until it does (check-config --probe tells more)"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_mcp_library_stays_at_error_unless_named() {
        assert_eq!(super::log_directives(None), "info,rmcp=error");
        assert_eq!(super::log_directives(Some("debug")), "debug,rmcp=error");
        assert_eq!(
            super::log_directives(Some("info,rmcp=debug")),
            "info,rmcp=debug"
        );
    }
}
