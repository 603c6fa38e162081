//! The configurations the vectors run against are the shipped ones: every
//! file under `tests/configs/` overlays the shipped configuration of its
//! name under `deploy/` and differs from it only in addresses, ports,
//! paths, secrets and keys, and every
//! shipped gateway configuration of the legacy engine has such a file (the
//! vectors run against each in `scripts/test`).

use crate::common::repo_path;
use crate::common::shipped::{FOLDER, Shipped, matches};

/// The shipped gateway configurations in front of the reference engine;
/// the Mistral and n8n ones have their own suites against their engines.
const SHIPPED: &[&str] = &[
    "deploy/gateway.local.toml",
    "deploy/gateway.toml",
    "deploy/gateway.dialect-b.toml",
    "deploy/gateway.dialect-c.toml",
];

#[test]
fn every_test_configuration_changes_only_addresses_paths_secrets_and_keys() {
    let mut stood_for = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(repo_path(FOLDER))
        .expect("tests/configs")
        .map(|e| e.expect("entry").path())
        .collect();
    entries.sort();
    for path in entries {
        assert_eq!(
            path.extension().and_then(|e| e.to_str()),
            Some("toml"),
            "{}: only overlays of shipped configurations live in {FOLDER}",
            path.display()
        );
        let shipped = Shipped::from_overlay(&path);
        let disallowed = shipped.disallowed();
        assert!(
            disallowed.is_empty(),
            "{} sets {disallowed:?}, which its shipped configuration {} does not: a test \
             configuration may change only addresses, ports, paths, secrets and keys",
            path.display(),
            shipped.path.display()
        );
        // The merged file starts as the gateway would.
        let problems = shipped.config().validate();
        assert!(problems.is_empty(), "{}: {problems:?}", path.display());
        stood_for.push(shipped.path);
    }
    for file in SHIPPED {
        let shipped = repo_path(file).canonicalize().expect("shipped file");
        assert!(
            stood_for.contains(&shipped),
            "{file} has no overlay under {FOLDER}: the vectors would not run against it"
        );
    }
}

/// A behaviour key in an overlay is caught, whatever its table.
#[test]
fn a_behaviour_key_in_an_overlay_is_caught() {
    let dir = std::env::temp_dir().join(format!(
        "pilotage-overlay-{}",
        crate::common::ports::rand_suffix()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    // Named after the demo's file, so it overlays deploy/gateway.local.toml.
    let overlay = dir.join("gateway.local.toml");
    std::fs::write(
        &overlay,
        "[server]\nlisten = \"127.0.0.1:0\"\n[cache]\nread_only_catalog_staleness_ms = 1000\n[limits.anonymous]\nburst = 5000\n",
    )
    .expect("write overlay");
    let disallowed = Shipped::from_overlay(&overlay).disallowed();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(disallowed, ["cache", "limits.anonymous.burst"]);
}

#[test]
fn key_patterns_match_whole_segments() {
    assert!(matches("engine.url", "engine.url"));
    assert!(!matches("engine.url", "engine.url_x"));
    assert!(matches("engines.*.url", "engines.n8n.url"));
    assert!(matches("auth.key.**", "auth.key.3.sha256"));
    assert!(!matches("auth.key.**", "auth.key"));
    assert!(!matches("language.*.classifier", "language.0.retention"));
}
