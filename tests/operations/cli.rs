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
