//! Execute refuses a run on a changed catalog (Part II §6.5.2: the caller's
//! `expected_catalog_version` is compared with the *current*
//! `catalog_version`, and a mismatch is the outcome `catalog_drift` with no
//! side effects), even when the validate and the execute land on different
//! instances whose caches and shared confirmations are busy.
//!
//! Three gateways built by `app::build` share one `redis-server`, one
//! session secret and one `legacy-engine`. Each round an agent validates a
//! writing program on one instance and keeps its `catalog_version`, the
//! engine's catalog for acme then moves (a new capability), and the execute
//! expecting the old version goes to another instance. Meanwhile background
//! tasks list the catalog and validate on all three instances without pause,
//! so a catalog confirmation that began before the change is always in
//! flight when the execute arrives: execute must not take it.
//!
//! Settled rounds (the change answered before the execute is sent) must end
//! in `catalog_drift` and leave the engine's world digest untouched. Racing
//! rounds send the change and the execute together; either order is
//! legitimate, so they may end in `catalog_drift` or `success`, and their
//! side effects are not counted. Both tests run the same rounds, one per
//! setting of `cache.read_only_catalog_staleness_ms`: execute never uses a
//! stale catalog whatever the setting.
//!
//! Everything is on loopback, every loop is bounded, and each test fails
//! instead of hanging past [`BOUND`].

