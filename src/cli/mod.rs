//! Command-line entry points other than `serve`, and the process-wide pieces
//! `main` sets up (logging, live reload).

pub mod check_config;
pub mod classify;
pub mod demo;

use crate::app::App;

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

/// Reloads classifier rules and guides when their files change or on SIGHUP.
pub fn spawn_reloader(app: &App) {
    let gw = app.gateway.clone();
    let mut paths = Vec::new();
    for lang in &gw.config.languages {
        paths.push(gw.config.resolve(&lang.classifier));
        paths.push(gw.config.resolve(&lang.guides_dir));
    }
    match crate::reload::spawn_reload_watcher(paths, move || gw.reload()) {
        // The watcher lives as long as the process.
        Ok(watcher) => std::mem::forget(watcher),
        Err(e) => {
            tracing::warn!(error = %e, "live reload is off: cannot watch the rule and guide files")
        }
    }
}
