//! The soak benchmark (`--only soak`): mixed traffic at a fixed rate for a
//! bounded number of minutes over three gateway instances sharing one Redis
//! and one legacy engine, with trouble in the middle — a slow-engine phase,
//! an engine outage (the process stopped, then started again on its port)
//! and a Redis restart (same port and append-only file, so nothing stored is
//! lost).
//!
//! Every minute it prints p50/p99, each instance's RSS, Redis `used_memory`
//! and the answers by kind. At the end it checks what must never happen:
//! lockouts (rate-limit or full-share refusals), duplicate executions (the
//! engine's run count of the keyed tenant against the distinct keys sent)
//! and lost runs (every `run_id` answered as stored is fetched). It prints
//! its table as markdown and draws the chart (p99 and RSS over time, phases
//! shaded). Reported, never asserted: the run fails only if it cannot run.

mod chart;
mod tally;
mod traffic;

use crate::procs;
use chart::Phase;
use plotters::style::RGBColor;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tally::{Reading, Sample, Tally, Window};
use tokio::sync::Semaphore;

/// How long and how hard the soak runs, and where it writes its chart.
pub struct SoakArgs<'a> {
    pub minutes: f64,
    pub rate: f64,
    pub chart: &'a Path,
    pub gateway_bin: &'a Path,
    pub engine_bin: &'a Path,
    pub redis_bin: &'a Path,
    pub gateway_env: &'a [String],
    pub logs: &'a Path,
}

/// The soak's own gateway configuration (two API keys, see the file).
const CONFIG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/gateway.soak.toml");
const INSTANCES: usize = 3;
/// Requests in flight at most: past it a tick is counted as `shed` (the
/// gateways are not keeping up) instead of piling up without bound.
const MAX_IN_FLIGHT: usize = 512;
/// One request's bound (well over the engine's slow phase and timeout).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The engine's added latency in the slow phase.
const SLOW_MS: u64 = 1_500;
/// Window of the chart's p99 line.
const CHART_WINDOW_S: f64 = 10.0;

/// The schedule, as fractions of the run.
const SLOW: (f64, f64) = (0.30, 0.45);
const OUTAGE: (f64, f64) = (0.55, 0.62);
const REDIS_RESTART: f64 = 0.75;

