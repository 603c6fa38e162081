//! The capacity row (`--only capacity`): the inputs of the capacity model of
//! `docs/scaling.md`, measured on a gateway with the Redis store (the
//! deployment shape), called with an API key as agents are.
//!
//! Per operation (validate, execute with and without an idempotency key,
//! trace fetch, catalog list):
//! - CPU per request of the gateway, the engine and Redis under a closed
//!   loop of [`CONNECTIONS`] connections, hence requests per gateway core;
//! - Redis commands per request, by name, from `MONITOR` (a command run
//!   inside one of the gateway's Lua scripts is listed apart: it costs Redis
//!   CPU but no round trip);
//! - bytes to and from Redis per request, from the `INFO stats` counters
//!   (`total_net_input_bytes`, `total_net_output_bytes`) around
//!   [`COUNTED`] requests, less what the two `INFO` calls themselves add.
//!
//! Per trace level (the language's ceiling, which the record keeps, and the
//! level asked, which the answer carries; and with an idempotency key): the
//! Redis memory one retained run takes, as the `used_memory` rise over
//! [`RETAINED`] runs and as `MEMORY USAGE` of one run's keys.
//!
//! Redis is read with `redis-cli`, installed beside `redis-server`.

use crate::RunArgs;
use crate::load::{self, Measured, Plan, Target};
use crate::procs::{CpuClock, Proc};
use crate::redis_read::{key_bytes, net_bytes, used_memory};
use crate::workload::{self, expect};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

/// Closed-loop connections of the CPU measurement: enough to keep both
/// cores of a small machine busy.
pub const CONNECTIONS: usize = 16;
/// Requests one at a time between two readings of Redis' counters.
const COUNTED: u64 = 200;
/// Runs retained per trace level for the memory reading.
const RETAINED: u64 = 500;

/// One operation's model inputs.
#[derive(Debug, Clone, Serialize)]
pub struct Operation {
    pub operation: String,
    pub tool: String,
    pub connections: usize,
    pub rps: f64,
    pub p50_ms: f64,
    /// CPU microseconds per request, by process (gateway, engine, redis, client).
    pub cpu_us_per_request: BTreeMap<String, f64>,
    /// 10^6 / gateway CPU µs per request: what one fully used core serves.
    pub requests_per_gateway_core: f64,
    /// Commands the gateway sends Redis per request (round trips, pipelined or not).
    pub redis_commands: f64,
    /// Commands Redis runs inside the gateway's Lua scripts per request.
    pub redis_script_commands: f64,
    /// Per request, by command name (lower case; `lua:` for inside scripts).
    pub redis_commands_by_name: BTreeMap<String, f64>,
    /// Bytes per request from the gateway to Redis and back.
    pub redis_bytes_in: f64,
    pub redis_bytes_out: f64,
    pub request_bytes: usize,
    pub response_bytes: usize,
}

/// One trace level's retained-run size.
#[derive(Debug, Clone, Serialize)]
pub struct Retained {
    /// The language's `trace`: what the record keeps.
    pub trace_ceiling: String,
    /// The level the execute asked for: what the answer carries.
    pub trace_level: String,
    pub idempotency_key: bool,
    pub runs: u64,
    /// `used_memory` rise per run (every key the run left, with Redis' overhead).
    pub used_memory_per_run: f64,
    /// `MEMORY USAGE` of one run record (allocator size classes included).
    pub run_key_bytes: u64,
    /// `STRLEN` of that record: its JSON.
    pub run_value_bytes: u64,
    /// `MEMORY USAGE` of its idempotency record, when keyed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idempotency_key_bytes: Option<u64>,
    /// The execute answer's size (the record holds about as much).
    pub response_bytes: usize,
    /// Steps in the answer's trace (none at level `none`).
    pub trace_steps: usize,
}

/// Everything the capacity row measured.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Capacity {
    pub operations: Vec<Operation>,
    pub retained: Vec<Retained>,
    /// `PING`s per second the store's keeper sends per gateway instance.
    pub keeper_pings_per_second: f64,
}

/// A JSON-RPC `tools/call` as the capacity row's API key.
fn keyed(gateway: &Proc, body: workload::Body, marker: &'static str) -> Target {
    Target::new(gateway.addr, "/mcp", body, marker).header("authorization", workload::BEARER)
}

