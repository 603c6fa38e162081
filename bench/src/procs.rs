//! The processes a benchmark run starts (legacy engine, gateway, Redis, the
//! bare floor server, the nginx relay) and what it reads about them from `/proc`: resident
//! memory (VmRSS now, VmHWM the peak since start) and CPU time.
//!
//! Every process gets a port chosen here (bind to port 0, read it, release
//! it) and its output goes straight to a log file, so the benchmark never
//! spends CPU copying a busy gateway's log lines. A process is killed when
//! its handle is dropped, so an aborted run leaves nothing behind.

use std::fs::File;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process of the benchmark.
pub struct Proc {
    pub name: &'static str,
    pub addr: SocketAddr,
    pub log: PathBuf,
    child: Child,
}

impl Proc {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Resident memory now and at its peak.
    pub fn memory(&self) -> Option<Memory> {
        memory(self.pid())
    }

    /// A clock of this process' CPU time.
    pub fn cpu_clock(&self) -> CpuClock {
        CpuClock {
            name: self.name.to_string(),
            stat: PathBuf::from(format!("/proc/{}/stat", self.pid())),
        }
    }

    fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(format!(
                "{} exited ({status}); its log: {}",
                self.name,
                self.log.display()
            )),
            _ => None,
        }
    }
}

impl Proc {
    /// Stops the process with SIGTERM (a clean shutdown: Redis syncs its
    /// append-only file) and waits for it, at most `grace`, then kills it.
    pub fn stop(mut self, grace: Duration) {
        // SAFETY: kill(2) on our own child's pid; no memory is touched.
        unsafe {
            libc::kill(self.pid() as libc::pid_t, libc::SIGTERM);
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // Drop kills what is left.
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Resident set size of a process, KiB.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Memory {
    pub rss_kib: u64,
    pub peak_kib: u64,
}

impl Memory {
    pub fn rss_mib(&self) -> f64 {
        self.rss_kib as f64 / 1024.0
    }
    pub fn peak_mib(&self) -> f64 {
        self.peak_kib as f64 / 1024.0
    }
}

/// `VmRSS` and `VmHWM` of `/proc/<pid>/status`.
pub fn memory(pid: u32) -> Option<Memory> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(name))?;
        line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()
    };
    Some(Memory {
        rss_kib: field("VmRSS:")?,
        peak_kib: field("VmHWM:")?,
    })
}

/// Reads the user + system CPU time of one process (or of the benchmark
/// itself, `/proc/self/stat`).
#[derive(Debug, Clone)]
pub struct CpuClock {
    pub name: String,
    stat: PathBuf,
}

impl CpuClock {
    /// The benchmark's own process (the load generator).
    pub fn own() -> CpuClock {
        CpuClock {
            name: "client".into(),
            stat: PathBuf::from("/proc/self/stat"),
        }
    }

    /// CPU seconds used so far.
    pub fn seconds(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(&self.stat).ok()?;
        // Fields after the parenthesised command name, which may hold spaces;
        // utime and stime are fields 14 and 15 of the whole line.
        let rest = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let utime: u64 = fields.get(11)?.parse().ok()?;
        let stime: u64 = fields.get(12)?.parse().ok()?;
        Some((utime + stime) as f64 / clock_ticks())
    }
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as f64 } else { 100.0 }
}

/// A loopback port free right now.
pub fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

/// Starts `command` (output to `<logs>/<name>.log`) on `addr` and waits until
/// `ready` says it serves.
fn start(
    name: &'static str,
    mut command: Command,
    addr: SocketAddr,
    logs: &Path,
    ready: impl Fn(SocketAddr) -> bool,
) -> Result<Proc, String> {
    let log = logs.join(format!("{name}.log"));
    let out = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("cannot start {name} ({command:?}): {e}"))?;
    let mut proc = Proc {
        name,
        addr,
        log,
        child,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Some(why) = proc.exited() {
            return Err(why);
        }
        if ready(addr) {
            return Ok(proc);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(format!(
        "{name} did not become ready within 30 s; its log: {}",
        proc.log.display()
    ))
}

/// `GET path` answers 200 (a blocking one-shot probe; only used while starting).
fn http_ok(addr: SocketAddr, path: &str) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut head = [0u8; 12];
    s.read_exact(&mut head).is_ok() && head.starts_with(b"HTTP/1.1 200")
}

/// The reference legacy engine (dialect a, shipped seed).
pub fn engine(bin: &Path, logs: &Path) -> Result<Proc, String> {
    engine_on(bin, logs, free_port()?)
}

/// The reference legacy engine on `port` (a restart after an outage comes
/// back where the gateways expect it).
pub fn engine_on(bin: &Path, logs: &Path, port: u16) -> Result<Proc, String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut c = Command::new(bin);
    c.args(["--listen", &addr.to_string()])
        .env_remove("LEGACY_ENGINE_SEED")
        .env_remove("LEGACY_ENGINE_DIALECT");
    start("engine", c, addr, logs, |a| http_ok(a, "/healthz"))
}