/// Runs the soak and prints its figures.
pub async fn run(args: SoakArgs<'_>) -> Result<(), String> {
    let total_s = (args.minutes * 60.0).clamp(30.0, 24.0 * 3600.0);
    let mut redis = Some(procs::redis(args.redis_bin, args.logs)?);
    let redis_addr = redis.as_ref().expect("started").addr;
    let redis_port = redis_addr.port();
    let mut engine = Some(procs::engine(args.engine_bin, args.logs)?);
    let engine_addr = engine.as_ref().expect("started").addr;
    let names = ["soak-gw1", "soak-gw2", "soak-gw3"];
    let mut gateways = Vec::new();
    for name in names {
        let mut env = vec![format!("PILOTAGE_INSTANCE={name}")];
        env.extend(args.gateway_env.iter().cloned());
        gateways.push(procs::gateway_named(
            name,
            args.gateway_bin,
            Path::new(CONFIG),
            engine.as_ref().expect("started"),
            redis.as_ref(),
            &env,
            args.logs,
        )?);
    }
    let urls: Arc<Vec<String>> = Arc::new(
        gateways
            .iter()
            .map(|g| format!("{}/mcp", g.url()))
            .collect(),
    );
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|e| e.to_string())?;
    println!(
        "soak · {:.1} min at {} requests/s over {INSTANCES} gateways (one Redis on port {redis_port}, one engine {}) · slow engine {:.1}–{:.1} min (+{SLOW_MS} ms), engine outage {:.1}–{:.1} min, Redis restart at {:.1} min",
        total_s / 60.0,
        args.rate,
        engine_addr,
        SLOW.0 * total_s / 60.0,
        SLOW.1 * total_s / 60.0,
        OUTAGE.0 * total_s / 60.0,
        OUTAGE.1 * total_s / 60.0,
        REDIS_RESTART * total_s / 60.0,
    );

    let tally = Arc::new(Tally::default());
    let stored: Arc<std::sync::Mutex<Vec<(String, &'static str)>>> = Arc::default();
    let keys_sent = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let traffic = tokio::spawn(drive(
        client.clone(),
        urls.clone(),
        args.rate,
        Duration::from_secs_f64(total_s),
        started,
        tally.clone(),
        stored.clone(),
        keys_sent.clone(),
    ));

    let admin = format!("http://{engine_addr}/admin");
    let mut readings: Vec<Reading> = Vec::new();
    let mut phases: Vec<Phase> = Vec::new();
    let mut keyed_runs_before_outage = 0u64;
    let (mut slow_on, mut slow_done, mut outage_on, mut outage_done, mut redis_done) =
        (false, false, false, false, false);
    let mut phase_started = 0.0;
    let mut next_minute = 1u64;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    // Bounded: the run's length plus the time an outage or restart may add.
    while started.elapsed().as_secs_f64() < total_s + 120.0 {
        tick.tick().await;
        let t = started.elapsed().as_secs_f64();
        readings.push(Reading {
            at_s: t,
            rss_mib: gateways
                .iter()
                .map(|g| g.memory().map(|m| m.rss_mib()))
                .collect(),
            store_bytes: redis_used_memory(redis_addr),
        });
        if !slow_on && !slow_done && t >= SLOW.0 * total_s {
            faults(&client, &admin, &format!(r#"{{"slow_ms":{SLOW_MS}}}"#)).await?;
            println!(
                "  {:5.1} min: engine slow (+{SLOW_MS} ms per answer)",
                t / 60.0
            );
            (slow_on, phase_started) = (true, t);
        } else if slow_on && t >= SLOW.1 * total_s {
            faults(&client, &admin, "{}").await?;
            println!("  {:5.1} min: engine back to speed", t / 60.0);
            phases.push(phase(
                "slow engine",
                phase_started,
                t,
                RGBColor(255, 165, 0),
            ));
            (slow_on, slow_done) = (false, true);
        } else if !outage_on && !outage_done && t >= OUTAGE.0 * total_s {
            keyed_runs_before_outage = engine_runs(&client, &admin).await?;
            if let Some(e) = engine.take() {
                tokio::task::block_in_place(|| e.stop(Duration::from_secs(5)));
            }
            println!("  {:5.1} min: engine stopped", t / 60.0);
            (outage_on, phase_started) = (true, t);
        } else if outage_on && t >= OUTAGE.1 * total_s {
            let port = engine_addr.port();
            engine = Some(tokio::task::block_in_place(|| {
                procs::engine_on(args.engine_bin, args.logs, port)
            })?);
            let t = started.elapsed().as_secs_f64();
            println!("  {:5.1} min: engine started again", t / 60.0);
            phases.push(phase(
                "engine outage",
                phase_started,
                t,
                RGBColor(220, 20, 60),
            ));
            (outage_on, outage_done) = (false, true);
        } else if !redis_done && t >= REDIS_RESTART * total_s {
            if let Some(old) = redis.take() {
                tokio::task::block_in_place(|| old.stop(Duration::from_secs(10)));
            }
            redis = Some(tokio::task::block_in_place(|| {
                procs::redis_on(args.redis_bin, args.logs, redis_port)
            })?);
            let end = started.elapsed().as_secs_f64();
            println!(
                "  {:5.1} min: Redis restarted ({:.1} s down, append-only file reloaded)",
                end / 60.0,
                end - t
            );
            // At least a few seconds wide, or the stripe would not show.
            phases.push(phase(
                "Redis restart",
                t,
                end.max(t + 4.0),
                RGBColor(30, 144, 255),
            ));
            redis_done = true;
        }
        if t >= next_minute as f64 * 60.0 {
            let w = tally::window(
                &tally.snapshot(),
                &readings,
                (next_minute - 1) as f64 * 60.0,
                next_minute as f64 * 60.0,
            );
            println!("{}", minute_line(next_minute, &w));
            next_minute += 1;
        }
        if traffic.is_finished() {
            break;
        }
    }
    traffic.await.map_err(|e| e.to_string())?;
    let end_s = started.elapsed().as_secs_f64();
    readings.push(Reading {
        at_s: end_s,
        rss_mib: gateways
            .iter()
            .map(|g| g.memory().map(|m| m.rss_mib()))
            .collect(),
        store_bytes: redis_used_memory(redis_addr),
    });

    let samples = tally.snapshot();
    let run_ids = stored.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let lost = fetch_all(&client, &urls, &run_ids).await;
    let keyed_runs = keyed_runs_before_outage + engine_runs(&client, &admin).await?;
    let keys = keys_sent.load(Ordering::Relaxed);
    let duplicates = keyed_runs.saturating_sub(keys);
    let whole = tally::window(&samples, &readings, 0.0, f64::MAX);

    let mut minutes_rows = Vec::new();
    let mut m = 0.0;
    while m * 60.0 < end_s {
        minutes_rows.push(tally::window(
            &samples,
            &readings,
            m * 60.0,
            (m + 1.0) * 60.0,
        ));
        m += 1.0;
    }
    println!(
        "\n{}",
        markdown(
            &minutes_rows,
            &whole,
            lost,
            &run_ids,
            duplicates,
            keyed_runs,
            keys
        )
    );

    let mut p99 = Vec::new();
    let mut from = 0.0;
    while from < end_s {
        let w = tally::window(&samples, &readings, from, from + CHART_WINDOW_S);
        if w.answers > 0 {
            p99.push((from + CHART_WINDOW_S / 2.0, w.p99_ms));
        }
        from += CHART_WINDOW_S;
    }
    let instances: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    chart::draw(
        args.chart,
        &chart::Series {
            total_s: end_s,
            p99: &p99,
            readings: &readings,
            instances: &instances,
            phases: &phases,
        },
    )?;
    println!("chart: {}", args.chart.display());
    drop(gateways);
    Ok(())
}

fn phase(label: &'static str, from_s: f64, to_s: f64, color: RGBColor) -> Phase {
    Phase {
        label,
        from_s,
        to_s,
        color,
    }
}

/// Sends the mix at `rate` per second, round robin over `urls`, until
/// `length` has passed, then waits for the answers still in flight.
#[allow(clippy::too_many_arguments)]
async fn drive(
    client: reqwest::Client,
    urls: Arc<Vec<String>>,
    rate: f64,
    length: Duration,
    started: Instant,
    tally: Arc<Tally>,
    stored: Arc<std::sync::Mutex<Vec<(String, &'static str)>>>,
    keys_sent: Arc<AtomicU64>,
) {
    let slots = Arc::new(Semaphore::new(MAX_IN_FLIGHT));
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate.clamp(0.1, 10_000.0)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut n = 0u64;
    while started.elapsed() < length {
        tick.tick().await;
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            tally.record(Sample {
                at_ms: started.elapsed().as_millis() as u64,
                latency_us: 0,
                kind: "shed".into(),
                lockout: false,
            });
            n += 1;
            continue;
        };
        let call = traffic::call(n);
        if call.keyed {
            keys_sent.fetch_add(1, Ordering::Relaxed);
        }
        let (client, urls, tally, stored) =
            (client.clone(), urls.clone(), tally.clone(), stored.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let tries = if call.keyed { 2 } else { 1 };
            for attempt in 0..tries {
                let url = &urls[(n as usize + attempt) % urls.len()];
                let sent = Instant::now();
                let answer = send(&client, url, call.bearer, &call.body).await;
                tally.record(Sample {
                    at_ms: started.elapsed().as_millis() as u64,
                    latency_us: sent.elapsed().as_micros() as u64,
                    kind: answer.kind.clone(),
                    lockout: answer.lockout,
                });
                if call.stores
                    && answer.kind == "ok"
                    && let (Some(id), Some(bearer)) = (answer.run_id, call.bearer)
                {
                    stored
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((id, bearer));
                }
            }
        });
        n += 1;
    }
    // Every answer in: all slots free again (bounded by the request timeout).
    let _ = tokio::time::timeout(
        REQUEST_TIMEOUT * 2,
        slots.acquire_many(MAX_IN_FLIGHT as u32),
    )
    .await;
}

/// One MCP POST; the answer read whole.
async fn send(
    client: &reqwest::Client,
    url: &str,
    bearer: Option<&str>,
    body: &serde_json::Value,
) -> traffic::Answer {
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string());
    if let Some(key) = bearer {
        req = req.bearer_auth(key);
    }
    let Ok(answer) = req.send().await else {
        return traffic::Answer::transport();
    };
    let status = answer.status();
    let Ok(bytes) = answer.bytes().await else {
        return traffic::Answer::transport();
    };
    if !status.is_success() {
        return traffic::Answer::http(status.as_u16());
    }
    traffic::read(&bytes)
}

