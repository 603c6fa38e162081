//! A `pilotage-gateway serve` process (the shipped binary, the feature
//! configuration) on a kernel-chosen port, for the suites that kill a
//! gateway mid-request.

use super::ports::rand_suffix;
use super::redis_server::RedisServer;
use super::{ACME_OPS, Engine, Mcp, repo_path};
use serde_json::Value;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A `pilotage-gateway serve` process on a kernel-chosen port.
pub struct Served {
    child: Child,
    pub base: String,
    config: std::path::PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.config);
    }
}

impl Served {
    /// The feature configuration with `extra` (TOML) appended, serving
    /// `engine`, storing in `redis`.
    pub fn start(engine: &Engine, redis: &RedisServer, extra: &str) -> Served {
        let mut text = std::fs::read_to_string(repo_path("tests/fixtures/features.toml"))
            .expect("conformance config");
        text.push('\n');
        text.push_str(extra);
        // Beside the original, so its relative paths still resolve.
        let config = repo_path(&format!(
            "tests/fixtures/.served-{}-{}.toml",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::write(&config, text).expect("write config");
        let mut child = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
            .args(["serve", "--config"])
            .arg(&config)
            .env("PILOTAGE_ENGINE_URL", &engine.url)
            .env("PILOTAGE_LISTEN", "127.0.0.1:0")
            .env("PILOTAGE_REDIS_URL", redis.url())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start pilotage-gateway");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let Ok(parsed) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if !sent && parsed["message"] == "pilotage-gateway listening" {
                    let _ = tx.send(parsed["address"].as_str().unwrap_or("").to_owned());
                    sent = true;
                }
            }
        });
        let address = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("the gateway printed its address");
        Served {
            child,
            base: format!("http://{address}"),
            config,
        }
    }

    pub fn mcp(&self) -> Mcp {
        Mcp::new(&format!("{}/mcp", self.base), Some(ACME_OPS))
    }

    pub async fn runs_in_flight(&self) -> f64 {
        let Ok(response) = reqwest::get(format!("{}/metrics", self.base)).await else {
            return 0.0;
        };
        let text = response.text().await.unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix("pilotage_runs_in_flight")?.strip_prefix(' '))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    }

    pub fn kill_hard(&mut self) {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill").args(["-KILL", &pid]).status();
        assert!(killed.is_ok_and(|s| s.success()), "SIGKILL {pid}");
        let _ = self.child.wait();
    }
}
