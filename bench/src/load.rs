//! The load generator: a fixed number of keep-alive HTTP/1.1 connections,
//! each driven by one task in a closed loop (the next request leaves as soon
//! as the previous answer is read), for a warm-up and then a measured window.
//!
//! It is written against hyper's connection-level client rather than a
//! pooled client so that "16 connections" means exactly 16 TCP connections,
//! and so that the client itself spends as little CPU as possible: on a
//! 2-core machine the client shares the cores with the processes it measures.

use crate::procs::CpuClock;
use crate::workload::Body;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{HeaderName, HeaderValue};
use hyper::{Method, Request, StatusCode, Uri};
use hyper_util::rt::TokioIo;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::net::TcpStream;

/// One HTTP endpoint and what to send it.
#[derive(Clone, Debug)]
pub struct Target {
    pub addr: SocketAddr,
    pub path: &'static str,
    pub headers: Vec<(HeaderName, HeaderValue)>,
    pub body: Body,
    /// A substring every successful answer contains.
    pub expect: &'static str,
}

impl Target {
    pub fn new(addr: SocketAddr, path: &'static str, body: Body, expect: &'static str) -> Self {
        let mut headers = vec![
            (
                hyper::header::HOST,
                HeaderValue::from_str(&addr.to_string()).expect("an address is a valid header"),
            ),
            (
                hyper::header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
        ];
        if path == "/mcp" {
            // What a Streamable HTTP MCP client sends on every POST.
            headers.push((
                hyper::header::ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            ));
            headers.push((
                HeaderName::from_static("mcp-protocol-version"),
                HeaderValue::from_static("2025-11-25"),
            ));
        }
        Self {
            addr,
            path,
            headers,
            body,
            expect,
        }
    }

    /// Adds a header (e.g. the engine's tenant header).
    pub fn header(mut self, name: &'static str, value: &'static str) -> Self {
        self.headers.push((
            HeaderName::from_static(name),
            HeaderValue::from_static(value),
        ));
        self
    }

    /// Adds a header whose value is known only at run time (a session id).
    pub fn header_value(mut self, name: &'static str, value: &str) -> Result<Self, String> {
        let value = HeaderValue::from_str(value).map_err(|e| format!("{name}: {e}"))?;
        self.headers.push((HeaderName::from_static(name), value));
        Ok(self)
    }

    fn request(&self, n: u64) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(self.body.render(n)));
        *req.method_mut() = Method::POST;
        *req.uri_mut() = Uri::from_static(self.path);
        let headers = req.headers_mut();
        for (name, value) in &self.headers {
            headers.insert(name.clone(), value.clone());
        }
        req
    }
}

/// Sends one request on a fresh connection and returns the status and body
/// (for probing an endpoint before it is measured).
pub async fn once(target: &Target, n: u64) -> Result<(StatusCode, Bytes), String> {
    let mut conn = Conn::open(target.addr).await?;
    conn.send(target.request(n)).await
}

/// What one measured window produced.
#[derive(Debug, Clone, Default)]
pub struct Measured {
    /// Successful answers completed inside the window.
    pub requests: u64,
    /// Failed answers (transport error, non-200, missing marker) in the window.
    pub errors: u64,
    /// Length of the window.
    pub seconds: f64,
    /// Latency of every successful answer in the window, microseconds, sorted.
    pub latencies_us: Vec<u32>,
    /// The first failure seen, for the report.
    pub first_error: Option<String>,
    /// CPU seconds each watched process spent inside the window.
    pub cpu_seconds: Vec<(String, f64)>,
    /// Size of a successful answer's body.
    pub response_bytes: usize,
}

impl Measured {
    pub fn rps(&self) -> f64 {
        self.requests as f64 / self.seconds
    }

    /// Nearest-rank percentile in milliseconds.
    pub fn percentile_ms(&self, p: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return f64::NAN;
        }
        let rank = ((p / 100.0) * self.latencies_us.len() as f64).ceil() as usize;
        let i = rank.clamp(1, self.latencies_us.len()) - 1;
        f64::from(self.latencies_us[i]) / 1000.0
    }

    /// CPU microseconds per successful request spent by process `name`.
    pub fn cpu_us_per_request(&self, name: &str) -> Option<f64> {
        let (_, s) = self.cpu_seconds.iter().find(|(n, _)| n == name)?;
        (self.requests > 0).then(|| s * 1e6 / self.requests as f64)
    }
}

/// How long to load and what to watch while doing it.
pub struct Plan<'a> {
    pub connections: usize,
    pub warmup: Duration,
    pub duration: Duration,
    /// Processes whose CPU time is read at both ends of the window.
    pub watch: &'a [CpuClock],
}