/// `pilotage-gateway serve --config <config>` in front of `engine`, with the
/// in-memory store or `redis`.
pub fn gateway(
    bin: &Path,
    config: &Path,
    engine: &Proc,
    redis: Option<&Proc>,
    extra_env: &[String],
    logs: &Path,
) -> Result<Proc, String> {
    let name = if redis.is_some() {
        "gateway-redis"
    } else {
        "gateway-memory"
    };
    gateway_named(name, bin, config, engine, redis, extra_env, logs)
}

/// [`gateway`] with its own process name (its log file),
/// for runs with several instances.
pub fn gateway_named(
    name: &'static str,
    bin: &Path,
    config: &Path,
    engine: &Proc,
    redis: Option<&Proc>,
    extra_env: &[String],
    logs: &Path,
) -> Result<Proc, String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()?));
    let mut c = Command::new(bin);
    c.arg("serve")
        .arg("--config")
        .arg(config)
        .env("PILOTAGE_LISTEN", addr.to_string())
        .env("PILOTAGE_ENGINE_URL", engine.url())
        // The gateway's default log level: what a deployment pays for logging.
        .env("RUST_LOG", "info")
        .env_remove("PILOTAGE_CONFIG")
        .env_remove("PILOTAGE_INSTANCE");
    match redis {
        Some(r) => c.env("PILOTAGE_REDIS_URL", format!("redis://{}/0", r.addr)),
        None => c.env_remove("PILOTAGE_REDIS_URL"),
    };
    for pair in extra_env {
        let (key, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("--gateway-env {pair}: expected KEY=VALUE"))?;
        c.env(key, value);
    }
    start(name, c, addr, logs, |a| http_ok(a, "/readyz"))
}

/// `redis-server` on a free port, persistence as a deployment runs it (an
/// append-only file synced every second, no RDB snapshots), data in `logs`.
pub fn redis(bin: &Path, logs: &Path) -> Result<Proc, String> {
    redis_on(bin, logs, free_port()?)
}

/// [`redis`] on `port`: started again on the same port and directory, it
/// loads its append-only file, so nothing acknowledged is lost.
pub fn redis_on(bin: &Path, logs: &Path, port: u16) -> Result<Proc, String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut c = Command::new(bin);
    c.args(["--port", &addr.port().to_string(), "--bind", "127.0.0.1"])
        .args([
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "everysec",
        ])
        .arg("--dir")
        .arg(logs);
    start("redis", c, addr, logs, redis_pong)
}

fn redis_pong(addr: SocketAddr) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let mut buf = [0u8; 7];
    s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

/// The bare axum floor: this binary's hidden `floor` command serving the
/// captured answers in `bodies`.
pub fn floor(own_exe: &Path, bodies: &Path, logs: &Path) -> Result<Proc, String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()?));
    let mut c = Command::new(own_exe);
    c.arg("floor")
        .arg("--listen")
        .arg(addr.to_string())
        .arg("--bodies")
        .arg(bodies);
    start("floor", c, addr, logs, |a| http_ok(a, "/healthz"))
}

/// nginx relaying every request to `upstream` and nothing else: no
/// parsing beyond HTTP, no logging, connections to the upstream kept open.
/// It is the least that any process in between costs on this machine (two
/// more loopback hops and one proxy), the floor a gateway is measured
/// against. One process, as one gateway is (`master_process off`), so it
/// dies with its handle.
pub fn relay(bin: &Path, upstream: &Proc, logs: &Path) -> Result<Proc, String> {
    let name = if upstream.name == "floor" {
        "relay-floor"
    } else {
        "relay-engine"
    };
    let addr = SocketAddr::from(([127, 0, 0, 1], free_port()?));
    let dir = logs.join(name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let conf = dir.join("nginx.conf");
    let d = dir.display();
    let text = format!(
        "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\n\
         error_log {d}/error.log warn;\nevents {{ worker_connections 4096; }}\n\
         http {{\n  access_log off;\n  keepalive_requests 100000000;\n  keepalive_timeout 600s;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
         \x20 fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
         \x20 client_body_buffer_size 64k;\n  proxy_buffer_size 64k;\n  proxy_buffers 8 64k;\n\
         \x20 upstream upstream {{ server {up}; keepalive 128; keepalive_requests 100000000; }}\n\
         \x20 server {{\n    listen {addr};\n    location / {{\n      proxy_pass http://upstream;\n\
         \x20     proxy_http_version 1.1;\n      proxy_set_header Connection \"\";\n    }}\n  }}\n}}\n",
        up = upstream.addr,
    );
    std::fs::write(&conf, text).map_err(|e| format!("{}: {e}", conf.display()))?;
    let mut c = Command::new(bin);
    c.arg("-p").arg(&dir).arg("-c").arg(&conf);
    start(name, c, addr, logs, |a| http_ok(a, "/healthz"))
}
