//! Command line: where to listen, which seed to load, which REST dialect to speak.

use std::path::PathBuf;

use clap::Parser;

use crate::http::Dialect;

/// A reference legacy workflow engine with its own REST dialect.
#[derive(Debug, Parser)]
#[command(name = "legacy-engine", version, about)]
pub struct Cli {
    /// Address to listen on (`127.0.0.1:0` picks a free port; the real address is printed).
    #[arg(long, env = "LEGACY_ENGINE_LISTEN", default_value = "127.0.0.1:7070")]
    pub listen: String,
    /// Seed file replacing the shipped seed.
    #[arg(long, env = "LEGACY_ENGINE_SEED")]
    pub seed: Option<PathBuf>,
    /// REST dialect to speak.
    #[arg(long, env = "LEGACY_ENGINE_DIALECT", value_enum, default_value = "a")]
    pub dialect: Dialect,
}
