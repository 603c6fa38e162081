//! Slots moving between the masters of a Redis Cluster while the gateway
//! uses them: every record written before, during and after the move stays
//! readable, no idempotency key is claimed twice, and no request fails.
//!
//! Two ways of moving: step by step through the store (`CLUSTER SETSLOT
//! IMPORTING/MIGRATING`, `MIGRATE`, `SETSLOT NODE`, acting between the steps,
//! so the store meets `ASK` for keys already moved and `MOVED` once the slot
//! changed owner), and `redis-cli --cluster reshard` under keyed executes
//! through the HTTP endpoint. The cluster (three masters, one replica each)
//! and the engine are started by the tests on loopback; every loop is bounded.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::redis_cluster::{ClusterAdmin, Master, RedisCluster};
use crate::common::{ACME_OPS, Engine, Mcp, TestEnv, write_program};
use pilotage_gateway::store::{self, IdempotencyClaim, Store, StoreError};
use serde_json::{Value, json};

const OP_TIMEOUT: Duration = Duration::from_secs(2);
const LONG_TTL: Duration = Duration::from_secs(600);
const SCOPE: &str = "tenant:migration";
/// Slots moved from the first master to the second in the step-by-step test.
const SLOTS_MOVED: u16 = 64;
/// Run records and idempotency keys written in each phase (before, while
/// the slots are half moved, after).
const PER_PHASE: usize = 8;
/// Records the background load cycles through while the slots move.
const LOAD_KEYS: usize = 16;

/// The documented key layout (`src/store/redis.rs`): a test-side copy, so a
/// silent change of the layout shows up here as keys outside the moved slots.
fn run_key(id: &str) -> String {
    format!("pilotage:v1:{SCOPE}:run:{id}")
}

fn idem_key(key: &str) -> String {
    format!("pilotage:v1:{SCOPE}:idem:{key}")
}

/// `count` names `{prefix}{i}` whose Redis key (by `key_of`) hashes into
/// `slots`, in order of `i`; deterministic for a given cluster layout.
async fn names_in_slots(
    admin: &ClusterAdmin,
    prefix: &str,
    key_of: fn(&str) -> String,
    slots: &BTreeSet<u16>,
    count: usize,
) -> Vec<String> {
    const CHUNK: usize = 4096;
    let mut found = Vec::new();
    for chunk in 0..64 {
        let names: Vec<String> = (chunk * CHUNK..(chunk + 1) * CHUNK)
            .map(|i| format!("{prefix}{i}"))
            .collect();
        let keys: Vec<String> = names.iter().map(|n| key_of(n)).collect();
        for (name, slot) in names.into_iter().zip(admin.key_slots(&keys).await) {
            if slots.contains(&slot) {
                found.push(name);
                if found.len() == count {
                    return found;
                }
            }
        }
    }
    panic!("fewer than {count} {prefix}* names hash into the chosen slots");
}

fn record(phase: &str, id: &str) -> Value {
    json!({"phase": phase, "run_id": id, "trace": {"steps": [{"id": "gold#1"}]}})
}

fn response(key: &str) -> Value {
    json!({"run_id": format!("run-of-{key}"), "outcome": {"status": "success"}})
}

async fn write_runs(store: &dyn Store, phase: &str, ids: &[String]) {
    for id in ids {
        store
            .put_run(SCOPE, id, &record(phase, id), LONG_TTL)
            .await
            .unwrap_or_else(|e| panic!("put_run {id} ({phase}): {e:?}"));
    }
}

async fn check_runs(store: &dyn Store, phase: &str, ids: &[String], when: &str) {
    for id in ids {
        let found = store
            .get_run(SCOPE, id)
            .await
            .unwrap_or_else(|e| panic!("get_run {id} {when}: {e:?}"));
        assert_eq!(
            found,
            Some(record(phase, id)),
            "run {id} written {phase} is not readable {when}"
        );
    }
}

/// The whole life of a key: claimed by a first attempt, started, completed.
async fn execute_once(store: &dyn Store, key: &str) {
    let attempt = format!("first-{key}");
    let claim = store
        .claim_idempotency(SCOPE, key, "fp", &attempt, LONG_TTL)
        .await
        .unwrap_or_else(|e| panic!("claim {key}: {e:?}"));
    assert!(
        matches!(claim, IdempotencyClaim::Acquired),
        "a fresh key {key} was not free: {claim:?}"
    );
    assert!(
        store
            .start_idempotency(SCOPE, key, &attempt, LONG_TTL)
            .await
            .unwrap_or_else(|e| panic!("start {key}: {e:?}")),
        "the first attempt lost {key} before starting"
    );
    store
        .complete_idempotency(SCOPE, key, "fp", &attempt, &response(key), LONG_TTL)
        .await
        .unwrap_or_else(|e| panic!("complete {key}: {e:?}"));
}

