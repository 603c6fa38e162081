//! Dispatch: turns the parsed command line into a connection, a reporter
//! and an approver, runs the command, and returns the exit code.
//!
//! Exit codes: 0 success; 1 program invalid or run not ok; 2 refused by the
//! risk gate; 3 transport, carrier, request or answer-shape error; 64 a
//! command-line problem found before anything was sent (clap's own usage
//! errors would be 2, which must keep meaning "refused by the gate").

use crate::approve::TerminalApprover;
use crate::cli::{Cli, Command, RunArgs};
use crate::commands::{self, Rendered, Stopped};
use crate::connect::McpConnection;
use crate::credentials;
use crate::gate::{Approver, NoApprover, PolicyApproval};
use crate::guide_cache::GuideCache;
use crate::output::Style;
use crate::output::json::JsonReporter;
use crate::output::text::TextReporter;
use crate::report::{Event, Exit, Reporter};
use crate::server::Timeouts;
use crate::standard_loop::{self, RunSpec};
use serde_json::{Value, json};
use std::io::{IsTerminal, Read};
use std::time::Duration;

/// Exit code of a command-line problem (sysexits `EX_USAGE`).
pub const USAGE: u8 = 64;

/// Parses the command line; usage errors exit with [`USAGE`], help and
/// version with 0.
pub fn parse_cli() -> Result<Cli, u8> {
    use clap::Parser;
    Cli::try_parse().map_err(|e| {
        let _ = e.print();
        if e.use_stderr() { USAGE } else { 0 }
    })
}

pub async fn main(cli: Cli) -> u8 {
    // Completions and the man page need no server.
    match &cli.command {
        Command::Completions { shell } => return crate::self_docs::completions(*shell),
        Command::Man => return crate::self_docs::man(),
        _ => {}
    }
    let conn = &cli.conn;
    let timeouts = Timeouts {
        call: Duration::from_secs(conn.timeout),
        execute: Duration::from_secs(conn.execute_timeout),
    };
    let style = Style {
        color: !conn.json
            && std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let Some(url) = conn.url.as_deref() else {
        eprintln!("error: --url (or PILOTAGE_URL) is required");
        return USAGE;
    };
    let cache = if conn.no_cache {
        None
    } else {
        conn.cache_dir
            .clone()
            .map(GuideCache::new)
            .or_else(GuideCache::from_env)
    };
    let language = conn.language.as_deref();
    let key = match credentials::key(conn.key.as_deref(), conn.key_file.as_deref()) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("error: {e}");
            return USAGE;
        }
    };
    let key = key.as_deref();
    let roots = match credentials::extra_roots(conn.ca_file.as_deref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return USAGE;
        }
    };

    let server = match &cli.command {
        Command::Run(args) => {
            return run(
                url,
                key,
                roots,
                language,
                args,
                timeouts,
                cache.as_ref(),
                conn.json,
                style,
            )
            .await;
        }
        _ => match McpConnection::connect(url, key, roots, timeouts).await {
            Ok(s) => s,
            Err(e) => return print_stopped(conn.json, &Stopped::new("connect", e)),
        },
    };
    let result = match &cli.command {
        Command::Trace { run_id, level } => {
            commands::trace::run(&server, language, run_id, level.as_deref(), timeouts, style).await
        }
        Command::Guides { id, topic } => {
            commands::guides::run(
                &server,
                cache.as_ref(),
                language,
                id.as_deref(),
                topic.as_deref(),
                timeouts,
            )
            .await
        }
        Command::Catalog { q, kind, tag } => {
            let f = commands::catalog::Filters {
                q: q.clone(),
                kind: kind.clone(),
                tag: tag.clone(),
            };
            commands::catalog::run(&server, language, &f, timeouts).await
        }
        // Returned above; kept total so no path can panic.
        Command::Run(_) | Command::Completions { .. } | Command::Man => {
            Err(Stopped::new("dispatch", "handled on its own"))
        }
    };
    server.close().await;
    match result {
        Ok(r) => print_rendered(conn.json, &r),
        Err(s) => print_stopped(conn.json, &s),
    }
}

