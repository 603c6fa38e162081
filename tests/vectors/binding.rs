//! The official vectors for every language bound to a real engine
//! (`mistral_v2`, `n8n_v1`), each body written once. A language gives them
//! its gateway ([`EngineEnv`]) and its table ([`VectorLanguage`]: its
//! programs, the names and places its answers must show, and what its
//! engine shows behind the gateway's back); `engine_language_vectors!` makes
//! one test per vector for it. A vector that needs what only some engines
//! have is bound to the trait that says so ([`TenantEntries`], [`Loops`],
//! [`Warnings`]) and listed by the languages that implement it.

use crate::common::answers::{codes, error_kind, status};
use crate::common::engine_env::{self, EngineEnv};
use crate::common::guides::closed_codes;
use crate::common::{CallResult, Mcp, assert_shape, ports::free_port, repo_path};
use crate::support::{tool_names, with_topic};
use serde_json::{Value, json};

/// Where a diagnostic points, in the language's dialect of `path`.
pub enum Place {
    /// A JSON Pointer into the program document.
    Pointer(&'static str),
    /// A text range that starts at `line` and `column`, and ends on
    /// `min_end_line` or later when that is given.
    Range {
        line: u64,
        column: u64,
        min_end_line: Option<u64>,
    },
}

/// A language's table: what the vectors run and what they expect.
#[allow(async_fn_in_trait)]
pub trait VectorLanguage: EngineEnv {
    /// A guide with a runnable example, and the fence that example opens.
    const EXAMPLE_GUIDE: (&'static str, &'static str);
    /// Words the closed-sets guide's `trace-ids` topic contains.
    const TRACE_IDS_MARK: &'static str;
    /// An id the catalog does not have.
    const UNKNOWN_ENTRY: &'static str;
    /// The list the pagination vector pages through: a search (`None`: the
    /// whole catalog), and a limit that takes it in one page.
    const PAGED_SEARCH: (Option<&'static str>, u64);
    /// An entry callers a and b (two tenants) see alike, where the engine
    /// shows every tenant the same catalog.
    const SHARED_ENTRY: Option<&'static str> = None;
    /// A capability the catalog does not have, and a close misspelling of
    /// the one [`VectorLanguage::program`] calls.
    const NO_SUCH_CAPABILITY: &'static str;
    const MISSPELT_CAPABILITY: &'static str;
    /// Where `unknown_capability` points in [`VectorLanguage::calling`].
    const CAPABILITY_PLACE: Place;
    /// Two names of the program's step with a reserved character, and where
    /// `reserved_character` points in [`VectorLanguage::renamed`].
    const RESERVED_NAMES: [&'static str; 2];
    const NAME_PLACE: Place;
    /// The step of [`VectorLanguage::failing`] that fails: its place in the
    /// trace and its id.
    const FAILED_STEP: (usize, &'static str);
    /// The trace's step ids of [`VectorLanguage::second_fails`].
    const PARTIAL_STEPS: &'static [&'static str];
    /// The steps of [`VectorLanguage::route`] on its arms for an amount over
    /// 100 and for one up to 100; what the decision's `because` must
    /// mention, if anything; and whether the branch's trace entry carries
    /// neither input nor output (the branch is no step of its own).
    const ROUTE_ARMS: (&'static str, &'static str);
    const ROUTE_BECAUSE: Option<&'static str>;
    const BARE_BRANCH: bool;
    /// The language's classifier rules, relative to the repository.
    const RULES: &'static str;

    /// A valid program with an input `name` that runs to success.
    fn program(&self) -> Value;
    /// Its output for `name`.
    fn greeting(&self, name: &str) -> Value;
    /// Members its one trace entry for the greeting has, for `name`.
    fn greeting_step(&self, name: &str) -> Value;
    /// [`VectorLanguage::program`] calling `capability` instead.
    fn calling(&self, capability: &str) -> Value;
    /// [`VectorLanguage::program`] with its step renamed `name`.
    fn renamed(&self, name: &str) -> Value;
    /// An input [`VectorLanguage::program`] refuses inline.
    fn wrong_input(&self) -> Value;
    /// A valid program whose first step fails: `error`.
    fn failing(&self) -> Value;
    /// A valid program whose second step fails: `partial`.
    fn second_fails(&self) -> Value;
    /// A program validate refuses as malformed.
    fn malformed(&self) -> Value;
    /// A program with input `amount` branching on `amount > 100`.
    fn route(&self) -> Value;
    /// A program over the step bound, and one over the size bound.
    fn too_many_steps(&self) -> Value;
    fn too_large(&self) -> Value;
    /// A program whose engine message no rule classifies; `None` where
    /// every message the engine gives has a rule, and the catch-all is
    /// shown through the rule file only.
    fn unclassified(&self) -> Option<Value>;

    /// What the engine shows of caller a; unchanged where nothing ran.
    async fn observe(&self) -> Value;
    /// What the engine must show of caller a after `runs` runs of the
    /// vector's own.
    async fn check_ran(&self, runs: usize);
    /// A catalog version of caller a's that is no longer current.
    async fn stale_catalog_version(&self, c: &Mcp) -> String;
    /// What the engine must still show after discovery.
    async fn check_untouched(&self) {}
    /// Leaves the engine as the vector found it.
    async fn finish(&self) {}
}

/// How a vector changes the tenant's own entry.
pub enum EntryChange {
    /// The entry appears.
    Added,
    /// It gains an optional parameter.
    OptionalParameter,
    /// It gains a required parameter.
    RequiredParameter,
}

/// A language whose engine holds catalog entries of one tenant, which the
/// vectors add and change.
#[allow(async_fn_in_trait)]
pub trait TenantEntries: VectorLanguage {
    /// The id of caller a's own entry.
    const ENTRY: &'static str;
    /// Writes it in caller a's tenant as `change` says.
    async fn put_entry(&self, change: EntryChange);
    /// A program calling the entry `id` with the parameters it was added
    /// with.
    fn calling_entry(&self, id: &str) -> Value;
}

/// A language with loops.
pub trait Loops: VectorLanguage {
    /// A program whose loop runs zero times, and the loop body's step id.
    fn empty_loop(&self) -> (Value, &'static str);
}

/// A language whose validate gives warnings.
pub trait Warnings: VectorLanguage {
    /// A valid program whose diagnostics are warnings only.
    fn warnings_only(&self) -> Value;
}

/// One test per vector for the language `$lang`: those of every
/// engine-bound language, then the ones listed after `;`.
#[macro_export]
macro_rules! engine_language_vectors {
    ($lang:ty; $($only:ident),* $(,)?) => {
        $crate::engine_language_vectors!(@each $lang;
            pil_discover_manifest_g, pil_learn_index_g, pil_learn_fetch_g,
            pil_learn_unknown_id_b, pil_lookup_unknown_baseline_b,
            pil_lookup_list_g, pil_lookup_pagination_g, pil_lookup_get_unknown_b,
            pil_catalog_version_stable_g,
            pil_validate_good_g, pil_validate_context_undeclared_b,
            pil_validate_unknown_name_b, pil_validate_side_effect_free_g,
            pil_validate_reserved_chars_b, pil_validate_bounds_b,
            pil_validate_constraint_fallback_b,
            pil_execute_success_g, pil_execute_guard_b, pil_execute_drift_b,
            pil_execute_drift_before_validation_b, pil_execute_input_binding_b,
            pil_execute_test_run_undeclared_b, pil_execute_idempotent_replay_g,
            pil_execute_idempotent_conflict_b, pil_execute_engine_error_b,
            pil_execute_internal_b,
            pil_execute_both_runnables_b,
            pil_execute_no_runnable_b, pil_execute_mode_missing_b,
            pil_execute_unknown_trace_level_b, pil_execute_trace_none_g,
            pil_execute_store_false_g, pil_execute_store_retain_g,
            pil_trace_branch_decision_g, pil_trace_partial_b,
            pil_trace_fetch_retained_g, pil_trace_fetch_level_g,
            pil_trace_fetch_level_b, pil_trace_fetch_indistinguishable_b
            $(, $only)*);
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

/// validate of `program`.
async fn validate<L: VectorLanguage>(c: &Mcp, program: Value) -> CallResult {
    c.call(L::VALIDATE, json!({"workflow": program})).await
}

/// execute of `program` with `mode` immediate and `extra`'s members.
async fn run_program<L: VectorLanguage>(c: &Mcp, program: Value, extra: Value) -> CallResult {
    engine_env::execute(c, L::EXECUTE, program, extra).await
}

/// execute of the language's program with `extra`'s members.
async fn run<L: VectorLanguage>(lang: &L, c: &Mcp, extra: Value) -> CallResult {
    run_program::<L>(c, lang.program(), extra).await
}

/// A successful run of the program with `extra`'s members.
async fn stored_run<L: VectorLanguage>(lang: &L, c: &Mcp, extra: Value) -> CallResult {
    let mut extra = extra;
    extra["input"] = json!({"name": "kept"});
    let r = run(lang, c, extra).await;
    assert_eq!(status(&r), "success", "{}", r.structured);
    r
}

/// The catalog tool with `args` and the language.
async fn catalog<L: VectorLanguage>(c: &Mcp, args: Value) -> CallResult {
    let mut args = args;
    args["language"] = json!(L::LANGUAGE);
    c.call("pilotage_catalog", args).await
}

/// The caller's current catalog version.
pub async fn catalog_version<L: VectorLanguage>(c: &Mcp) -> String {
    catalog::<L>(c, json!({"verb": "list"})).await.structured["catalog_version"]
        .as_str()
        .expect("catalog_version")
        .to_string()
}

/// The first diagnostic of `answer` with `code`.
fn diagnostic(answer: &Value, code: &str) -> Value {
    answer["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == code)
        .unwrap_or_else(|| panic!("no {code}: {answer}"))
        .clone()
}

/// `d` points at `place`.
fn assert_at(d: &Value, place: &Place) {
    match place {
        Place::Pointer(pointer) => assert_eq!(d["path"], *pointer, "{d}"),
        Place::Range {
            line,
            column,
            min_end_line,
        } => {
            let start = json!({"line": line, "column": column});
            assert_eq!(d["path"]["start"], start, "{d}");
            if let Some(end) = min_end_line {
                assert!(d["path"]["end"]["line"].as_u64().unwrap() >= *end, "{d}");
            }
        }
    }
}

/// The trace's step ids.
fn step_ids(answer: &Value) -> Vec<&str> {
    answer["trace"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect()
}

pub async fn pil_discover_manifest_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    assert_shape(&manifest, "ManifestToolOutput");
    let declared = manifest["languages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == L::LANGUAGE)
        .unwrap_or_else(|| panic!("{} declared", L::LANGUAGE))
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
    let c = lang.anonymous_caller().await;
    let r = c
        .call("pilotage_get_guide", json!({"language": L::LANGUAGE}))
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
    let c = lang.anonymous_caller().await;
    let (id, fence) = L::EXAMPLE_GUIDE;
    let r = c
        .call(
            "pilotage_get_guide",
            json!({"language": L::LANGUAGE, "id": id}),
        )
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
            json!({"language": L::LANGUAGE, "id": "closed-sets", "topic": "trace-ids"}),
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
    let c = lang.anonymous_caller().await;
    let r = c
        .call(
            "pilotage_get_guide",
            json!({"language": L::LANGUAGE, "id": "no-such-guide"}),
        )
        .await;
    assert_eq!(error_kind(&r), "not_found");
    assert_shape(&r.structured, "RequestError");
}

pub async fn pil_lookup_unknown_baseline_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    let r = catalog::<L>(
        &c,
        json!({"verb": "changed_since", "catalog_version": "cv_unknown_baseline"}),
    )
    .await;
    assert_eq!(error_kind(&r), "unknown_baseline");
}

pub async fn pil_lookup_list_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    let r = catalog::<L>(&c, json!({"verb": "list"})).await;
    assert!(r.structured["catalog_version"].is_string());
    let items = r.structured["items"].as_array().unwrap();
    assert!(!items.is_empty());
    for e in items {
        assert!(e["risk"].is_string() && e["risk_hints"].is_object(), "{e}");
    }
}

pub async fn pil_lookup_pagination_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    let (search, whole) = L::PAGED_SEARCH;
    let list = |limit: u64| {
        let mut args = json!({"verb": "list", "limit": limit});
        if let Some(q) = search {
            args["q"] = json!(q);
        }
        args
    };
    let all: Vec<String> = catalog::<L>(&c, list(whole)).await.structured["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_string())
        .collect();
    assert!(all.len() > 1, "{all:?}");
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..(all.len() + 2) {
        let mut args = list(1);
        if let Some(cur) = &cursor {
            args["cursor"] = json!(cur);
        }
        let page = catalog::<L>(&c, args).await.structured;
        let items = page["items"].as_array().unwrap();
        assert!(items.len() <= 1);
        paged.extend(items.iter().map(|e| e["id"].as_str().unwrap().to_string()));
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(paged, all, "the pages cover every entry once, in order");
}

pub async fn pil_lookup_get_unknown_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    let r = catalog::<L>(&c, json!({"verb": "get", "id": L::UNKNOWN_ENTRY})).await;
    assert_eq!(error_kind(&r), "not_found");
    assert!(r.structured["catalog_version"].is_string());
}

pub async fn pil_catalog_version_stable_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    assert_eq!(
        catalog_version::<L>(&c).await,
        catalog_version::<L>(&c).await
    );
    if let Some(id) = L::SHARED_ENTRY {
        // Two tenants of one engine see the same entry.
        let entry = |c: Mcp| async move {
            catalog::<L>(&c, json!({"verb": "get", "id": id}))
                .await
                .structured["entry"]
                .clone()
        };
        assert_eq!(
            entry(lang.caller_a().await).await,
            entry(lang.caller_b().await).await
        );
    }
}

pub async fn pil_catalog_version_bumps_g<L: TenantEntries>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    lang.put_entry(EntryChange::Added).await;
    let first = catalog_version::<L>(&c).await;
    lang.put_entry(EntryChange::OptionalParameter).await;
    let second = catalog_version::<L>(&c).await;
    assert_ne!(first, second, "a changed entry changes the version");
    // changed_since names exactly the changed entry.
    let delta = catalog::<L>(
        &c,
        json!({"verb": "changed_since", "catalog_version": first}),
    )
    .await;
    assert!(!delta.is_error, "{}", delta.structured);
    assert!(
        delta.structured.to_string().contains(L::ENTRY),
        "{}",
        delta.structured
    );
}

pub async fn pil_authz_invisible_entry_b<L: TenantEntries>() {
    let lang = L::start().await;
    // The entry lives in tenant a's part of the engine only.
    lang.put_entry(EntryChange::Added).await;
    let a = lang.caller_a().await;
    let seen = catalog::<L>(&a, json!({"verb": "get", "id": L::ENTRY})).await;
    assert!(!seen.is_error, "{}", seen.structured);
    let b = lang.caller_b().await;
    let hidden = catalog::<L>(&b, json!({"verb": "get", "id": L::ENTRY})).await;
    let unknown = catalog::<L>(&b, json!({"verb": "get", "id": L::UNKNOWN_ENTRY})).await;
    assert_eq!(error_kind(&hidden), "not_found");
    assert_eq!(
        hidden.structured["error"]["message"]
            .as_str()
            .map(|s| s.replace(L::ENTRY, "X")),
        unknown.structured["error"]["message"]
            .as_str()
            .map(|s| s.replace(L::UNKNOWN_ENTRY, "X")),
    );
    // A close misspelling never suggests it to b.
    let misspelt = lang.calling_entry(&format!("{}t", L::ENTRY));
    let v = validate::<L>(&b, misspelt).await;
    assert_eq!(v.structured["valid"], false);
    assert!(
        !v.structured
            .to_string()
            .contains(&format!("\"{}\"", L::ENTRY)),
        "{}",
        v.structured
    );
    assert!(
        !v.structured["diagnostics"][0]["hint"]
            .as_str()
            .unwrap_or("")
            .contains(&format!("{} ", L::ENTRY))
    );
}

pub async fn pil_validate_good_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    let r = validate::<L>(&c, lang.program()).await;
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

pub async fn pil_validate_warnings_only_g<L: Warnings>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    let r = validate::<L>(&c, lang.warnings_only()).await;
    assert_eq!(r.structured["valid"], true, "{}", r.structured);
    let diagnostics = r.structured["diagnostics"].as_array().unwrap();
    assert!(!diagnostics.is_empty(), "{}", r.structured);
    assert!(
        diagnostics.iter().all(|d| d["severity"] == "warning"),
        "{}",
        r.structured
    );
    assert!(r.structured.get("plan").is_some());
}

pub async fn pil_validate_context_undeclared_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
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

pub async fn pil_validate_unknown_name_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    let r = validate::<L>(&c, lang.calling(L::MISSPELT_CAPABILITY)).await;
    assert_eq!(r.structured["valid"], false, "{}", r.structured);
    let closed = closed_codes(&c, L::LANGUAGE).await;
    let d = &r.structured["diagnostics"][0];
    assert_eq!(d["code"], "unknown_capability", "{}", r.structured);
    assert!(
        closed.contains(&d["code"].as_str().unwrap().to_string()),
        "{d}"
    );
    assert_at(d, &L::CAPABILITY_PLACE);
}

pub async fn pil_validate_side_effect_free_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let before = lang.observe().await;
    for program in [lang.program(), lang.second_fails(), lang.malformed()] {
        validate::<L>(&c, program).await;
    }
    assert_eq!(lang.observe().await, before);
}

pub async fn pil_validate_reserved_chars_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    for name in L::RESERVED_NAMES {
        let r = validate::<L>(&c, lang.renamed(name)).await;
        assert_eq!(r.structured["valid"], false, "{}", r.structured);
        let d = diagnostic(&r.structured, "reserved_character");
        assert!(d["message"].as_str().unwrap().contains(name), "{d}");
        // At the step's name.
        assert_at(&d, &L::NAME_PLACE);
    }
}

