//! A Sentinel group the test owns: a master, one replica and three
//! sentinels on free loopback ports (short `down-after-milliseconds`), killed
//! with their data directory on drop.

#![allow(dead_code)]

use super::ports::{free_port, rand_suffix};
use super::redis_cluster::{cli, wait_answering};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const MASTER_NAME: &str = "pilotage";

pub struct SentinelGroup {
    pub master_port: u16,
    pub replica_port: u16,
    pub sentinel_ports: Vec<u16>,
    children: Vec<(u16, Option<Child>)>,
    dir: std::path::PathBuf,
}

impl SentinelGroup {
    /// Starts everything and waits (bounded) until the replica is in sync and
    /// the three sentinels agree they can fail over.
    pub fn start() -> SentinelGroup {
        let dir = std::env::temp_dir().join(format!(
            "pilotage-redis-sentinel-{}-{:x}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).expect("sentinel data dir");
        let mut group = SentinelGroup {
            master_port: 0,
            replica_port: 0,
            sentinel_ports: Vec::new(),
            children: Vec::new(),
            dir,
        };
        group.master_port = group.start_node(|_| vec![]);
        let master = group.master_port.to_string();
        group.replica_port =
            group.start_node(|_| vec!["--replicaof".into(), "127.0.0.1".into(), master.clone()]);
        for _ in 0..3 {
            let port = group.start_sentinel();
            group.sentinel_ports.push(port);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let synced =
                cli(group.replica_port, &["info", "replication"]).contains("master_link_status:up");
            let quorum = group
                .sentinel_ports
                .iter()
                .all(|p| cli(*p, &["sentinel", "ckquorum", MASTER_NAME]).contains("OK 3 usable"));
            let replica_known = group.sentinel_ports.iter().all(|p| {
                cli(*p, &["sentinel", "replicas", MASTER_NAME])
                    .contains(&group.replica_port.to_string())
            });
            if synced && quorum && replica_known {
                return group;
            }
            assert!(
                Instant::now() < deadline,
                "the Sentinel group did not become ready (synced {synced}, quorum {quorum}, replica known {replica_known})"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn sentinel_urls(&self) -> Vec<String> {
        self.sentinel_ports
            .iter()
            .map(|p| format!("redis://127.0.0.1:{p}"))
            .collect()
    }

    /// The port the sentinels name as master now (asked of the first one).
    pub fn current_master_port(&self) -> Option<u16> {
        let out = cli(
            self.sentinel_ports[0],
            &["sentinel", "get-master-addr-by-name", MASTER_NAME],
        );
        out.lines().nth(1)?.trim().parse().ok()
    }

    /// Waits until every write so far reached the replica (`WAIT`).
    pub fn wait_replicated(&self) {
        let acked = cli(self.master_port, &["wait", "1", "2000"]);
        assert_eq!(
            acked.trim(),
            "1",
            "the replica did not acknowledge the writes"
        );
    }

    /// SIGKILL the master.
    pub fn kill_master(&mut self) {
        let port = self.master_port;
        for (p, child) in &mut self.children {
            if *p == port
                && let Some(mut c) = child.take()
            {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }

    fn start_node(&mut self, extra: impl Fn(u16) -> Vec<String>) -> u16 {
        for _ in 0..5 {
            let port = free_port();
            let child = Command::new("redis-server")
                .args(["--port", &port.to_string()])
                .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
                .arg("--dir")
                .arg(&self.dir)
                .arg("--dbfilename")
                .arg(format!("dump-{port}.rdb"))
                .args(extra(port))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn redis-server (run scripts/install-deps)");
            if let Some(child) = wait_answering(child, port) {
                self.children.push((port, Some(child)));
                return port;
            }
        }
        panic!("could not start redis-server on a free loopback port");
    }

    fn start_sentinel(&mut self) -> u16 {
        for _ in 0..5 {
            let port = free_port();
            let conf = self.dir.join(format!("sentinel-{port}.conf"));
            std::fs::write(
                &conf,
                format!(
                    "port {port}\nbind 127.0.0.1\ndir {dir}\n\
                     sentinel monitor {MASTER_NAME} 127.0.0.1 {master} 2\n\
                     sentinel down-after-milliseconds {MASTER_NAME} 1000\n\
                     sentinel failover-timeout {MASTER_NAME} 3000\n",
                    dir = self.dir.display(),
                    master = self.master_port
                ),
            )
            .expect("write sentinel config");
            let child = Command::new("redis-server")
                .arg(&conf)
                .arg("--sentinel")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("spawn redis-server --sentinel");
            if let Some(child) = wait_answering(child, port) {
                self.children.push((port, Some(child)));
                return port;
            }
        }
        panic!("could not start a sentinel on a free loopback port");
    }
}

impl Drop for SentinelGroup {
    fn drop(&mut self) {
        for (_, child) in &mut self.children {
            if let Some(mut c) = child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
