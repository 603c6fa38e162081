//! What every language bound to a third-party engine (`mistral_v2`,
//! `n8n_v1`) must do end to end beyond the loop, one body for all of them:
//! a mistake after a write refused before anything runs, deploy and
//! `program_ref`, idempotent replay, the run deadline, tenant isolation
//! down to the engine's projects, and runs held by MCP tasks (a long run
//! completing past the plain deadline, a cancel stopping the engine's run). A language implements [`EngineRuns`] (its
//! programs, and what its engine shows behind the gateway's back) and
//! instantiates these tests with `engine_run_tests!(TheLanguage)`; inside
//! its `impl LoopLanguage`, `engine_loop_language!()` gives the loop suite
//! the name, tools, gateway and callers its environment already knows.

use super::LoopLanguage;
use crate::common::answers::{codes, status};
use crate::common::engine_env::{self, EngineEnv};
use crate::common::{CallResult, Mcp};
use pilotage_gateway::config::Config;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// One of the two keyed tenants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tenant {
    A,
    B,
}

/// An engine-bound language's table for the tests below.
#[allow(async_fn_in_trait)]
pub trait EngineRuns: LoopLanguage + 'static {
    /// The language's environment.
    type Env: EngineEnv;
    /// What sees the engine's runs from outside it and the gateway, where
    /// the engine's own lists cannot (n8n deletes what a run created).
    type Witness;
    /// The run deadline the deadline test configures.
    const DEADLINE_MS: u64;
    /// What validate finds in [`EngineRuns::late_mistake`].
    const LATE_CODE: &'static str;
    /// The trace's step ids of the corrected late mistake.
    const LATE_STEPS: &'static [&'static str];
    /// A step of [`EngineRuns::slow`] that runs before the deadline, and one
    /// that never starts.
    const SLOW_STEPS: (&'static str, &'static str);

    /// The language on a gateway whose configuration `tweak` changes last.
    async fn start_with(tweak: impl FnOnce(&mut Config)) -> Self;
    /// Its environment.
    fn env(&self) -> &Self::Env;
    /// The output of [`LoopLanguage::program`] for the input `name`.
    fn greeting(&self, name: &str) -> Value;
    /// Members the input schema of [`LoopLanguage::program`]'s catalog
    /// entry has once deployed.
    fn deployed_input(&self) -> Value;
    /// A fresh witness.
    async fn witness(&self) -> Self::Witness;
    /// The runs `witness` has seen of the programs below (the engine's
    /// own count, where it keeps one).
    async fn count(&self, witness: &Self::Witness) -> usize;
    /// A program `witness` counts, two inputs it takes, and its output for
    /// the first.
    fn counted(&self, witness: &Self::Witness) -> (Value, [Value; 2], Value);
    /// A program that writes, then makes a mistake its engine finds only
    /// when it gets there (`fixed`: corrected).
    fn late_mistake(&self, witness: &Self::Witness, fixed: bool) -> Value;
    /// Shows that the engine itself takes the late mistake.
    async fn engine_takes(&self, program: &Value);
    /// What only this language checks of the late mistake's diagnostic.
    fn check_late(&self, diagnostic: &Value);
    /// A program that outlives the deadline after its first step.
    fn slow(&self, witness: &Self::Witness) -> Value;
    /// What the engine shows while the slow program runs.
    async fn while_slow(&self, witness: &Self::Witness);
    /// What the engine shows once the deadline stopped the slow program.
    async fn check_stopped(&self, witness: &Self::Witness);
    /// A program that runs a few seconds past [`EngineRuns::DEADLINE_MS`]
    /// (a sleep, a Wait node), then ends successfully.
    fn long(&self) -> Value;
    /// A run of `who`'s (stored when `store`), and what the engine shows
    /// of where it ran.
    async fn run_as(&self, who: Tenant, store: bool) -> CallResult;
    /// What the engine shows of `who`'s project.
    async fn footprint(&self, who: Tenant) -> Value;
    /// What `who`'s project must show after `runs` runs since `before`.
    async fn check_left(&self, who: Tenant, before: &Value, runs: usize);
}

