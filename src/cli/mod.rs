//! Command-line entry points other than `serve`, and the process-wide pieces
//! `main` sets up (logging).

pub mod check_config;
pub mod classify;
pub mod demo;

/// JSON logs on stderr; `RUST_LOG` filters (default `info`).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_current_span(true)
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
