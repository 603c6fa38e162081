//! `check-config --probe` against the real engine in each of its dialects:
//! the shipped mappings pass, and a deliberately wrong mapping of each kind
//! fails (exit 1) with the key to fix named in the report; an engine that
//! does not answer is one line naming its URL and the cause.

use crate::common::{Engine, repo_path};
use std::path::PathBuf;
use std::process::Command;

/// A configuration file: `base` with `edit` applied, guide and rule paths
/// made absolute so it may live anywhere.
fn config_with(base: &str, edit: impl Fn(String) -> String, rules: Option<String>) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "pilotage-probe-{}-{:x}",
        std::process::id(),
        rand::random::<u64>()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let repo = repo_path("");
    let mut text = std::fs::read_to_string(repo_path(base)).expect("read base config");
    text = text
        .replace("\"../guides/", &format!("\"{}guides/", repo.display()))
        .replace(
            "\"../classifiers/",
            &format!("\"{}classifiers/", repo.display()),
        );
    if let Some(rules) = rules {
        let file = dir.join("rules.toml");
        std::fs::write(&file, rules).expect("write rules");
        text = regex::Regex::new(r#"classifier = "[^"]*""#)
            .unwrap()
            .replace(
                &text,
                format!("classifier = {:?}", file.display().to_string()).as_str(),
            )
            .into_owned();
    }
    let path = dir.join("gateway.toml");
    std::fs::write(&path, edit(text)).expect("write config");
    path
}

/// Runs the probe; returns (exit code, stdout).
fn probe(config: &PathBuf, engine: &Engine) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
        .args(["check-config", "--probe", "--config"])
        .arg(config)
        .env("PILOTAGE_ENGINE_URL", &engine.url)
        .env("RUST_LOG", "off")
        .output()
        .expect("run pilotage-gateway");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn append(extra: &'static str) -> impl Fn(String) -> String {
    move |text| format!("{text}\n{extra}\n")
}

fn replace(from: &'static str, to: &'static str) -> impl Fn(String) -> String {
    move |text| {
        assert!(text.contains(from), "the base config has {from:?}");
        text.replacen(from, to, 1)
    }
}

fn assert_fails_naming(config: PathBuf, engine: &Engine, key: &str) {
    let (code, out) = probe(&config, engine);
    assert_eq!(code, 1, "a wrong mapping must fail the probe:\n{out}");
    let named = out
        .lines()
        .any(|l| (l.starts_with("MISSING") || l.starts_with("UNKNOWN")) && l.contains(key));
    assert!(named, "no MISSING/UNKNOWN line names {key}:\n{out}");
}

#[test]
fn the_shipped_mappings_pass_against_their_dialects() {
    for (dialect, config) in [
        ("a", "deploy/gateway.local.toml"),
        ("b", "deploy/gateway.dialect-b.toml"),
        ("c", "deploy/gateway.dialect-c.toml"),
    ] {
        let engine = Engine::spawn(&["--dialect", dialect]);
        let (code, out) = probe(&repo_path(config), &engine);
        assert_eq!(code, 0, "dialect {dialect}:\n{out}");
        assert!(out.contains("probe: ok"), "{out}");
        assert!(
            out.contains("found   engine.mapping.events.counter_base"),
            "{out}"
        );
    }
}

#[test]
fn wrong_mappings_of_dialect_a_fail_naming_the_key() {
    let engine = Engine::spawn(&[]);
    let base = "deploy/gateway.local.toml";
    let cases: Vec<(&'static str, &str)> = vec![
        (
            "[engine.mapping.check]\nerror_level = \"ERR\"",
            "engine.mapping.check.error_level",
        ),
        (
            "[engine.mapping.events]\ncounter_base = 0",
            "engine.mapping.events.counter_base",
        ),
        (
            "[engine.mapping.catalog]\ntitle = \"label\"",
            "engine.mapping.catalog.title",
        ),
        (
            "[engine.mapping]\nerror_paths = [\"message\"]",
            "engine.mapping.error_paths",
        ),
        (
            "[engine.mapping.run]\nstates = { DONE = \"completed\", FAILED = \"failed\" }",
            "engine.mapping.run.states",
        ),
        (
            "[engine.mapping.events]\narms = { yes = \"then\", no = \"else\" }",
            "engine.mapping.events.arms",
        ),
        (
            "[engine.mapping.run.encodings]\ntrace = [\"yes\", \"no\"]",
            "engine.mapping.run.body",
        ),
        (
            "[engine.mapping.effects]\nread = { risk = \"safe\", readOnly = true, destructive = false, openWorld = false }",
            "engine.mapping.effects",
        ),
    ];
    for (extra, key) in cases {
        assert_fails_naming(config_with(base, append(extra), None), &engine, key);
    }
}

