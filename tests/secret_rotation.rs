//! Secrets changed while the service runs, through the real endpoint:
//! - a session secret rotated: sessions signed with the previous secret keep
//!   working on an instance that lists it as previous, new sessions are
//!   signed with the current one, and an instance without the previous one
//!   refuses the old sessions;
//! - the API keys file edited in place: a key added is accepted and a key
//!   removed refused within seconds, without a restart; a broken edit keeps
//!   the keys in force.

mod common;

use common::ports::rand_suffix;
use common::{ACME_OPS, Mcp, TestEnv};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const OLD: &str = "the-secret-before-rotation-0123";
const NEW: &str = "the-secret-after-rotation-4567";

async fn gateway(secret: &str, previous: &[&str]) -> TestEnv {
    let (secret, previous) = (
        secret.to_string(),
        previous.iter().map(|s| s.to_string()).collect(),
    );
    TestEnv::with_config("tests/fixtures/features.toml", move |c| {
        c.session.secret = secret;
        c.session.previous_secrets = previous;
    })
    .await
}

/// The HTTP status of a tools/list in `session` on `url`.
async fn status_in(url: &str, session: &str) -> u16 {
    let mut c = Mcp::new(url, Some(ACME_OPS));
    c.session = Some(session.to_string());
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    c.raw(&body.to_string()).await.0
}

async fn new_session(url: &str) -> String {
    let mut c = Mcp::new(url, Some(ACME_OPS));
    c.initialize().await;
    c.session.expect("Mcp-Session-Id")
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_survive_a_session_secret_rotation() {
    let before = gateway(OLD, &[]).await;
    let rotated = gateway(NEW, &[OLD]).await;
    let forgetful = gateway(NEW, &[]).await;
    let old_session = new_session(&before.url).await;
    assert_eq!(status_in(&before.url, &old_session).await, 200);
    assert_eq!(
        status_in(&rotated.url, &old_session).await,
        200,
        "a session signed with the previous secret keeps working"
    );
    assert_eq!(
        status_in(&forgetful.url, &old_session).await,
        404,
        "without the previous secret it does not verify"
    );
    let fresh = new_session(&rotated.url).await;
    assert_eq!(
        status_in(&forgetful.url, &fresh).await,
        200,
        "signed with the current secret"
    );
    assert_eq!(
        status_in(&before.url, &fresh).await,
        404,
        "not with the previous one"
    );
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "pilotage-key-reload-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn key_block(name: &str, key: &str) -> String {
    format!(
        "[[key]]\nname = \"{name}\"\ntenant = \"acme\"\nsha256 = \"{}\"\n",
        hex::encode(Sha256::digest(key.as_bytes()))
    )
}

/// Replaces the file as configuration managers do: a sibling renamed over it.
fn rewrite(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, text).expect("write");
    std::fs::rename(&tmp, path).expect("rename");
}

/// The HTTP status of an initialize with `key`.
async fn status_with(url: &str, key: &str) -> u16 {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "key-reload-test", "version": "1"}}});
    Mcp::new(url, Some(key)).raw(&body.to_string()).await.0
}

/// Waits (at most 10 s) until `key` gets `want`.
async fn settles(url: &str, key: &str, want: u16) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if status_with(url, key).await == want {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread")]
async fn api_keys_file_edits_take_effect_without_a_restart() {
    let dir = scratch();
    let file = dir.join("api_keys.toml");
    std::fs::write(&file, key_block("first", "first-key-0001")).expect("keys file");
    let path = file.display().to_string();
    let env = TestEnv::with_config("tests/fixtures/features.toml", move |c| {
        c.auth.keys_file = path;
        let problems = c.read_secret_files();
        assert!(problems.is_empty(), "{problems:?}");
    })
    .await;
    assert_eq!(status_with(&env.url, "first-key-0001").await, 200);
    assert_eq!(status_with(&env.url, "second-key-0002").await, 401);

    // Added.
    rewrite(
        &file,
        &(key_block("first", "first-key-0001") + &key_block("second", "second-key-0002")),
    );
    assert!(
        settles(&env.url, "second-key-0002", 200).await,
        "the added key is accepted"
    );
    // Removed.
    rewrite(&file, &key_block("second", "second-key-0002"));
    assert!(
        settles(&env.url, "first-key-0001", 401).await,
        "the removed key is refused"
    );
    // A broken edit changes nothing.
    rewrite(&file, "[[key]]\nname = \"broken\"\n");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(status_with(&env.url, "second-key-0002").await, 200);
    // The keys of gateway.toml itself stay through every reload.
    assert_eq!(status_with(&env.url, ACME_OPS).await, 200);
    let _ = std::fs::remove_dir_all(&dir);
}
