//! Live reload of classifier rules under load, through the real endpoint: an
//! edited rule file is served within seconds with no failed request during the
//! swap; a broken edit keeps the previous table in service.

use crate::common::{Engine, Mcp, TestEnv, repo_path};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A private copy of the configuration, guides and rules, so the test can
/// edit files without touching the repository.
fn sandbox(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pilotage-reload-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("guides/workflow-v1")).unwrap();
    std::fs::create_dir_all(dir.join("classifiers")).unwrap();
    std::fs::create_dir_all(dir.join("deploy")).unwrap();
    for entry in std::fs::read_dir(repo_path("guides/workflow-v1")).unwrap() {
        let p = entry.unwrap().path();
        std::fs::copy(
            &p,
            dir.join("guides/workflow-v1").join(p.file_name().unwrap()),
        )
        .unwrap();
    }
    std::fs::copy(
        repo_path("classifiers/workflow-v1.toml"),
        dir.join("classifiers/workflow-v1.toml"),
    )
    .unwrap();
    std::fs::copy(
        repo_path("deploy/gateway.local.toml"),
        dir.join("deploy/gateway.toml"),
    )
    .unwrap();
    dir
}

/// Replaces a file the way editors do: write a sibling, then rename over it.
fn rewrite(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn missing_parameter_program() -> Value {
    json!({"steps": [{"id": "e", "kind": "call", "capability": "util.echo", "with": {}}],
        "output": {"v": "$.steps.e.output"}})
}

async fn code_of(c: &Mcp) -> Result<String, String> {
    let r = c
        .call(
            "validate_workflow",
            json!({"workflow": missing_parameter_program()}),
        )
        .await;
    if r.is_error {
        return Err(r.structured.to_string());
    }
    r.structured["diagnostics"][0]["code"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| r.structured.to_string())
}

/// Validates in a loop from several tasks, counting answers and failures.
fn load(
    url: &str,
    stop: Arc<AtomicBool>,
    ok: Arc<AtomicU64>,
    failed: Arc<AtomicU64>,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..4)
        .map(|_| {
            let (stop, ok, failed, url) =
                (stop.clone(), ok.clone(), failed.clone(), url.to_string());
            tokio::spawn(async move {
                let mut c = Mcp::new(&url, None);
                c.initialize().await;
                while !stop.load(Ordering::Relaxed) {
                    match code_of(&c).await.as_deref() {
                        Ok("missing_parameter") | Ok("invalid_structure") => {
                            ok.fetch_add(1, Ordering::Relaxed)
                        }
                        _ => failed.fetch_add(1, Ordering::Relaxed),
                    };
                }
            })
        })
        .collect()
}

async fn wait_for(c: &Mcp, want: &str) -> bool {
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if code_of(c).await.as_deref() == Ok(want) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_rule_is_served_under_load_without_a_failed_request() {
    let dir = sandbox("edit");
    let env = TestEnv::in_front_of(
        Engine::spawn(&[]),
        dir.join("deploy/gateway.toml").to_str().unwrap(),
        // This load is far above the demo's anonymous budget; the limits
        // have tests of their own (tests/operations/limits.rs).
        |c| c.limits.anonymous = Default::default(),
    )
    .await;
    let mut probe = env.anonymous();
    probe.initialize().await;
    assert_eq!(code_of(&probe).await.as_deref(), Ok("missing_parameter"));
    let (stop, ok, failed) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let tasks = load(&env.url, stop.clone(), ok.clone(), failed.clone());
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The operator decides this message deserves another code (rule and its examples).
    let rules = dir.join("classifiers/workflow-v1.toml");
    let text = std::fs::read_to_string(&rules).unwrap();
    assert!(text.contains("code = \"missing_parameter\""));
    rewrite(
        &rules,
        &text.replace(
            "code = \"missing_parameter\"",
            "code = \"invalid_structure\"",
        ),
    );
    assert!(
        wait_for(&probe, "invalid_structure").await,
        "the edited rule is served within seconds"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await.unwrap();
    }
    assert!(
        ok.load(Ordering::Relaxed) > 20,
        "the load ran: {}",
        ok.load(Ordering::Relaxed)
    );
    assert_eq!(
        failed.load(Ordering::Relaxed),
        0,
        "no request failed during the swap"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_broken_edit_keeps_the_previous_table() {
    let dir = sandbox("broken");
    let env = TestEnv::in_front_of(
        Engine::spawn(&[]),
        dir.join("deploy/gateway.toml").to_str().unwrap(),
        |_| {},
    )
    .await;
    let mut c = env.anonymous();
    c.initialize().await;
    assert_eq!(code_of(&c).await.as_deref(), Ok("missing_parameter"));
    let rules = dir.join("classifiers/workflow-v1.toml");
    let text = std::fs::read_to_string(&rules).unwrap();
    // An unbalanced group: the regex does not compile.
    let broken = text.replacen(
        "pattern = '''^missing required parameter",
        "pattern = '''^(missing required parameter",
        1,
    );
    assert_ne!(broken, text, "the test edits a real rule");
    rewrite(&rules, &broken);
    // Several debounce periods later the old table still answers.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(code_of(&c).await.as_deref(), Ok("missing_parameter"));
    // And a code outside the closed set is refused the same way.
    rewrite(
        &rules,
        &text.replace(
            "code = \"missing_parameter\"",
            "code = \"not_a_declared_code\"",
        ),
    );
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(code_of(&c).await.as_deref(), Ok("missing_parameter"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// The text of the core guide as the gateway serves it now.
async fn core_guide(c: &Mcp) -> String {
    let g = c
        .call(
            "pilotage_get_guide",
            json!({"language": "workflow/v1", "id": "core"}),
        )
        .await;
    g.raw.to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edited_guide_is_served_without_sighup() {
    let dir = sandbox("guide");
    let env = TestEnv::in_front_of(
        Engine::spawn(&[]),
        dir.join("deploy/gateway.toml").to_str().unwrap(),
        |_| {},
    )
    .await;
    let mut c = env.anonymous();
    c.initialize().await;
    let marker = "Edited while the gateway runs: reload marker 7f3a";
    assert!(!core_guide(&c).await.contains(marker));
    // Written in place (no rename), inside the guides folder: the edit the
    // directory watch of the guides' parent used to miss.
    let core = dir.join("guides/workflow-v1/core.md");
    let text = std::fs::read_to_string(&core).unwrap();
    std::fs::write(&core, format!("{text}\n{marker}\n")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut served = false;
    while Instant::now() < deadline {
        if core_guide(&c).await.contains(marker) {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(served, "the edited core guide was not served within 15 s");
    let _ = std::fs::remove_dir_all(&dir);
}