/// Loads `target` with `plan.connections` closed-loop connections.
pub async fn run(target: &Target, plan: &Plan<'_>) -> Result<Measured, String> {
    let target = Arc::new(target.clone());
    let counter = Arc::new(AtomicU64::new(1));
    let start = Instant::now();
    let measure_from = start + plan.warmup;
    let until = measure_from + plan.duration;
    let mut workers = Vec::with_capacity(plan.connections);
    for _ in 0..plan.connections {
        let target = target.clone();
        let counter = counter.clone();
        workers.push(tokio::spawn(async move {
            worker(&target, &counter, measure_from, until).await
        }));
    }
    tokio::time::sleep_until(measure_from.into()).await;
    let before: Vec<Option<f64>> = plan.watch.iter().map(CpuClock::seconds).collect();
    tokio::time::sleep_until(until.into()).await;
    let after: Vec<Option<f64>> = plan.watch.iter().map(CpuClock::seconds).collect();
    let mut out = Measured {
        seconds: plan.duration.as_secs_f64(),
        ..Measured::default()
    };
    for (clock, (b, a)) in plan.watch.iter().zip(before.into_iter().zip(after)) {
        if let (Some(b), Some(a)) = (b, a) {
            out.cpu_seconds.push((clock.name.clone(), a - b));
        }
    }
    for w in workers {
        let stats = w
            .await
            .map_err(|e| format!("load worker panicked: {e}"))??;
        out.requests += stats.ok;
        out.errors += stats.errors;
        out.latencies_us.extend(stats.latencies_us);
        if out.first_error.is_none() {
            out.first_error = stats.first_error;
        }
        out.response_bytes = out.response_bytes.max(stats.response_bytes);
    }
    out.latencies_us.sort_unstable();
    Ok(out)
}

#[derive(Default)]
struct WorkerStats {
    ok: u64,
    errors: u64,
    latencies_us: Vec<u32>,
    first_error: Option<String>,
    response_bytes: usize,
}

impl WorkerStats {
    fn fail(&mut self, why: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(why);
        }
    }
}

/// One connection's closed loop. A request counts when its answer completes
/// inside the window; requests still in flight when it closes are dropped,
/// as every closed-loop generator does.
async fn worker(
    target: &Target,
    counter: &AtomicU64,
    measure_from: Instant,
    until: Instant,
) -> Result<WorkerStats, String> {
    let finder = memchr::memmem::Finder::new(target.expect.as_bytes());
    let mut stats = WorkerStats::default();
    let mut conn = Conn::open(target.addr).await?;
    while Instant::now() < until {
        let req = target.request(counter.fetch_add(1, Ordering::Relaxed));
        let sent = Instant::now();
        let answer = conn.send(req).await;
        let done = Instant::now();
        let counted = done >= measure_from && done < until;
        match answer {
            Ok((status, body)) if status == StatusCode::OK && finder.find(&body).is_some() => {
                stats.response_bytes = body.len();
                if counted {
                    stats.ok += 1;
                    let us = done.duration_since(sent).as_micros();
                    stats
                        .latencies_us
                        .push(u32::try_from(us).unwrap_or(u32::MAX));
                }
            }
            Ok((status, body)) => {
                if counted {
                    let text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
                    stats.fail(format!("HTTP {status}: {text}"));
                }
            }
            Err(e) => {
                if counted {
                    stats.fail(e);
                }
                // The connection is unusable after a transport error.
                conn = Conn::open(target.addr).await?;
            }
        }
    }
    Ok(stats)
}

/// One keep-alive HTTP/1.1 connection.
struct Conn {
    sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    driver: tokio::task::JoinHandle<()>,
}

impl Conn {
    async fn open(addr: SocketAddr) -> Result<Conn, String> {
        let stream = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect {addr}: {e}"))?;
        // Requests and answers are single small writes: Nagle would only delay them.
        stream
            .set_nodelay(true)
            .map_err(|e| format!("nodelay: {e}"))?;
        let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake {addr}: {e}"))?;
        let driver = tokio::spawn(async move {
            let _ = connection.await;
        });
        Ok(Conn { sender, driver })
    }

    async fn send(&mut self, req: Request<Full<Bytes>>) -> Result<(StatusCode, Bytes), String> {
        self.sender
            .ready()
            .await
            .map_err(|e| format!("connection closed: {e}"))?;
        let resp = self
            .sender
            .send_request(req)
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        let status = resp.status();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("reading the answer: {e}"))?
            .to_bytes();
        Ok((status, body))
    }
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.driver.abort();
    }
}
