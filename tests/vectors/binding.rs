//! The vectors whose body is the same for every language bound to a real
//! engine (`mistral_v2`, `n8n_v1`): what such a language gives them
//! ([`VectorLanguage`]: its gateway, its callers, a program taking a
//! `name`) and one body per vector, instantiated for a language by
//! `engine_language_vectors!(TheLanguage)`. What differs between the
//! languages (programs that fail, engine-side observations) stays in each
//! language's own module.

use crate::common::answers::{codes, error_kind, status};
use crate::common::{CallResult, Mcp, assert_shape};
use crate::support::{tool_names, with_topic};
use serde_json::{Value, json};

/// One language behind a gateway in front of its real engine.
#[allow(async_fn_in_trait)]
pub trait VectorLanguage: Sized {
    /// The language's name in the manifest.
    const NAME: &'static str;
    /// Its validate, execute and trace tools.
    const VALIDATE: &'static str;
    const EXECUTE: &'static str;
    const TRACE: &'static str;
    /// A guide with a runnable example, and the fence that example opens.
    const EXAMPLE_GUIDE: (&'static str, &'static str);
    /// Words the closed-sets guide's `trace-ids` topic contains.
    const TRACE_IDS_MARK: &'static str;

    /// A gateway for this language in front of its engine.
    async fn start() -> Self;
    /// An initialized anonymous session.
    async fn anonymous(&self) -> Mcp;
    /// Initialized sessions of the keyed callers a and b (two tenants).
    async fn caller_a(&self) -> Mcp;
    async fn caller_b(&self) -> Mcp;
    /// A valid program with an input `name` that runs to success.
    fn program(&self) -> Value;
    /// What the engine must still show after discovery.
    async fn check_untouched(&self) {}
    /// Leaves the engine as the vector found it.
    async fn finish(&self) {}
}

/// One test per shared vector, for the language `$lang`.
#[macro_export]
macro_rules! engine_language_vectors {
    ($lang:ty) => {
        $crate::engine_language_vectors!(@each $lang;
            pil_discover_manifest_g, pil_learn_index_g, pil_learn_fetch_g,
            pil_learn_unknown_id_b, pil_lookup_unknown_baseline_b,
            pil_validate_good_g, pil_validate_context_undeclared_b,
            pil_execute_both_runnables_b,
            pil_execute_no_runnable_b, pil_execute_mode_missing_b,
            pil_execute_unknown_trace_level_b, pil_execute_trace_none_g,
            pil_execute_store_false_g, pil_execute_store_retain_g,
            pil_trace_fetch_retained_g, pil_trace_fetch_level_g,
            pil_trace_fetch_level_b, pil_trace_fetch_indistinguishable_b);
    };
    (@each $lang:ty; $($name:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread")]
            async fn $name() {
                $crate::binding::$name::<$lang>().await;
            }
        )*
    };
}

/// execute with `mode` immediate, the program and `extra`'s members.
async fn run<L: VectorLanguage>(lang: &L, c: &Mcp, extra: Value) -> CallResult {
    let mut args = json!({"workflow": lang.program(), "mode": "immediate"});
    if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
        a.extend(e.clone());
    }
    c.call(L::EXECUTE, args).await
}

/// A successful run of the program with `extra`'s members.
async fn stored_run<L: VectorLanguage>(lang: &L, c: &Mcp, extra: Value) -> CallResult {
    let mut extra = extra;
    extra["input"] = json!({"name": "kept"});
    let r = run(lang, c, extra).await;
    assert_eq!(status(&r), "success", "{}", r.structured);
    r
}

pub async fn pil_discover_manifest_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous().await;
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    assert_shape(&manifest, "ManifestToolOutput");
    let declared = manifest["languages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == L::NAME)
        .unwrap_or_else(|| panic!("{} declared", L::NAME))
        .clone();
    let tools = tool_names(&c).await;
    for key in ["validate", "execute", "trace"] {
        let name = declared["loop"][key].as_str().unwrap();
        assert!(tools.contains(&name.to_string()), "{name} in tools/list");
    }
    assert_eq!(declared["guides"], "pilotage_get_guide");
    assert_eq!(declared["catalog"], "pilotage_catalog");
    let caps = &declared["capabilities"];
    assert!(
        caps["execute"]["test_run"] != true,
        "no dry run declared: {caps}"
    );
    assert!(
        caps.get("trace_fetch").is_some_and(|v| v != false),
        "{caps}"
    );
    lang.check_untouched().await;
}

pub async fn pil_learn_index_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous().await;
    let r = c
        .call("pilotage_get_guide", json!({"language": L::NAME}))
        .await;
    let guides = r.structured["guides"].as_array().unwrap();
    assert!(guides.iter().all(|g| g.get("body").is_none()));
    assert!(guides.iter().any(|g| g["level"] == "core"));
    let closed = with_topic(guides, "closed-sets");
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0]["level"], "reference");
    // The core guide stays within Part II's size advice.
    let core = guides.iter().find(|g| g["level"] == "core").unwrap();
    assert!(core["size_bytes"].as_u64().unwrap() < 8192, "{core}");
}

pub async fn pil_learn_fetch_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous().await;
    let (id, fence) = L::EXAMPLE_GUIDE;
    let r = c
        .call("pilotage_get_guide", json!({"language": L::NAME, "id": id}))
        .await;
    assert!(!r.is_error, "{}", r.structured);
    assert_eq!(r.structured["guide"]["format"], "text/markdown");
    assert!(
        r.structured["guide"]["body"]
            .as_str()
            .unwrap()
            .contains(fence)
    );
    let topic = c
        .call(
            "pilotage_get_guide",
            json!({"language": L::NAME, "id": "closed-sets", "topic": "trace-ids"}),
        )
        .await;
    assert!(
        topic.structured["guide"]["body"]
            .as_str()
            .unwrap()
            .contains(L::TRACE_IDS_MARK)
    );
}