pub async fn pil_validate_bounds_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let before = lang.observe().await;
    for program in [lang.too_many_steps(), lang.too_large()] {
        let r = validate::<L>(&c, program).await;
        assert_eq!(error_kind(&r), "bounds_exceeded");
        assert_shape(&r.structured, "RequestError");
    }
    assert_eq!(lang.observe().await, before);
}

pub async fn pil_validate_constraint_fallback_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    assert!(
        closed_codes(&c, L::LANGUAGE)
            .await
            .contains(&"constraint".to_string())
    );
    let rules = std::fs::read_to_string(repo_path(L::RULES)).expect("the rule file");
    assert!(
        rules.contains("constraint"),
        "the rule file names its catch-all"
    );
    // Where a program reaches the catch-all, validate shows it.
    if let Some(program) = lang.unclassified() {
        let r = validate::<L>(&c, program).await;
        assert_eq!(r.structured["valid"], false, "{}", r.structured);
        assert_eq!(codes(&r.structured), ["constraint"], "{}", r.structured);
    }
}

pub async fn pil_execute_success_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let cv = catalog_version::<L>(&c).await;
    let r = run(
        &lang,
        &c,
        json!({"input": {"name": "world"}, "trace_level": "full", "expected_catalog_version": cv}),
    )
    .await;
    assert_shape(&r.structured, "ExecuteToolOutput");
    assert_eq!(
        r.structured["outcome"],
        json!({"ok": true, "status": "success", "error": null})
    );
    assert_eq!(r.structured["trace"]["level"], "full");
    assert_eq!(r.structured["output"], lang.greeting("world"));
    let expected = lang.greeting_step("world");
    let steps = r.structured["trace"]["steps"].as_array().unwrap();
    let greeting: Vec<&Value> = steps.iter().filter(|s| s["id"] == expected["id"]).collect();
    assert_eq!(greeting.len(), 1, "{steps:?}");
    for (member, value) in expected.as_object().unwrap() {
        assert_eq!(&greeting[0][member], value, "{steps:?}");
    }
    lang.check_ran(1).await;
    lang.finish().await;
}

