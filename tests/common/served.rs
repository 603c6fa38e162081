//! A `pilotage-gateway serve` process (the shipped binary) on a
//! kernel-chosen port, its stderr kept line by line: for the suites that
//! read its log, signal it, or kill it mid-request.

use super::ports::rand_suffix;
use super::redis_server::RedisServer;
use super::{ACME_OPS, Engine, Mcp, repo_path};
use serde_json::Value;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The longest a log line is waited for.
const LINE_WITHIN: Duration = Duration::from_secs(30);

pub struct Served {
    pub child: Child,
    pub base: String,
    lines: Arc<Mutex<Vec<String>>>,
    dir: std::path::PathBuf,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Served {
    /// `serve` with the configuration `text` (written to a scratch folder;
    /// its relative rule and guide paths resolve from `tests/fixtures`),
    /// with `env` added to the process's environment.
    pub fn spawn(text: &str, env: &[(&str, &str)]) -> Served {
        let dir = std::env::temp_dir().join(format!(
            "pilotage-served-{}-{}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let config = dir.join("gateway.toml");
        std::fs::write(&config, text).expect("write config");
        let mut command = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"));
        command
            .args(["serve", "--config"])
            .arg(&config)
            .env("PILOTAGE_LISTEN", "127.0.0.1:0")
            .env("PILOTAGE_SEARCH_PATH", repo_path("tests/fixtures"))
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("start pilotage-gateway");
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let kept = lines.clone();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                kept.lock().expect("lines").push(line);
            }
        });
        let mut served = Served {
            child,
            base: String::new(),
            lines,
            dir,
        };
        let started = served.wait_line(|l| l["message"] == "pilotage-gateway listening");
        served.base = format!("http://{}", started["address"].as_str().expect("address"));
        served
    }

    /// The feature configuration with `extra` (TOML) appended, serving
    /// `engine`, storing in `redis`.
    pub fn start(engine: &Engine, redis: &RedisServer, extra: &str) -> Served {
        let text = std::fs::read_to_string(repo_path("tests/fixtures/features.toml"))
            .expect("conformance config");
        Served::spawn(
            &format!("{text}\n{extra}"),
            &[
                ("PILOTAGE_ENGINE_URL", &engine.url),
                ("PILOTAGE_REDIS_URL", &redis.url()),
            ],
        )
    }

    /// Every line it wrote to stderr so far.
    pub fn lines(&self) -> Vec<String> {
        self.lines.lock().expect("lines").clone()
    }

    /// The lines so far that are JSON.
    pub fn json_lines(&self) -> Vec<Value> {
        self.lines()
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// Waits (bounded) for a JSON log line matching `pred`.
    pub fn wait_line(&self, pred: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + LINE_WITHIN;
        while Instant::now() < deadline {
            if let Some(l) = self.json_lines().into_iter().find(|l| pred(l)) {
                return l;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "no matching log line within {LINE_WITHIN:?}:\n{}",
            self.lines().join("\n")
        );
    }

    /// A client with `key` (anonymous without).
    pub fn client(&self, key: Option<&str>) -> Mcp {
        Mcp::new(&format!("{}/mcp", self.base), key)
    }

    /// A client with acme's ops key.
    pub fn mcp(&self) -> Mcp {
        self.client(Some(ACME_OPS))
    }

    /// The value of a `/metrics` series without labels (0 when absent or
    /// unreachable).
    pub async fn metric(&self, series: &str) -> f64 {
        let Ok(response) = reqwest::get(format!("{}/metrics", self.base)).await else {
            return 0.0;
        };
        let text = response.text().await.unwrap_or_default();
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.0)
    }

    pub async fn runs_in_flight(&self) -> f64 {
        self.metric("pilotage_runs_in_flight").await
    }

    pub fn kill_hard(&mut self) {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill").args(["-KILL", &pid]).status();
        assert!(killed.is_ok_and(|s| s.success()), "SIGKILL {pid}");
        let _ = self.child.wait();
    }
}
