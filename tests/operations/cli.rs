//! The operator commands as an operator runs them: `classify --check` passes
//! for the shipped rule files and fails, naming the rule, on a broken example;
//! `classify` explains one message; `check-config` names file, key and fix.

use crate::common::repo_path;
use std::process::Command;

fn gateway(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
        .args(args)
        .current_dir(repo_path(""))
        .output()
        .expect("run pilotage-gateway");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn classify_check_passes_for_every_shipped_rule_file() {
    for config in [
        "deploy/gateway.local.toml",
        "deploy/gateway.dialect-b.toml",
        "deploy/gateway.dialect-c.toml",
        "deploy/gateway.mistral.toml",
    ] {
        let (ok, out) = gateway(&["classify", "--check", "--config", config]);
        assert!(ok, "{config}: {out}");
        assert!(out.contains(" 0 failed"), "{out}");
    }
    // The Mistral configuration checks both of its rule files.
    let (_, out) = gateway(&[
        "classify",
        "--check",
        "--config",
        "deploy/gateway.mistral.toml",
    ]);
    assert!(out.contains("classifiers/mistral-v2.toml"), "{out}");
    assert!(out.contains("classifiers/workflow-v1.toml"), "{out}");
}

/// Rule files need no engine's runtime: the n8n configuration checks its
/// rules on a machine where n8n was never installed (its tenants folder
/// missing is a warning here, an error only where the gateway starts).
#[test]
fn classify_check_needs_no_engine_runtime_folder() {
    let shipped = std::fs::read_to_string(repo_path("deploy/gateway.n8n.toml")).expect("read");
    let missing = format!("never-installed-{}", crate::common::ports::rand_suffix());
    let copy = shipped.replace(
        "tenants_dir = \"../target/n8n/tenants\"",
        &format!("tenants_dir = \"../target/{missing}\""),
    );
    assert_ne!(copy, shipped, "the shipped tenants_dir line moved");
    // One folder below the repository, so the file's relative paths resolve.
    let path = repo_path(&format!("target/{missing}.toml"));
    std::fs::create_dir_all(path.parent().expect("folder")).expect("target/");
    std::fs::write(&path, copy).expect("write");
    let (ok, out) = gateway(&[
        "classify",
        "--check",
        "--config",
        path.to_str().expect("utf-8"),
    ]);
    std::fs::remove_file(&path).ok();
    assert!(ok, "{out}");
    assert!(out.contains(" 0 failed"), "{out}");
    assert!(
        out.contains("warning:") && out.contains("tenants_dir"),
        "{out}"
    );
}

#[test]
fn the_mistral_configuration_passes_check_config() {
    let (ok, out) = gateway(&["check-config", "--config", "deploy/gateway.mistral.toml"]);
    assert!(ok, "{out}");
    assert!(out.contains("ok (2 language(s))"), "{out}");
}

#[test]
fn classify_check_fails_naming_the_rule_of_a_broken_example() {
    let dir = std::env::temp_dir().join(format!("pilotage-cli-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("deploy")).unwrap();
    std::fs::create_dir_all(dir.join("classifiers")).unwrap();
    let copy = |from: &str, to: &str| std::fs::copy(repo_path(from), dir.join(to)).unwrap();
    copy("deploy/gateway.local.toml", "deploy/gateway.toml");
    let rules = std::fs::read_to_string(repo_path("classifiers/workflow-v1.toml")).unwrap();
    // An example of the duplicate-id rule now expects another code.
    let example =
        "message = \"duplicate step id 'a'\"\nlocation = \"steps[2].id\"\ncode = \"duplicate_id\"";
    assert!(rules.contains(example), "the example exists");
    let broken = rules.replace(example, &example.replace("duplicate_id", "missing_id"));
    std::fs::write(dir.join("classifiers/workflow-v1.toml"), broken).unwrap();
    // Guides stay the repository's.
    let config = std::fs::read_to_string(dir.join("deploy/gateway.toml"))
        .unwrap()
        .replace(
            "guides_dir = \"../guides/workflow-v1\"",
            &format!(
                "guides_dir = \"{}\"",
                repo_path("guides/workflow-v1").display()
            ),
        );
    std::fs::write(dir.join("deploy/gateway.toml"), config).unwrap();
    let (ok, out) = gateway(&[
        "classify",
        "--check",
        "--config",
        dir.join("deploy/gateway.toml").to_str().unwrap(),
    ]);
    assert!(!ok, "a broken example fails the check: {out}");
    assert!(
        out.contains("FAIL") && out.contains("duplicate-step-id"),
        "names the rule: {out}"
    );
    // And the gateway refuses to start on it.
    let (ok, out) = gateway(&[
        "check-config",
        "--config",
        dir.join("deploy/gateway.toml").to_str().unwrap(),
    ]);
    assert!(!ok, "{out}");
    assert!(out.contains("duplicate-step-id"), "{out}");
    // The start-up error names the language whose rules are broken (it fails
    // before binding anything).
    let (ok, out) = gateway(&[
        "serve",
        "--config",
        dir.join("deploy/gateway.toml").to_str().unwrap(),
    ]);
    assert!(!ok, "{out}");
    assert!(
        out.contains("classifier rules of language 'workflow/v1'"),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn classify_explains_one_message() {
    let (ok, out) = gateway(&[
        "classify",
        "--config",
        "deploy/gateway.local.toml",
        "capability 'mail.send' is not enabled for tenant globex",
        "--where",
        "steps[0].capability",
    ]);
    assert!(ok, "{out}");
    assert!(out.contains("capability-not-enabled-for-tenant"), "{out}");
    assert!(
        out.contains("\"code\": \"unknown_capability\"") && out.contains("/steps/0/capability"),
        "{out}"
    );
    let (ok, out) = gateway(&[
        "classify",
        "--config",
        "deploy/gateway.local.toml",
        "a message nobody wrote a rule for",
    ]);
    assert!(ok);
    assert!(out.contains("constraint"), "{out}");
}

#[test]
fn check_config_names_file_key_and_fix() {
    let dir = std::env::temp_dir().join(format!("pilotage-cfg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("bad.toml");
    std::fs::write(
        &path,
        "[engine]\nurl = \"ftp://nowhere\"\n[session]\nsecret = \"short\"\n",
    )
    .unwrap();
    let (ok, out) = gateway(&["check-config", "--config", path.to_str().unwrap()]);
    assert!(!ok);
    for needle in [
        "bad.toml",
        "engine.url",
        "session.secret",
        "language",
        "fix:",
    ] {
        assert!(out.contains(needle), "{needle} missing from: {out}");
    }
    let (ok, out) = gateway(&["check-config", "--config", "deploy/gateway.local.toml"]);
    assert!(ok, "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `deploy/gateway.local.toml` with `edit` applied, written beside it (so
/// its relative paths still resolve); removed when dropped.
struct EditedConfig(std::path::PathBuf);

impl EditedConfig {
    fn new(name: &str, edit: impl Fn(String) -> String) -> Self {
        let text = std::fs::read_to_string(repo_path("deploy/gateway.local.toml")).unwrap();
        let path = repo_path(&format!("deploy/.{name}-{}.toml", std::process::id()));
        std::fs::write(&path, edit(text)).unwrap();
        Self(path)
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for EditedConfig {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn a_zero_page_limit_is_refused_at_start_naming_file_key_and_fix() {
    let config = EditedConfig::new("page-limit", |t| {
        t.replacen(
            "[[language]]\n",
            "[[language]]\ncatalog_page_limit = 0\n",
            1,
        )
    });
    let (ok, out) = gateway(&["check-config", "--config", config.path()]);
    assert!(!ok, "{out}");
    for needle in [
        ".page-limit-",
        "language[0].catalog_page_limit",
        "0 is outside 1..=1000",
        "fix:",
    ] {
        assert!(out.contains(needle), "{needle} missing from: {out}");
    }
    let config = EditedConfig::new("engine-timeout", |t| {
        t.replacen("[engine]\n", "[engine]\ntimeout_ms = 0\n", 1)
    });
    let (ok, out) = gateway(&["check-config", "--config", config.path()]);
    assert!(!ok, "{out}");
    assert!(out.contains("engine.timeout_ms"), "{out}");
}

#[test]
fn serve_warns_at_start_when_the_engine_does_not_answer() {
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (warning, running) = serve_until_logged(
        "deploy/gateway.local.toml",
        &format!("http://127.0.0.1:{closed}"),
        "the engine does not answer",
    );
    assert!(
        warning.contains(&format!("127.0.0.1:{closed}")),
        "{warning}"
    );
    assert!(warning.contains("connection refused"), "{warning}");
    // Still serving: the warning did not stop the start.
    assert!(running, "serve stopped after: {warning}");
}

/// The first line `serve` logs with `needle` (within 20 s), and whether the
/// process was still running then; it is stopped after.
fn serve_until_logged(config: &str, engine_url: &str, needle: &str) -> (String, bool) {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
        .args(["serve", "--config", config])
        .current_dir(repo_path(""))
        .env("PILOTAGE_ENGINE_URL", engine_url)
        .env("PILOTAGE_LISTEN", "127.0.0.1:0")
        .env("RUST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the gateway");
    let (tx, rx) = std::sync::mpsc::channel();
    for stream in [
        Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
        Box::new(child.stderr.take().unwrap()),
    ] {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let mut seen = Vec::new();
    let found = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) if line.contains(needle) => break Some(line),
            Ok(line) => seen.push(line),
            Err(_) => break None,
        }
    };
    let running = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    let _ = child.wait();
    let found = found.unwrap_or_else(|| panic!("no line with {needle} in {seen:#?}"));
    (found, running)
}

fn logged_threads(line: &str) -> usize {
    let value: serde_json::Value = serde_json::from_str(line).expect("a JSON log line");
    value["threads"].as_u64().expect("threads in the line") as usize
}

#[test]
fn serve_leaves_half_the_cpus_to_an_engine_on_this_machine() {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    let listening = "pilotage-gateway listening";
    let config = "deploy/gateway.local.toml";
    let (beside, _) = serve_until_logged(config, "http://127.0.0.1:9", listening);
    assert_eq!(logged_threads(&beside), (cpus / 2).max(1), "{beside}");
    let (elsewhere, _) = serve_until_logged(config, "http://engine.invalid:9", listening);
    assert_eq!(logged_threads(&elsewhere), cpus, "{elsewhere}");
    let set = EditedConfig::new("threads", |t| {
        t.replacen("[server]\n", "[server]\nthreads = 3\n", 1)
    });
    let (chosen, _) = serve_until_logged(set.path(), "http://127.0.0.1:9", listening);
    assert_eq!(logged_threads(&chosen), 3, "{chosen}");
}

#[test]
fn too_many_threads_are_refused_naming_the_key() {
    let config = EditedConfig::new("many-threads", |t| {
        t.replacen("[server]\n", "[server]\nthreads = 100000\n", 1)
    });
    let (ok, out) = gateway(&["check-config", "--config", config.path()]);
    assert!(!ok, "{out}");
    for needle in ["server.threads", "100000 threads", "fix:"] {
        assert!(out.contains(needle), "{needle} missing from: {out}");
    }
}