pub async fn pil_execute_guard_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let before = lang.observe().await;
    let r = run_program::<L>(
        &c,
        lang.calling(L::NO_SUCH_CAPABILITY),
        json!({"input": {"name": "x"}}),
    )
    .await;
    assert_eq!(status(&r), "validation_error");
    assert!(!codes(&r.structured).is_empty());
    assert!(r.structured["run_id"].is_string());
    assert_eq!(lang.observe().await, before);
}

pub async fn pil_execute_drift_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let stale = lang.stale_catalog_version(&c).await;
    let before = lang.observe().await;
    let r = run(
        &lang,
        &c,
        json!({"input": {"name": "x"}, "expected_catalog_version": stale}),
    )
    .await;
    assert_eq!(status(&r), "catalog_drift", "{}", r.structured);
    assert_eq!(lang.observe().await, before);
}

pub async fn pil_execute_drift_before_validation_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    let r = run_program::<L>(
        &c,
        lang.calling(L::NO_SUCH_CAPABILITY),
        json!({"expected_catalog_version": "cv_stale"}),
    )
    .await;
    assert_eq!(status(&r), "catalog_drift", "{}", r.structured);
}

pub async fn pil_execute_promotion_drift_b<L: TenantEntries>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    lang.put_entry(EntryChange::Added).await;
    let deployed = c
        .call(
            L::EXECUTE,
            json!({"workflow": lang.calling_entry(L::ENTRY), "mode": "deploy"}),
        )
        .await;
    assert_eq!(status(&deployed), "success", "{}", deployed.structured);
    let program_ref = deployed.structured["output"]["program_ref"].clone();
    // The entry's parameters change after promotion.
    lang.put_entry(EntryChange::RequiredParameter).await;
    let before = lang.observe().await;
    let r = c
        .call(
            L::EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate"}),
        )
        .await;
    assert_eq!(status(&r), "promotion_drift", "{}", r.structured);
    assert_eq!(lang.observe().await, before);
}