#[test]
fn wrong_mappings_of_dialects_b_and_c_fail_naming_the_key() {
    let b = Engine::spawn(&["--dialect", "b"]);
    let base = "deploy/gateway.dialect-b.toml";
    assert_fails_naming(
        config_with(
            base,
            replace("assign = \"set\"", "assigned = \"set\""),
            None,
        ),
        &b,
        "engine.mapping.events",
    );
    assert_fails_naming(
        config_with(
            base,
            replace("problems = \"issues\"", "problems = \"problems\""),
            None,
        ),
        &b,
        "engine.mapping.check.problems",
    );

    let c = Engine::spawn(&["--dialect", "c"]);
    let base = "deploy/gateway.dialect-c.toml";
    // A wrong location syntax: the rule file's own examples refuse it at load...
    let rules = std::fs::read_to_string(repo_path("classifiers/workflow-v1.dialect-c.toml"))
        .expect("dialect c rules")
        .replacen("index_base = 1", "index_base = 0", 1);
    let (code, out) = probe(&config_with(base, |t| t, Some(rules.clone())), &c);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("rules.toml") && out.contains("/steps/1/capability"),
        "{out}"
    );
    // ...and without examples, the probe sees the engine's locations land outside
    // the program.
    let without_examples = regex::Regex::new(r"(?s)\[\[rule\.example\]\].*?(?:\n\n|\z)")
        .unwrap()
        .replace_all(&rules, "\n")
        .into_owned();
    assert_fails_naming(
        config_with(base, |t| t, Some(without_examples)),
        &c,
        "location_syntax",
    );
    for (from, to, key) in [
        (
            "status = { \"2xx\" = \"answer\", \"422\" = \"answer\" }",
            "status = { \"2xx\" = \"answer\" }",
            "engine.mapping.check",
        ),
        (
            "counter_base = 0",
            "counter_base = 1",
            "engine.mapping.events.counter_base",
        ),
        (
            "first_cursor = \"0\"\nencoded = true",
            "first_cursor = \"0\"\nencoded = false",
            "engine.mapping.events",
        ),
        (
            "dry_run = [\"SIMULATE\", \"LIVE\"]",
            "dry_run = [\"simulate\", \"live\"]",
            "engine.mapping.run.body",
        ),
        (
            "runner = \"async\"",
            "runner = \"sync\"",
            "engine.mapping.run.states",
        ),
        (
            "spec = { document = \"{{program}}\", arguments",
            "spec = { doc = \"{{program}}\", arguments",
            "engine.mapping.run.body",
        ),
        (
            "body = { spec = { document = \"{{program}}\", context = \"{{context}}\" } }",
            "body = { document = \"{{program}}\", context = \"{{context}}\" }",
            "engine.mapping.check",
        ),
        (
            "error_paths = [\"fault.message\"]",
            "error_paths = [\"fault.text\"]",
            "engine.mapping.error_paths",
        ),
    ] {
        assert_fails_naming(config_with(base, replace(from, to), None), &c, key);
    }
}

/// Runs the probe against `url`; returns (exit code, stdout).
fn probe_at(config: &PathBuf, url: &str) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
        .args(["check-config", "--probe", "--config"])
        .arg(config)
        .env("PILOTAGE_ENGINE_URL", url)
        .env("RUST_LOG", "off")
        .output()
        .expect("run pilotage-gateway");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// The probe fails with one UNREACHABLE line naming `url` and `cause`, and
/// no line blaming a mapping key.
fn assert_unreachable(config: &PathBuf, url: &str, cause: &str) {
    let (code, out) = probe_at(config, url);
    assert_eq!(code, 1, "{out}");
    let lines: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("UNREACHABLE") || l.starts_with("MISSING"))
        .collect();
    assert_eq!(lines.len(), 1, "one line, not one per key:\n{out}");
    assert!(
        lines[0].starts_with("UNREACHABLE engine.url: url "),
        "{out}"
    );
    assert!(lines[0].contains(url.trim_end_matches('/')), "{out}");
    assert!(lines[0].contains(cause), "{cause} missing:\n{out}");
}

#[test]
fn an_engine_that_does_not_answer_is_one_line_naming_url_and_cause() {
    let config = config_with(
        "deploy/gateway.local.toml",
        replace(
            "[engine]\nurl = \"http://127.0.0.1:7070\"",
            "[engine]\nurl = \"http://127.0.0.1:7070\"\ntimeout_ms = 400",
        ),
        None,
    );
    // Refused: a port nothing listens on.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    assert_unreachable(
        &config,
        &format!("http://127.0.0.1:{closed}"),
        "connection refused",
    );
    // Timed out: a listener that never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    assert_unreachable(&config, &format!("http://127.0.0.1:{port}"), "timed out");
    drop(silent);
    // TLS: https to an engine that speaks plain HTTP.
    let engine = Engine::spawn(&[]);
    let https = engine.url.replacen("http://", "https://", 1);
    assert_unreachable(&config, &https, "TLS failure");
    // A wrong path: the engine answers, but not at this base.
    let wrong = format!("{}/no/such/base", engine.url.trim_end_matches('/'));
    assert_unreachable(&config, &wrong, "404");
    // And the right URL still passes.
    let (code, out) = probe_at(&config, &engine.url);
    assert_eq!(code, 0, "{out}");
}
