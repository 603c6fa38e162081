//! One benchmark run: which pairs of endpoints are compared, the order they
//! run in, the processes they need, and the first-answer checks that make
//! sure every row measures real work (a valid program, a completed run with
//! its full trace, a real manifest and catalog page).
//!
//! Rows run pair by pair and, inside a pair, baseline, the bare nginx relay
//! to the baseline, then the gateway for each connection count, so the
//! numbers of a ratio are measured seconds apart under the same conditions.

use crate::RunArgs;
use crate::load::{self, Measured, Plan, Target};
use crate::probe::{answer, probe};
use crate::procs::{self, CpuClock, Memory, Proc};
use crate::report::{GatewayMemory, Report, Row, Side, Sides};
use crate::workload::{self, expect};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Which store the gateway of a pair runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Store {
    Memory,
    Redis,
}

impl Store {
    pub fn as_str(self) -> &'static str {
        match self {
            Store::Memory => "memory",
            Store::Redis => "redis",
        }
    }
}

/// What a pair's baseline is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Baseline {
    EngineCheck { vary: bool },
    EngineRun,
    FloorManifest,
    FloorCatalog,
}

/// A baseline and the gateway endpoint that does the same job.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pair {
    pub(crate) id: &'static str,
    title: &'static str,
    store: Store,
    pub(crate) baseline: Baseline,
    baseline_label: &'static str,
    gateway_label: &'static str,
    /// The gateway side calls inside an MCP session (initialize first, then
    /// `Mcp-Session-Id` on every request), as SDK clients do by default.
    session: bool,
}

/// Every pair, in the order they run (the Redis ones last, so Redis is only
/// started when it is needed). A new program on every call leads: it is
/// what agents send.
const PAIRS: &[Pair] = &[
    Pair {
        id: "validate-uncached",
        title: "validate, a new program each call (verdict cache miss)",
        store: Store::Memory,
        baseline: Baseline::EngineCheck { vary: true },
        baseline_label: "engine POST /api/v1/workflows/check",
        gateway_label: "validate_workflow",
        session: false,
    },
    Pair {
        id: "validate",
        title: "validate, one program repeated (verdict cache hit)",
        store: Store::Memory,
        baseline: Baseline::EngineCheck { vary: false },
        baseline_label: "engine POST /api/v1/workflows/check",
        gateway_label: "validate_workflow",
        session: false,
    },
    Pair {
        id: "manifest",
        title: "pilotage_manifest",
        store: Store::Memory,
        baseline: Baseline::FloorManifest,
        baseline_label: "bare axum route, same answer",
        gateway_label: "pilotage_manifest",
        session: false,
    },
    Pair {
        id: "catalog",
        title: "pilotage_catalog list",
        store: Store::Memory,
        baseline: Baseline::FloorCatalog,
        baseline_label: "bare axum route, same answer",
        gateway_label: "pilotage_catalog list",
        session: false,
    },
    Pair {
        id: "execute-memory",
        title: "execute, full trace, stored (memory store)",
        store: Store::Memory,
        baseline: Baseline::EngineRun,
        baseline_label: "engine POST /api/v1/workflows/run",
        gateway_label: "run_workflow",
        session: false,
    },
    Pair {
        id: "validate-redis",
        title: "validate, same program (verdict cache hit, Redis store)",
        store: Store::Redis,
        baseline: Baseline::EngineCheck { vary: false },
        baseline_label: "engine POST /api/v1/workflows/check",
        gateway_label: "validate_workflow",
        session: false,
    },
    Pair {
        id: "validate-redis-session",
        title: "validate, same program, in an MCP session (Redis store)",
        store: Store::Redis,
        baseline: Baseline::EngineCheck { vary: false },
        baseline_label: "engine POST /api/v1/workflows/check",
        gateway_label: "validate_workflow",
        session: true,
    },
    Pair {
        id: "execute-redis",
        title: "execute, full trace, stored (Redis store)",
        store: Store::Redis,
        baseline: Baseline::EngineRun,
        baseline_label: "engine POST /api/v1/workflows/run",
        gateway_label: "run_workflow",
        session: false,
    },
];

