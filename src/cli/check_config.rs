//! `check-config`: loads a configuration with everything it names (guides,
//! classifier rules, schemas) and prints each problem with file, key and fix.

use crate::classify::Classifiers;
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
    let mut sources = Vec::new();
    for lang in &config.languages {
        match LanguageRuntime::load(&config, lang) {
            Ok(runtime) => sources.push(runtime.rule_source(&config)),
            Err(e) => {
                failed = true;
                let fix = match &e {
                    StartError::Guides { .. } => "fix the guide file named above",
                    _ => "see the message",
                };
                println!(
                    "{}: `language[{}]`: {e}; fix: {fix}",
                    path.display(),
                    lang.name
                );
            }
        }
    }
    // Rule files: every rule compiles, names declared codes and passes its
    // examples (the message names file, rule, line and fix).
    if let Err(e) = Classifiers::load(sources) {
        failed = true;
        println!("{e}");
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
