//! `pilotage-bench`: the gateway's load benchmark.
//!
//! Starts the legacy engine, the gateway (embedded memory store, then Redis)
//! and a bare axum floor server as separate release processes, then loads
//! each pair of endpoints side by side in one run (the baseline, then the
//! gateway doing the same job) with 1, 16 and 64 keep-alive connections:
//!
//! - engine `POST /api/v1/workflows/check` vs the validate tool;
//! - engine `POST /api/v1/workflows/run` vs the execute tool (full trace,
//!   stored), with the memory store and with Redis;
//! - the floor vs `pilotage_manifest` and `pilotage_catalog list`;
//! - with a Mistral (`--mistral-url` or `PILOTAGE_MISTRAL_URL`): `mistral/v2`
//!   validate and execute through the gateway vs Mistral's REST API directly.
//!
//! It prints requests/s, p50/p99 latency and the gateway/baseline ratio per
//! row, reads the gateway's resident memory from `/proc`, and rewrites the
//! generated section of `docs/performance.md` (the markdown tables; the raw
//! results go to a JSON file outside the repository). The capacity row
//! measures the inputs of the capacity model (CPU, Redis commands and bytes
//! per request, Redis memory per retained run) into `docs/scaling.md`.
//! Speed is only ever reported, never asserted.

mod amplification;
mod capacity;
mod confirmations;
mod floor;
mod load;
mod mistral;
mod probe;
mod procs;
mod profile;
mod recovery;
mod redis_read;
mod report;
mod scenario;
mod soak;
mod targets;
mod workload;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "pilotage-bench",
    about = "Load benchmark: pilotage-gateway vs the engine it fronts and a bare HTTP + JSON floor"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Internal: the bare axum floor server (started by the benchmark itself).
    #[command(hide = true)]
    Floor {
        #[arg(long)]
        listen: String,
        #[arg(long)]
        bodies: PathBuf,
    },
}

/// Options of a benchmark run.
#[derive(clap::Args, Debug, Clone)]
pub struct RunArgs {
    /// Measured seconds per row.
    #[arg(long, default_value_t = 5.0)]
    pub duration: f64,
    /// Warm-up seconds before each measured window (connections open,
    /// caches fill; nothing counted).
    #[arg(long, default_value_t = 1.0)]
    pub warmup: f64,
    /// Connection counts, comma separated.
    #[arg(long, value_delimiter = ',', default_value = "1,16,64")]
    pub connections: Vec<usize>,
    /// Scenarios to run, comma separated (default: all). One of: validate,
    /// validate-uncached, manifest, catalog, execute-memory, validate-redis, execute-redis,
    /// memory, capacity, mistral; or, alone and only when named, `soak`
    /// (three instances and Redis for `--minutes`) or `recovery` (memory
    /// after a stream of malformed and mutated requests).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Distinct programs per shape in the memory row (`memory`).
    #[arg(long, default_value_t = 1000)]
    pub amplification_requests: u64,
    /// Length of the soak (`--only soak`), minutes (at least half a minute).
    #[arg(long, default_value_t = 10.0)]
    pub minutes: f64,
    /// Requests per second of the soak, over its three instances.
    #[arg(long, default_value_t = 30.0)]
    pub soak_rate: f64,
    /// Where the soak draws its chart (default: docs/soak.svg).
    #[arg(long)]
    pub soak_chart: Option<PathBuf>,
    /// Requests of the recovery row (`--only recovery`).
    #[arg(long, default_value_t = 130_000)]
    pub recovery_requests: u64,
    /// OpenStack Mistral's API base URL (`http://HOST:PORT/v2`) for the
    /// `mistral` row (default: `PILOTAGE_MISTRAL_URL`); without either the
    /// row is skipped, unless asked for with `--only`.
    #[arg(long)]
    pub mistral_url: Option<String>,
    /// Requests per side and operation in the `mistral` row.
    #[arg(long, default_value_t = 30)]
    pub mistral_requests: u64,
    /// Skip the Redis rows (no redis-server needed).
    #[arg(long)]
    pub no_redis: bool,
    /// The markdown file whose generated section gets the results; `-` skips it.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/performance.md"))]
    pub output: String,
    /// The markdown file whose generated section gets the capacity row's
    /// results (the inputs of the capacity model); `-` skips it.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/scaling.md"))]
    pub scaling_output: String,
    /// Where the raw results go as JSON; `-` skips it (they are also inside
    /// the markdown file).
    #[arg(long)]
    pub json: Option<String>,
    /// The gateway configuration (paths in it resolve against its directory).
    /// The default is the shipped one-instance file, as `pilotage-gateway
    /// demo` runs it: the benchmark only moves its addresses (and, for the
    /// Redis rows, its store) and calls as its demo API key.
    #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/gateway.local.toml"))]
    pub config: PathBuf,
    /// The gateway binary (default: `pilotage-gateway` next to this one).
    #[arg(long)]
    pub gateway_bin: Option<PathBuf>,
    /// The engine binary (default: `legacy-engine` next to this one).
    #[arg(long)]
    pub engine_bin: Option<PathBuf>,
    /// The nginx binary of the bare relay every row is also measured through.
    #[arg(long, default_value = "nginx")]
    pub nginx_bin: PathBuf,
    /// The Redis server binary.
    #[arg(long, default_value = "redis-server")]
    pub redis_bin: PathBuf,
    /// Do not run `cargo build --release` for the gateway and engine first
    /// (it runs only when started through cargo, and is a no-op when fresh).
    #[arg(long)]
    pub no_build: bool,
    /// Accept debug builds (for a quick smoke test; numbers are meaningless).
    #[arg(long)]
    pub allow_debug: bool,
    /// Extra environment of the gateway process, `KEY=VALUE`, repeatable:
    /// what-if runs without a code change (e.g. `RUST_LOG=warn`, or
    /// `LD_PRELOAD=` another malloc). Recorded in the report.
    #[arg(long = "gateway-env", value_name = "KEY=VALUE")]
    pub gateway_env: Vec<String>,
    /// Record a `perf` profile of the gateway in every gateway-side measured
    /// window into this directory (`<scenario>-<connections>.data`);
    /// `scripts/profile` runs it and breaks the profiles down.
    #[arg(long)]
    pub perf_dir: Option<PathBuf>,
    /// Keep the process logs (and Redis' data) after the run.
    #[arg(long)]
    pub keep_logs: bool,
}

impl RunArgs {
    /// The Mistral of the `mistral` row, if any.
    pub fn mistral_url(&self) -> Option<String> {
        self.mistral_url
            .clone()
            .or_else(|| std::env::var("PILOTAGE_MISTRAL_URL").ok())
            .filter(|u| !u.trim().is_empty())
    }

    pub fn warmup(&self) -> Duration {
        Duration::from_secs_f64(self.warmup.max(0.0))
    }
    pub fn duration(&self) -> Duration {
        Duration::from_secs_f64(self.duration.max(0.1))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = match cli.command {
        Some(Command::Floor { listen, bodies }) => runtime.block_on(floor::serve(&listen, &bodies)),
        None => runtime.block_on(scenario::run(cli.run)),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pilotage-bench: {e}");
            ExitCode::FAILURE
        }
    }
}