pub async fn pil_execute_input_binding_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let deployed = c
        .call(
            L::EXECUTE,
            json!({"workflow": lang.program(), "mode": "deploy"}),
        )
        .await;
    assert_eq!(status(&deployed), "success", "{}", deployed.structured);
    let program_ref = deployed.structured["output"]["program_ref"].clone();
    let before = lang.observe().await;
    let r = c
        .call(
            L::EXECUTE,
            json!({"program_ref": program_ref, "mode": "immediate", "input": {"name": 5, "extra": true}}),
        )
        .await;
    assert_eq!(status(&r), "validation_error", "{}", r.structured);
    let d = diagnostic(&r.structured, "input_binding");
    assert!(
        d["path"]
            .as_str()
            .is_some_and(|p| p.is_empty() || p.starts_with('/')),
        "{d}"
    );
    // Inline too.
    let r = run(&lang, &c, json!({"input": lang.wrong_input()})).await;
    assert_eq!(status(&r), "validation_error", "{}", r.structured);
    assert!(codes(&r.structured).contains(&"input_binding".to_string()));
    assert_eq!(lang.observe().await, before);
}

pub async fn pil_execute_test_run_undeclared_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let before = lang.observe().await;
    let r = run(&lang, &c, json!({"input": {"name": "x"}, "test_run": true})).await;
    assert_eq!(error_kind(&r), "invalid_request");
    assert_eq!(lang.observe().await, before);
    lang.check_ran(0).await;
}

