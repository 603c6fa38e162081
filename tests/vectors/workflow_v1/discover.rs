//! Discovery vectors (Part II §6.1, Part III §3).

use crate::common::{TestEnv, assert_shape};
use crate::support::{session, tool_names};
use serde_json::json;

const EXT: &str = "io.github.jafarsa0/pilotage";

#[tokio::test(flavor = "multi_thread")]
async fn pil_discover_manifest_g() {
    let (env, c) = session().await;
    let before = env.engine.digest("acme").await;
    let m = c.call("pilotage_manifest", json!({})).await;
    assert!(!m.is_error);
    assert_shape(&m.structured, "Manifest");
    let langs = m.structured["languages"].as_array().expect("languages");
    assert!(!langs.is_empty());
    let tools = tool_names(&c).await;
    for lang in langs {
        let caps = &lang["capabilities"];
        let lp = &lang["loop"];
        for (stage, declared) in [
            ("validate", true),
            ("execute", caps.get("execute").is_some_and(|v| v != false)),
            ("trace", caps.get("trace_fetch").is_some_and(|v| v != false)),
        ] {
            assert_eq!(
                lp.get(stage).is_some(),
                declared,
                "{stage} in loop of {}",
                lang["name"]
            );
            if let Some(name) = lp[stage].as_str() {
                assert!(
                    tools.contains(&name.to_string()),
                    "{name} not in tools/list"
                );
            }
        }
        assert_eq!(lang["guides"], "pilotage_get_guide");
        assert_eq!(
            lang["catalog"].as_str() == Some("pilotage_catalog"),
            caps.get("catalog").is_some()
        );
    }
    assert_eq!(
        env.engine.digest("acme").await,
        before,
        "discover had a side effect"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_discover_initmeta_g() {
    let env = TestEnv::start().await;
    let mut c = env.anonymous();
    let init = c.initialize().await;
    let meta = &init["_meta"][EXT];
    assert!(meta.is_object(), "initialize carries the Pilotage _meta");
    assert_shape(meta, "InitializeMetaValue");
    assert_shape(&meta["manifest"], "Manifest");
    let tool = c.call("pilotage_manifest", json!({})).await;
    assert_eq!(
        meta["manifest"], tool.structured,
        "inline manifest equals the tool's"
    );
    assert!(
        init["capabilities"]["extensions"][EXT].is_object(),
        "extension declared"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_coldstart_signposts_g() {
    let env = TestEnv::start().await;
    let mut c = env.anonymous();
    let init = c.initialize().await;
    let instructions = init["instructions"].as_str().expect("instructions");
    assert!(instructions.contains("Pilotage"));
    assert!(instructions.contains("pilotage_manifest") && instructions.contains("first"));
    let tools = c.list_tools().await;
    let desc = |name: &str| -> String {
        tools
            .iter()
            .find(|t| t["name"] == name)
            .and_then(|t| t["description"].as_str())
            .unwrap_or_else(|| panic!("tool {name} listed with a description"))
            .to_lowercase()
    };
    let m = desc("pilotage_manifest");
    assert!(m.contains("start here") && m.contains("first"), "{m}");
    assert!(desc("pilotage_get_guide").contains("learn stage"));
    assert!(desc("pilotage_catalog").contains("lookup stage"));
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    for lang in manifest["languages"].as_array().unwrap() {
        let name = lang["name"].as_str().unwrap();
        for (stage, word) in [
            ("validate", "validate stage"),
            ("execute", "execute stage"),
            ("trace", "trace fetch stage"),
        ] {
            if let Some(tool) = lang["loop"][stage].as_str() {
                let d = desc(tool);
                assert!(d.contains(word) && d.contains(name), "{tool}: {d}");
            }
        }
    }
}