/// Measures every input of the model; `gateway` runs with `redis` and the
/// benchmark configuration (trace ceiling `full`), `gateway_at(level)`
/// starts another one whose language records traces at `level`.
pub async fn run(
    args: &RunArgs,
    gateway: &Proc,
    engine: &Proc,
    redis: &Proc,
    gateway_at: impl Fn(&str) -> Result<Proc, String>,
) -> Result<Capacity, String> {
    let first_run = load::once(
        &keyed(gateway, workload::mcp_execute(), expect::RUN_SUCCESS),
        0,
    )
    .await?;
    let run_id = run_id_of(&first_run.1)?;
    let ops: [(&str, &str, workload::Body, &'static str); 5] = [
        (
            "validate",
            "validate_workflow (verdict cache hit)",
            workload::mcp_validate(false),
            expect::VALID,
        ),
        (
            "execute",
            "run_workflow (full trace, stored)",
            workload::mcp_execute(),
            expect::RUN_SUCCESS,
        ),
        (
            "execute, keyed",
            "run_workflow (full trace, stored, a new idempotency_key each)",
            workload::mcp_execute_at("full", Some("load")),
            expect::RUN_SUCCESS,
        ),
        (
            "trace fetch",
            "trace_workflow",
            workload::mcp_trace_fetch(&run_id),
            expect::TOOL_OK,
        ),
        (
            "catalog list",
            "pilotage_catalog list",
            workload::mcp_catalog_list(),
            expect::TOOL_OK,
        ),
    ];
    let mut out = Capacity {
        keeper_pings_per_second: 2.0,
        ..Capacity::default()
    };
    println!(
        "\ncapacity [capacity] · gateway with the Redis store, API key, {CONNECTIONS} connections · Redis per request over {COUNTED} requests one at a time"
    );
    for (name, tool, body, marker) in ops {
        let target = keyed(gateway, body, marker);
        check_first(&target, name).await?;
        let watch = [
            gateway.cpu_clock(),
            engine.cpu_clock(),
            redis.cpu_clock(),
            CpuClock::own(),
        ];
        tokio::time::sleep(Duration::from_millis(300)).await;
        let plan = Plan {
            connections: CONNECTIONS,
            warmup: args.warmup(),
            duration: args.duration(),
            watch: &watch,
        };
        let measured = load::run(&target, &plan).await?;
        if measured.requests == 0 {
            return Err(format!(
                "capacity {name}: no successful answer ({})",
                measured.first_error.unwrap_or_default()
            ));
        }
        let bytes = net_bytes_per_request(&target, redis).await?;
        let commands = commands_per_request(&target, redis).await?;
        let op = operation(name, tool, &target, &measured, bytes, commands);
        println!("{}", console_line(&op));
        out.operations.push(op);
    }
    // The record keeps the trace at the language's ceiling (`trace` of
    // `[[language]]`: summary or full), whatever level the caller asked
    // for: a caller asking for `none` still leaves the ceiling's record. One
    // gateway per ceiling.
    for (ceiling, level, key) in [
        ("full", "none", false),
        ("summary", "summary", false),
        ("full", "full", false),
        ("full", "full", true),
    ] {
        let own;
        let at = if ceiling == "full" {
            gateway
        } else {
            own = gateway_at(ceiling)?;
            &own
        };
        let r = retained(at, redis, ceiling, level, key).await?;
        println!(
            "  retained run, ceiling {ceiling}, asked {level}{}: {:.0} B per run (used_memory over {} runs) · MEMORY USAGE run {} B (JSON {} B){} · answer {} B, {} trace steps",
            if key { " + idempotency key" } else { "" },
            r.used_memory_per_run,
            r.runs,
            r.run_key_bytes,
            r.run_value_bytes,
            r.idempotency_key_bytes
                .map(|b| format!(", idempotency record {b} B"))
                .unwrap_or_default(),
            r.response_bytes,
            r.trace_steps
        );
        out.retained.push(r);
    }
    println!(
        "  plus, per gateway instance and independent of load: {} PINGs/s from the store's keeper",
        out.keeper_pings_per_second
    );
    Ok(out)
}

fn run_id_of(body: &[u8]) -> Result<String, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("execute answer: {e}"))?;
    v["result"]["structuredContent"]["run_id"]
        .as_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("execute answer without a run_id: {v}"))
}

