//! The Rust version the workspace claims is one the locked crates build with.
//!
//! `cargo metadata` lists every crate of `Cargo.lock` (every platform's, dev
//! dependencies included) with its own `rust-version`. Each workspace member
//! must declare one, and none may be lower than the highest a locked crate
//! needs: otherwise a build on the claimed toolchain fails before anything
//! runs. The README's set-up line and the Dockerfiles' toolchains must agree
//! with the claim.

use serde_json::{Value, json};
use std::fmt;
use std::path::Path;
use std::process::Command;

/// `major.minor[.patch]`, as Cargo writes `rust-version`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct RustVersion(u64, u64, u64);

impl RustVersion {
    fn parse(text: &str) -> Option<Self> {
        let mut parts = text.trim().split('.').map(|part| part.parse::<u64>());
        let major = parts.next()?.ok()?;
        let minor = parts.next()?.ok()?;
        let patch = match parts.next() {
            None => 0,
            Some(patch) => patch.ok()?,
        };
        parts.next().is_none().then_some(Self(major, minor, patch))
    }
}

impl fmt::Display for RustVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self(major, minor, 0) => write!(f, "{major}.{minor}"),
            Self(major, minor, patch) => write!(f, "{major}.{minor}.{patch}"),
        }
    }
}

fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `cargo metadata` of the workspace, without touching `Cargo.lock`.
fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--locked",
            "--manifest-path",
        ])
        .arg(workspace_root().join("Cargo.toml"))
        .output()
        .expect("cargo metadata starts");
    assert!(
        output.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("cargo metadata prints JSON")
}

fn package_rust_version(package: &Value) -> Option<RustVersion> {
    let text = package["rust_version"].as_str()?;
    Some(
        RustVersion::parse(text)
            .unwrap_or_else(|| panic!("{}: unreadable rust-version {text:?}", package["name"])),
    )
}

fn is_member(metadata: &Value, package: &Value) -> bool {
    metadata["workspace_members"]
        .as_array()
        .expect("workspace_members")
        .contains(&package["id"])
}

/// The locked crate with the highest `rust-version`, and that version.
fn highest_need(metadata: &Value) -> (String, RustVersion) {
    metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|package| !is_member(metadata, package))
        .filter_map(|package| {
            let needs = package_rust_version(package)?;
            let name = format!(
                "{} {}",
                package["name"].as_str()?,
                package["version"].as_str()?
            );
            Some((name, needs))
        })
        .max_by_key(|(_, needs)| *needs)
        .expect("some locked crate declares a rust-version")
}

/// Every way the members' claims fall short of the locked crates' needs.
fn shortfalls(metadata: &Value) -> Vec<String> {
    let (crate_name, needed) = highest_need(metadata);
    let mut problems = Vec::new();
    for package in metadata["packages"].as_array().expect("packages") {
        if !is_member(metadata, package) {
            continue;
        }
        let member = package["name"].as_str().unwrap_or("?");
        match package_rust_version(package) {
            None => problems.push(format!(
                "{member} declares no rust-version; add `rust-version.workspace = true` ({crate_name} needs {needed})"
            )),
            Some(claimed) if claimed < needed => problems.push(format!(
                "{member} claims rust-version {claimed}, but the locked {crate_name} needs {needed}: raise [workspace.package] rust-version"
            )),
            Some(_) => {}
        }
    }
    problems
}

/// The one version every member claims.
fn claimed(metadata: &Value) -> RustVersion {
    let mut claims: Vec<RustVersion> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter(|package| is_member(metadata, package))
        .filter_map(package_rust_version)
        .collect();
    claims.sort();
    claims.dedup();
    assert_eq!(
        claims.len(),
        1,
        "the members claim different rust-versions {claims:?}: inherit [workspace.package] rust-version"
    );
    claims[0]
}

#[test]
fn every_member_claims_a_rust_version_the_locked_crates_build_with() {
    let metadata = metadata();
    let problems = shortfalls(&metadata);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The judgement above reports a missing and a low claim (run on a copy of
/// the real metadata with one member changed each way).
#[test]
fn a_missing_or_low_member_claim_is_reported() {
    let real = metadata();
    let (_, needed) = highest_need(&real);
    let member_index = real["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .position(|package| package["name"] == "legacy-engine")
        .expect("legacy-engine is locked");

    let mut missing = real.clone();
    missing["packages"][member_index]["rust_version"] = Value::Null;
    let problems = shortfalls(&missing);
    assert!(
        problems.len() == 1 && problems[0].starts_with("legacy-engine declares no rust-version"),
        "{problems:?}"
    );

    let lower = RustVersion(needed.0, needed.1 - 1, 0);
    let mut low = real.clone();
    low["packages"][member_index]["rust_version"] = json!(lower.to_string());
    let problems = shortfalls(&low);
    assert!(
        problems.len() == 1
            && problems[0].starts_with(&format!("legacy-engine claims rust-version {lower}")),
        "{problems:?}"
    );
}

#[test]
fn readme_and_images_use_the_claimed_rust_version() {
    let claimed = claimed(&metadata());
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).expect("README.md");
    let set_up = format!("Rust {claimed} or later");
    assert!(
        readme.contains(&set_up),
        "README.md should say \"{set_up}\""
    );
    for dockerfile in ["deploy/Dockerfile", "deploy/legacy-engine/Dockerfile"] {
        let text = std::fs::read_to_string(workspace_root().join(dockerfile)).expect(dockerfile);
        let toolchain = text
            .lines()
            .find_map(|line| line.strip_prefix("ARG RUST_VERSION="))
            .unwrap_or_else(|| panic!("{dockerfile}: no ARG RUST_VERSION="));
        let toolchain = RustVersion::parse(toolchain)
            .unwrap_or_else(|| panic!("{dockerfile}: unreadable RUST_VERSION {toolchain:?}"));
        assert!(
            toolchain >= claimed,
            "{dockerfile} builds with Rust {toolchain}, below the claimed {claimed}"
        );
    }
}

#[test]
fn rust_versions_read_as_cargo_writes_them() {
    assert_eq!(RustVersion::parse("1.91"), Some(RustVersion(1, 91, 0)));
    assert_eq!(RustVersion::parse("1.89.0"), Some(RustVersion(1, 89, 0)));
    assert!(RustVersion(1, 89, 3) < RustVersion(1, 91, 0));
    assert_eq!(RustVersion::parse("1"), None);
    assert_eq!(RustVersion::parse("1.x"), None);
    assert_eq!(RustVersion(1, 91, 0).to_string(), "1.91");
}
