//! `check-config`: loads a configuration with everything it names (guides,
//! classifier rules, schemas) and prints each problem with file, key and fix;
//! with `--probe` it then asks the engine (see `probe`).

use crate::classify::Classifiers;
use crate::config::Config;
use crate::gateway::{LanguageRuntime, StartError};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `--probe` and what it runs with.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ProbeArgs {
    /// Also connect to the engine and show what the mapping reads from it;
    /// exit 1 on anything missing or unknown.
    #[arg(long)]
    pub probe: bool,
    /// Tenant to probe as (default: the anonymous tenant, else the first key's).
    #[arg(long, requires = "probe")]
    pub tenant: Option<String>,
    /// A harmless program (JSON file) to dry-run instead of the built-in one.
    #[arg(long, requires = "probe")]
    pub program: Option<PathBuf>,
    /// The input of that program (JSON text).
    #[arg(long, requires = "program")]
    pub input: Option<String>,
}

pub async fn run(path: &Path, probe: &ProbeArgs) -> ExitCode {
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
        match LanguageRuntime::check(&config, lang) {
            Ok(source) => sources.push(source),
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
    let classifiers = match Classifiers::load(sources) {
        Ok(c) => Some(c),
        Err(e) => {
            failed = true;
            println!("{e}");
            None
        }
    };
    if failed {
        return ExitCode::FAILURE;
    }
    for warning in config.warnings() {
        println!("{warning}");
    }
    println!(
        "{}: ok ({} language(s))",
        path.display(),
        config.languages.len()
    );
    match (probe.probe, classifiers) {
        (true, Some(classifiers)) => run_probe(&config, &classifiers, probe).await,
        _ => ExitCode::SUCCESS,
    }
}

async fn run_probe(config: &Config, classifiers: &Classifiers, args: &ProbeArgs) -> ExitCode {
    use super::probe::{ProbeInput, Verdict, harmless_program, probe};
    let tenant = args
        .tenant
        .clone()
        .or_else(|| {
            (!config.auth.anonymous_tenant.is_empty()).then(|| config.auth.anonymous_tenant.clone())
        })
        .or_else(|| config.auth.keys.first().map(|k| k.tenant.clone()))
        .unwrap_or_default();
    let (program, input) = match &args.program {
        None => harmless_program(),
        Some(file) => {
            let program = std::fs::read_to_string(file)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()));
            let input = serde_json::from_str(args.input.as_deref().unwrap_or("{}"));
            match (program, input) {
                (Ok(p), Ok(i)) => (p, i),
                (Err(e), _) => {
                    println!(
                        "--program {}: {e}; fix: name a JSON program file",
                        file.display()
                    );
                    return ExitCode::FAILURE;
                }
                (_, Err(e)) => {
                    println!("--input: {e}; fix: pass the program's input as JSON text");
                    return ExitCode::FAILURE;
                }
            }
        }
    };
    let rules = classifiers
        .languages()
        .filter_map(|l| {
            classifiers
                .table(l)
                .map(|t| (t.file().display().to_string(), t))
        })
        .collect();
    println!("probing {} as tenant '{tenant}'", config.engine.url);
    let findings = probe(
        config,
        &ProbeInput {
            tenant,
            program,
            input,
            rules,
        },
    )
    .await;
    for f in &findings {
        println!("{f}");
    }
    let bad = findings
        .iter()
        .filter(|f| {
            matches!(
                f.verdict,
                Verdict::Missing | Verdict::Unknown | Verdict::Unreachable
            )
        })
        .count();
    if bad == 0 {
        println!("probe: ok ({} findings)", findings.len());
        ExitCode::SUCCESS
    } else {
        println!("probe: {bad} missing, unknown or unreachable");
        ExitCode::FAILURE
    }
}
