//! `demo`: starts the bundled legacy engine on the address the configuration
//! names, waits until it answers, then serves the gateway in front of it. One
//! command to try the whole loop with the embedded store.

use crate::config::Config;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use tokio::io::{AsyncBufReadExt, BufReader};

pub async fn run(config_path: &Path, engine_bin: Option<PathBuf>) -> ExitCode {
    let config = match Config::load(config_path) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let Some(bin) = engine_bin.or_else(sibling_engine) else {
        eprintln!(
            "legacy-engine binary not found next to this executable; build it with `cargo build --release --workspace` or pass --engine-bin"
        );
        return ExitCode::FAILURE;
    };
    let listen = config
        .engine
        .url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let mut child = match tokio::process::Command::new(&bin)
        .arg("--listen")
        .arg(&listen)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cannot start {}: {e}", bin.display());
            return ExitCode::FAILURE;
        }
    };
    if let Some(out) = child.stdout.take() {
        let mut lines = BufReader::new(out).lines();
        let ready = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("{line}");
                if line.contains("listening") {
                    return true;
                }
            }
            false
        })
        .await;
        if !matches!(ready, Ok(true)) {
            eprintln!("legacy-engine did not start on {listen}");
            return ExitCode::FAILURE;
        }
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    }
    eprintln!(
        "demo: legacy engine at {}, gateway MCP endpoint at http://{}/mcp",
        config.engine.url, config.server.listen
    );
    let code = super::run_server(config).await;
    let _ = child.kill().await;
    code
}

fn sibling_engine() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let candidate = exe.parent()?.join("legacy-engine");
    candidate.exists().then_some(candidate)
}