/// The items of [`LoopLanguage`] an engine-bound language takes from its
/// environment ([`EngineRuns::Env`]): its name and tools, the loop suite's
/// gateway (tenant b may run nothing riskier than `safe`) and its callers.
/// Used inside `impl LoopLanguage for TheLanguage`.
#[macro_export]
macro_rules! engine_loop_language {
    () => {
        const NAME: &'static str = <<Self as $crate::suite::engine_runs::EngineRuns>::Env as $crate::common::engine_env::EngineEnv>::LANGUAGE;
        const VALIDATE: &'static str = <<Self as $crate::suite::engine_runs::EngineRuns>::Env as $crate::common::engine_env::EngineEnv>::VALIDATE;
        const EXECUTE: &'static str = <<Self as $crate::suite::engine_runs::EngineRuns>::Env as $crate::common::engine_env::EngineEnv>::EXECUTE;
        const TRACE: &'static str = <<Self as $crate::suite::engine_runs::EngineRuns>::Env as $crate::common::engine_env::EngineEnv>::TRACE;

        async fn start() -> Self {
            $crate::suite::engine_runs::loop_gateway().await
        }

        fn caller(&self) -> $crate::common::Mcp {
            $crate::suite::engine_runs::uninitialized_a(self)
        }

        async fn capped_caller(&self) -> $crate::common::Mcp {
            $crate::suite::engine_runs::capped(self).await
        }
    };
}

/// The loop suite's gateway: tenant b may run nothing riskier than `safe`.
pub async fn loop_gateway<L: EngineRuns>() -> L {
    L::start_with(|cfg| cfg.auth.keys[1].max_risk = Some("safe".into())).await
}

/// Caller a, not yet initialized.
pub fn uninitialized_a<L: EngineRuns>(lang: &L) -> Mcp {
    let env = lang.env();
    env.gateway().client(env.keys()[0])
}

/// Caller b, capped at `safe` on the loop suite's gateway.
pub async fn capped<L: EngineRuns>(lang: &L) -> Mcp {
    lang.env().caller_b().await
}

/// One test per body, for the language `$lang`.
#[macro_export]
macro_rules! engine_run_tests {
    ($lang:ty) => {
        $crate::engine_run_tests!(@each $lang;
            a_late_mistake_after_a_write_is_refused_before_anything_runs,
            deploy_returns_a_program_ref_that_runs_by_reference,
            an_idempotent_replay_runs_once,
            past_the_deadline_the_execution_is_stopped_in_the_engine,
            another_tenant_cannot_see_runs_and_engine_projects_differ,
            a_long_run_completes_as_a_task,
            a_tasks_cancel_stops_the_engines_run);
    };
    (@each $lang:ty; $($name:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread")]
            async fn $name() {
                $crate::suite::engine_runs::$name::<$lang>().await;
            }
        )*
    };
}

/// execute of `program` with `mode` immediate and `extra`'s members.
async fn run<L: EngineRuns>(c: &Mcp, program: Value, extra: Value) -> CallResult {
    engine_env::execute(c, L::EXECUTE, program, extra).await
}

/// `answer` has the run status `expected`.
pub fn assert_status(answer: &CallResult, expected: &str) {
    assert_eq!(status(answer), expected, "{}", answer.structured);
}

/// The trace's step ids.
fn step_ids(answer: &Value) -> Vec<&str> {
    answer["trace"]["steps"]
        .as_array()
        .unwrap_or_else(|| panic!("no trace: {answer}"))
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect()
}

