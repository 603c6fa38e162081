//! `check-config`: loads a configuration with everything it names (guides,
//! classifier rules, schemas) and prints each problem with file, key and fix.

use crate::config::Config;
use crate::gateway::{LanguageRuntime, StartError};
use std::path::Path;
use std::process::ExitCode;

pub async fn run(path: &Path) -> ExitCode {
    let config = match Config::load(path) {
        Ok(c) => c,
        Err(e) => {
            for p in &e.0 {
                println!("{p}");
            }
            return ExitCode::FAILURE;
        }
    };
    let mut failed = false;
    for lang in &config.languages {
        if let Err(e) = LanguageRuntime::load(&config, lang) {
            failed = true;
            let fix = match &e {
                StartError::Guides { .. } => "fix the guide file named above",
                StartError::Rules { .. } => {
                    "fix the rule named above, then run `pilotage-gateway classify --check`"
                }
                _ => "see the message",
            };
            println!(
                "{}: `language[{}]`: {e}; fix: {fix}",
                path.display(),
                lang.name
            );
        }
    }
    if failed {
        ExitCode::FAILURE
    } else {
        println!(
            "{}: ok ({} language(s))",
            path.display(),
            config.languages.len()
        );
        ExitCode::SUCCESS
    }
}
