//! Shared assertions of the vector tests.

use crate::common::{CallResult, LANG, Mcp};
use serde_json::{Value, json};

pub use crate::common::answers::{codes, error_kind, session, status};
pub use crate::common::guides::closed_codes;

/// validate → the answer.
pub async fn validate(c: &Mcp, program: Value) -> CallResult {
    c.call("validate_workflow", json!({"workflow": program}))
        .await
}

/// The current catalog_version of the caller.
pub async fn catalog_version(c: &Mcp) -> String {
    let r = c
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "list"}),
        )
        .await;
    r.structured["catalog_version"]
        .as_str()
        .expect("catalog_version")
        .to_string()
}

/// Execute with mode immediate plus `extra` members.
pub async fn run(c: &Mcp, program: Value, extra: Value) -> CallResult {
    let mut args = json!({"workflow": program, "mode": "immediate"});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            a.insert(k.clone(), v.clone());
        }
    }
    c.call("run_workflow", args).await
}

/// Base identifier of a trace entry (Part II §5.8.2).
pub fn base_id(id: &str) -> &str {
    let last = id.rsplit('/').next().unwrap_or(id);
    last.split('#').next().unwrap_or(last)
}

/// Plan–trace correspondence (Part II §5.8.4) for a run with `success`
/// (`complete`) or a started run that did not complete.
pub fn assert_corresponds(plan: &Value, trace: &Value, complete: bool) {
    let steps = plan["steps"].as_array().expect("plan steps");
    let entries = trace["steps"].as_array().expect("trace steps");
    let ids: Vec<&str> = entries
        .iter()
        .map(|e| e["id"].as_str().unwrap_or(""))
        .collect();
    let mut expected: Vec<&str> = steps
        .iter()
        .filter(|s| s.get("arm").is_none() && s.get("loop").is_none())
        .map(|s| s["id"].as_str().unwrap_or(""))
        .collect();
    let mut untaken: Vec<&str> = Vec::new();
    for e in entries {
        let id = base_id(e["id"].as_str().unwrap_or(""));
        let decisions = e["decisions"].as_array().cloned().unwrap_or_default();
        let branch_arm = steps.iter().any(|s| s["arm"]["branch"] == id);
        if branch_arm {
            let took = decisions
                .first()
                .and_then(|d| d["took"].as_str())
                .unwrap_or("");
            for s in steps.iter().filter(|s| s["arm"]["branch"] == id) {
                if s["arm"]["label"] == took {
                    expected.push(s["id"].as_str().unwrap_or(""));
                } else {
                    untaken.push(s["id"].as_str().unwrap_or(""));
                }
            }
        }
        let iterated = decisions.iter().any(|d| d["took"] == "continue");
        if iterated {
            for s in steps
                .iter()
                .filter(|s| s["loop"] == id && s.get("arm").is_none())
            {
                expected.push(s["id"].as_str().unwrap_or(""));
            }
        }
    }
    let bases: Vec<&str> = ids.iter().map(|i| base_id(i)).collect();
    if complete {
        for e in &expected {
            assert!(
                bases.contains(e),
                "expected step {e} missing from trace {ids:?}"
            );
        }
    }
    for b in &bases {
        assert!(
            expected.contains(b),
            "trace entry {b} is not in the expected set {expected:?}"
        );
        assert!(
            !untaken.contains(b),
            "step {b} of an untaken arm appears in the trace"
        );
    }
    let mut seen = std::collections::HashSet::new();
    for id in &ids {
        assert!(seen.insert(*id), "trace entry {id} appears twice");
    }
}

/// The names `tools/list` shows the caller.
pub async fn tool_names(c: &Mcp) -> Vec<String> {
    c.list_tools()
        .await
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// The entries of a guide index that carry `topic`.
pub fn with_topic<'a>(guides: &'a [Value], topic: &str) -> Vec<&'a Value> {
    guides
        .iter()
        .filter(|g| {
            g["topics"]
                .as_array()
                .is_some_and(|t| t.iter().any(|x| x == topic))
        })
        .collect()
}

/// Whether the configuration under test serves the staging language (the
/// feature suites' second language, which leaves features undeclared); a
/// shipped configuration does not. A vector's check that needs it is skipped
/// with its reason printed, as the public harness skips a vector whose
/// feature the server does not declare.
pub fn staging_served(vector: &str) -> bool {
    let Some(name) = crate::common::shipped::selected() else {
        return true;
    };
    let served = crate::common::shipped::Shipped::load(&name)
        .config()
        .languages
        .iter()
        .any(|l| l.name == crate::common::STAGING);
    if !served {
        eprintln!(
            "skipped: {vector}: its undeclared-feature check needs a language that leaves the \
             feature undeclared ({}), which the shipped configuration `{name}` does not serve",
            crate::common::STAGING
        );
    }
    served
}
