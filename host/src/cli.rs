//! The command line (clap). Connection options are global so they can be
//! given before or after the subcommand.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "pilotage",
    version,
    about = "Pilotage 1.1 Host: runs the standard Client loop (discover, learn, validate, risk gate, execute, trace) against any Pilotage MCP server"
)]
pub struct Cli {
    #[command(flatten)]
    pub conn: Connection,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct Connection {
    /// The server's MCP endpoint (Streamable HTTP), e.g. http://127.0.0.1:8080/mcp
    #[arg(long, global = true, env = "PILOTAGE_URL")]
    pub url: Option<String>,
    /// API key, sent as `Authorization: Bearer KEY`
    #[arg(long, global = true, env = "PILOTAGE_KEY", hide_env_values = true)]
    pub key: Option<String>,
    /// Read the API key from this file (trailing newline trimmed), so it
    /// stays out of argv and the environment
    #[arg(long, global = true, value_name = "PATH", conflicts_with = "key")]
    pub key_file: Option<PathBuf>,
    /// Trust this PEM CA certificate (or bundle) for https:// URLs, beside
    /// the system's roots (which SSL_CERT_FILE / SSL_CERT_DIR can also name)
    #[arg(long, global = true, value_name = "PEM")]
    pub ca_file: Option<PathBuf>,
    /// The Language to use (default: the first one that fits)
    #[arg(long, global = true)]
    pub language: Option<String>,
    /// Machine output: one JSON document on stdout
    #[arg(long, global = true)]
    pub json: bool,
    /// Bound of every call but execute, in seconds
    #[arg(long, global = true, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
    /// Bound of an execute call, in seconds; set it above the server's run deadline
    #[arg(long, global = true, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub execute_timeout: u64,
    /// Guide cache directory (default: $XDG_CACHE_HOME/pilotage or ~/.cache/pilotage)
    #[arg(long, global = true)]
    pub cache_dir: Option<PathBuf>,
    /// Do not read or write the guide cache
    #[arg(long, global = true)]
    pub no_cache: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Validate, gate and execute a program (FILE, or - for stdin)
    Run(RunArgs),
    /// Fetch a stored run's trace by run id
    Trace {
        run_id: String,
        /// summary or full (default: as recorded)
        #[arg(long)]
        level: Option<String>,
    },
    /// List the guides, or print one (through the cache)
    Guides {
        id: Option<String>,
        /// Only this topic of the guide (needs guides.topic_fetch)
        #[arg(long)]
        topic: Option<String>,
    },
    /// List the catalog with each entry's risk
    Catalog {
        /// Free-text search (needs catalog.search)
        #[arg(long)]
        q: Option<String>,
        #[arg(long)]
        kind: Option<String>,
        #[arg(long)]
        tag: Option<String>,
    },
    /// Print a shell completion script to stdout (e.g. `pilotage completions bash > /etc/bash_completion.d/pilotage`)
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff) to stdout (e.g. `pilotage man > pilotage.1`)
    Man,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The program: a file, or - to read it from stdin. JSON for languages
    /// whose program is a JSON value; for a language whose program travels
    /// as a string (e.g. mistral/v2 YAML) the file's text is sent as is
    pub file: PathBuf,
    /// The program's input, as JSON
    #[arg(long)]
    pub input: Option<String>,
    /// Validation/execution context, as JSON (for languages declaring a context schema)
    #[arg(long)]
    pub context: Option<String>,
    /// Approve a destructive or open-world execution in advance (a Host
    /// policy given outside the model). Without it, approval is asked at a
    /// terminal, or the execution is refused.
    #[arg(long)]
    pub approve: bool,
    /// How many catalog_drift refusals to recover from by re-validating
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=20))]
    pub max_drift_rounds: u32,
    /// Reuse an idempotency key (to replay a run whose answer was lost)
    #[arg(long)]
    pub idempotency_key: Option<String>,
}