pub async fn pil_learn_unknown_id_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous().await;
    let r = c
        .call(
            "pilotage_get_guide",
            json!({"language": L::NAME, "id": "no-such-guide"}),
        )
        .await;
    assert_eq!(error_kind(&r), "not_found");
    assert_shape(&r.structured, "RequestError");
}

pub async fn pil_lookup_unknown_baseline_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous().await;
    let r = c
        .call(
            "pilotage_catalog",
            json!({"language": L::NAME, "verb": "changed_since",
                   "catalog_version": "cv_unknown_baseline"}),
        )
        .await;
    assert_eq!(error_kind(&r), "unknown_baseline");
}

pub async fn pil_validate_good_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous().await;
    let r = c
        .call(L::VALIDATE, json!({"workflow": lang.program()}))
        .await;
    assert!(!r.is_error);
    assert_eq!(r.structured["valid"], true, "{}", r.structured);
    assert!(
        r.structured["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["severity"] != "error")
    );
    assert_shape(&r.structured["plan"], "Plan");
    assert!(r.structured["catalog_version"].is_string());
}

pub async fn pil_validate_context_undeclared_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous().await;
    let r = c
        .call(
            L::VALIDATE,
            json!({"workflow": lang.program(), "context": {"any": "value"}}),
        )
        .await;
    assert!(!r.is_error, "{}", r.structured);
    assert_eq!(r.structured["valid"], false);
    assert!(codes(&r.structured).contains(&"context_binding".to_string()));
}

pub async fn pil_execute_both_runnables_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous().await;
    let r = c
        .call(
            L::EXECUTE,
            json!({"workflow": lang.program(), "program_ref": "prog_x", "mode": "immediate"}),
        )
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
}

pub async fn pil_execute_no_runnable_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous().await;
    let r = c
        .call(L::EXECUTE, json!({"input": {"x": 1}, "mode": "immediate"}))
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
}

pub async fn pil_execute_mode_missing_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous().await;
    let r = c
        .call(L::EXECUTE, json!({"workflow": lang.program()}))
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
}

pub async fn pil_execute_unknown_trace_level_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous().await;
    let r = run(&lang, &c, json!({"trace_level": "verbose"})).await;
    assert_eq!(error_kind(&r), "invalid_request");
}

pub async fn pil_execute_trace_none_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let r = run(
        &lang,
        &c,
        json!({"input": {"name": "x"}, "trace_level": "none"}),
    )
    .await;
    assert_eq!(status(&r), "success");
    assert!(r.structured["run_id"].is_string());
    assert!(r.structured.get("trace").is_none());
    lang.finish().await;
}

pub async fn pil_execute_store_false_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let r = stored_run(&lang, &c, json!({"store": false})).await;
    let f = c
        .call(L::TRACE, json!({"run_id": r.structured["run_id"]}))
        .await;
    assert_eq!(error_kind(&f), "not_found");
    lang.finish().await;
}

pub async fn pil_execute_store_retain_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let r = stored_run(&lang, &c, json!({"store": true, "trace_level": "none"})).await;
    assert!(r.structured.get("trace").is_none());
    let f = c
        .call(L::TRACE, json!({"run_id": r.structured["run_id"]}))
        .await;
    assert!(!f.is_error, "{}", f.structured);
    assert_eq!(f.structured["trace"]["level"], "full");
    lang.finish().await;
}

pub async fn pil_trace_fetch_retained_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let r = stored_run(&lang, &c, json!({"store": true, "trace_level": "full"})).await;
    let f = c
        .call(L::TRACE, json!({"run_id": r.structured["run_id"]}))
        .await;
    assert_shape(&f.structured, "TraceFetchResponse");
    assert_eq!(f.structured["trace"], r.structured["trace"]);
    lang.finish().await;
}

pub async fn pil_trace_fetch_level_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let r = stored_run(&lang, &c, json!({"store": true, "trace_level": "full"})).await;
    let f = c
        .call(
            L::TRACE,
            json!({"run_id": r.structured["run_id"], "trace_level": "summary"}),
        )
        .await;
    assert_eq!(
        f.structured["trace"]["level"], "summary",
        "{}",
        f.structured
    );
    assert!(
        f.structured["trace"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s.get("input").is_none())
    );
    lang.finish().await;
}

pub async fn pil_trace_fetch_level_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let r = stored_run(&lang, &c, json!({"store": true})).await;
    let f = c
        .call(
            L::TRACE,
            json!({"run_id": r.structured["run_id"], "trace_level": "none"}),
        )
        .await;
    assert_eq!(error_kind(&f), "invalid_request");
    lang.finish().await;
}

pub async fn pil_trace_fetch_indistinguishable_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let a = lang.caller_a().await;
    let b = lang.caller_b().await;
    let theirs = stored_run(&lang, &b, json!({"store": true})).await;
    let unstored = stored_run(&lang, &a, json!({"store": false})).await;
    let mut results = Vec::new();
    for id in [
        json!("run_00000000000000000000000000000000"),
        unstored.structured["run_id"].clone(),
        theirs.structured["run_id"].clone(),
    ] {
        let f = a.call(L::TRACE, json!({"run_id": id})).await;
        assert_eq!(error_kind(&f), "not_found");
        results.push(f.raw["result"].to_string());
    }
    assert!(
        results.windows(2).all(|w| w[0] == w[1]),
        "byte-identical: {results:?}"
    );
    lang.finish().await;
}
