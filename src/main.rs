//! `pilotage-gateway`: serve, demo, check-config, classify, config-schema.

use clap::{Parser, Subcommand};
use pilotage_gateway::{cli, config::Config};
use std::path::PathBuf;
use std::process::ExitCode;

/// mimalloc: the gateway allocates many short-lived JSON values per request,
/// where glibc's allocator spent a quarter of the CPU under load
/// (docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Memory that comes back after a burst. mimalloc returns freed pages to
/// the OS only `purge_delay` ms after they empty (10 by default, times 10
/// for its arenas), and only when some later allocation passes by: a
/// gateway that goes quiet after a burst kept its peak resident for good
/// (docs/performance.md, "Memory that comes back"). Purging at once costs
/// nothing measurable under load. An operator's `MIMALLOC_PURGE_DELAY`
/// wins.
fn purge_freed_memory_at_once() {
    use std::ffi::{c_int, c_long};
    unsafe extern "C" {
        fn mi_option_get(option: c_int) -> c_long;
        fn mi_option_set(option: c_int, value: c_long);
    }
    /// `mi_option_purge_delay` in mimalloc 3's `mi_option_t`; the crate
    /// does not export it, so its default (10) is checked before setting,
    /// and another numbering leaves the allocator as it is.
    const PURGE_DELAY: c_int = 15;
    const PURGE_DELAY_DEFAULT: c_long = 10;
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: both read or write one of mimalloc's option slots; any option
    // index is accepted (out of range ones are ignored), no memory is passed.
    unsafe {
        if mi_option_get(PURGE_DELAY) == PURGE_DELAY_DEFAULT {
            mi_option_set(PURGE_DELAY, 0);
        }
    }
}

#[derive(Parser)]
#[command(
    name = "pilotage-gateway",
    version,
    about = "Pilotage 1.1 MCP gateway for a legacy workflow engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP on /mcp with the given configuration.
    Serve {
        #[arg(
            long,
            env = "PILOTAGE_CONFIG",
            default_value = "deploy/gateway.local.toml"
        )]
        config: PathBuf,
    },
    /// Start the bundled legacy engine and a gateway in front of it.
    Demo {
        /// Default: deploy/gateway.local.toml if it exists here, else the
        /// copy built into this binary (with its guides and rules).
        #[arg(long)]
        config: Option<PathBuf>,
        /// The legacy-engine binary (default: next to this executable).
        #[arg(long)]
        engine_bin: Option<PathBuf>,
    },
    /// Validate a configuration (and the guides and rules it names).
    CheckConfig {
        #[arg(long, default_value = "deploy/gateway.local.toml")]
        config: PathBuf,
        #[command(flatten)]
        probe: cli::check_config::ProbeArgs,
    },
    /// Show how the classifier reads an engine message, or check every rule example.
    Classify(cli::classify::ClassifyArgs),
    /// Print the JSON Schema of the configuration file (for editors;
    /// docs/gateway.schema.json is this output).
    ConfigSchema,
}

fn main() -> ExitCode {
    purge_freed_memory_at_once();
    let args = Cli::parse();
    // `serve` sets logging up once its configuration is read (the instance
    // name and trace export come from it).
    let _logs = (!matches!(args.command, Command::Serve { .. })).then(cli::init_logging);
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
    runtime.block_on(async move {
        match args.command {
            Command::Serve { config } => serve(&config).await,
            Command::Demo { config, engine_bin } => cli::demo::run(config, engine_bin).await,
            Command::CheckConfig { config, probe } => cli::check_config::run(&config, &probe).await,
            Command::Classify(a) => cli::classify::run(a),
            Command::ConfigSchema => {
                print!(
                    "{}",
                    pilotage_gateway::config::schema::gateway_schema_text()
                );
                ExitCode::SUCCESS
            }
        }
    })
}

async fn serve(path: &std::path::Path) -> ExitCode {
    match Config::load(path) {
        Ok(config) => cli::run_server(config).await,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}