pub async fn pil_execute_idempotent_replay_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let args = json!({"workflow": lang.program(), "mode": "immediate",
        "input": {"name": "x"}, "idempotency_key": "key-1"});
    let first = c.call(L::EXECUTE, args.clone()).await;
    let second = c.call(L::EXECUTE, args).await;
    assert_eq!(status(&first), "success", "{}", first.structured);
    assert_eq!(first.structured, second.structured);
    lang.check_ran(1).await;
    lang.finish().await;
}

pub async fn pil_execute_idempotent_conflict_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let mut args = json!({"workflow": lang.program(), "mode": "immediate",
        "input": {"name": "x"}, "idempotency_key": "key-1"});
    c.call(L::EXECUTE, args.clone()).await;
    args["input"] = json!({"name": "y"});
    let r = c.call(L::EXECUTE, args).await;
    assert_eq!(error_kind(&r), "idempotency_conflict");
    lang.check_ran(1).await;
    lang.finish().await;
}

pub async fn pil_execute_engine_error_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let r = run_program::<L>(&c, lang.failing(), json!({"trace_level": "full"})).await;
    assert_eq!(status(&r), "error", "{}", r.structured);
    assert_eq!(r.structured["outcome"]["ok"], false);
    assert!(
        r.structured["outcome"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("card declined")),
        "{}",
        r.structured
    );
    let (at, id) = L::FAILED_STEP;
    let failed = &r.structured["trace"]["steps"][at];
    assert_eq!(failed["id"], id, "{}", r.structured);
    assert_eq!(failed["outcome"]["status"], "error", "{failed}");
    lang.finish().await;
}

