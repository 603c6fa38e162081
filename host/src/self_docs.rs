//! The CLI describing itself: shell completion scripts (clap_complete) and
//! the man page (clap_mangen), both printed to stdout from the same clap
//! definition the parser uses, so they never drift from it.

use crate::cli::Cli;
use clap::CommandFactory;
use std::io::Write;

/// Exit code when stdout cannot be written.
const WRITE_FAILED: u8 = 3;

/// `pilotage completions SHELL`.
pub fn completions(shell: clap_complete::Shell) -> u8 {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "pilotage", &mut out);
    emit(&out)
}

/// `pilotage man`.
pub fn man() -> u8 {
    let mut out = Vec::new();
    if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut out) {
        eprintln!("error: cannot render the man page: {e}");
        return WRITE_FAILED;
    }
    emit(&out)
}

fn emit(bytes: &[u8]) -> u8 {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: cannot write to stdout: {e}");
            WRITE_FAILED
        }
    }
}