/// A later attempt on a completed key must get the recorded response, never the key.
async fn check_replayed(store: &dyn Store, keys: &[String], retry: &str, when: &str) {
    for key in keys {
        let claim = store
            .claim_idempotency(SCOPE, key, "fp", &format!("{retry}-{key}"), LONG_TTL)
            .await
            .unwrap_or_else(|e| panic!("claim {key} {when}: {e:?}"));
        match claim {
            IdempotencyClaim::Completed {
                fingerprint,
                response: r,
            } => {
                assert_eq!(fingerprint, "fp");
                assert_eq!(r, response(key), "key {key}: another response {when}");
            }
            other => panic!("key {key} executed before was {other:?} {when}: it could run twice"),
        }
    }
}

/// Writes and reads records of the moving slots until told to stop (or a
/// bounded number of rounds), counting failures by kind.
async fn background_load(
    store: Arc<dyn Store>,
    ids: Vec<String>,
    stop: Arc<AtomicBool>,
) -> (usize, Vec<String>) {
    let mut rounds = 0;
    let mut failures = Vec::new();
    while !stop.load(Ordering::Relaxed) && rounds < 20_000 {
        let id = &ids[rounds % ids.len()];
        let value = json!({"load": rounds});
        match store.put_run(SCOPE, id, &value, LONG_TTL).await {
            Ok(()) => match store.get_run(SCOPE, id).await {
                Ok(Some(v)) if v == value => {}
                other => failures.push(format!("get_run {id}: {other:?}")),
            },
            Err(e) => failures.push(format!("put_run {id}: {e:?}")),
        }
        rounds += 1;
        tokio::task::yield_now().await;
    }
    (rounds, failures)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_and_claims_survive_slots_moving_step_by_step() {
    let cluster = tokio::task::spawn_blocking(RedisCluster::start)
        .await
        .expect("start the test cluster");
    let store = store::connect_with(
        store::Backend::RedisCluster(&cluster.urls()),
        OP_TIMEOUT,
        store::memory::MemoryLimits::default(),
        None,
    )
    .await
    .expect("connect to the test cluster");
    let admin = cluster.admin().await;
    let masters = admin.masters().await;
    assert_eq!(masters.len(), 3, "{masters:?}");
    let (from, to): (Master, Master) = (masters[0].clone(), masters[1].clone());
    let first = from.slots[0].0;
    let slots: BTreeSet<u16> = (first..first + SLOTS_MOVED).collect();

    let runs = names_in_slots(&admin, "r", run_key, &slots, 3 * PER_PHASE).await;
    let keys = names_in_slots(&admin, "k", idem_key, &slots, 3 * PER_PHASE).await;
    let load_ids = names_in_slots(&admin, "load", run_key, &slots, LOAD_KEYS).await;
    let phase = |names: &[String], n: usize| names[n * PER_PHASE..(n + 1) * PER_PHASE].to_vec();
    let (runs_before, runs_during, runs_after) =
        (phase(&runs, 0), phase(&runs, 1), phase(&runs, 2));
    let (keys_before, keys_during, keys_after) =
        (phase(&keys, 0), phase(&keys, 1), phase(&keys, 2));

    write_runs(&*store, "before", &runs_before).await;
    for key in &keys_before {
        execute_once(&*store, key).await;
    }

    let stop = Arc::new(AtomicBool::new(false));
    let load = tokio::spawn(background_load(store.clone(), load_ids, stop.clone()));

    // Open every slot's migration, then move the keys of the slots holding
    // an even-numbered record of before: the other records stay behind on
    // `from`, which now answers ASK for the keys it no longer has.
    for &slot in &slots {
        admin.begin_migration(slot, &from, &to).await;
    }
    let before_keys: Vec<String> = runs_before
        .iter()
        .map(|r| run_key(r))
        .chain(keys_before.iter().map(|k| idem_key(k)))
        .collect();
    let before_slots = admin.key_slots(&before_keys).await;
    let first_half: BTreeSet<u16> = before_slots.iter().step_by(2).copied().collect();
    let mut moved_keys = 0;
    for &slot in &first_half {
        moved_keys += admin.move_keys(slot, &from, &to).await;
    }
    let mut left_behind = 0;
    for slot in before_slots.iter().filter(|s| !first_half.contains(s)) {
        left_behind += admin.keys_in_slot(from.port, *slot).await;
    }
    assert!(
        moved_keys > 0 && left_behind > 0,
        "the half-moved state needs records on both masters ({moved_keys} moved, {left_behind} left)"
    );

    // Half moved: old records on both masters, new ones land on `to`.
    check_runs(&*store, "before", &runs_before, "while half moved").await;
    check_replayed(&*store, &keys_before, "during", "while half moved").await;
    write_runs(&*store, "during", &runs_during).await;
    check_runs(&*store, "during", &runs_during, "while half moved").await;
    for key in &keys_during {
        execute_once(&*store, key).await;
    }
    check_replayed(&*store, &keys_during, "during", "while half moved").await;

    // Move the rest and hand every slot to `to`: `from` answers MOVED.
    for &slot in &slots {
        admin.move_keys(slot, &from, &to).await;
        admin.finish_migration(slot, &from, &to).await;
    }
    stop.store(true, Ordering::Relaxed);
    let (load_rounds, load_failures) = load.await.expect("background load");

    for &slot in &slots {
        assert_eq!(
            admin.keys_in_slot(from.port, slot).await,
            0,
            "slot {slot} still has keys on the old master"
        );
    }
    let mut on_new_master = 0;
    for &slot in &slots {
        on_new_master += admin.keys_in_slot(to.port, slot).await;
    }
    assert!(
        on_new_master >= (runs_before.len() + runs_during.len()) as u64,
        "the records did not move: {on_new_master} keys on the new master"
    );

    write_runs(&*store, "after", &runs_after).await;
    for key in &keys_after {
        execute_once(&*store, key).await;
    }
    check_runs(&*store, "before", &runs_before, "after the move").await;
    check_runs(&*store, "during", &runs_during, "after the move").await;
    check_runs(&*store, "after", &runs_after, "after the move").await;
    for (phase, keys) in [
        ("before", &keys_before),
        ("during", &keys_during),
        ("after", &keys_after),
    ] {
        check_replayed(&*store, keys, "after", &format!("after the move ({phase})")).await;
    }
    println!(
        "slot migration: {SLOTS_MOVED} slots moved :{} -> :{}; {moved_keys} keys moved while half open; background load {load_rounds} rounds",
        from.port, to.port
    );
    assert!(
        load_failures.is_empty(),
        "{} of {load_rounds} background operations failed while the slots moved: {:?}",
        load_failures.len(),
        &load_failures[..load_failures.len().min(5)]
    );
}

/// A principal's promoted programs and their index share one slot; while
/// that slot is half moved a write touching both keys can only wait
/// (`TRYAGAIN`), so it succeeds or answers `Unavailable`; once the slot has
/// moved every program is there and writes work again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_survive_their_slot_moving() {
    let cluster = tokio::task::spawn_blocking(RedisCluster::start)
        .await
        .expect("start the test cluster");
    let store = store::connect_with(
        store::Backend::RedisCluster(&cluster.urls()),
        OP_TIMEOUT,
        store::memory::MemoryLimits::default(),
        None,
    )
    .await
    .expect("connect to the test cluster");
    let admin = cluster.admin().await;
    let masters = admin.masters().await;
    let (from, to) = (masters[0].clone(), masters[1].clone());
    let first = from.slots[0].0;
    let slots: BTreeSet<u16> = (first..first + SLOTS_MOVED).collect();
    // The hash tag of a principal's programs is its scope.
    fn tag_key(scope: &str) -> String {
        format!("{{{scope}}}")
    }
    let scope = names_in_slots(&admin, "tenant-p", tag_key, &slots, 1).await[0].clone();
    let slot = admin.key_slots(&[tag_key(&scope)]).await[0];
    let program = |n: u32| json!({"ref": format!("p{n}"), "program": {"steps": n}});

    for n in 0..3 {
        store
            .put_program(&scope, &format!("p{n}"), &program(n), LONG_TTL)
            .await
            .expect("promote before the move");
    }
    admin.begin_migration(slot, &from, &to).await;
    // Reads while the slot is open and every key still on the old master.
    assert_eq!(
        store
            .list_programs(&scope)
            .await
            .expect("list while open")
            .len(),
        3
    );
    let moved = admin.move_keys(slot, &from, &to).await;
    assert!(moved >= 4, "programs and index moved: {moved} keys");
    // Every key now on the new master, the slot not yet handed over: ASK.
    assert_eq!(
        store
            .get_program(&scope, "p1")
            .await
            .expect("read while moved"),
        Some(program(1))
    );
    let listed = store.list_programs(&scope).await.expect("list while moved");
    assert_eq!(listed.len(), 3, "{listed:?}");
    let during_write = store.put_program(&scope, "p3", &program(3), LONG_TTL).await;
    match &during_write {
        Ok(()) | Err(StoreError::Unavailable(_)) => {}
        Err(other) => panic!("a promotion while the slot moved failed as {other:?}"),
    }
    admin.finish_migration(slot, &from, &to).await;

    if during_write.is_err() {
        store
            .put_program(&scope, "p3", &program(3), LONG_TTL)
            .await
            .expect("promote again once the slot moved");
    }
    let mut refs: Vec<String> = store
        .list_programs(&scope)
        .await
        .expect("list after the move")
        .iter()
        .map(|p| p["ref"].as_str().unwrap_or_default().to_owned())
        .collect();
    refs.sort();
    assert_eq!(refs, ["p0", "p1", "p2", "p3"]);
    assert_eq!(admin.keys_in_slot(from.port, slot).await, 0);
    println!(
        "program slot {slot} moved :{} -> :{}: list while moved {:?}; promotion while moved {:?}",
        from.port,
        to.port,
        listed.len(),
        during_write
    );
}