/// The first answer must be a tool answer that is no request error.
async fn check_first(target: &Target, name: &str) -> Result<Value, String> {
    let (status, body) = load::once(target, 0).await?;
    let v: Value = serde_json::from_slice(&body).map_err(|e| format!("{name}: not JSON: {e}"))?;
    if !status.is_success() || v["result"]["isError"] != Value::Bool(false) {
        let text = v.to_string();
        return Err(format!(
            "capacity {name}: HTTP {status}: {}",
            &text[..text.len().min(600)]
        ));
    }
    Ok(v)
}

fn operation(
    name: &str,
    tool: &str,
    target: &Target,
    m: &Measured,
    (bytes_in, bytes_out): (f64, f64),
    (commands, script, by_name): (f64, f64, BTreeMap<String, f64>),
) -> Operation {
    let cpu: BTreeMap<String, f64> = m
        .cpu_seconds
        .iter()
        .filter_map(|(n, _)| Some((n.clone(), m.cpu_us_per_request(n)?)))
        .collect();
    let gateway_us = cpu.get("gateway-redis").copied().unwrap_or(f64::NAN);
    Operation {
        operation: name.into(),
        tool: tool.into(),
        connections: CONNECTIONS,
        rps: m.rps(),
        p50_ms: m.percentile_ms(50.0),
        requests_per_gateway_core: 1e6 / gateway_us,
        cpu_us_per_request: cpu,
        redis_commands: commands,
        redis_script_commands: script,
        redis_commands_by_name: by_name,
        redis_bytes_in: bytes_in,
        redis_bytes_out: bytes_out,
        request_bytes: target.body.len(),
        response_bytes: m.response_bytes,
    }
}

fn console_line(op: &Operation) -> String {
    let cpu = |n: &str| op.cpu_us_per_request.get(n).copied().unwrap_or(f64::NAN);
    let names: Vec<String> = op
        .redis_commands_by_name
        .iter()
        .map(|(n, c)| format!("{n} {c:.2}"))
        .collect();
    format!(
        "  {:<14} {:>7.0} req/s · CPU per request: gateway {:.0} µs, engine {:.0} µs, redis {:.0} µs → {:.0} requests/s per gateway core · Redis per request: {:.2} commands + {:.2} in scripts [{}], {:.0} B in, {:.0} B out",
        op.operation,
        op.rps,
        cpu("gateway-redis"),
        cpu("engine"),
        cpu("redis"),
        op.requests_per_gateway_core,
        op.redis_commands,
        op.redis_script_commands,
        names.join(", "),
        op.redis_bytes_in,
        op.redis_bytes_out
    )
}

/// Sends `target` `count` times, one at a time (request numbers from
/// `first`), and checks each answer.
async fn send_counted(target: &Target, first: u64, count: u64) -> Result<(), String> {
    let finder = memchr::memmem::Finder::new(target.expect.as_bytes());
    for n in first..first + count {
        let (status, body) = load::once(target, n).await?;
        if !status.is_success() || finder.find(&body).is_none() {
            return Err(format!(
                "{}: HTTP {status}: {}",
                target.path,
                String::from_utf8_lossy(&body[..body.len().min(300)])
            ));
        }
    }
    Ok(())
}

/// Bytes Redis received and sent per request of `target`.
async fn net_bytes_per_request(target: &Target, redis: &Proc) -> Result<(f64, f64), String> {
    // What two readings with nothing between them add (the first reading's
    // reply, the second's request), taken off the measured difference.
    let (a_in, a_out) = net_bytes(redis).await?;
    let (b_in, b_out) = net_bytes(redis).await?;
    let (idle_in, idle_out) = (b_in - a_in, b_out - a_out);
    let (c_in, c_out) = net_bytes(redis).await?;
    send_counted(target, 1_000_000, COUNTED).await?;
    let (d_in, d_out) = net_bytes(redis).await?;
    let per = |delta: u64, idle: u64| delta.saturating_sub(idle) as f64 / COUNTED as f64;
    Ok((per(d_in - c_in, idle_in), per(d_out - c_out, idle_out)))
}

