//! The `legacy-engine` binary: parse the command line, load the seed, bind, print
//! `legacy-engine listening on http://ADDR` once bound, and serve until stopped.

mod capabilities;
mod cli;
mod http;
mod language;
mod runtime;
mod service;
mod validate;
mod world;

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use world::Engine;
use world::seed::Seed;

#[tokio::main]
async fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match serve(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("legacy-engine: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(cli: cli::Cli) -> Result<(), String> {
    let seed = Seed::load(cli.seed.as_deref())?;
    let engine = Arc::new(Engine::new(seed));
    let listener = tokio::net::TcpListener::bind(&cli.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cli.listen))?;
    let address = listener
        .local_addr()
        .map_err(|e| format!("cannot read the bound address: {e}"))?;
    // Tests and scripts wait for exactly this line.
    let mut stdout = std::io::stdout();
    let _ = writeln!(stdout, "legacy-engine listening on http://{address}");
    let _ = stdout.flush();
    axum::serve(listener, http::router(engine, cli.dialect))
        .with_graceful_shutdown(shutdown_signal())
        .await
        .map_err(|e| format!("server error: {e}"))
}

/// Resolves on Ctrl-C or SIGTERM so in-flight requests can finish.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}
