//! Command-line entry points other than `serve`, and the process-wide pieces
//! `main` sets up (logging, the server's life).

pub mod check_config;
pub mod classify;
pub mod demo;
pub mod demo_files;
pub mod probe;

/// JSON logs on stderr; `RUST_LOG` filters (default `info`, rmcp quieter:
/// it logs every stateless request's lifecycle).
pub fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_current_span(true)
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Builds the application and serves it until shutdown; start-up failures
/// are printed for the operator.
pub async fn run_server(config: crate::config::Config) -> std::process::ExitCode {
    use std::process::ExitCode;
    match crate::app::build(config).await {
        Ok(app) => match crate::app::serve(app).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("server error: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("cannot start: {e}");
            ExitCode::FAILURE
        }
    }
}