/// The memory row's id in `--only`.
const MEMORY: &str = "memory";
/// The capacity row's id in `--only` (needs Redis).
const CAPACITY: &str = "capacity";
/// The Mistral row's id in `--only`.
const MISTRAL: &str = "mistral";
/// The soak's id in `--only` (runs alone, only when asked for).
const SOAK: &str = "soak";
/// The recovery row's id in `--only` (runs alone, only when asked for).
const RECOVERY: &str = "recovery";

/// Scenario ids accepted by `--only`.
pub fn ids() -> Vec<&'static str> {
    PAIRS
        .iter()
        .map(|p| p.id)
        .chain([MEMORY, CAPACITY, MISTRAL, SOAK, RECOVERY])
        .collect()
}

fn wanted(args: &RunArgs, id: &str) -> bool {
    args.only.is_empty() || args.only.iter().any(|o| o == id)
}

/// The binaries a run starts.
struct Binaries {
    gateway: PathBuf,
    engine: PathBuf,
    own: PathBuf,
}

fn binaries(args: &RunArgs) -> Result<Binaries, String> {
    let own = std::env::current_exe().map_err(|e| format!("own executable: {e}"))?;
    let dir = own
        .parent()
        .ok_or("the executable has no directory")?
        .to_path_buf();
    let release = dir.file_name().is_some_and(|n| n == "release");
    if !release && !args.allow_debug {
        return Err(
            "this is not a release build; numbers of debug builds mean nothing: \
             run `cargo run --release -p pilotage-bench` (or scripts/bench)"
                .into(),
        );
    }
    let defaults = args.gateway_bin.is_none() && args.engine_bin.is_none();
    // Under cargo, make sure the measured binaries are the current source,
    // not whatever an earlier build left next to this one.
    if defaults
        && !args.no_build
        && let Ok(cargo) = std::env::var("CARGO")
    {
        let mut build = std::process::Command::new(cargo);
        build.args(["build", "-p", "pilotage-gateway", "-p", "legacy-engine"]);
        if release {
            build.arg("--release");
        }
        let status = build
            .status()
            .map_err(|e| format!("cargo build of the gateway and engine: {e}"))?;
        if !status.success() {
            return Err("cargo build of the gateway and engine failed".into());
        }
    }
    let pick = |given: &Option<PathBuf>, name: &str| -> Result<PathBuf, String> {
        let path = given.clone().unwrap_or_else(|| dir.join(name));
        if path.exists() {
            Ok(path)
        } else {
            Err(format!(
                "{} not found: build it with `cargo build --release -p {name}` or pass --{}-bin",
                path.display(),
                if name == "legacy-engine" {
                    "engine"
                } else {
                    "gateway"
                }
            ))
        }
    };
    Ok(Binaries {
        gateway: pick(&args.gateway_bin, "pilotage-gateway")?,
        engine: pick(&args.engine_bin, "legacy-engine")?,
        own,
    })
}

/// Runs the whole benchmark and writes the report.
pub async fn run(args: RunArgs) -> Result<(), String> {
    for id in &args.only {
        if !ids().contains(&id.as_str()) {
            return Err(format!(
                "unknown scenario '{id}'; known: {}",
                ids().join(", ")
            ));
        }
    }
    if args.only.iter().any(|o| o == SOAK || o == RECOVERY) {
        return run_alone(&args).await;
    }
    if args.connections.is_empty() || args.connections.contains(&0) {
        return Err("--connections needs positive counts".into());
    }
    let selected: Vec<Pair> = PAIRS
        .iter()
        .copied()
        .filter(|p| args.only.is_empty() || args.only.iter().any(|o| o == p.id))
        .filter(|p| !(args.no_redis && p.store == Store::Redis))
        .collect();
    let memory_row = wanted(&args, MEMORY);
    let capacity_row = wanted(&args, CAPACITY) && !args.no_redis;
    let mistral_asked = args.only.iter().any(|o| o == MISTRAL);
    if mistral_asked && args.mistral_url().is_none() {
        return Err("the mistral row needs --mistral-url (or PILOTAGE_MISTRAL_URL); scripts/mistral start prints it".into());
    }
    if selected.is_empty() && !memory_row && !capacity_row && !mistral_asked {
        return Err("no scenario selected".into());
    }
    let bins = binaries(&args)?;
    let logs = std::env::temp_dir().join(format!("pilotage-bench-{}", std::process::id()));
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let result = run_in(&args, &bins, &selected, &logs).await;
    if args.keep_logs || result.is_err() {
        eprintln!("process logs kept in {}", logs.display());
    } else {
        let _ = std::fs::remove_dir_all(&logs);
    }
    let report = result?;
    report.write(&args)
}

