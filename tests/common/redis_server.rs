//! A throwaway `redis-server` for gateway tests that count what the store
//! holds: started on a free loopback port without persistence, killed on
//! drop. `redis-server` must be on PATH (`scripts/install-deps` installs it);
//! a missing one fails the test rather than skipping it.

#![allow(dead_code)]

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Child,
    pub url: String,
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl RedisServer {
    /// Starts a server; another process may take the picked port before
    /// redis binds it, so a few ports are tried.
    pub async fn start() -> RedisServer {
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .expect("a free loopback port")
                .port();
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .args(["--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(std::env::temp_dir())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server is on PATH (scripts/install-deps installs it)");
            let mut server = RedisServer {
                child,
                url: format!("redis://127.0.0.1:{port}/0"),
            };
            if server.answers().await {
                return server;
            }
        }
        panic!("could not start redis-server on a free loopback port after 5 attempts");
    }

    /// Waits (bounded) until the server answers PING; false if it exited.
    async fn answers(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if let Ok(mut c) = self.connection().await
                && redis::cmd("PING")
                    .query_async::<String>(&mut c)
                    .await
                    .is_ok()
            {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    }

    async fn connection(&self) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
        redis::Client::open(self.url.as_str())?
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
}