/// Commands per request (sent, inside scripts, and by name), from `MONITOR`.
async fn commands_per_request(
    target: &Target,
    redis: &Proc,
) -> Result<(f64, f64, BTreeMap<String, f64>), String> {
    let mut monitor = tokio::process::Command::new("redis-cli")
        .args(["-h", &redis.addr.ip().to_string()])
        .args(["-p", &redis.addr.port().to_string()])
        .arg("monitor")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("redis-cli monitor: {e}"))?;
    let stdout = monitor
        .stdout
        .take()
        .ok_or("redis-cli monitor: no output")?;
    let mut lines = tokio::io::BufReader::new(stdout).lines();
    // `OK` first: from then on every command is shown.
    match tokio::time::timeout(Duration::from_secs(5), lines.next_line()).await {
        Ok(Ok(Some(l))) if l.trim() == "OK" => {}
        other => return Err(format!("redis-cli monitor did not start: {other:?}")),
    }
    let reader = tokio::spawn(async move {
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        while let Ok(Some(line)) = lines.next_line().await {
            if let Some(name) = monitored_command(&line) {
                *counts.entry(name).or_default() += 1;
            }
        }
        counts
    });
    send_counted(target, 2_000_000, COUNTED).await?;
    // Let the last commands reach the monitor before it stops.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = monitor.kill().await;
    let counts = reader.await.map_err(|e| format!("monitor reader: {e}"))?;
    let mut by_name = BTreeMap::new();
    let (mut sent, mut script) = (0.0, 0.0);
    for (name, count) in counts {
        let per = count as f64 / COUNTED as f64;
        if name.starts_with("lua:") {
            script += per;
        } else {
            sent += per;
        }
        by_name.insert(name, per);
    }
    Ok((sent, script, by_name))
}

/// `1700000000.123456 [0 127.0.0.1:5555] "SET" "k" ...`: the command name,
/// `lua:` in front for a command of a script (`[0 lua]`); `None` for the
/// keeper's `PING` and for lines that are no command.
fn monitored_command(line: &str) -> Option<String> {
    let (source, rest) = line.split_once("] ")?;
    let name = rest.split('"').nth(1)?.to_ascii_lowercase();
    if name == "ping" {
        return None;
    }
    Some(if source.ends_with(" lua") {
        format!("lua:{name}")
    } else {
        name
    })
}

/// Retains [`RETAINED`] runs asked at `level` on a gateway recording at
/// `ceiling`, and reads what Redis holds for them.
async fn retained(
    gateway: &Proc,
    redis: &Proc,
    ceiling: &str,
    level: &str,
    keyed_run: bool,
) -> Result<Retained, String> {
    let target = keyed(
        gateway,
        workload::mcp_execute_at(level, keyed_run.then_some(level)),
        expect::RUN_SUCCESS,
    );
    let probe = check_first(&target, &format!("retained {level}")).await?;
    let sc = &probe["result"]["structuredContent"];
    let run_id = sc["run_id"]
        .as_str()
        .ok_or("capacity: an execute answer without a run_id")?;
    let (run_key_bytes, run_value_bytes) = key_bytes(redis, &format!("*:run:{run_id}"))
        .await?
        .ok_or_else(|| format!("capacity: the run of trace level {level} was not retained"))?;
    let idempotency_key_bytes = if keyed_run {
        let pattern = format!("*:idem:{}", workload::idempotency_key(level, 0));
        Some(
            key_bytes(redis, &pattern)
                .await?
                .ok_or("capacity: no idempotency record for a keyed run")?
                .0,
        )
    } else {
        None
    };
    let before = used_memory(redis).await?;
    send_counted(&target, 1, RETAINED).await?;
    let after = used_memory(redis).await?;
    Ok(Retained {
        trace_ceiling: ceiling.into(),
        trace_level: level.into(),
        idempotency_key: keyed_run,
        runs: RETAINED,
        used_memory_per_run: after.saturating_sub(before) as f64 / RETAINED as f64,
        run_key_bytes,
        run_value_bytes,
        idempotency_key_bytes,
        response_bytes: serde_json::to_vec(sc).map_or(0, |b| b.len()),
        trace_steps: sc["trace"]["steps"].as_array().map_or(0, Vec::len),
    })
}

