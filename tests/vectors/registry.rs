//! Every server-target vector of the official `vectors.json` has a test of its
//! name in `tests/vectors/` and a row in `docs/conformance.md`; nothing is
//! skipped or ignored.

use crate::common::repo_path;
use serde_json::Value;

#[test]
fn every_server_vector_has_a_test_and_a_documented_row() {
    let path = std::env::var("PILOTAGE_VECTORS")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|_| repo_path("../shared/pilotage/vectors.json"));
    let Ok(text) = std::fs::read_to_string(&path) else {
        // Outside the project's checkout layout there is nothing to compare.
        eprintln!(
            "vectors.json not found at {}; registry check skipped",
            path.display()
        );
        return;
    };
    let vectors: Value = serde_json::from_str(&text).expect("vectors.json parses");
    let mut sources = String::new();
    read_sources(&repo_path("tests/vectors"), 2, &mut sources);
    let doc = std::fs::read_to_string(repo_path("docs/conformance.md")).expect("conformance.md");
    let mut server = 0;
    for v in vectors["vectors"].as_array().expect("vectors") {
        let id = v["id"].as_str().expect("id");
        assert!(
            doc.contains(&format!("`{id}`")),
            "{id} missing from docs/conformance.md"
        );
        if v["target"] != "server" {
            continue;
        }
        server += 1;
        let name = id.to_lowercase().replace('-', "_");
        assert!(
            sources.contains(&format!("async fn {name}(")),
            "no test named {name}"
        );
    }
    assert_eq!(server, 52);
    let ignore_attribute = concat!("#[", "ignore");
    assert!(
        !sources.contains(ignore_attribute),
        "no vector test is ignored"
    );
}

/// Every file's text under `dir`, down to `depth` folders (one per language).
fn read_sources(dir: &std::path::Path, depth: usize, out: &mut String) {
    for entry in std::fs::read_dir(dir).expect("tests/vectors") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            if depth > 0 {
                read_sources(&path, depth - 1, out);
            }
        } else {
            out.push_str(&std::fs::read_to_string(&path).expect("read"));
        }
    }
}