fn print_rendered(json: bool, r: &Rendered) -> u8 {
    if json {
        let mut doc = r.json.clone();
        if let Some(o) = doc.as_object_mut() {
            o.insert("exit".into(), json!(r.exit.code()));
        }
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        print!("{}", r.text);
        if !r.text.ends_with('\n') {
            println!();
        }
    }
    r.exit.code()
}

fn print_stopped(json: bool, s: &Stopped) -> u8 {
    let exit = Exit::Failure;
    if json {
        let doc = json!({"error": {"stage": s.stage, "message": s.message},
            "result": exit.name(), "exit": exit.code()});
        println!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        eprintln!("error during {}: {}", s.stage, s.message);
    }
    exit.code()
}

/// Reads a JSON value given on the command line.
fn json_arg(name: &str, text: Option<&str>) -> Result<Option<Value>, String> {
    text.map(|t| serde_json::from_str(t).map_err(|e| format!("--{name} is not JSON: {e}")))
        .transpose()
}

/// Reads the program: a file, or stdin for `-`. Returns the program as JSON
/// (or, when the text is not JSON, the text as a JSON string, for a
/// Language whose program travels as a string) and the text itself.
fn read_program(args: &RunArgs) -> Result<(Value, String), String> {
    let text = if args.file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| format!("cannot read the program from stdin: {e}"))?;
        s
    } else {
        std::fs::read_to_string(&args.file)
            .map_err(|e| format!("cannot read {}: {e}", args.file.display()))?
    };
    let program = serde_json::from_str(&text).unwrap_or_else(|_| Value::String(text.clone()));
    Ok((program, text))
}

#[allow(clippy::too_many_arguments)]
async fn run(
    url: &str,
    key: Option<&str>,
    roots: Vec<reqwest::Certificate>,
    language: Option<&str>,
    args: &RunArgs,
    timeouts: Timeouts,
    cache: Option<&GuideCache>,
    json: bool,
    style: Style,
) -> u8 {
    let prepared = read_program(args).and_then(|program| {
        Ok((
            program,
            json_arg("input", args.input.as_deref())?,
            json_arg("context", args.context.as_deref())?,
        ))
    });
    let ((program, program_text), input, context) = match prepared {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return USAGE;
        }
    };
    let mut reporter: Box<dyn Reporter> = if json {
        Box::new(JsonReporter::new(std::io::stdout()))
    } else {
        Box::new(TextReporter::new(
            std::io::stdout(),
            std::io::stderr(),
            style,
        ))
    };
    // Approval comes from outside the program and the server: a standing
    // policy on the command line, or a person at a terminal.
    let mut approver: Box<dyn Approver> = if args.approve {
        Box::new(PolicyApproval)
    } else if let Some(t) = TerminalApprover::detect(args.file.as_os_str() == "-") {
        Box::new(t)
    } else {
        Box::new(NoApprover(
            "no terminal to ask for approval (stdin/stderr are not a terminal) and --approve was not given; approve with --approve, or run on a terminal to confirm interactively".into(),
        ))
    };
    let server = match McpConnection::connect(url, key, roots, timeouts).await {
        Ok(s) => s,
        Err(e) => {
            reporter.event(Event::Failed {
                stage: "connect",
                error: e.to_string(),
                advice: None,
            });
            reporter.finish(Exit::Failure);
            return Exit::Failure.code();
        }
    };
    let spec = RunSpec {
        program,
        program_text: Some(program_text),
        input,
        context,
        language: language.map(str::to_string),
        max_drift_rounds: args.max_drift_rounds,
        idempotency_key: args.idempotency_key.clone(),
        timeouts,
    };
    let exit =
        standard_loop::run(&server, cache, &spec, approver.as_mut(), reporter.as_mut()).await;
    server.close().await;
    exit.code()
}