/// The soak or the recovery row: long runs of their own that print their
/// figures and leave the generated report alone.
async fn run_alone(args: &RunArgs) -> Result<(), String> {
    let [id] = args.only.as_slice() else {
        return Err(format!(
            "'{SOAK}' and '{RECOVERY}' run alone: pass `--only {SOAK}` or `--only {RECOVERY}`"
        ));
    };
    let bins = binaries(args)?;
    let logs = std::env::temp_dir().join(format!("pilotage-bench-{}", std::process::id()));
    std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
    let result = if id == SOAK {
        let chart = args
            .soak_chart
            .clone()
            .unwrap_or_else(crate::soak::default_chart);
        crate::soak::run(crate::soak::SoakArgs {
            minutes: args.minutes,
            rate: args.soak_rate,
            chart: &chart,
            gateway_bin: &bins.gateway,
            engine_bin: &bins.engine,
            redis_bin: &args.redis_bin,
            gateway_env: &args.gateway_env,
            logs: &logs,
        })
        .await
    } else {
        recovery(args, &bins, &logs).await
    };
    if args.keep_logs || result.is_err() {
        eprintln!("process logs kept in {}", logs.display());
    } else {
        let _ = std::fs::remove_dir_all(&logs);
    }
    result
}

async fn recovery(args: &RunArgs, bins: &Binaries, logs: &Path) -> Result<(), String> {
    let engine = procs::engine(&bins.engine, logs)?;
    let gateway = procs::gateway(
        &bins.gateway,
        &args.config,
        &engine,
        None,
        &args.gateway_env,
        logs,
    )?;
    println!(
        "recovery [{RECOVERY}] · {} malformed and mutated requests, 16 at a time, a fresh gateway (embedded store)",
        args.recovery_requests
    );
    crate::recovery::run(&gateway, args.recovery_requests).await?;
    Ok(())
}

