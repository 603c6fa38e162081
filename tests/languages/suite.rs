//! The language-loop suite: one body for every language, as
//! `store_conformance_tests!` is one body for every store. A language
//! module implements [`LoopLanguage`] (its engine, its programs, the checks
//! only it can make) and instantiates the suite with
//! `language_loop_tests!(TheLanguage)`; the bodies below say what every
//! language must do through the real endpoint: the Part IV §4.3 loop, every
//! guide example validated and executed, and the completeness gate for
//! diagnostic codes (Part IV §4.2). What the languages bound to a
//! third-party engine run beyond the loop is `engine_runs`, one body for
//! all of them likewise.

pub mod engine_runs;

use crate::common::answers::codes;
use crate::common::guides::{guide_body, listed};
use crate::common::{Mcp, assert_shape, repo_path};
use pilotage_gateway::guides::GuideSet;
use serde_json::{Value, json};

/// One language behind a gateway in front of its real engine.
#[allow(async_fn_in_trait)]
pub trait LoopLanguage: Sized {
    /// The language's name in the manifest.
    const NAME: &'static str;
    /// The loop's tools as the manifest names them.
    const VALIDATE: &'static str;
    const EXECUTE: &'static str;
    const TRACE: &'static str;
    /// The guides folder, relative to the repository.
    const GUIDES: &'static str;
    /// At least this many runnable examples in the guides.
    const MIN_EXAMPLES: usize;
    /// Words the core guide's body must contain.
    const CORE_GUIDE_MARKS: [&'static str; 2];
    /// A catalog search, an id it finds, and that entry's risk.
    const LOOKUP: (&'static str, &'static str, &'static str);
    /// The plan's `max_risk` of [`LoopLanguage::program`].
    const PLAN_RISK: &'static str;

    /// A gateway for this language, its engine, and the callers below.
    async fn start() -> Self;
    /// The loop's caller, not yet initialized.
    fn caller(&self) -> Mcp;
    /// An initialized caller whose risk ceiling is below
    /// [`LoopLanguage::ceiling`]'s first program.
    async fn capped_caller(&self) -> Mcp;
    /// What only this language checks of a catalog entry.
    fn check_entry(&self, _entry: &Value) {}
    /// The loop's program with one mistake, and what its diagnostics show.
    fn mistaken_program(&self) -> Value;
    fn check_mistake(&self, answer: &Value);
    /// The loop's program, corrected.
    fn program(&self) -> Value;
    /// Members the loop's execute adds (its input).
    fn run_extra(&self) -> Value {
        json!({})
    }
    /// What the engine shows of the caller, before and after the run.
    async fn engine_mark(&self) -> Value;
    /// What a stored run of [`LoopLanguage::program`] must have done.
    fn check_ran(&self, before: &Value, after: &Value, answer: &Value);
    /// What only this language checks of a guide example's program.
    fn check_example_program(&self, _name: &str, _program: &Value) {}
    /// (code, rejected program, accepted program) for every code validate
    /// gives on a program alone.
    fn program_cases(&self) -> Vec<(&'static str, Value, Value)>;
    /// A valid program with a required input, a wrong input and a right one.
    fn input_binding(&self) -> (Value, Value, Value);
    /// A program over the capped caller's ceiling, and one under it.
    fn ceiling(&self) -> (Value, Value);
    /// For a language no program of which reaches the reserved catch-all
    /// `constraint` (every message its engine gives has a rule): its rule
    /// file, relative to the repository, and an engine message no rule
    /// matches. The suite then shows the catch-all through that file
    /// instead of through validate.
    fn catch_all_by_rules(&self) -> Option<(&'static str, &'static str)> {
        None
    }
    /// Leaves the engine as the suite found it.
    async fn finish(&self) {}
}

/// One test per body, for the language `$lang`.
#[macro_export]
macro_rules! language_loop_tests {
    ($lang:ty) => {
        #[tokio::test(flavor = "multi_thread")]
        async fn discover_learn_lookup_validate_execute_fetch() {
            $crate::suite::discover_learn_lookup_validate_execute_fetch::<$lang>().await;
        }

        #[tokio::test(flavor = "multi_thread")]
        async fn every_guide_example_validates_and_executes() {
            $crate::suite::every_guide_example_validates_and_executes::<$lang>().await;
        }

        #[tokio::test(flavor = "multi_thread")]
        async fn every_diagnostic_code_is_enumerated_and_reached_both_ways() {
            $crate::suite::every_diagnostic_code_is_enumerated_and_reached_both_ways::<$lang>()
                .await;
        }
    };
}

pub async fn discover_learn_lookup_validate_execute_fetch<L: LoopLanguage>() {
    let lang = L::start().await;
    let mut c = lang.caller();
    // discover: the language and its loop
    let init = c.initialize().await;
    assert!(
        init["instructions"]
            .as_str()
            .unwrap()
            .contains("pilotage_manifest")
    );
    let manifest = c.call("pilotage_manifest", json!({})).await.structured;
    let declared = manifest["languages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == L::NAME)
        .unwrap_or_else(|| panic!("no {} in {manifest}", L::NAME))
        .clone();
    let tool = |k: &str| declared["loop"][k].as_str().unwrap().to_string();
    assert_eq!(
        [tool("validate"), tool("execute"), tool("trace")],
        [L::VALIDATE, L::EXECUTE, L::TRACE]
    );
    // learn: the core guide first
    let index = c
        .call("pilotage_get_guide", json!({"language": L::NAME}))
        .await
        .structured;
    let core = index["guides"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["level"] == "core")
        .expect("a core guide")
        .clone();
    let body = guide_body(&c, L::NAME, core["id"].as_str().unwrap()).await;
    assert!(
        L::CORE_GUIDE_MARKS.iter().all(|m| body.contains(m)),
        "{body}"
    );
    // lookup the names the task needs
    let (q, id, risk) = L::LOOKUP;
    let found = c
        .call(
            "pilotage_catalog",
            json!({"language": L::NAME, "verb": "list", "q": q}),
        )
        .await
        .structured;
    let ids: Vec<&str> = found["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["id"].as_str())
        .collect();
    assert!(ids.contains(&id), "{ids:?}");
    let entry = c
        .call(
            "pilotage_catalog",
            json!({"language": L::NAME, "verb": "get", "id": id}),
        )
        .await
        .structured;
    assert_eq!(entry["entry"]["risk"], risk, "{entry}");
    lang.check_entry(&entry);
    // validate a program with a mistake, then the corrected one
    let bad = c
        .call(L::VALIDATE, json!({"workflow": lang.mistaken_program()}))
        .await;
    assert!(!bad.is_error, "{}", bad.structured);
    assert_eq!(bad.structured["valid"], false, "{}", bad.structured);
    lang.check_mistake(&bad.structured);
    let good = c
        .call(L::VALIDATE, json!({"workflow": lang.program()}))
        .await;
    assert_eq!(good.structured["valid"], true, "{}", good.structured);
    assert_eq!(
        good.structured["plan"]["max_risk"],
        L::PLAN_RISK,
        "{}",
        good.structured
    );
    let cv = good.structured["catalog_version"].clone();
    // execute, stored, at the current catalog version
    let before = lang.engine_mark().await;
    let mut args = json!({"workflow": lang.program(), "mode": "immediate", "store": true,
        "trace_level": "full", "expected_catalog_version": cv});
    merge(&mut args, lang.run_extra());
    let ran = c.call(L::EXECUTE, args).await;
    assert_eq!(
        ran.structured["outcome"]["status"], "success",
        "{}",
        ran.structured
    );
    let after = lang.engine_mark().await;
    lang.check_ran(&before, &after, &ran.structured);
    // fetch the same trace
    let fetched = c
        .call(L::TRACE, json!({"run_id": ran.structured["run_id"]}))
        .await;
    assert_shape(&fetched.structured, "TraceFetchResponse");
    assert_eq!(fetched.structured, ran.structured);
    lang.finish().await;
}

pub async fn every_guide_example_validates_and_executes<L: LoopLanguage>() {
    let guides = GuideSet::load(&repo_path(L::GUIDES), L::NAME, "").expect("the guides load");
    let examples = guides.examples();
    assert!(
        examples.iter().any(|e| e.guide_id == "core"),
        "the core guide has a runnable example"
    );
    assert!(
        examples.len() >= L::MIN_EXAMPLES,
        "{} examples",
        examples.len()
    );
    let lang = L::start().await;
    let mut c = lang.caller();
    c.initialize().await;
    for ex in examples {
        let name = format!("{} example #{}", ex.guide_id, ex.index);
        lang.check_example_program(&name, &ex.workflow);
        let v = c.call(L::VALIDATE, json!({"workflow": ex.workflow})).await;
        assert_eq!(
            v.structured["valid"], true,
            "{name} does not validate: {}",
            v.structured
        );
        let mut args = json!({"workflow": ex.workflow, "mode": "immediate", "trace_level": "full",
            "expected_catalog_version": v.structured["catalog_version"]});
        if let Some(input) = ex.input {
            args["input"] = input;
        }
        let r = c.call(L::EXECUTE, args).await;
        assert_eq!(
            r.structured["outcome"]["status"], "success",
            "{name} does not run: {}",
            r.structured
        );
        assert!(
            !r.structured["trace"]["steps"]
                .as_array()
                .unwrap_or_else(|| panic!("{name}: no trace: {}", r.structured))
                .is_empty(),
            "{name}: an empty trace"
        );
    }
    lang.finish().await;
}

pub async fn every_diagnostic_code_is_enumerated_and_reached_both_ways<L: LoopLanguage>() {
    let lang = L::start().await;
    let mut c = lang.caller();
    c.initialize().await;
    let guide = guide_body(&c, L::NAME, "closed-sets").await;
    let mut covered: Vec<String> = Vec::new();
    let reached = |answer: &Value, code: &str| codes(answer).iter().any(|c| c == code);
    for (code, rejected, accepted) in lang.program_cases() {
        let bad = c
            .call(L::VALIDATE, json!({"workflow": rejected}))
            .await
            .structured;
        assert!(reached(&bad, code), "{code} not reached: {bad}\n{rejected}");
        let good = c
            .call(L::VALIDATE, json!({"workflow": accepted}))
            .await
            .structured;
        assert!(
            !reached(&good, code),
            "{code} on the corrected program: {good}"
        );
        assert_eq!(
            good["valid"], true,
            "{code}: the corrected program is valid: {good}\n{accepted}"
        );
        covered.push(code.to_string());
    }
    // The binding codes: context through validate, input through execute.
    let (program, wrong, right) = lang.input_binding();
    let bad = c
        .call(
            L::VALIDATE,
            json!({"workflow": program, "context": {"x": 1}}),
        )
        .await;
    assert!(reached(&bad.structured, "context_binding"));
    let good = c.call(L::VALIDATE, json!({"workflow": program})).await;
    assert_eq!(good.structured["valid"], true, "{}", good.structured);
    assert!(!reached(&good.structured, "context_binding"));
    covered.push("context_binding".into());
    let run = |input: Value| json!({"workflow": program, "mode": "immediate", "input": input});
    let bad = c.call(L::EXECUTE, run(wrong)).await;
    assert!(
        reached(&bad.structured, "input_binding"),
        "{}",
        bad.structured
    );
    let good = c.call(L::EXECUTE, run(right)).await;
    assert_eq!(
        good.structured["outcome"]["status"], "success",
        "{}",
        good.structured
    );
    covered.push("input_binding".into());
    // The gateway's own ceiling: a program over a capped caller's ceiling.
    let capped = lang.capped_caller().await;
    let (over, under) = lang.ceiling();
    let bad = capped.call(L::VALIDATE, json!({"workflow": over})).await;
    assert!(
        reached(&bad.structured, "risk_ceiling"),
        "{}",
        bad.structured
    );
    let good = capped.call(L::VALIDATE, json!({"workflow": under})).await;
    assert_eq!(good.structured["valid"], true, "{}", good.structured);
    assert!(!reached(&good.structured, "risk_ceiling"));
    covered.push("risk_ceiling".into());
    if let Some((rules, message)) = lang.catch_all_by_rules() {
        assert!(
            !covered.iter().any(|c| c == "constraint"),
            "constraint is reached by a program: drop catch_all_by_rules"
        );
        assert_eq!(catch_all_code(rules, &guide, message), "constraint");
        covered.push("constraint".into());
    }
    // Every code the guide enumerates is covered, and the guide lists each.
    let mut listed = listed(&guide, "## Diagnostic codes");
    listed.sort();
    covered.sort();
    assert_eq!(listed, covered, "the guide's codes vs the codes reached");
    lang.finish().await;
}

/// The code `rules` (a rule file) gives `message`, its allowed codes those
/// of the closed-sets `guide`.
fn catch_all_code(rules: &str, guide: &str, message: &str) -> String {
    use pilotage_gateway::classify::{ClassifyContext, EngineProblem, RuleTable, Severity};
    let allowed = listed(guide, "## Diagnostic codes").into_iter().collect();
    let table = RuleTable::load(&repo_path(rules), &allowed).unwrap_or_else(|e| panic!("{e}"));
    let ctx = ClassifyContext {
        step_pointers: &Default::default(),
        visible_names: &[],
    };
    let problem = EngineProblem {
        level: Severity::Error,
        text: message.to_string(),
        location: None,
    };
    let classified = table.classify(&problem, &ctx);
    assert!(classified.rule.is_none(), "a rule matched {message:?}");
    assert_eq!(classified.diagnostic.message, message, "the text is kept");
    classified.diagnostic.code
}

/// `extra`'s members added to `args`.
fn merge(args: &mut Value, extra: Value) {
    if let (Some(a), Value::Object(e)) = (args.as_object_mut(), extra) {
        a.extend(e);
    }
}
