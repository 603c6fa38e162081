//! `classify`: the operator's view of the classifier. With a message it shows
//! which rule matches (or that it falls to `constraint`) and the diagnostic;
//! with `--check` it runs every inline example of every configured rule file
//! and exits 1, naming the rule, when one does not hold.

use crate::classify::{
    ClassifyContext, EngineProblem, RuleTable, Severity, check_examples, explain,
};
use crate::config::Config;
use crate::guides::GuideSet;
use clap::Args;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ClassifyArgs {
    #[arg(long, default_value = "deploy/gateway.local.toml")]
    pub config: PathBuf,
    /// Language whose rules to use (default: the first configured).
    #[arg(long)]
    pub language: Option<String>,
    /// The engine's location field for the message.
    #[arg(long = "where")]
    pub location: Option<String>,
    /// Treat the message as a warning instead of an error.
    #[arg(long)]
    pub warning: bool,
    /// Run every inline example of every rule file instead.
    #[arg(long)]
    pub check: bool,
    /// The engine message to classify.
    pub message: Option<String>,
}

pub fn run(args: ClassifyArgs) -> ExitCode {
    // Rule files and their examples need no engine, so nothing an
    // engine's installation writes has to exist.
    let config = match Config::load_for_rules(&args.config) {
        Ok((config, warnings)) => {
            for w in warnings {
                eprintln!("warning: {w}");
            }
            config
        }
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let selected: Vec<_> = config
        .languages
        .iter()
        .filter(|l| args.language.as_deref().is_none_or(|n| n == l.name))
        .collect();
    if selected.is_empty() {
        eprintln!("no configured language matches {:?}", args.language);
        return ExitCode::FAILURE;
    }
    let mut tables = Vec::new();
    let mut seen = BTreeSet::new();
    for lang in &selected {
        let path = config.resolve(&lang.classifier);
        if !seen.insert(path.clone()) {
            continue;
        }
        let codes = match GuideSet::load(
            &config.resolve(&lang.guides_dir),
            &lang.name,
            &lang.guide_id_prefix,
        ) {
            Ok(g) => g.diagnostic_codes(),
            Err(e) => {
                eprintln!("guides of {}: {e}", lang.name);
                return ExitCode::FAILURE;
            }
        };
        let loaded = if args.check {
            RuleTable::load_unchecked(&path, &codes)
        } else {
            RuleTable::load(&path, &codes)
        };
        match loaded {
            Ok(t) => tables.push(t),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if args.check {
        let mut ok = true;
        for table in &tables {
            let report = check_examples(table);
            print!("{report}");
            ok &= report.all_passed();
        }
        return if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    let Some(message) = args.message else {
        eprintln!("give a message to classify, or --check");
        return ExitCode::FAILURE;
    };
    let problem = EngineProblem {
        level: if args.warning {
            Severity::Warning
        } else {
            Severity::Error
        },
        text: message,
        location: args.location,
    };
    let pointers = HashMap::new();
    let ctx = ClassifyContext {
        step_pointers: &pointers,
        visible_names: &[],
    };
    println!("{}", explain(&tables[0], &problem, &ctx));
    ExitCode::SUCCESS
}
