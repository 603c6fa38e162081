//! The recovery row: does the gateway's memory come back after a long
//! stream of malformed and mutated requests?
//!
//! A fresh gateway (embedded store, default cache budgets) receives a mix of
//! what a fuzzer sends: truncated JSON, binary garbage, unknown methods,
//! arguments of the wrong type, deeply nested values, and distinct mutated
//! programs (unknown step kinds, long values) that fill the verdict cache.
//! Its resident memory is read before, at the peak, right after the stream
//! and after a quiet pause: what stays after the pause is what the process
//! holds for good. Memory is reported, never asserted.

use crate::procs::Proc;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Concurrent callers of the stream.
const CALLERS: u64 = 16;
/// The quiet pause after the stream before the final reading: past the
/// verdict cache's idle expiry (60 s) and its next sweep.
const QUIET: Duration = Duration::from_secs(90);
/// One request's bound: a gateway that stops answering fails the row.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// What the stream did to the gateway's memory.
#[derive(Debug, Clone)]
pub struct Recovery {
    pub requests: u64,
    pub seconds: f64,
    pub idle_mib: f64,
    pub peak_mib: f64,
    pub after_mib: f64,
    pub quiet_mib: f64,
}

/// Request number `n` of the stream: one of eight kinds, each distinct.
fn request(n: u64) -> Vec<u8> {
    let program = |steps: serde_json::Value| {
        json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "validate_workflow", "arguments": {"workflow": steps}}})
        .to_string()
    };
    match n % 8 {
        // Truncated: a valid request cut somewhere inside.
        0 => {
            let whole = program(json!({"name": format!("t{n}"), "steps": [
                {"id": "a", "kind": "set", "value": n}]}));
            let cut = 10 + (n as usize * 7) % (whole.len() - 10);
            whole.as_bytes()[..cut].to_vec()
        }
        // Binary garbage.
        1 => (0..256u64)
            .map(|i| (n.wrapping_mul(31).wrapping_add(i * 17) % 256) as u8)
            .collect(),
        2 => json!({"jsonrpc": "2.0", "id": n, "method": format!("tools/cal{n}")})
            .to_string()
            .into_bytes(),
        3 => json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "validate_workflow", "arguments": {"workflow": n}}})
        .to_string()
        .into_bytes(),
        // Deeply nested arrays inside a program.
        4 => {
            let depth = 64 + (n % 64) as usize;
            let value = format!("{}{n}{}", "[".repeat(depth), "]".repeat(depth));
            program(json!({"steps": [{"id": "a", "kind": "set", "value": "X"}]}))
                .replace("\"X\"", &value)
                .into_bytes()
        }
        // A mutated program: an unknown step kind (an invalid verdict with
        // diagnostics, cached).
        5 => program(json!({"name": format!("m{n}"), "steps": [
            {"id": "a", "kind": format!("teleport{}", n % 97)},
            {"id": "b", "kind": "call", "capability": "crm.get_customer", "with": {"nope": n}}]}))
        .into_bytes(),
        // A valid program carrying a long value (a large cached verdict).
        6 => program(json!({"name": format!("v{n}"), "steps": [
            {"id": "a", "kind": "set", "value": format!("{n}{}", "v".repeat(8_000))}]}))
        .into_bytes(),
        _ => json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "pilotage_catalog", "arguments": {
                "language": "workflow/v1", "verb": "search", "query": format!("q{n} invoice")}}})
        .to_string()
        .into_bytes(),
    }
}

/// Sends `requests` requests of the stream to `gateway` and reads its memory.
pub async fn run(gateway: &Proc, requests: u64) -> Result<Recovery, String> {
    let client = reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .map_err(|e| e.to_string())?;
    let url = format!("{}/mcp", gateway.url());
    // Settle the start-up allocations before the idle reading.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle = gateway.memory().unwrap_or_default();
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..CALLERS {
        let (client, url, next) = (client.clone(), url.clone(), next.clone());
        tasks.push(tokio::spawn(async move {
            loop {
                let n = next.fetch_add(1, Ordering::Relaxed);
                if n >= requests {
                    return Ok::<(), String>(());
                }
                let answer = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2025-11-25")
                    .header("authorization", crate::workload::BEARER)
                    .body(request(n))
                    .send()
                    .await
                    .map_err(|e| format!("request {n}: {e}"))?;
                // Read the answer whole, as a client does.
                let _ = answer.bytes().await;
            }
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    let seconds = started.elapsed().as_secs_f64();
    let after = gateway.memory().unwrap_or_default();
    tokio::time::sleep(QUIET).await;
    let quiet = gateway.memory().unwrap_or_default();
    let row = Recovery {
        requests,
        seconds,
        idle_mib: idle.rss_mib(),
        peak_mib: quiet.peak_mib(),
        after_mib: after.rss_mib(),
        quiet_mib: quiet.rss_mib(),
    };
    println!(
        "  {} malformed and mutated requests in {:.0} s: RSS idle {:.1} MiB · peak {:.1} MiB · right after {:.1} MiB · after {} s quiet {:.1} MiB",
        row.requests,
        row.seconds,
        row.idle_mib,
        row.peak_mib,
        row.after_mib,
        QUIET.as_secs(),
        row.quiet_mib
    );
    Ok(row)
}