pub async fn a_late_mistake_after_a_write_is_refused_before_anything_runs<L: EngineRuns>() {
    let lang = L::start_with(|_| {}).await;
    let witness = lang.witness().await;
    let c = lang.env().caller_a().await;
    let program = lang.late_mistake(&witness, false);
    // The engine itself takes it: only the gateway stands in the way.
    lang.engine_takes(&program).await;
    // Something ran before, so an unchanged project means something.
    let earlier = run::<L>(&c, lang.program(), json!({"input": {"name": "before"}})).await;
    assert_status(&earlier, "success");
    let before = lang.footprint(Tenant::A).await;
    let runs = lang.count(&witness).await;

    let v = c
        .call(L::VALIDATE, json!({"workflow": program.clone()}))
        .await;
    assert_eq!(v.structured["valid"], false, "{}", v.structured);
    let d = v.structured["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == L::LATE_CODE)
        .unwrap_or_else(|| panic!("no {}: {}", L::LATE_CODE, v.structured))
        .clone();
    lang.check_late(&d);

    let r = run::<L>(&c, program, json!({})).await;
    assert_status(&r, "validation_error");
    assert!(codes(&r.structured).contains(&L::LATE_CODE.to_string()));
    assert!(
        r.structured["run_id"].is_string(),
        "a refused run has an id"
    );
    assert_eq!(lang.count(&witness).await, runs, "the write never happened");
    lang.check_left(Tenant::A, &before, 0).await;
    // Corrected, it runs through.
    let fixed = lang.late_mistake(&witness, true);
    let r = run::<L>(&c, fixed, json!({"trace_level": "full"})).await;
    assert_status(&r, "success");
    assert_eq!(step_ids(&r.structured), L::LATE_STEPS);
    assert_eq!(lang.count(&witness).await, runs + 1);
    lang.check_left(Tenant::A, &before, 1).await;
    lang.finish().await;
}

pub async fn deploy_returns_a_program_ref_that_runs_by_reference<L: EngineRuns>() {
    let lang = L::start_with(|_| {}).await;
    let c = lang.env().caller_a().await;
    let before = lang.footprint(Tenant::A).await;
    let deployed = c
        .call(
            L::EXECUTE,
            json!({"workflow": lang.program(), "mode": "deploy"}),
        )
        .await;
    assert_status(&deployed, "success");
    let program_ref = deployed.structured["output"]["program_ref"]
        .as_str()
        .unwrap_or_else(|| panic!("no program_ref: {}", deployed.structured))
        .to_string();
    // Deploying keeps the document in the gateway: nothing in the engine.
    lang.check_left(Tenant::A, &before, 0).await;
    // The program entry is in the caller's catalog, with its input schema.
    let entry = c
        .call(
            "pilotage_catalog",
            json!({"language": L::NAME, "verb": "get", "id": program_ref}),
        )
        .await
        .structured;
    assert_eq!(entry["entry"]["kind"], "program", "{entry}");
    for (member, value) in lang.deployed_input().as_object().unwrap() {
        assert_eq!(&entry["entry"]["input_schema"][member], value, "{entry}");
    }
    let by_ref =
        |input: Value| json!({"program_ref": program_ref, "mode": "immediate", "input": input});
    let r = c.call(L::EXECUTE, by_ref(json!({"name": "bob"}))).await;
    assert_status(&r, "success");
    assert_eq!(r.structured["output"], lang.greeting("bob"));
    lang.check_left(Tenant::A, &before, 1).await;
    // A wrong input is refused against the entry's schema.
    let r = c.call(L::EXECUTE, by_ref(json!({"nom": "bob"}))).await;
    assert_status(&r, "validation_error");
    assert!(codes(&r.structured).contains(&"input_binding".to_string()));
    lang.check_left(Tenant::A, &before, 1).await;
    // Another tenant cannot run it.
    let other = lang.env().caller_b().await;
    let r = other.call(L::EXECUTE, by_ref(json!({"name": "eve"}))).await;
    assert_eq!(
        r.structured["error"]["kind"], "not_found",
        "{}",
        r.structured
    );
    lang.check_left(Tenant::A, &before, 1).await;
    lang.finish().await;
}

pub async fn an_idempotent_replay_runs_once<L: EngineRuns>() {
    let lang = L::start_with(|_| {}).await;
    let witness = lang.witness().await;
    let c = lang.env().caller_a().await;
    let before = lang.footprint(Tenant::A).await;
    let runs = lang.count(&witness).await;
    let (program, [input, other], output) = lang.counted(&witness);
    let args = json!({"workflow": program, "mode": "immediate",
        "input": input, "idempotency_key": "replay-1"});
    let first = c.call(L::EXECUTE, args.clone()).await;
    assert_status(&first, "success");
    assert_eq!(first.structured["output"], output);
    let second = c.call(L::EXECUTE, args.clone()).await;
    assert_eq!(
        first.structured, second.structured,
        "the same answer, run_id included"
    );
    assert_eq!(lang.count(&witness).await, runs + 1, "one execution");
    let mut changed = args;
    changed["input"] = other;
    let conflict = c.call(L::EXECUTE, changed).await;
    assert_eq!(
        conflict.structured["error"]["kind"], "idempotency_conflict",
        "{}",
        conflict.structured
    );
    assert_eq!(lang.count(&witness).await, runs + 1);
    lang.check_left(Tenant::A, &before, 1).await;
    lang.finish().await;
}

pub async fn past_the_deadline_the_execution_is_stopped_in_the_engine<L: EngineRuns>() {
    let lang = L::start_with(|cfg| {
        cfg.engines
            .get_mut(<L::Env as EngineEnv>::ENGINE)
            .unwrap()
            .run_deadline_ms = L::DEADLINE_MS;
    })
    .await;
    let witness = lang.witness().await;
    let before = lang.footprint(Tenant::A).await;
    let running = {
        let c = lang.env().caller_a().await;
        let slow = lang.slow(&witness);
        tokio::spawn(async move { run::<L>(&c, slow, json!({"trace_level": "full"})).await })
    };
    lang.while_slow(&witness).await;
    let r = running.await.expect("the run task");
    assert_status(&r, "timeout");
    assert_eq!(r.structured["outcome"]["ok"], false);
    // The steps that finished before the stop are in the trace.
    let ids = step_ids(&r.structured);
    let (first, after) = L::SLOW_STEPS;
    assert!(ids.contains(&first), "{ids:?}");
    assert!(!ids.contains(&after), "nothing after the stop: {ids:?}");
    lang.check_left(Tenant::A, &before, 1).await;
    lang.check_stopped(&witness).await;
    lang.finish().await;
}

/// The language on a gateway whose engine's plain run deadline is short.
async fn short_deadline<L: EngineRuns>() -> L {
    L::start_with(|cfg| {
        cfg.engines
            .get_mut(<L::Env as EngineEnv>::ENGINE)
            .unwrap()
            .run_deadline_ms = L::DEADLINE_MS;
    })
    .await
}

/// A 2025-11-25 `tools/call` of `program` as a task; its id.
async fn task_of<L: EngineRuns>(c: &Mcp, program: Value) -> String {
    let arguments = json!({"workflow": program, "mode": "immediate", "trace_level": "full"});
    let created = c
        .rpc(
            "tools/call",
            json!({"name": L::EXECUTE, "arguments": arguments, "task": {"ttl": 600_000}}),
        )
        .await;
    created["result"]["task"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("no task: {created}"))
        .to_owned()
}

/// The task's state once it leaves `working` (bounded).
async fn task_ended(c: &Mcp, task_id: &str, within: Duration) -> Value {
    let until = Instant::now() + within;
    loop {
        let got = c.rpc("tasks/get", json!({"taskId": task_id})).await;
        if got["result"]["status"] != "working" {
            return got["result"].clone();
        }
        assert!(Instant::now() < until, "task still working: {got}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

pub async fn a_long_run_completes_as_a_task<L: EngineRuns>() {
    let lang = short_deadline::<L>().await;
    let c = lang.env().caller_a().await;
    let task_id = task_of::<L>(&c, lang.long()).await;
    let within = Duration::from_millis(L::DEADLINE_MS * 4 + 30_000);
    let ended = task_ended(&c, &task_id, within).await;
    assert_eq!(ended["status"], "completed", "{ended}");
    let result = c.rpc("tasks/result", json!({"taskId": task_id})).await;
    let answer = &result["result"]["structuredContent"];
    assert_eq!(answer["outcome"]["status"], "success", "{result}");
    assert!(
        answer["trace"]["stats"]["duration_ms"]
            .as_u64()
            .unwrap_or(0)
            > L::DEADLINE_MS,
        "the run outlived the plain deadline: {answer}"
    );
    lang.finish().await;
}

pub async fn a_tasks_cancel_stops_the_engines_run<L: EngineRuns>() {
    let lang = short_deadline::<L>().await;
    let witness = lang.witness().await;
    let before = lang.footprint(Tenant::A).await;
    let c = lang.env().caller_a().await;
    let task_id = task_of::<L>(&c, lang.slow(&witness)).await;
    lang.while_slow(&witness).await;
    // Past the plain deadline the task still runs.
    tokio::time::sleep(Duration::from_millis(L::DEADLINE_MS + 1000)).await;
    let got = c.rpc("tasks/get", json!({"taskId": task_id})).await;
    assert_eq!(got["result"]["status"], "working", "{got}");
    let cancelled = c.rpc("tasks/cancel", json!({"taskId": task_id})).await;
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    // The stop reaches the run at its next wait; the adapter then cancels it
    // in the engine (a run held by the test's own hook may wait for it).
    lang.env().runs_settled(Duration::from_secs(5)).await;
    lang.check_stopped(&witness).await;
    assert!(
        lang.env().runs_settled(Duration::from_secs(30)).await,
        "the cancelled run never ended in the gateway"
    );
    lang.check_left(Tenant::A, &before, 1).await;
    lang.finish().await;
}

pub async fn another_tenant_cannot_see_runs_and_engine_projects_differ<L: EngineRuns>() {
    let lang = L::start_with(|_| {}).await;
    let a = lang.env().caller_a().await;
    let b = lang.env().caller_b().await;
    let before = [
        lang.footprint(Tenant::A).await,
        lang.footprint(Tenant::B).await,
    ];
    let r = lang.run_as(Tenant::A, true).await;
    assert_status(&r, "success");
    lang.check_left(Tenant::B, &before[1], 0).await;
    let run_id = r.structured["run_id"].clone();
    let mine = a.call(L::TRACE, json!({"run_id": run_id})).await;
    assert!(!mine.is_error, "{}", mine.structured);
    // Another key's tenant and an anonymous session: not_found, identical to
    // an id that never existed.
    let anonymous = lang.env().anonymous_caller().await;
    let unknown = b
        .call(L::TRACE, json!({"run_id": "run_does_not_exist"}))
        .await;
    for (who, c) in [("tenant b", &b), ("anonymous", &anonymous)] {
        let theirs = c.call(L::TRACE, json!({"run_id": run_id})).await;
        assert!(theirs.is_error, "{who}: {}", theirs.structured);
        assert_eq!(theirs.structured["error"]["kind"], "not_found", "{who}");
        assert_eq!(
            theirs.structured["error"]["message"], unknown.structured["error"]["message"],
            "{who}: indistinguishable from an unknown id"
        );
    }
    // b's own run happens in b's project, out of a's sight.
    let r = lang.run_as(Tenant::B, false).await;
    assert_status(&r, "success");
    lang.check_left(Tenant::A, &before[0], 1).await;
    lang.check_left(Tenant::B, &before[1], 1).await;
    lang.finish().await;
}