async fn run_in(
    args: &RunArgs,
    bins: &Binaries,
    selected: &[Pair],
    logs: &Path,
) -> Result<Report, String> {
    let mut report = Report::new(args);
    let engine = procs::engine(&bins.engine, logs)?;
    let memory_row = args.only.is_empty() || args.only.iter().any(|o| o == MEMORY);
    println!(
        "engine {} · {} · {:.1} s warm-up + {:.1} s per row · connections {:?}",
        engine.url(),
        report.machine_line(),
        args.warmup,
        args.duration,
        args.connections
    );
    let mut redis = None;
    let mut floor = None;
    let engine_relay = procs::relay(&args.nginx_bin, &engine, logs).map_err(|e| {
        format!("{e} (the bare relay is nginx: install it, e.g. with scripts/bench, or pass --nginx-bin)")
    })?;
    let mut floor_relay = None;
    let mut resting = Vec::new();
    let mut last_load_ended = Instant::now();
    for pair in selected {
        if pair.store == Store::Redis && redis.is_none() {
            redis = Some(procs::redis(&args.redis_bin, logs).map_err(|e| {
                format!("{e} (install redis-server, e.g. with scripts/bench, or pass --no-redis)")
            })?);
        }
        let store_proc = redis.as_ref().filter(|_| pair.store == Store::Redis);
        // A fresh gateway per scenario: its idle and peak memory belong to
        // that scenario alone (caches and retained runs of an earlier one
        // would otherwise show up in every later row).
        let gateway = procs::gateway(
            &bins.gateway,
            &args.config,
            &engine,
            store_proc,
            &args.gateway_env,
            logs,
        )?;
        // Idle: started and answered one readiness probe, nothing else.
        let idle = gateway.memory().unwrap_or_default();
        let (baseline_proc, relay) = match pair.baseline {
            Baseline::FloorManifest | Baseline::FloorCatalog => {
                if floor.is_none() {
                    let f = start_floor(bins, &gateway, logs).await?;
                    floor_relay = Some(procs::relay(&args.nginx_bin, &f, logs)?);
                    floor = Some(f);
                }
                (
                    floor.as_ref().expect("started above"),
                    floor_relay.as_ref().expect("started with the floor"),
                )
            }
            _ => (&engine, &engine_relay),
        };
        let baseline_target = baseline_target(pair.baseline, baseline_proc);
        let relay_target = self::baseline_target(pair.baseline, relay);
        let mut gateway_target = gateway_target(pair, &gateway);
        if pair.session {
            let session = crate::probe::open_session(&gateway_target).await?;
            gateway_target = gateway_target.header_value("mcp-session-id", &session)?;
        }
        probe(pair, &baseline_target, &gateway_target).await?;
        probe(pair, &relay_target, &gateway_target).await?;
        println!(
            "\n{} [{}] · gateway ({} store) idle RSS {:.1} MiB",
            pair.title,
            pair.id,
            pair.store.as_str(),
            idle.rss_mib()
        );
        for &connections in &args.connections {
            let mut watch = vec![baseline_proc.cpu_clock(), CpuClock::own()];
            let base = measure(&baseline_target, connections, args, &watch).await?;
            watch = vec![
                relay.cpu_clock(),
                baseline_proc.cpu_clock(),
                CpuClock::own(),
            ];
            let relayed = measure(&relay_target, connections, args, &watch).await?;
            watch = vec![gateway.cpu_clock(), engine.cpu_clock(), CpuClock::own()];
            if let Some(r) = store_proc {
                watch.push(r.cpu_clock());
            }
            let recording = args.perf_dir.as_ref().map(|dir| {
                let name = format!("{}-{connections}", pair.id);
                let delay = PAUSE + args.warmup();
                crate::profile::start(dir, &name, gateway.pid(), delay, args.duration())
            });
            let counted = crate::confirmations::read(&gateway).await?;
            let gw = measure(&gateway_target, connections, args, &watch).await?;
            let catalog_requests = counted.per_call(crate::confirmations::read(&gateway).await?);
            if let Some(recording) = recording
                && let Some(file) = recording.finish().await
            {
                println!("  profile: {}", file.display());
            }
            let memory = gateway.memory().unwrap_or_default();
            let mut row = Row::new(
                pair.id,
                pair.title,
                pair.store.as_str(),
                connections,
                Sides {
                    baseline: Side::new(pair.baseline_label, &baseline_target, &base),
                    relay: Side::new(RELAY_LABEL, &relay_target, &relayed),
                    gateway: Side::new(pair.gateway_label, &gateway_target, &gw),
                },
                memory,
            );
            row.catalog_requests_per_call = catalog_requests;
            println!("{}", row.console_line());
            report.rows.push(row);
        }
        extra_figures(pair, &gateway, store_proc, &mut report).await?;
        let under_load = gateway.memory().unwrap_or_default();
        println!(
            "  gateway peak RSS {:.1} MiB (VmHWM)",
            under_load.peak_mib()
        );
        report.gateways.push(GatewayMemory {
            scenario: pair.id.into(),
            store: pair.store.as_str().into(),
            idle,
            under_load,
            after_load: Memory::default(),
            kept_bytes: None,
        });
        // Kept running, idle, until every pair has run: its memory after
        // the load is read once the caches it filled could have let go.
        resting.push(gateway);
        last_load_ended = Instant::now();
    }
    after_the_load(&resting, last_load_ended, &mut report).await;
    drop(resting);
    if wanted(args, CAPACITY) && !args.no_redis {
        if redis.is_none() {
            redis = Some(procs::redis(&args.redis_bin, logs).map_err(|e| {
                format!("{e} (install redis-server, e.g. with scripts/bench, or pass --no-redis)")
            })?);
        }
        let redis = redis.as_ref().expect("started above");
        let gateway = procs::gateway(
            &bins.gateway,
            &args.config,
            &engine,
            Some(redis),
            &args.gateway_env,
            logs,
        )?;
        let gateway_at = |level: &str| {
            let config = crate::capacity::config_at_level(&args.config, level, logs)?;
            procs::gateway(
                &bins.gateway,
                &config,
                &engine,
                Some(redis),
                &args.gateway_env,
                logs,
            )
        };
        report.capacity =
            Some(crate::capacity::run(args, &gateway, &engine, redis, gateway_at).await?);
    }
    if memory_row {
        println!(
            "\nmemory [{MEMORY}] · {} distinct programs per shape, one at a time, a fresh gateway each",
            args.amplification_requests
        );
        report.amplification = crate::amplification::run(args.amplification_requests, || {
            procs::gateway(
                &bins.gateway,
                &args.config,
                &engine,
                None,
                &args.gateway_env,
                logs,
            )
        })
        .await?;
    }
    let mistral_row = wanted(args, MISTRAL);
    match (args.mistral_url(), mistral_row) {
        (Some(url), true) => {
            println!(
                "\nmistral [{MISTRAL}] · mistral/v2 through the gateway vs Mistral at {url} directly, {} requests per side, one at a time",
                args.mistral_requests
            );
            report.mistral = crate::mistral::run(crate::mistral::MistralArgs {
                url: &url,
                requests: args.mistral_requests,
                gateway_bin: &bins.gateway,
                engine: &engine,
                gateway_env: &args.gateway_env,
                logs,
            })
            .await?;
            for row in &report.mistral {
                println!("{}", crate::mistral::console_line(row));
            }
        }
        (None, true) => println!(
            "\nmistral [{MISTRAL}] skipped: no Mistral (pass --mistral-url or set PILOTAGE_MISTRAL_URL)"
        ),
        _ => {}
    }
    report.evaluate();
    Ok(report)
}