/// Slots `redis-cli --cluster reshard` moves under the HTTP load: over a
/// third of the first master's, so many of the keys the load writes move.
const RESHARD_SLOTS: usize = 2000;
/// Concurrent keyed executes per round of the HTTP load.
const HTTP_PER_ROUND: usize = 4;
/// Bounds of the HTTP load while the reshard runs.
const MAX_HTTP_ROUNDS: usize = 400;
const MAX_RESHARD_TIME: Duration = Duration::from_secs(120);

/// One keyed execute through the endpoint, as an HTTP status and the tool result.
async fn keyed_execute(url: &str, key: &str) -> (u16, Value) {
    let client = Mcp::new(url, Some(ACME_OPS));
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "run_workflow",
        "arguments": {"workflow": write_program("gold"), "mode": "immediate",
            "idempotency_key": key, "trace_level": "full"}}});
    let (status, _, value) =
        tokio::time::timeout(Duration::from_secs(30), client.raw(&body.to_string()))
            .await
            .expect("an execute hung while slots moved");
    (status, value)
}

/// A round of concurrent keyed executes; each answer as (key, status, result).
async fn http_round(url: &str, keys: &[String]) -> Vec<(String, u16, Value)> {
    let tasks: Vec<_> = keys
        .iter()
        .map(|key| {
            let (url, key) = (url.to_owned(), key.clone());
            tokio::spawn(async move {
                let (status, value) = keyed_execute(&url, &key).await;
                (key, status, value["result"].clone())
            })
        })
        .collect();
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.expect("execute task"));
    }
    out
}