pub async fn pil_execute_internal_b<L: VectorLanguage>() {
    // The engine unreachable: its URL with a closed port.
    let lang = L::start_with(|cfg| {
        let engine = cfg.engines.get_mut(L::ENGINE).unwrap();
        let mut dead = reqwest::Url::parse(&engine.url).expect("the engine's URL");
        dead.set_port(Some(free_port())).expect("a port");
        engine.url = dead.as_str().trim_end_matches('/').to_string();
    })
    .await;
    let c = lang.anonymous_caller().await;
    let r = run(&lang, &c, json!({"input": {"name": "x"}})).await;
    assert_eq!(error_kind(&r), "internal");
    assert_shape(&r.structured, "RequestError");
}

pub async fn pil_execute_both_runnables_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
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
    let c = lang.anonymous_caller().await;
    let r = c
        .call(L::EXECUTE, json!({"input": {"x": 1}, "mode": "immediate"}))
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
}

pub async fn pil_execute_mode_missing_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
    let r = c
        .call(L::EXECUTE, json!({"workflow": lang.program()}))
        .await;
    assert_eq!(error_kind(&r), "invalid_request");
}

pub async fn pil_execute_unknown_trace_level_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.anonymous_caller().await;
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

pub async fn pil_trace_branch_decision_g<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let program = lang.route();
    let v = validate::<L>(&c, program.clone()).await;
    assert_eq!(v.structured["valid"], true, "{}", v.structured);
    let plan = v.structured["plan"]["steps"].as_array().unwrap().clone();
    let arm = |id: &str| {
        plan.iter()
            .find(|s| s["id"] == id)
            .unwrap_or_else(|| panic!("{id} in the plan {plan:?}"))["arm"]
            .clone()
    };
    let (over, under) = L::ROUTE_ARMS;
    let (big, small) = (arm(over), arm(under));
    // The choice between them is one branch construct, an arm each.
    assert_eq!(big["branch"], small["branch"], "{plan:?}");
    assert_ne!(big["label"], small["label"], "{plan:?}");
    let branch = big["branch"].as_str().unwrap().to_string();
    for (amount, taken, absent) in [(250, over, under), (5, under, over)] {
        let r = run_program::<L>(
            &c,
            program.clone(),
            json!({"input": {"amount": amount}, "trace_level": "full"}),
        )
        .await;
        assert_eq!(status(&r), "success", "{}", r.structured);
        let steps = r.structured["trace"]["steps"].as_array().unwrap();
        let entry = steps
            .iter()
            .find(|s| s["id"] == branch.as_str())
            .unwrap_or_else(|| panic!("the branch {branch} in {steps:?}"));
        let decisions = entry["decisions"].as_array().unwrap();
        assert_eq!(decisions.len(), 1, "{entry}");
        assert_eq!(decisions[0]["at"], branch.as_str(), "{entry}");
        assert_eq!(decisions[0]["took"], arm(taken)["label"], "{entry}");
        let because = decisions[0]["because"].as_str();
        assert!(because.is_some(), "{entry}");
        if let Some(words) = L::ROUTE_BECAUSE {
            assert!(because.is_some_and(|b| b.contains(words)), "{entry}");
        }
        if L::BARE_BRANCH {
            assert!(entry.get("input").is_none() && entry.get("output").is_none());
        }
        assert!(steps.iter().any(|s| s["id"] == taken));
        assert!(
            steps.iter().all(|s| s["id"] != absent),
            "untaken arm absent"
        );
    }
    lang.finish().await;
}