/// The figures some pairs add besides their rows: `catalog_version` of
/// 10,000 entries made from the catalog page, the bytes Redis keeps per
/// stored run.
async fn extra_figures(
    pair: &Pair,
    gateway: &Proc,
    redis: Option<&Proc>,
    report: &mut Report,
) -> Result<(), String> {
    match (pair.baseline, redis) {
        (Baseline::FloorCatalog, _) => {
            let page = answer(&gateway_target(pair, gateway)).await?;
            report.catalog_version_10k = crate::targets::catalog_version_10k(&page);
        }
        (Baseline::EngineRun, Some(redis)) => {
            let record = crate::redis_read::key_bytes(redis, "*:run:*").await?;
            report.run_record =
                record.map(|(memory_usage, value_bytes)| crate::targets::RunRecord {
                    memory_usage,
                    value_bytes,
                });
        }
        _ => {}
    }
    Ok(())
}

/// How long a gateway rests after its load before its memory is read
/// again: the verdict cache's idle time (60 s) and one of its sweeps
/// (20 s), after which nothing a burst of one-off programs filled is held.
/// What an agent's burst leaves held is memory the machine no longer has.
const REST: Duration = Duration::from_secs(80);

/// Reads each resting gateway's memory once it has rested [`REST`] (they
/// rest side by side, so the run waits for the last one only, whose load
/// ended at `last_load_ended`).
async fn after_the_load(resting: &[Proc], last_load_ended: Instant, report: &mut Report) {
    if resting.is_empty() {
        return;
    }
    let left = REST.saturating_sub(last_load_ended.elapsed());
    println!(
        "\nmemory after the load: the gateways rest {} s more",
        left.as_secs()
    );
    tokio::time::sleep(left).await;
    for (gateway, memory) in resting.iter().zip(report.gateways.iter_mut()) {
        memory.after_load = gateway.memory().unwrap_or_default();
        memory.kept_bytes = crate::confirmations::store_bytes(gateway)
            .await
            .ok()
            .flatten();
        println!(
            "  {} ({} store): idle {:.1} MiB, after the load {:.1} MiB, of which the store keeps {} MiB",
            memory.scenario,
            memory.store,
            memory.idle.rss_mib(),
            memory.after_load.rss_mib(),
            memory.kept_mib()
        );
    }
}