use crate::common::redis_server::RedisServer;
use crate::common::{
    ACME_AUDIT, ACME_OPS, Engine, FEATURES, LANG, Mcp, TestEnv, dialect_engine, write_program,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Rounds per staleness setting.
const ROUNDS: usize = 12;
/// Every third round races the change against the execute.
const RACE_EVERY: usize = 3;
/// Longer than the test: under this setting nothing read-only expires.
const HOUR_MS: u64 = 3_600_000;
/// The whole test, hammering included; far above what it needs.
const BOUND: Duration = Duration::from_secs(45);
/// Upper bound of the calls one background task makes (it stops earlier,
/// when the rounds are done).
const HAMMER_CALLS: u64 = 20_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn drift_is_refused_without_side_effects_at_staleness_0() {
    race_at_staleness(0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn drift_is_refused_without_side_effects_at_staleness_one_hour() {
    race_at_staleness(HOUR_MS).await;
}

/// Starts the three instances, hammers them, plays the rounds, and asserts
/// on the tally.
async fn race_at_staleness(staleness_ms: u64) {
    let started = Instant::now();
    let (tally, hammer_calls) = tokio::time::timeout(BOUND, async {
        let trio = Trio::start(staleness_ms).await;
        // Every instance confirms acme's catalog before anything moves: with
        // read-only staleness each then holds a catalog that a reusing
        // execute would wrongly accept.
        for url in trio.urls() {
            list_catalog(&Mcp::new(&url, Some(ACME_OPS))).await;
        }
        let hammer = Hammer::start(&trio.urls());
        let mut tally = Tally::default();
        for round in 0..ROUNDS {
            play_round(&trio, round, &mut tally).await;
        }
        (tally, hammer.stop().await)
    })
    .await
    .unwrap_or_else(|_| panic!("the drift race did not finish within {BOUND:?}"));

    eprintln!(
        "drift race (read-only staleness {staleness_ms} ms): {ROUNDS} rounds \
         ({} settled, {} racing: {} catalog_drift, {} success), {} side effects, \
         {hammer_calls} background calls, {:?}",
        tally.settled,
        tally.racing,
        tally.racing_drifts,
        tally.racing_successes,
        tally.effects,
        started.elapsed()
    );
    assert_eq!(
        tally.effects, 0,
        "settled rounds with side effects: {:?}",
        tally.wrong
    );
    assert!(tally.wrong.is_empty(), "wrong outcomes: {:?}", tally.wrong);
    assert!(
        tally.settled > 0 && tally.racing > 0,
        "both kinds of round ran"
    );
}

// ---------------------------------------------------------------------------
// The topology
// ---------------------------------------------------------------------------

/// Three gateways in front of one engine, sharing one Redis.
struct Trio {
    /// Owns the engine process (the others reach it as an external one).
    gateways: Vec<TestEnv>,
    /// Kept alive for the gateways; killed on drop.
    _redis: RedisServer,
}

impl Trio {
    async fn start(staleness_ms: u64) -> Trio {
        let redis = RedisServer::start();
        let first = gateway(dialect_engine(), "drift-a", &redis, staleness_ms).await;
        let engine_url = first.engine.url.clone();
        let mut gateways = vec![first];
        for instance in ["drift-b", "drift-c"] {
            let engine = Engine::external(engine_url.clone());
            gateways.push(gateway(engine, instance, &redis, staleness_ms).await);
        }
        Trio {
            gateways,
            _redis: redis,
        }
    }

    fn engine(&self) -> &Engine {
        &self.gateways[0].engine
    }

    fn urls(&self) -> Vec<String> {
        self.gateways.iter().map(|g| g.url.clone()).collect()
    }
}

/// One instance of the feature suites' configuration (its session secret
/// is the others') on the shared Redis.
async fn gateway(
    engine: Engine,
    instance: &str,
    redis: &RedisServer,
    staleness_ms: u64,
) -> TestEnv {
    let redis_url = redis.url();
    TestEnv::in_front_of(engine, FEATURES, |cfg| {
        cfg.server.instance = instance.to_string();
        cfg.store.redis_url = redis_url;
        cfg.cache.read_only_catalog_staleness_ms = staleness_ms;
    })
    .await
}

// ---------------------------------------------------------------------------
// The background traffic
// ---------------------------------------------------------------------------

/// Catalog lists and validates on every instance, without pause, until
/// stopped: they keep each instance's catalog confirmations in flight.
struct Hammer {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<u64>>,
}

impl Hammer {
    fn start(urls: &[String]) -> Hammer {
        let stop = Arc::new(AtomicBool::new(false));
        let mut tasks = Vec::new();
        for url in urls {
            tasks.push(tokio::spawn(hammer(url.clone(), stop.clone(), false)));
            tasks.push(tokio::spawn(hammer(url.clone(), stop.clone(), true)));
        }
        Hammer { stop, tasks }
    }

    /// Stops every task; the calls they made. A task's panic (an error
    /// answer) fails the test here.
    async fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Release);
        let mut calls = 0;
        for task in self.tasks {
            calls += task.await.expect("a background task failed");
        }
        calls
    }
}

/// One background caller: validates (with another key of the same tenant)
/// or lists the catalog, at most [`HAMMER_CALLS`] times.
async fn hammer(url: String, stop: Arc<AtomicBool>, validates: bool) -> u64 {
    let key = if validates { ACME_AUDIT } else { ACME_OPS };
    let client = Mcp::new(&url, Some(key));
    let mut calls = 0;
    while calls < HAMMER_CALLS && !stop.load(Ordering::Acquire) {
        if validates {
            validate(&client).await;
        } else {
            list_catalog(&client).await;
        }
        calls += 1;
    }
    calls
}

// ---------------------------------------------------------------------------
// One round
// ---------------------------------------------------------------------------

/// What the rounds saw.
#[derive(Default)]
struct Tally {
    settled: usize,
    racing: usize,
    racing_drifts: usize,
    racing_successes: usize,
    /// Settled rounds whose execute changed the engine's world.
    effects: usize,
    /// A line per round whose outcome was not an allowed one.
    wrong: Vec<String>,
}

/// Validate on instance `round % 3`, move the catalog, execute on the next
/// instance with the validated `catalog_version`.
async fn play_round(trio: &Trio, round: usize, tally: &mut Tally) {
    let urls = trio.urls();
    let agent_on = |i: usize| Mcp::new(&urls[i % urls.len()], Some(ACME_OPS));
    let (validator, executor) = (agent_on(round), agent_on(round + 1));
    let expected = validate(&validator).await;
    // Both are lazy: nothing is sent until they are awaited below.
    let change = add_capability(trio.engine(), round);
    let execute = run_expecting(&executor, &expected);

    if round % RACE_EVERY == RACE_EVERY - 1 {
        // The execute may reach the engine before the change: either answer
        // is right, and a success's write is no drift's side effect.
        let ((), answer) = tokio::join!(change, execute);
        tally.racing += 1;
        match status(&answer).as_str() {
            "catalog_drift" => tally.racing_drifts += 1,
            "success" => tally.racing_successes += 1,
            _ => tally
                .wrong
                .push(format!("racing round {round}: {}", gist(&answer))),
        }
        return;
    }

    // The change is answered before the execute is sent: the execute must
    // see it, refuse, and touch nothing.
    change.await;
    let before = trio.engine().digest("acme").await;
    let answer = execute.await;
    let after = trio.engine().digest("acme").await;
    tally.settled += 1;
    if before != after {
        tally.effects += 1;
    }
    if status(&answer) != "catalog_drift" {
        tally
            .wrong
            .push(format!("settled round {round}: {}", gist(&answer)));
    }
}

/// A capability acme never had: the catalog_version moves.
async fn add_capability(engine: &Engine, round: usize) {
    let name = format!("race.op_{round:02}");
    let cap = json!({"name": name, "title": format!("Race op {round}"),
        "doc": "Added while the gateways race.", "params": {"type": "object"},
        "effect": "read", "tags": []});
    engine.put_capability(&name, &cap, Some("acme")).await;
}

/// Executes the writing program expecting `catalog_version`; the answer's
/// `structuredContent`.
async fn run_expecting(client: &Mcp, catalog_version: &str) -> Value {
    let answer = client
        .call(
            "run_workflow",
            json!({"workflow": write_program("gold"), "mode": "immediate",
                "expected_catalog_version": catalog_version}),
        )
        .await;
    answer.structured
}

/// The outcome status of an execute answer (`request error: kind` for one).
fn status(answer: &Value) -> String {
    match answer["outcome"]["status"].as_str() {
        Some(status) => status.to_string(),
        None => format!("request error: {}", answer["error"]["kind"]),
    }
}

/// The part of an execute answer a failure message needs: the outcome, or
/// the request error (a whole trace would bury it).
fn gist(answer: &Value) -> &Value {
    match answer.get("outcome") {
        Some(outcome) => outcome,
        None => &answer["error"],
    }
}

/// Validates the writing program; its `catalog_version`.
async fn validate(client: &Mcp) -> String {
    let answer = client
        .call(
            "validate_workflow",
            json!({"workflow": write_program("gold")}),
        )
        .await;
    assert_eq!(answer.structured["valid"], true, "{}", answer.raw);
    answer.structured["catalog_version"]
        .as_str()
        .unwrap_or_else(|| panic!("no catalog_version: {}", answer.raw))
        .to_string()
}

/// Lists acme's catalog (its first page).
async fn list_catalog(client: &Mcp) {
    let answer = client
        .call(
            "pilotage_catalog",
            json!({"language": LANG, "verb": "list"}),
        )
        .await;
    assert!(!answer.is_error, "{}", answer.raw);
}