pub async fn pil_trace_zero_iteration_loop_g<L: Loops>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let (program, body) = lang.empty_loop();
    let v = validate::<L>(&c, program.clone()).await;
    let plan = v.structured["plan"]["steps"].as_array().unwrap().clone();
    let each = plan
        .iter()
        .find(|s| s["id"] == body)
        .unwrap_or_else(|| panic!("{body} in the plan {plan:?}"));
    let loop_id = each["loop"]
        .as_str()
        .unwrap_or_else(|| panic!("{body} is a loop body: {plan:?}"));
    let r = run_program::<L>(&c, program, json!({"trace_level": "full"})).await;
    assert_eq!(status(&r), "success", "{}", r.structured);
    let steps = r.structured["trace"]["steps"].as_array().unwrap();
    let loops: Vec<&Value> = steps.iter().filter(|s| s["id"] == loop_id).collect();
    assert_eq!(loops.len(), 1, "one loop entry: {steps:?}");
    let decisions = loops[0]["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 1, "{decisions:?}");
    assert_eq!(decisions[0]["took"], "exit");
    let iteration = format!("{body}#");
    assert!(
        steps.iter().all(|s| {
            let id = s["id"].as_str().unwrap();
            !id.starts_with(&iteration) && id != body
        }),
        "no body entry: {steps:?}"
    );
    lang.finish().await;
}

pub async fn pil_trace_partial_b<L: VectorLanguage>() {
    let lang = L::start().await;
    let c = lang.caller_a().await;
    let r = run_program::<L>(&c, lang.second_fails(), json!({"trace_level": "full"})).await;
    assert_eq!(status(&r), "partial", "{}", r.structured);
    assert_eq!(r.structured["outcome"]["ok"], false);
    assert_eq!(
        step_ids(&r.structured),
        L::PARTIAL_STEPS,
        "the executed prefix, in order"
    );
    assert!(
        r.structured["outcome"]["error"]
            .as_str()
            .unwrap()
            .contains("card declined")
    );
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
