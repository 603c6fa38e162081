//! The Redis store against a real `redis-server`.
//!
//! Each test starts its own throwaway server on a free loopback port (no
//! persistence) and kills it when done, so tests are isolated and need no
//! service running beforehand. `redis-server` must be on PATH; the project's
//! test script installs it.
//!
//! Besides the behavioural suite shared with the memory backend, these tests
//! cover what only a networked store can get wrong: the documented key layout,
//! several gateway instances sharing one Redis, corrupt data, and a Redis that
//! is down or frozen (operations must fail as `Unavailable`, never hang).

use crate::common::ports::free_port;
use crate::common::redis_server::RedisServer;
use std::net::TcpListener;
use std::sync::Arc;
use std::time::{Duration, Instant};

use pilotage_gateway::store::{self, IdempotencyClaim, Store, StoreError};
use serde_json::json;

/// Operation timeout for behavioural tests: generous, a loaded CI machine must not trip it.
const OP_TIMEOUT: Duration = Duration::from_secs(2);
/// Operation timeout for the outage tests, where every call is expected to hit it.
const SHORT_OP_TIMEOUT: Duration = Duration::from_millis(300);
/// An operation that has not returned after this long is hanging. Far above
/// any timeout in play, so it flags a hang, not slowness.
const HANG_LIMIT: Duration = Duration::from_secs(10);
const LONG_TTL: Duration = Duration::from_secs(600);

async fn connect(server: &RedisServer, op_timeout: Duration) -> Arc<dyn Store> {
    store::connect(Some(&server.url()), op_timeout)
        .await
        .expect("connect to the test redis")
}

/// A plain connection for looking at what the store wrote.
async fn raw(server: &RedisServer) -> redis::aio::MultiplexedConnection {
    redis::Client::open(server.url())
        .expect("client")
        .get_multiplexed_async_connection()
        .await
        .expect("raw connection")
}

async fn setup() -> (Arc<dyn Store>, RedisServer) {
    let server = RedisServer::start();
    let store = connect(&server, OP_TIMEOUT).await;
    (store, server)
}

// The behavioural suite shared with the memory backend.
pilotage_gateway::store_conformance_tests!(setup);

/// Runs every kind of operation and asserts each one fails as `Unavailable`
/// without hanging.
async fn assert_all_unavailable(store: &dyn Store) {
    let record = json!({"run_id": "r"});
    let mut outcomes: Vec<(&str, Result<(), StoreError>)> = Vec::new();
    macro_rules! attempt {
        ($name:literal, $op:expr) => {{
            let started = Instant::now();
            let outcome = tokio::time::timeout(HANG_LIMIT, $op)
                .await
                .unwrap_or_else(|_| panic!("{} hung for {:?}", $name, started.elapsed()));
            outcomes.push(($name, outcome.map(|_| ())));
        }};
    }
    attempt!("ping", store.ping());
    attempt!("put_run", store.put_run("t", "r", &record, LONG_TTL));
    attempt!("get_run", store.get_run("t", "r"));
    attempt!(
        "claim",
        store.claim_idempotency("t", "k", "fp", "fp", LONG_TTL)
    );
    attempt!(
        "complete",
        store.complete_idempotency("t", "k", "fp", "fp", &record, LONG_TTL)
    );
    attempt!("release", store.release_idempotency("t", "k", "fp"));
    attempt!(
        "put_program",
        store.put_program("t", "p", &record, LONG_TTL)
    );
    attempt!("get_program", store.get_program("t", "p"));
    attempt!("list_programs", store.list_programs("t"));
    attempt!(
        "put_snapshot",
        store.put_catalog_snapshot("t", "cv", &record, LONG_TTL)
    );
    attempt!("get_snapshot", store.get_catalog_snapshot("t", "cv"));
    attempt!("revoke_session", store.revoke_session("s", LONG_TTL));
    attempt!("is_session_revoked", store.is_session_revoked("s"));
    for (name, outcome) in outcomes {
        assert!(
            matches!(outcome, Err(StoreError::Unavailable(_))),
            "{name}: expected Unavailable, got {outcome:?}"
        );
    }
}