/// The label of every row's middle measurement.
const RELAY_LABEL: &str = "nginx relay to the same endpoint";

/// The pause before each measurement's warm-up.
const PAUSE: Duration = Duration::from_millis(300);

async fn measure(
    target: &Target,
    connections: usize,
    args: &RunArgs,
    watch: &[CpuClock],
) -> Result<Measured, String> {
    // A short pause lets the previous row's connections close and the
    // processes go idle before the next warm-up starts.
    tokio::time::sleep(PAUSE).await;
    let plan = Plan {
        connections,
        warmup: args.warmup(),
        duration: args.duration(),
        watch,
    };
    load::run(target, &plan).await
}

/// The trace context a baseline request carries: the gateway propagates
/// one on every engine call, and the engine handles (and logs) it, so both
/// sides of a row ask the engine for the same work.
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn baseline_target(baseline: Baseline, proc: &Proc) -> Target {
    match baseline {
        Baseline::EngineCheck { vary } => Target::new(
            proc.addr,
            "/api/v1/workflows/check",
            workload::engine_check(vary),
            expect::CHECK_OK,
        )
        .header("x-tenant", workload::TENANT)
        .header("traceparent", TRACEPARENT),
        Baseline::EngineRun => Target::new(
            proc.addr,
            "/api/v1/workflows/run",
            workload::engine_run(),
            expect::RUN_COMPLETED,
        )
        .header("x-tenant", workload::TENANT)
        .header("traceparent", TRACEPARENT),
        Baseline::FloorManifest => Target::new(
            proc.addr,
            "/manifest",
            workload::mcp_manifest(),
            expect::FLOOR,
        ),
        Baseline::FloorCatalog => Target::new(
            proc.addr,
            "/catalog",
            workload::mcp_catalog_list(),
            expect::FLOOR,
        ),
    }
}

fn gateway_target(pair: &Pair, gateway: &Proc) -> Target {
    let (body, marker) = match pair.baseline {
        Baseline::EngineCheck { vary } => (workload::mcp_validate(vary), expect::VALID),
        Baseline::EngineRun => (workload::mcp_execute(), expect::RUN_SUCCESS),
        Baseline::FloorManifest => (workload::mcp_manifest(), expect::TOOL_OK),
        Baseline::FloorCatalog => (workload::mcp_catalog_list(), expect::TOOL_OK),
    };
    Target::new(gateway.addr, "/mcp", body, marker).header("authorization", workload::BEARER)
}

/// Captures the gateway's manifest and catalog answers and starts the floor
/// serving them.
async fn start_floor(bins: &Binaries, gateway: &Proc, logs: &Path) -> Result<Proc, String> {
    let manifest = answer(&gateway_target(&pair("manifest"), gateway)).await?;
    let catalog = answer(&gateway_target(&pair("catalog"), gateway)).await?;
    let bodies = crate::floor::Bodies { manifest, catalog };
    let file = logs.join("floor-bodies.json");
    let text = serde_json::to_string(&bodies).map_err(|e| e.to_string())?;
    std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    procs::floor(&bins.own, &file, logs)
}

fn pair(id: &str) -> Pair {
    *PAIRS.iter().find(|p| p.id == id).expect("a known pair id")
}
