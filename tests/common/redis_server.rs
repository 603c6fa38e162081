//! A `redis-server` the test owns: started on a free loopback port, frozen
//! (SIGSTOP) and thawed, killed and restarted on the same port, killed on drop.
//! It counts as started once the server on the port reports the process id
//! of the child (`INFO server`), so another test's server that took the port
//! first is never mistaken for it.

use super::ports::{free_port, rand_suffix};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Child,
    pub port: u16,
    args: Vec<String>,
    /// `requirepass`, when the server has one.
    password: Option<String>,
    /// The data directory (append-only file), removed on drop.
    dir: std::path::PathBuf,
}

impl RedisServer {
    /// A server without persistence.
    pub fn start() -> RedisServer {
        Self::start_with(false, None)
    }

    /// A server that fsyncs every write to its append-only file, so a
    /// restart keeps everything (as a durable deployment would).
    pub fn durable() -> RedisServer {
        Self::start_with(true, None)
    }

    /// A server without persistence that requires `password` (`requirepass`).
    pub fn with_password(password: &str) -> RedisServer {
        Self::start_with(false, Some(password))
    }

    fn start_with(durable: bool, password: Option<&str>) -> RedisServer {
        assert!(
            Command::new("redis-server")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success()),
            "redis-server is not on PATH: run scripts/install-deps"
        );
        let dir = std::env::temp_dir().join(format!(
            "pilotage-redis-{}-{:x}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).expect("redis data dir");
        let mut args: Vec<String> = ["--bind", "127.0.0.1", "--save", ""]
            .iter()
            .map(|s| s.to_string())
            .collect();
        if durable {
            args.extend(["--appendonly", "yes", "--appendfsync", "always"].map(String::from));
        } else {
            args.extend(["--appendonly", "no"].map(String::from));
        }
        args.extend(["--dir".to_string(), dir.display().to_string()]);
        if let Some(password) = password {
            args.extend(["--requirepass".to_string(), password.to_string()]);
        }
        let password = password.map(str::to_owned);
        // The port is free when picked; should another process take it
        // first, redis exits and another port is tried.
        for _ in 0..5 {
            let port = free_port();
            if let Some(child) = spawn(port, &args, password.as_deref()) {
                return RedisServer {
                    child,
                    port,
                    args,
                    password,
                    dir,
                };
            }
        }
        panic!("could not start redis-server on a free loopback port");
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    async fn connection(&self) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
        redis::Client::open(self.url())?
            .get_multiplexed_async_connection()
            .await
    }

    /// How many keys the server holds.
    pub async fn key_count(&self) -> u64 {
        let mut c = self.connection().await.expect("connect to the test redis");
        redis::cmd("DBSIZE")
            .query_async(&mut c)
            .await
            .expect("DBSIZE")
    }

    /// Every key, sorted (for a failure message that shows what was written).
    pub async fn keys(&self) -> Vec<String> {
        let mut c = self.connection().await.expect("connect to the test redis");
        let mut keys: Vec<String> = redis::cmd("KEYS")
            .arg("*")
            .query_async(&mut c)
            .await
            .expect("KEYS");
        keys.sort();
        keys
    }

    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on the same port (after `kill`, or killing it
    /// now), and waits until it answers.
    pub fn restart(&mut self) {
        self.kill();
        for _ in 0..50 {
            if let Some(child) = spawn(self.port, &self.args, self.password.as_deref()) {
                self.child = child;
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("redis-server did not come back on port {}", self.port);
    }

    /// SIGSTOP: connections stay open, nothing answers.
    pub fn freeze(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT: the server answers its queue.
    pub fn thaw(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill {signal} failed");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Starts `redis-server` on `port` and waits until it answers as itself;
/// `None` when it exits first (port taken) or never answers.
fn spawn(port: u16, args: &[String], password: Option<&str>) -> Option<Child> {
    let mut child = Command::new("redis-server")
        .args(["--port", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn redis-server");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return None;
        }
        if is_our_server(port, child.id(), password) {
            return Some(child);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Whether the Redis answering on `port` is the process `pid`, done loading
/// its data (until then it refuses commands with `LOADING`).
fn is_our_server(port: u16, pid: u32, password: Option<&str>) -> bool {
    let mut cli = Command::new("redis-cli");
    cli.args(["-h", "127.0.0.1", "-p", &port.to_string()]);
    if let Some(password) = password {
        cli.args(["--no-auth-warning", "-a", password]);
    }
    // The default sections: `server` (process_id) and `persistence` (loading).
    cli.arg("info")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| {
            let info = String::from_utf8_lossy(&o.stdout);
            let has = |field: &str| info.lines().any(|l| l.trim() == field);
            has(&format!("process_id:{pid}")) && has("loading:0")
        })
}
