//! `classify`: the operator's view of the classifier.
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ClassifyArgs {
    #[arg(long, default_value = "deploy/gateway.local.toml")]
    pub config: PathBuf,
    #[arg(long)]
    pub language: Option<String>,
    #[arg(long = "where")]
    pub location: Option<String>,
    #[arg(long)]
    pub check: bool,
    pub message: Option<String>,
}

pub fn run(_args: ClassifyArgs) -> ExitCode {
    ExitCode::FAILURE
}