/// Polls `ping` until the store answers again (the manager reconnects by itself).
async fn wait_until_available(store: &dyn Store) {
    let deadline = Instant::now() + HANG_LIMIT;
    while store.ping().await.is_err() {
        assert!(
            Instant::now() < deadline,
            "store did not recover within {HANG_LIMIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn connect_reports_an_unreachable_redis_clearly() {
    let url = format!("redis://127.0.0.1:{}/0", free_port());
    let outcome = tokio::time::timeout(HANG_LIMIT, store::connect(Some(&url), SHORT_OP_TIMEOUT))
        .await
        .expect("connect must not hang");
    match outcome {
        Err(StoreError::Unavailable(message)) => {
            assert!(
                message.starts_with("cannot connect to Redis at "),
                "{message}"
            );
            assert!(message.contains(&url), "{message}");
        }
        Err(other) => panic!("expected Unavailable, got {other:?}"),
        Ok(_) => panic!("connected to a port nobody listens on"),
    }
}

#[tokio::test]
async fn connect_reports_a_refused_password_without_showing_it() {
    let server = RedisServer::with_password("right-secret");
    for url in [
        format!("redis://127.0.0.1:{}/0", server.port),
        format!("redis://:wrong-secret@127.0.0.1:{}/0", server.port),
    ] {
        let outcome = tokio::time::timeout(HANG_LIMIT, store::connect(Some(&url), OP_TIMEOUT))
            .await
            .expect("connect must not hang");
        let Err(StoreError::Unavailable(message)) = outcome else {
            panic!("expected Unavailable for {url}");
        };
        assert!(
            message.starts_with("cannot connect to Redis at "),
            "{message}"
        );
        assert!(!message.contains("no answer in time"), "{message}");
        assert!(!message.contains("secret"), "{message}");
    }
    let url = format!("redis://:right-secret@127.0.0.1:{}/0", server.port);
    let store = store::connect(Some(&url), OP_TIMEOUT)
        .await
        .expect("connect");
    store.ping().await.expect("ping with the right password");
}

#[tokio::test]
async fn connect_times_out_on_a_server_that_never_answers() {
    // Accepts TCP connections (the kernel backlog does) but never replies.
    let silent = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("redis://{}/0", silent.local_addr().expect("addr"));
    let outcome = tokio::time::timeout(HANG_LIMIT, store::connect(Some(&url), SHORT_OP_TIMEOUT))
        .await
        .expect("connect must not hang");
    assert!(
        matches!(outcome, Err(StoreError::Unavailable(_))),
        "{:?}",
        outcome.err()
    );
}

#[tokio::test]
async fn operations_are_unavailable_when_redis_is_killed_and_recover_after_restart() {
    let mut server = RedisServer::start();
    let store = connect(&server, SHORT_OP_TIMEOUT).await;
    assert_eq!(store.backend(), "redis");
    store
        .put_run("t", "before", &json!({}), LONG_TTL)
        .await
        .expect("put_run while up");

    server.kill();
    assert_all_unavailable(&*store).await;

    server.restart();
    wait_until_available(&*store).await;
    // The restarted server is empty (no persistence), but fully usable again,
    // scripts included (reloaded after NOSCRIPT).
    assert_eq!(store.get_run("t", "before").await.expect("get_run"), None);
    assert_eq!(
        store
            .claim_idempotency("t", "k", "fp", "fp", LONG_TTL)
            .await
            .expect("claim"),
        IdempotencyClaim::Acquired
    );
    store
        .complete_idempotency("t", "k", "fp", "fp", &json!({"ok": true}), LONG_TTL)
        .await
        .expect("complete after restart");
    assert!(matches!(
        store
            .claim_idempotency("t", "k", "fp", "fp", LONG_TTL)
            .await,
        Ok(IdempotencyClaim::Completed { .. })
    ));
}

#[tokio::test]
async fn operations_time_out_when_redis_is_frozen_and_recover_after() {
    let server = RedisServer::start();
    let store = connect(&server, SHORT_OP_TIMEOUT).await;
    store.ping().await.expect("ping while up");

    server.freeze();
    assert_all_unavailable(&*store).await;
    server.thaw();

    wait_until_available(&*store).await;
    store
        .put_run("t", "after", &json!({"ok": true}), LONG_TTL)
        .await
        .expect("put_run after thaw");
    assert_eq!(
        store.get_run("t", "after").await.expect("get_run"),
        Some(json!({"ok": true}))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn instances_sharing_one_redis_see_one_state() {
    let server = RedisServer::start();
    let instances = [
        connect(&server, OP_TIMEOUT).await,
        connect(&server, OP_TIMEOUT).await,
    ];
    let [a, b] = &instances;

    // A run written by one instance is fetched through the other.
    a.put_run("tenant:x", "r1", &json!({"n": 1}), LONG_TTL)
        .await
        .expect("put_run");
    assert_eq!(
        b.get_run("tenant:x", "r1").await.expect("get_run"),
        Some(json!({"n": 1}))
    );

    // 50 claimers spread over both instances: still exactly one winner.
    let barrier = Arc::new(tokio::sync::Barrier::new(50));
    let mut tasks = Vec::new();
    for i in 0..50 {
        let store = Arc::clone(&instances[i % 2]);
        let barrier = Arc::clone(&barrier);
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            // Each claimer is its own attempt.
            let attempt = format!("attempt-{i}");
            let claim = store
                .claim_idempotency("tenant:x", "shared", "fp", &attempt, LONG_TTL)
                .await;
            (attempt, claim)
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        let (attempt, claim) = task.await.expect("task");
        if claim.expect("claim") == IdempotencyClaim::Acquired {
            winners.push(attempt);
        }
    }
    assert_eq!(winners.len(), 1, "winners: {winners:?}");

    // Completed on one, replayed by the other; revocation is seen everywhere.
    a.complete_idempotency(
        "tenant:x",
        "shared",
        "fp",
        &winners[0],
        &json!({"r": 1}),
        LONG_TTL,
    )
    .await
    .expect("complete");
    assert_eq!(
        b.claim_idempotency("tenant:x", "shared", "fp", "fp", LONG_TTL)
            .await
            .expect("claim"),
        IdempotencyClaim::Completed {
            fingerprint: "fp".into(),
            response: json!({"r": 1})
        }
    );
    b.revoke_session("sess-1", LONG_TTL).await.expect("revoke");
    assert!(a.is_session_revoked("sess-1").await.expect("check"));
}

#[tokio::test]
async fn records_use_the_documented_keys_and_expiry() {
    let server = RedisServer::start();
    let store = connect(&server, OP_TIMEOUT).await;
    let mut raw = raw(&server).await;
    let scope = "tenant:acme";
    let ttl = Duration::from_secs(60);

    store
        .put_run(scope, "r1", &json!({"run_id": "r1"}), ttl)
        .await
        .expect("put_run");
    let value: String = redis::cmd("GET")
        .arg("pilotage:v1:tenant:acme:run:r1")
        .query_async(&mut raw)
        .await
        .expect("GET run");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&value).ok(),
        Some(json!({"run_id": "r1"}))
    );
    let pttl: i64 = redis::cmd("PTTL")
        .arg("pilotage:v1:tenant:acme:run:r1")
        .query_async(&mut raw)
        .await
        .expect("PTTL");
    assert!(pttl > 0 && pttl <= 60_000, "run PTTL {pttl}");

    store
        .claim_idempotency(scope, "key-1", "fp-1", "fp-1", ttl)
        .await
        .expect("claim");
    let value: String = redis::cmd("GET")
        .arg("pilotage:v1:tenant:acme:idem:key-1")
        .query_async(&mut raw)
        .await
        .expect("GET idem");
    let claim: serde_json::Value = serde_json::from_str(&value).expect("claim JSON");
    assert_eq!(claim["state"], "pending");
    assert_eq!(claim["fingerprint"], "fp-1");
    assert!(claim["claimed_at_ms"].is_u64());

    store
        .put_program(scope, "prog_1", &json!({"program_ref": "prog_1"}), ttl)
        .await
        .expect("put_program");
    for key in [
        "pilotage:v1:{tenant:acme}:prog:prog_1",
        "pilotage:v1:{tenant:acme}:prog-index",
    ] {
        let pttl: i64 = redis::cmd("PTTL")
            .arg(key)
            .query_async(&mut raw)
            .await
            .expect("PTTL");
        assert!(pttl > 0 && pttl <= 60_000, "{key} PTTL {pttl}");
    }
    let index: Vec<String> = redis::cmd("ZRANGE")
        .arg("pilotage:v1:{tenant:acme}:prog-index")
        .arg(0)
        .arg(-1)
        .query_async(&mut raw)
        .await
        .expect("ZRANGE");
    assert_eq!(index, ["prog_1"]);

    store
        .put_catalog_snapshot(scope, "cv_abc", &json!({"a": "d"}), ttl)
        .await
        .expect("snapshot");
    store.revoke_session("s-1", ttl).await.expect("revoke");
    for key in [
        "pilotage:v1:tenant:acme:cv:cv_abc",
        "pilotage:v1:session-revoked:s-1",
    ] {
        let pttl: i64 = redis::cmd("PTTL")
            .arg(key)
            .query_async(&mut raw)
            .await
            .expect("PTTL");
        assert!(pttl > 0 && pttl <= 60_000, "{key} PTTL {pttl}");
    }
}

#[tokio::test]
async fn corrupt_values_are_reported_as_corrupt() {
    let server = RedisServer::start();
    let store = connect(&server, OP_TIMEOUT).await;
    let mut raw = raw(&server).await;
    let set =
        |key: &'static str, value: &'static str| redis::cmd("SET").arg(key).arg(value).clone();

    let () = set("pilotage:v1:t:run:bad", "{not json")
        .query_async(&mut raw)
        .await
        .expect("SET");
    assert!(matches!(
        store.get_run("t", "bad").await,
        Err(StoreError::Corrupt(_))
    ));

    // A key of the wrong Redis type.
    let () = redis::cmd("HSET")
        .arg("pilotage:v1:t:run:hash")
        .arg("f")
        .arg("v")
        .query_async(&mut raw)
        .await
        .expect("HSET");
    assert!(matches!(
        store.get_run("t", "hash").await,
        Err(StoreError::Corrupt(_))
    ));

    // An unreadable idempotency record: claim, complete and release all refuse,
    // and release leaves it in place for inspection.
    let () = set("pilotage:v1:t:idem:bad", "garbage")
        .query_async(&mut raw)
        .await
        .expect("SET");
    assert!(matches!(
        store
            .claim_idempotency("t", "bad", "fp", "fp", LONG_TTL)
            .await,
        Err(StoreError::Corrupt(_))
    ));
    assert!(matches!(
        store
            .complete_idempotency("t", "bad", "fp", "fp", &json!({}), LONG_TTL)
            .await,
        Err(StoreError::Corrupt(_))
    ));
    assert!(matches!(
        store.release_idempotency("t", "bad", "fp").await,
        Err(StoreError::Corrupt(_))
    ));
    let exists: i64 = redis::cmd("EXISTS")
        .arg("pilotage:v1:t:idem:bad")
        .query_async(&mut raw)
        .await
        .expect("EXISTS");
    assert_eq!(exists, 1);

    // JSON, but not an idempotency record.
    let () = set("pilotage:v1:t:idem:shape", r#"{"state":"weird"}"#)
        .query_async(&mut raw)
        .await
        .expect("SET");
    assert!(matches!(
        store
            .claim_idempotency("t", "shape", "fp", "fp", LONG_TTL)
            .await,
        Err(StoreError::Corrupt(_))
    ));

    // A listed program whose record is unreadable.
    store
        .put_program("t", "p1", &json!({"program_ref": "p1"}), LONG_TTL)
        .await
        .expect("put_program");
    let () = set("pilotage:v1:{t}:prog:p1", "][")
        .query_async(&mut raw)
        .await
        .expect("SET");
    assert!(matches!(
        store.list_programs("t").await,
        Err(StoreError::Corrupt(_))
    ));
}

/// The same behavioural suite against a three-master Redis Cluster with one
/// replica each: every script and transaction must touch one slot, or the
/// cluster refuses it (`CROSSSLOT`).
mod cluster {
    use std::sync::Arc;

    use crate::common::redis_cluster::RedisCluster;
    use pilotage_gateway::store::{self, Store};

    pub async fn setup() -> (Arc<dyn Store>, RedisCluster) {
        let cluster = tokio::task::spawn_blocking(RedisCluster::start)
            .await
            .expect("start the test cluster");
        let store = store::connect_with(
            store::Backend::RedisCluster(&cluster.urls()),
            super::OP_TIMEOUT,
            store::memory::MemoryLimits::default(),
            None,
        )
        .await
        .expect("connect to the test cluster");
        (store, cluster)
    }

    pilotage_gateway::store_conformance_tests!(sequential conformance_suite_passes_on_a_cluster, setup);
}

/// A master behind three sentinels killed: the store follows the promoted
/// replica without being rebuilt, and what was replicated before is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sentinel_failover_is_followed_without_restart() {
    use crate::common::redis_sentinel::{MASTER_NAME, SentinelGroup};
    let mut group = tokio::task::spawn_blocking(SentinelGroup::start)
        .await
        .expect("start the sentinel group");
    let urls = group.sentinel_urls();
    let store = store::connect_with(
        store::Backend::RedisSentinel {
            urls: &urls,
            master_name: MASTER_NAME,
        },
        SHORT_OP_TIMEOUT,
        store::memory::MemoryLimits::default(),
        None,
    )
    .await
    .expect("connect through the sentinels");
    let before = json!({"run": "before the failover"});
    store
        .put_run("tenant:s", "r1", &before, LONG_TTL)
        .await
        .expect("write before the failover");
    let group = tokio::task::spawn_blocking(move || {
        group.wait_replicated();
        group.kill_master();
        group
    })
    .await
    .expect("kill the master");
    let killed_at = Instant::now();

    let mut errors = 0usize;
    let mut recovered = None;
    for i in 0..200 {
        assert!(
            killed_at.elapsed() < Duration::from_secs(40),
            "the store did not follow the failover within 40 s ({errors} errors)"
        );
        let run = json!({"attempt": i});
        match tokio::time::timeout(HANG_LIMIT, store.put_run("tenant:s", "r2", &run, LONG_TTL))
            .await
            .expect("a write hung during the failover")
        {
            Ok(()) => {
                recovered = Some(killed_at.elapsed());
                break;
            }
            Err(StoreError::Unavailable(_)) => errors += 1,
            Err(other) => panic!("unexpected failure during the failover: {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let recovered = recovered.expect("no write succeeded after the failover");
    assert_eq!(
        group.current_master_port(),
        Some(group.replica_port),
        "the sentinels did not promote the replica"
    );
    assert_eq!(
        store.get_run("tenant:s", "r1").await.expect("read after"),
        Some(before),
        "a write replicated before the failover was lost"
    );
    println!(
        "sentinel failover: master killed; writes succeeded again after {} ms; {errors} writes answered Unavailable meanwhile",
        recovered.as_millis()
    );
}
