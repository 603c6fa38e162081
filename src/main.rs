//! `pilotage-gateway`: serve, demo, check-config, classify, config-schema.

use clap::{Parser, Subcommand};
use pilotage_gateway::{cli, config::Config};
use std::path::PathBuf;
use std::process::ExitCode;

mod allocator;

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
    allocator::purge_freed_memory_at_once();
    let args = Cli::parse();
    // `serve` sets logging up once its configuration is read (the instance
    // name and trace export come from it).
    let _logs = (!matches!(args.command, Command::Serve { .. })).then(cli::init_logging);
    // Serving reads its configuration first: the runtime's size comes from it.
    match args.command {
        Command::Serve { config } => match Config::load(&config) {
            Ok(config) => run(Some(config.runtime_threads()), cli::run_server(config)),
            Err(e) => {
                eprintln!("{e}");
                ExitCode::FAILURE
            }
        },
        Command::Demo { config, engine_bin } => match cli::demo::prepare(config) {
            Ok(demo) => run(Some(demo.config.runtime_threads()), demo.run(engine_bin)),
            Err(code) => code,
        },
        Command::CheckConfig { config, probe } => run(None, async move {
            cli::check_config::run(&config, &probe).await
        }),
        Command::Classify(a) => run(None, async move { cli::classify::run(a) }),
        Command::ConfigSchema => {
            print!(
                "{}",
                pilotage_gateway::config::schema::gateway_schema_text()
            );
            ExitCode::SUCCESS
        }
    }
}

/// Runs `work` on a runtime of `threads` workers (one per CPU when `None`).
fn run(threads: Option<usize>, work: impl Future<Output = ExitCode>) -> ExitCode {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(threads) = threads {
        builder.worker_threads(threads);
    }
    let runtime = match builder
        .enable_all()
        .on_thread_park(allocator::collect_when_due)
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    allocator::start_collecting(runtime.handle());
    runtime.block_on(work)
}
