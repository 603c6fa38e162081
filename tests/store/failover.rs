//! A Redis Cluster master killed under keyed load: its replica takes over,
//! the gateway keeps answering the keys the surviving masters serve, and no
//! idempotency key whose answer the gateway gave as a run executes twice.
//!
//! The cluster (three masters, one replica each, short node timeout) and the
//! engine are started by the test on loopback; every wait is bounded. The
//! failover time and what the gateway answered meanwhile are measured and
//! printed (`--nocapture`), not asserted.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::common::redis_cluster::RedisCluster;
use crate::common::{ACME_OPS, Engine, Mcp, TestEnv, write_program};
use serde_json::json;

/// Keys sent concurrently per round.
const KEYS_PER_ROUND: usize = 6;
/// Upper bound of the rounds after the kill, and of the time they may take.
const MAX_ROUNDS: usize = 300;
const MAX_FAILOVER_WAIT: Duration = Duration::from_secs(45);

/// One answer: the key, when it came back (relative to the kill, negative
/// before it) and either the serialized run or the request error's kind.
struct Answer {
    key: String,
    at_ms: i64,
    outcome: Result<String, String>,
}

async fn send_round(url: &str, keys: &[String], killed_at: Option<Instant>) -> Vec<Answer> {
    let mut tasks = Vec::new();
    for key in keys {
        let url = url.to_owned();
        let key = key.clone();
        tasks.push(tokio::spawn(async move {
            let client = Mcp::new(&url, Some(ACME_OPS));
            let args = json!({
                "workflow": write_program("gold"),
                "mode": "immediate",
                "idempotency_key": key,
                "trace_level": "full",
            });
            let answer =
                tokio::time::timeout(Duration::from_secs(30), client.call("run_workflow", args))
                    .await
                    .expect("an execute hung during the failover");
            (key, answer)
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        let (key, answer) = t.await.expect("execute task");
        let at_ms = match killed_at {
            Some(k) => k.elapsed().as_millis() as i64,
            None => -1,
        };
        let outcome = if answer.is_error {
            Err(answer.structured["error"]["kind"]
                .as_str()
                .unwrap_or("no kind")
                .to_owned())
        } else {
            Ok(serde_json::to_string(&answer.structured).expect("serialize"))
        };
        out.push(Answer {
            key,
            at_ms,
            outcome,
        });
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_master_fails_over_and_no_recorded_key_runs_twice() {
    let mut cluster = tokio::task::spawn_blocking(RedisCluster::start)
        .await
        .expect("start the test cluster");
    let urls = cluster.urls();
    let env = TestEnv::in_front_of(Engine::spawn(&[]), "tests/fixtures/features.toml", |c| {
        c.store.redis_url.clear();
        c.store.redis_cluster = urls;
    })
    .await;
    let run = format!("{:x}", rand::random::<u64>());
    let mut next = 0usize;
    let mut fresh_keys = || {
        (0..KEYS_PER_ROUND)
            .map(|_| {
                next += 1;
                format!("failover-{run}-{next}")
            })
            .collect::<Vec<_>>()
    };

    // Load before the kill: every answer is a run.
    let mut answers = Vec::new();
    for _ in 0..3 {
        answers.extend(send_round(&env.url, &fresh_keys(), None).await);
    }
    assert!(
        answers.iter().all(|a| a.outcome.is_ok()),
        "executes failed before any fault"
    );

    let victim = cluster.master_ports()[0];
    let killed_at = Instant::now();
    cluster.kill(victim);

    // Keep the load on (new keys, and each round's keys retried in the next)
    // until a whole round succeeds after the cluster reports a new master.
    let mut promoted_after = None;
    let mut recovered_after = None;
    let mut previous: Vec<String> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        assert!(
            killed_at.elapsed() < MAX_FAILOVER_WAIT,
            "no failover within {MAX_FAILOVER_WAIT:?}"
        );
        let keys = fresh_keys();
        let mut batch = keys.clone();
        batch.append(&mut previous);
        let round = send_round(&env.url, &batch, Some(killed_at)).await;
        let all_ok = round.iter().all(|a| a.outcome.is_ok());
        answers.extend(round);
        previous = keys;
        if promoted_after.is_none() && cluster.master_ports().len() == 3 {
            promoted_after = Some(killed_at.elapsed());
        }
        if promoted_after.is_some() && all_ok {
            recovered_after = Some(killed_at.elapsed());
            break;
        }
    }
    let promoted_after = promoted_after.expect("the replica was never promoted");
    let recovered_after = recovered_after.expect("the gateway never answered a whole round again");

    // Every key once more, now that the cluster is whole: a replay or a
    // first run, never a second one.
    let all_keys: Vec<String> = {
        let mut k: Vec<String> = answers.iter().map(|a| a.key.clone()).collect();
        k.sort();
        k.dedup();
        k
    };
    for chunk in all_keys.chunks(KEYS_PER_ROUND * 2) {
        answers.extend(send_round(&env.url, chunk, Some(killed_at)).await);
    }

    let mut runs_per_key: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for a in &answers {
        if let Ok(run) = &a.outcome {
            runs_per_key.entry(&a.key).or_default().push(run);
        }
    }
    for (key, runs) in &runs_per_key {
        assert!(
            runs.iter().all(|r| r == &runs[0]),
            "key {key} answered with two different runs (executed twice)"
        );
    }

    // What the gateway answered while the failover was under way.
    let during: Vec<&Answer> = answers
        .iter()
        .filter(|a| a.at_ms >= 0 && (a.at_ms as u128) <= recovered_after.as_millis())
        .collect();
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    for a in &during {
        let kind = match &a.outcome {
            Ok(_) => "run".to_owned(),
            Err(kind) => format!("request error {kind}"),
        };
        *kinds.entry(kind).or_default() += 1;
    }
    let succeeded = kinds.get("run").copied().unwrap_or(0);
    println!(
        "failover: master :{victim} killed; replica promoted after {} ms; every key answered again after {} ms",
        promoted_after.as_millis(),
        recovered_after.as_millis()
    );
    println!(
        "failover: {} answers meanwhile: {kinds:?}; {} keys, none executed twice",
        during.len(),
        runs_per_key.len()
    );
    assert!(
        succeeded > 0,
        "keys on the surviving masters got no answer during the failover: {kinds:?}"
    );
}