/// Fetches every stored run (as the key that stored it, round robin over the
/// instances) and returns how many are not there.
async fn fetch_all(
    client: &reqwest::Client,
    urls: &[String],
    runs: &[(String, &'static str)],
) -> usize {
    let slots = Arc::new(Semaphore::new(16));
    let mut tasks = Vec::new();
    for (i, (id, bearer)) in runs.iter().enumerate() {
        let permit = slots.clone().acquire_owned().await.expect("never closed");
        let (client, url, body, bearer) = (
            client.clone(),
            urls[i % urls.len()].clone(),
            traffic::fetch(id, i as u64),
            *bearer,
        );
        tasks.push(tokio::spawn(async move {
            let _permit = permit;
            send(&client, &url, Some(bearer), &body).await.kind == "ok"
        }));
    }
    let mut lost = 0;
    for t in tasks {
        if !t.await.unwrap_or(false) {
            lost += 1;
        }
    }
    lost
}

/// `POST /admin/faults` on the engine.
async fn faults(client: &reqwest::Client, admin: &str, body: &str) -> Result<(), String> {
    client
        .post(format!("{admin}/faults"))
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .and_then(|r| r.error_for_status())
        .map(|_| ())
        .map_err(|e| format!("engine faults: {e}"))
}

/// The engine's run count of the keyed tenant.
async fn engine_runs(client: &reqwest::Client, admin: &str) -> Result<u64, String> {
    let state: serde_json::Value = client
        .get(format!("{admin}/state?tenant={}", traffic::KEYED_TENANT))
        .send()
        .await
        .map_err(|e| format!("engine state: {e}"))?
        .json()
        .await
        .map_err(|e| format!("engine state: {e}"))?;
    state["runs"]
        .as_u64()
        .ok_or_else(|| format!("engine state without a run count: {state}"))
}

/// Redis `used_memory` (INFO memory), `None` while it does not answer.
fn redis_used_memory(addr: std::net::SocketAddr) -> Option<u64> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_millis(300)).ok()?;
    s.set_read_timeout(Some(Duration::from_millis(500))).ok()?;
    s.write_all(b"INFO memory\r\n").ok()?;
    let mut buf = vec![0u8; 8192];
    let mut got = 0;
    // The reply is one bulk string of a few KB: read until its field shows.
    for _ in 0..16 {
        let n = s.read(&mut buf[got..]).ok()?;
        if n == 0 {
            break;
        }
        got += n;
        let text = String::from_utf8_lossy(&buf[..got]);
        if let Some(rest) = text.split("\r\nused_memory:").nth(1)
            && let Some(value) = rest.split("\r\n").next()
            && rest.contains("\r\n")
        {
            return value.trim().parse().ok();
        }
        if got == buf.len() {
            break;
        }
    }
    None
}

