//! A Redis Cluster the test owns: three masters with one replica each, all
//! on free loopback ports, created with `redis-cli --cluster create` and
//! killed (with their data directory) on drop.
//!
//! The node timeout is short so that a killed master's replica takes over
//! within a couple of seconds.

// Shared by several test binaries; each uses part of it.
#![allow(dead_code)]

use super::ports::{free_port, rand_suffix};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a master may stay silent before its replica is promoted.
const NODE_TIMEOUT_MS: u64 = 1000;
const MASTERS: usize = 3;
const NODES: usize = MASTERS * 2;

pub struct RedisCluster {
    nodes: Vec<(u16, Option<Child>)>,
    dir: std::path::PathBuf,
}

impl RedisCluster {
    /// Starts six servers and joins them; panics (naming the step) when the
    /// cluster is not healthy within bounded waits.
    pub fn start() -> RedisCluster {
        assert!(
            Command::new("redis-cli")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success()),
            "redis-cli is not on PATH: run scripts/install-deps"
        );
        let dir = std::env::temp_dir().join(format!(
            "pilotage-redis-cluster-{}-{:x}",
            std::process::id(),
            rand_suffix()
        ));
        std::fs::create_dir_all(&dir).expect("cluster data dir");
        let mut cluster = RedisCluster {
            nodes: Vec::new(),
            dir,
        };
        while cluster.nodes.len() < NODES {
            let mut started = None;
            // A free port can be taken before redis binds it: try another.
            for _ in 0..20 {
                let port = free_port();
                // The node's cluster bus listens on port + 10000.
                if port > 55535 {
                    continue;
                }
                if let Some(child) = cluster.spawn(port) {
                    started = Some((port, Some(child)));
                    break;
                }
            }
            cluster
                .nodes
                .push(started.expect("could not start a cluster node on a free loopback port"));
        }
        let addrs: Vec<String> = cluster
            .nodes
            .iter()
            .map(|(p, _)| format!("127.0.0.1:{p}"))
            .collect();
        let mut create = Command::new("redis-cli")
            .arg("--cluster")
            .arg("create")
            .args(&addrs)
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run redis-cli --cluster create");
        let status = wait_bounded(&mut create, Duration::from_secs(30));
        assert!(
            status.is_some_and(|s| s.success()),
            "redis-cli --cluster create failed or hung"
        );
        cluster.wait_until_healthy(Duration::from_secs(30));
        cluster
    }

    /// Every node's URL (the client discovers the slot map from any).
    pub fn urls(&self) -> Vec<String> {
        self.nodes
            .iter()
            .map(|(p, _)| format!("redis://127.0.0.1:{p}"))
            .collect()
    }

    /// Ports of the nodes that are masters now, per `CLUSTER NODES` of a live node.
    pub fn master_ports(&self) -> Vec<u16> {
        let live = self.live_port().expect("a live cluster node");
        let nodes = cli(live, &["cluster", "nodes"]);
        nodes
            .lines()
            .filter(|l| l.contains("master") && !l.contains("fail"))
            .filter_map(|l| l.split_whitespace().nth(1))
            .filter_map(|addr| addr.split('@').next()?.rsplit(':').next()?.parse().ok())
            .collect()
    }

    /// Kills the node on `port` (SIGKILL: no goodbye to the cluster).
    pub fn kill(&mut self, port: u16) {
        for (p, child) in &mut self.nodes {
            if *p == port
                && let Some(mut c) = child.take()
            {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }

    /// Waits until every live node reports `cluster_state:ok` and each of
    /// [`MASTERS`] masters is up; panics after `limit`.
    pub fn wait_until_healthy(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let ok = self
                .nodes
                .iter()
                .filter(|(_, c)| c.is_some())
                .all(|(p, _)| cli(*p, &["cluster", "info"]).contains("cluster_state:ok"));
            let replicas_synced = self
                .nodes
                .iter()
                .filter(|(_, c)| c.is_some())
                .map(|(p, _)| cli(*p, &["info", "replication"]))
                .filter(|info| {
                    info.contains("role:slave") && info.contains("master_link_status:up")
                })
                .count();
            if ok
                && self.master_ports().len() == MASTERS
                && replicas_synced >= self.live_replicas_expected()
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "the test cluster did not become healthy within {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Replicas a whole cluster has: one per master while all nodes live.
    fn live_replicas_expected(&self) -> usize {
        let live = self.nodes.iter().filter(|(_, c)| c.is_some()).count();
        live.saturating_sub(MASTERS)
    }

    fn live_port(&self) -> Option<u16> {
        self.nodes
            .iter()
            .find(|(_, c)| c.is_some())
            .map(|(p, _)| *p)
    }

    fn spawn(&self, port: u16) -> Option<Child> {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string()])
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--cluster-enabled", "yes"])
            .args(["--cluster-node-timeout", &NODE_TIMEOUT_MS.to_string()])
            // A replica may take over however stale it is: the test kills a
            // master moments after the cluster formed.
            .args(["--cluster-replica-validity-factor", "0"])
            .arg("--cluster-config-file")
            .arg(self.dir.join(format!("nodes-{port}.conf")))
            .arg("--dir")
            .arg(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn redis-server (is it installed? run scripts/install-deps)");
        wait_answering(child, port)
    }
}

/// `child` once the Redis process on `port` answers PING; `None` (and the
/// child ended) when it exits first or does not answer within 10 s.
pub fn wait_answering(mut child: Child, port: u16) -> Option<Child> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return None;
        }
        if cli(port, &["ping"]).starts_with("PONG") {
            return Some(child);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for (_, child) in &mut self.nodes {
            if let Some(mut c) = child.take() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `redis-cli -p port args...`'s output; empty when it failed.
pub fn cli(port: u16, args: &[&str]) -> String {
    Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// The child's exit status, or `None` (and the child killed) after `limit`.
fn wait_bounded(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// One master as `CLUSTER NODES` reports it.
#[derive(Debug, Clone)]
pub struct Master {
    pub port: u16,
    pub id: String,
    /// Slot ranges it serves, inclusive.
    pub slots: Vec<(u16, u16)>,
}

/// Direct connections to every node, to move slots between masters the way
/// `redis-cli --cluster reshard` does, one step at a time, so a test can act
/// between the steps.
pub struct ClusterAdmin {
    nodes: Vec<(u16, redis::aio::MultiplexedConnection)>,
}

impl RedisCluster {
    /// Connects to every live node.
    pub async fn admin(&self) -> ClusterAdmin {
        let mut nodes = Vec::new();
        for (port, child) in &self.nodes {
            if child.is_none() {
                continue;
            }
            let conn = redis::Client::open(format!("redis://127.0.0.1:{port}"))
                .expect("node url")
                .get_multiplexed_async_connection()
                .await
                .expect("connect to a cluster node");
            nodes.push((*port, conn));
        }
        ClusterAdmin { nodes }
    }

    /// Port of one live node (for `redis-cli --cluster` commands).
    pub fn any_port(&self) -> u16 {
        self.live_port().expect("a live cluster node")
    }
}

impl ClusterAdmin {
    fn node(&self, port: u16) -> redis::aio::MultiplexedConnection {
        self.nodes
            .iter()
            .find(|(p, _)| *p == port)
            .map(|(_, c)| c.clone())
            .expect("a connection to that node")
    }

    async fn on(&self, port: u16, args: &[&str]) -> redis::Value {
        let mut c = self.node(port);
        let mut command = redis::cmd(args[0]);
        for a in &args[1..] {
            command.arg(*a);
        }
        command
            .query_async(&mut c)
            .await
            .unwrap_or_else(|e| panic!("{args:?} on :{port}: {e}"))
    }

    /// The masters and their slots, ordered by their first slot.
    pub async fn masters(&self) -> Vec<Master> {
        let port = self.nodes[0].0;
        let mut c = self.node(port);
        let text: String = redis::cmd("CLUSTER")
            .arg("NODES")
            .query_async(&mut c)
            .await
            .expect("CLUSTER NODES");
        let mut masters: Vec<Master> = text
            .lines()
            .filter_map(|line| {
                let fields: Vec<&str> = line.split_whitespace().collect();
                let flags = fields.get(2)?;
                if !flags.contains("master") || flags.contains("fail") {
                    return None;
                }
                let port = fields[1]
                    .split('@')
                    .next()?
                    .rsplit(':')
                    .next()?
                    .parse()
                    .ok()?;
                let slots = fields[8..]
                    .iter()
                    // `[slot->-id]` / `[slot-<-id]`: a migration in progress.
                    .filter(|s| !s.starts_with('['))
                    .filter_map(|s| match s.split_once('-') {
                        Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
                        None => s.parse().ok().map(|n| (n, n)),
                    })
                    .collect();
                Some(Master {
                    port,
                    id: fields[0].to_owned(),
                    slots,
                })
            })
            .collect();
        masters.sort_by_key(|m| m.slots.first().map(|r| r.0).unwrap_or(u16::MAX));
        masters
    }

    /// The slot of each key, asked of the cluster (`CLUSTER KEYSLOT`).
    pub async fn key_slots(&self, keys: &[String]) -> Vec<u16> {
        let mut c = self.node(self.nodes[0].0);
        let mut pipe = redis::pipe();
        for k in keys {
            pipe.cmd("CLUSTER").arg("KEYSLOT").arg(k);
        }
        pipe.query_async(&mut c).await.expect("CLUSTER KEYSLOT")
    }

    /// Opens the migration of `slot`: `to` imports it, `from` migrates it.
    /// From now on `from` answers `ASK` for a key of the slot it no longer holds.
    pub async fn begin_migration(&self, slot: u16, from: &Master, to: &Master) {
        let s = slot.to_string();
        self.on(to.port, &["CLUSTER", "SETSLOT", &s, "IMPORTING", &from.id])
            .await;
        self.on(from.port, &["CLUSTER", "SETSLOT", &s, "MIGRATING", &to.id])
            .await;
    }

    /// Moves every key of `slot` still on `from` to `to` (`MIGRATE`); returns how many.
    pub async fn move_keys(&self, slot: u16, from: &Master, to: &Master) -> usize {
        let s = slot.to_string();
        let mut moved = 0;
        // Bounded: each round moves up to 100 keys, and a slot of the test holds few.
        for _ in 0..1000 {
            let keys: Vec<String> = {
                let mut c = self.node(from.port);
                redis::cmd("CLUSTER")
                    .arg("GETKEYSINSLOT")
                    .arg(slot)
                    .arg(100)
                    .query_async(&mut c)
                    .await
                    .expect("CLUSTER GETKEYSINSLOT")
            };
            if keys.is_empty() {
                return moved;
            }
            let mut c = self.node(from.port);
            let reply: String = redis::cmd("MIGRATE")
                .arg("127.0.0.1")
                .arg(to.port)
                .arg("")
                .arg(0)
                .arg(5000)
                .arg("KEYS")
                .arg(&keys)
                .query_async(&mut c)
                .await
                .unwrap_or_else(|e| panic!("MIGRATE of slot {s}: {e}"));
            assert_eq!(reply, "OK", "MIGRATE of slot {s}");
            moved += keys.len();
        }
        panic!("slot {slot} never emptied");
    }

    /// Closes the migration of `slot`: every master now names `to` its owner,
    /// so `from` answers `MOVED` for the whole slot.
    pub async fn finish_migration(&self, slot: u16, from: &Master, to: &Master) {
        let s = slot.to_string();
        self.on(to.port, &["CLUSTER", "SETSLOT", &s, "NODE", &to.id])
            .await;
        self.on(from.port, &["CLUSTER", "SETSLOT", &s, "NODE", &to.id])
            .await;
        for m in self.masters().await {
            if m.port != from.port && m.port != to.port {
                self.on(m.port, &["CLUSTER", "SETSLOT", &s, "NODE", &to.id])
                    .await;
            }
        }
    }

    /// How many keys of `slot` the node on `port` holds.
    pub async fn keys_in_slot(&self, port: u16, slot: u16) -> u64 {
        let mut c = self.node(port);
        redis::cmd("CLUSTER")
            .arg("COUNTKEYSINSLOT")
            .arg(slot)
            .query_async(&mut c)
            .await
            .expect("CLUSTER COUNTKEYSINSLOT")
    }
}