/// The generated section of `docs/scaling.md` (between its markers).
pub fn markdown(capacity: &Capacity, machine: &str) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "{machine}\n");
    let _ = writeln!(
        md,
        "| operation | req/s ({CONNECTIONS} conn.) | gateway CPU / req | requests / s per gateway core | engine CPU / req | Redis CPU / req | Redis commands / req (+ inside scripts) | Redis bytes in / out per req |"
    );
    let _ = writeln!(md, "|---|--:|--:|--:|--:|--:|--:|--:|");
    for op in &capacity.operations {
        let cpu = |n: &str| op.cpu_us_per_request.get(n).copied().unwrap_or(f64::NAN);
        let _ = writeln!(
            md,
            "| {} (`{}`) | {:.0} | {:.0} µs | {:.0} | {:.0} µs | {:.0} µs | {:.2} (+ {:.2}) | {:.0} / {:.0} B |",
            op.operation,
            op.tool,
            op.rps,
            cpu("gateway-redis"),
            op.requests_per_gateway_core,
            cpu("engine"),
            cpu("redis"),
            op.redis_commands,
            op.redis_script_commands,
            op.redis_bytes_in,
            op.redis_bytes_out
        );
    }
    let _ = writeln!(
        md,
        "\nRedis commands per request, by name (`lua:` inside a script):
"
    );
    for op in &capacity.operations {
        let names: Vec<String> = op
            .redis_commands_by_name
            .iter()
            .map(|(n, c)| format!("`{n}` {c:.2}"))
            .collect();
        let shown = if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        };
        let _ = writeln!(md, "- {}: {shown}", op.operation);
    }
    let _ = writeln!(
        md,
        "\n| language `trace` (recorded), execute's `trace_level` (answered) | Redis memory per run (`used_memory` rise over {RETAINED} runs) | `MEMORY USAGE` of the run record (its JSON) | of its idempotency record | execute answer | trace steps |"
    );
    let _ = writeln!(md, "|---|--:|--:|--:|--:|--:|");
    for r in &capacity.retained {
        let _ = writeln!(
            md,
            "| `{}`, `{}`{} | {:.0} B | {} B ({} B) | {} | {} B | {} |",
            r.trace_ceiling,
            r.trace_level,
            if r.idempotency_key {
                ", with an `idempotency_key`"
            } else {
                ""
            },
            r.used_memory_per_run,
            r.run_key_bytes,
            r.run_value_bytes,
            r.idempotency_key_bytes
                .map_or("–".to_owned(), |b| format!("{b} B")),
            r.response_bytes,
            r.trace_steps
        );
    }
    let _ = writeln!(
        md,
        "\nBesides the requests, each gateway instance's store keeper sends {} `PING`s a second.",
        capacity.keeper_pings_per_second
    );
    md
}

/// A copy of the configuration at `config` whose languages record traces at
/// `level`, written into `dir`; relative paths in it are made absolute.
pub fn config_at_level(config: &Path, level: &str, dir: &Path) -> Result<PathBuf, String> {
    let text = std::fs::read_to_string(config).map_err(|e| format!("{}: {e}", config.display()))?;
    let base = config
        .parent()
        .ok_or("the configuration has no directory")?
        .canonicalize()
        .map_err(|e| format!("{}: {e}", config.display()))?;
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let key = line.split('=').next().unwrap_or("").trim();
        if key == "trace" && line.contains("\"full\"") && !line.contains("trace_workflow") {
            out.push_str(&format!("trace = \"{level}\""));
        } else if let Some((k, v)) = line.split_once("= \"../") {
            out.push_str(&format!("{k}= \"{}/../{v}", base.display()));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    let path = dir.join(format!("gateway.capacity-{level}.toml"));
    std::fs::write(&path, out).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_lines_name_the_command_and_its_source() {
        let sent = r#"1764590000.123456 [0 127.0.0.1:40000] "EVALSHA" "abc" "1" "k""#;
        let inside = r#"1764590000.123457 [0 lua] "zrange" "k" "0" "-1""#;
        let ping = r#"1764590000.2 [0 127.0.0.1:40000] "PING""#;
        assert_eq!(monitored_command(sent).as_deref(), Some("evalsha"));
        assert_eq!(monitored_command(inside).as_deref(), Some("lua:zrange"));
        assert_eq!(monitored_command(ping), None);
        assert_eq!(monitored_command("OK"), None);
    }

    #[test]
    fn a_ceiling_copy_changes_only_the_trace_and_the_relative_paths() {
        let config = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../deploy/gateway.local.toml"
        ));
        let dir = std::env::temp_dir().join(format!("pilotage-bench-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("scratch dir");
        let copy = config_at_level(config, "summary", &dir).expect("copy");
        let text = std::fs::read_to_string(&copy).expect("read the copy");
        let _ = std::fs::remove_dir_all(&dir);
        assert!(text.lines().any(|l| l == r#"trace = "summary""#), "{text}");
        assert!(text.contains(r#"trace = "trace_workflow""#), "{text}");
        assert!(!text.contains(r#"= "../"#), "{text}");
        let original = std::fs::read_to_string(config).expect("read the config");
        assert_eq!(text.lines().count(), original.lines().count());
    }
}
