//! `--perf-dir`: records a `perf` profile of the gateway during each
//! gateway-side measured window, one file per row
//! (`<scenario>-<connections>.data`), for `scripts/profile` to break down.
//! Recording starts after the warm-up and lasts the measured seconds, so the
//! profile covers the requests the row counts.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::process::Command;

/// A `perf record` attached to one process for one window.
pub struct Recording {
    task: tokio::task::JoinHandle<Option<PathBuf>>,
}

/// Starts recording `pid` into `dir/<name>.data` once `delay` (the warm-up)
/// has passed, for `duration`.
pub fn start(dir: &Path, name: &str, pid: u32, delay: Duration, duration: Duration) -> Recording {
    let _ = std::fs::create_dir_all(dir);
    let file = dir.join(format!("{name}.data"));
    let task = tokio::spawn(async move {
        tokio::time::sleep(delay).await;
        // cpu-clock: a virtual machine often has no hardware counters.
        let status = Command::new("perf")
            .args(["record", "-e", "cpu-clock", "-F", "499", "-q"])
            .args(["--call-graph", "dwarf,16384", "-o"])
            .arg(&file)
            .args(["-p", &pid.to_string(), "--", "sleep"])
            .arg(format!("{:.2}", duration.as_secs_f64()))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .await;
        match status {
            Ok(s) if s.success() => Some(file),
            Ok(s) => {
                eprintln!("perf record ended with {s}");
                None
            }
            Err(e) => {
                eprintln!("perf record could not start ({e}); is `perf` installed?");
                None
            }
        }
    });
    Recording { task }
}

impl Recording {
    /// Waits for the recording to end and names its file.
    pub async fn finish(self) -> Option<PathBuf> {
        self.task.await.ok().flatten()
    }
}
