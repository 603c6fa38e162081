//! `demo`: starts the bundled legacy engine on the address the configuration
//! names, waits until it answers, then serves the gateway in front of it. One
//! command to try the whole loop with the embedded store, from any directory
//! (the configuration, guides and rules are built in: `demo_files`).

use super::demo_files::{self, DemoConfig};
use crate::config::Config;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The demo's files and configuration, read before the runtime starts
/// (its thread count comes from the configuration).
pub struct Demo {
    files: Files,
    pub config: Config,
}

/// The configuration the demo runs; the built-in files it wrote are removed
/// when it is dropped, whether the demo ran or never started.
struct Files {
    chosen: DemoConfig,
    scratch: PathBuf,
}

impl Drop for Files {
    fn drop(&mut self) {
        if matches!(self.chosen, DemoConfig::Bundled(_)) {
            let _ = std::fs::remove_dir_all(&self.scratch);
        }
    }
}

/// Writes the built-in files (unless `explicit` names a configuration) and
/// reads the configuration.
pub fn prepare(explicit: Option<PathBuf>) -> Result<Demo, ExitCode> {
    let scratch = std::env::temp_dir().join(format!("pilotage-demo-{}", std::process::id()));
    let chosen = demo_files::choose(explicit, &scratch).map_err(|e| {
        eprintln!(
            "cannot write the built-in demo files to {}: {e}",
            scratch.display()
        );
        ExitCode::FAILURE
    })?;
    let files = Files { chosen, scratch };
    match Config::load(files.chosen.path()) {
        Ok(config) => Ok(Demo { files, config }),
        Err(e) => {
            eprintln!("{e}");
            Err(ExitCode::FAILURE)
        }
    }
}

impl Demo {
    /// Starts the engine and serves the gateway until stopped; then removes
    /// the built-in files it wrote.
    pub async fn run(self, engine_bin: Option<PathBuf>) -> ExitCode {
        run_with(&self.files.chosen, self.config, engine_bin).await
    }
}

async fn run_with(
    chosen: &DemoConfig,
    mut config: Config,
    engine_bin: Option<PathBuf>,
) -> ExitCode {
    match chosen {
        DemoConfig::Disk(p) => eprintln!("demo: configuration {}", p.display()),
        DemoConfig::Bundled(_) => eprintln!(
            "demo: the built-in configuration, guides and rules (deploy/gateway.local.toml of this release)"
        ),
    }
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
                if let Some(at) = line.find("listening on http://") {
                    // The address it bound (port 0 picks a free one).
                    return Some(line[at + "listening on ".len()..].trim().to_string());
                }
            }
            None
        })
        .await;
        let Ok(Some(url)) = ready else {
            eprintln!("legacy-engine did not start on {listen}");
            return ExitCode::FAILURE;
        };
        config.engine.url = url;
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