fn minute_line(minute: u64, w: &Window) -> String {
    format!(
        "  minute {minute:>2}: {} answers · p50 {:.1} ms · p99 {:.1} ms · RSS {} MiB · Redis {} · lockouts {} · {}",
        w.answers,
        w.p50_ms,
        w.p99_ms,
        w.rss_line(),
        w.store_line(),
        w.lockouts,
        w.kinds_line()
    )
}

/// The soak's table as markdown.
fn markdown(
    minutes: &[Window],
    whole: &Window,
    lost: usize,
    stored: &[(String, &'static str)],
    duplicates: u64,
    keyed_runs: u64,
    keys: u64,
) -> String {
    use std::fmt::Write;
    let mut md = String::new();
    let _ = writeln!(
        md,
        "| minute | answers | p50 ms | p99 ms | RSS gw1 / gw2 / gw3 MiB | Redis used_memory | answers by kind |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|---|");
    for w in minutes {
        let _ = writeln!(
            md,
            "| {:.0} | {} | {:.1} | {:.1} | {} | {} | {} |",
            w.to_s / 60.0,
            w.answers,
            w.p50_ms,
            w.p99_ms,
            w.rss_line(),
            w.store_line(),
            w.kinds_line()
        );
    }
    let kinds: BTreeMap<_, _> = whole.kinds.clone();
    let _ = writeln!(
        md,
        "\nWhole run: {} answers, p50 {:.1} ms, p99 {:.1} ms; {}. Lockouts: {}. Duplicate executions: {duplicates} ({keyed_runs} engine runs for {keys} keys, each sent twice). Lost runs: {lost} of {} stored runs fetched.",
        whole.answers,
        whole.p50_ms,
        whole.p99_ms,
        kinds
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", "),
        whole.lockouts,
        stored.len()
    );
    md
}

/// Where the chart goes by default.
pub fn default_chart() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/soak.svg"))
}