/// `redis-cli --cluster reshard` moving slots from `from` to `to` while
/// keyed executes go on through the gateway: no answer is an HTTP error or a
/// request error, no key answers with two different runs, and every run is
/// fetched afterwards as it was answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn keyed_executes_survive_a_reshard() {
    let cluster = tokio::task::spawn_blocking(RedisCluster::start)
        .await
        .expect("start the test cluster");
    let urls = cluster.urls();
    let env = TestEnv::in_front_of(Engine::spawn(&[]), "tests/fixtures/features.toml", |c| {
        c.store.redis_url.clear();
        c.store.redis_cluster = urls;
    })
    .await;
    let admin = cluster.admin().await;
    let masters = admin.masters().await;
    let (from, to) = (masters[0].clone(), masters[1].clone());
    let run = format!("{:x}", rand::random::<u64>());
    let mut next = 0usize;
    let mut fresh_keys = || {
        (0..HTTP_PER_ROUND)
            .map(|_| {
                next += 1;
                format!("reshard-{run}-{next}")
            })
            .collect::<Vec<_>>()
    };

    let engine_runs = || async {
        env.engine.state("acme").await["runs"]
            .as_u64()
            .expect("engine state has a runs counter")
    };
    let runs_before = engine_runs().await;
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.extend(http_round(&env.url, &fresh_keys()).await);
    }
    let mut reshard = Command::new("redis-cli")
        .args(["--cluster", "reshard", &format!("127.0.0.1:{}", from.port)])
        .args(["--cluster-from", &from.id, "--cluster-to", &to.id])
        .args(["--cluster-slots", &RESHARD_SLOTS.to_string()])
        .args(["--cluster-yes", "--cluster-pipeline", "10"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run redis-cli --cluster reshard");
    let started = Instant::now();
    // Fresh keys each round, and the previous round's again (a retry).
    let mut previous: Vec<String> = Vec::new();
    let mut rounds_during = 0;
    let status = loop {
        if let Some(status) = reshard.try_wait().expect("reshard status") {
            break status;
        }
        assert!(
            started.elapsed() < MAX_RESHARD_TIME && rounds_during < MAX_HTTP_ROUNDS,
            "the reshard did not finish within {MAX_RESHARD_TIME:?} / {MAX_HTTP_ROUNDS} rounds"
        );
        let keys = fresh_keys();
        let mut batch = keys.clone();
        batch.append(&mut previous);
        answers.extend(http_round(&env.url, &batch).await);
        previous = keys;
        rounds_during += 1;
    };
    let reshard_ms = started.elapsed().as_millis();
    let mut stderr = String::new();
    if let Some(mut e) = reshard.stderr.take() {
        use std::io::Read;
        let _ = e.read_to_string(&mut stderr);
    }
    assert!(
        status.success(),
        "redis-cli --cluster reshard failed: {stderr}"
    );
    for _ in 0..3 {
        answers.extend(http_round(&env.url, &fresh_keys()).await);
    }

    // The slots really moved, and keys the load wrote moved with them.
    let after = admin.masters().await;
    let owned = |m: &Master| {
        m.slots
            .iter()
            .map(|(a, b)| (b - a + 1) as usize)
            .sum::<usize>()
    };
    let from_after = after
        .iter()
        .find(|m| m.id == from.id)
        .expect("the first master");
    assert_eq!(owned(from_after), owned(&from) - RESHARD_SLOTS);
    let mut moved_keys = 0;
    for (a, b) in &from.slots {
        for slot in *a..=*b {
            if !from_after
                .slots
                .iter()
                .any(|(x, y)| (*x..=*y).contains(&slot))
            {
                moved_keys += admin.keys_in_slot(to.port, slot).await;
            }
        }
    }
    assert!(moved_keys > 0, "no key the load wrote was in a moved slot");

    // Every key once more: a replay of its first run.
    let all_keys: BTreeSet<String> = answers.iter().map(|(k, _, _)| k.clone()).collect();
    let keys: Vec<String> = all_keys.into_iter().collect();
    for chunk in keys.chunks(HTTP_PER_ROUND * 2) {
        answers.extend(http_round(&env.url, chunk).await);
    }

    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    let mut request_errors = Vec::new();
    let mut runs_per_key: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for (key, status, result) in &answers {
        *statuses.entry(*status).or_default() += 1;
        if result["isError"].as_bool().unwrap_or(false) || !result["structuredContent"].is_object()
        {
            request_errors.push(format!("{key}: {result}"));
        } else {
            runs_per_key
                .entry(key)
                .or_default()
                .push(&result["structuredContent"]);
        }
    }
    println!(
        "reshard: {RESHARD_SLOTS} slots :{} -> :{} in {reshard_ms} ms, {rounds_during} rounds meanwhile; {moved_keys} keys moved; {} answers, HTTP statuses {statuses:?}, {} request errors",
        from.port,
        to.port,
        answers.len(),
        request_errors.len()
    );
    assert_eq!(
        statuses.keys().copied().collect::<Vec<_>>(),
        [200],
        "the gateway answered other than 200: {statuses:?}"
    );
    assert!(
        request_errors.is_empty(),
        "request errors while slots moved: {:?}",
        &request_errors[..request_errors.len().min(3)]
    );
    assert!(rounds_during > 0, "no execute overlapped the reshard");
    for (key, runs) in &runs_per_key {
        assert!(
            runs.iter().all(|r| r == &runs[0]),
            "key {key} answered with two different runs (executed twice)"
        );
    }
    assert_eq!(
        engine_runs().await - runs_before,
        runs_per_key.len() as u64,
        "the engine ran another number of runs than there were keys"
    );

    // Every run retained as it was answered.
    let client = Mcp::new(&env.url, Some(ACME_OPS));
    for (key, runs) in &runs_per_key {
        let fetched = client
            .call("trace_workflow", json!({"run_id": runs[0]["run_id"]}))
            .await;
        assert!(!fetched.is_error, "trace of {key}: {}", fetched.structured);
        assert_eq!(&&fetched.structured, &runs[0], "trace of {key}");
    }
}
