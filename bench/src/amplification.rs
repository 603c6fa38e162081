//! The memory row: peak resident memory of a fresh gateway while it
//! validates a stream of distinct maximum-size programs of the shapes that
//! once amplified memory (deeply nested branches with long ids around
//! hundreds of steps), reported as a ratio to the bytes of the requests.
//!
//! Each shape gets its own gateway process, and requests go one at a time,
//! so the numbers belong to that shape alone. After every request the
//! gateway's `VmHWM` (peak RSS) is read: the largest rise of the peak caused
//! by one request, divided by that request's size, is the per-request
//! amplification. Memory is reported, never asserted.

use crate::load::{self, Target};
use crate::procs::Proc;
use crate::workload::Body;
use bytes::Bytes;
use serde::Serialize;
use serde_json::{Value, json};

/// One program shape.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub id: &'static str,
    pub title: &'static str,
    /// Nested branch levels around the inner steps.
    levels: usize,
    /// Bytes of each branch id.
    branch_id_bytes: usize,
    /// Steps in the innermost arm.
    inner_steps: usize,
    /// Bytes of each inner step's value (padding towards the size bound).
    value_bytes: usize,
}

/// The shapes measured: the reported attack itself (refused by the step-id
/// bound before any walk) and the largest programs of that shape the
/// default bounds accept, once past the engine's step budget (an invalid
/// verdict) and once within it (a valid verdict with a plan that repeats the
/// branch ids once per step).
pub const SHAPES: &[Shape] = &[
    Shape {
        id: "issue-repro",
        title: "13 branches with 16,500-byte ids around 986 steps",
        levels: 13,
        branch_id_bytes: 16_500,
        inner_steps: 986,
        value_bytes: 1,
    },
    Shape {
        id: "max-steps",
        title: "14 branches with 128-byte ids around 986 steps, 255 KB",
        levels: 14,
        branch_id_bytes: 128,
        inner_steps: 986,
        value_bytes: 200,
    },
    Shape {
        id: "max-plan",
        title: "14 branches with 128-byte ids around 185 steps, 255 KB (valid, planned)",
        levels: 14,
        branch_id_bytes: 128,
        inner_steps: 185,
        value_bytes: 1_290,
    },
];

impl Shape {
    /// The validate request for program number `n` (each one distinct).
    fn request(&self, n: u64) -> Bytes {
        let pad = "v".repeat(self.value_bytes);
        let mut arm: Vec<Value> = (0..self.inner_steps)
            .map(|i| json!({"id": format!("s{i}"), "kind": "set", "value": format!("{n}{pad}")}))
            .collect();
        for level in 0..self.levels {
            // Exactly `branch_id_bytes` long, distinct per level.
            let id = format!("{level:02}{}", "b".repeat(self.branch_id_bytes - 2));
            arm = vec![json!({"id": id, "kind": "branch",
                "when": {"op": "eq", "left": 1, "right": 1}, "then": arm})];
        }
        let body = json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "validate_workflow", "arguments": {"workflow": {"steps": arm}}}});
        Bytes::from(body.to_string())
    }
}

/// What one shape's stream did to the gateway's memory (after the warm-up
/// with small programs).
#[derive(Serialize, Debug, Clone)]
pub struct Amplification {
    pub shape: String,
    pub title: String,
    pub requests: u64,
    pub request_bytes: usize,
    /// What the gateway answered the first program (`valid`, `invalid` or
    /// the request-error kind).
    pub answer: String,
    /// RSS right after start, and after the warm-up requests.
    pub started_mib: f64,
    pub idle_mib: f64,
    pub peak_mib: f64,
    pub final_rss_mib: f64,
    /// Rise of the peak RSS caused by the first large program (the process
    /// grows its buffers and heap to the size of such a request), KiB.
    pub first_rise_kib: u64,
    /// `first_rise` over the request's bytes.
    pub first_rise_ratio: f64,
    /// Largest rise of the peak RSS caused by any later program, KiB.
    pub max_rise_kib: u64,
    /// `max_rise` over the request's bytes.
    pub max_rise_ratio: f64,
    /// Largest rise of the resident (not peak) RSS across one later
    /// request: what a request leaves behind (verdicts kept in the cache).
    pub max_kept_kib: u64,
    /// (peak − idle) over one request's bytes.
    pub peak_ratio: f64,
}

/// Runs every shape against a fresh gateway each.
pub async fn run(
    requests: u64,
    start_gateway: impl Fn() -> Result<Proc, String>,
) -> Result<Vec<Amplification>, String> {
    let mut out = Vec::new();
    for shape in SHAPES {
        let gateway = start_gateway()?;
        out.push(one(shape, requests, &gateway).await?);
    }
    Ok(out)
}

/// Small programs, one valid and one the engine finds fault with, validated
/// before the stream: the gateway's one-time costs of serving (the tenant's
/// catalog, the classifier's first match, the first request on each worker)
/// are then not counted against the first large program.
const WARM_UP: [&str; 2] = [
    r#"{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"validate_workflow","arguments":{"workflow":{"steps":[{"id":"a","kind":"set","value":1}]}}}}"#,
    r#"{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"validate_workflow","arguments":{"workflow":{"steps":[{"id":"a","kind":"call","capability":"crm.get_customer","with":{"nope":1}},{"id":"b","kind":"teleport"}]}}}}"#,
];

async fn one(shape: &Shape, requests: u64, gateway: &Proc) -> Result<Amplification, String> {
    let started = gateway.memory().unwrap_or_default();
    for body in WARM_UP {
        let warm = Target::new(
            gateway.addr,
            "/mcp",
            Body::Fixed(Bytes::from_static(body.as_bytes())),
            "",
        )
        .header("authorization", crate::workload::BEARER);
        for n in 0..4 {
            load::once(&warm, n).await?;
        }
    }
    let idle = gateway.memory().unwrap_or_default();
    let mut peak = idle.peak_kib;
    let mut rss = idle.rss_kib;
    let (mut first_rise, mut max_rise, mut max_kept) = (0, 0, 0);
    let mut answer = String::new();
    let request_bytes = shape.request(0).len();
    for n in 0..requests {
        let target = Target::new(gateway.addr, "/mcp", Body::Fixed(shape.request(n)), "")
            .header("authorization", crate::workload::BEARER);
        let (status, body) = load::once(&target, n).await?;
        if !status.is_success() {
            return Err(format!("{}: HTTP {status} for program {n}", shape.id));
        }
        if n == 0 {
            answer = describe(&body);
        }
        let now = gateway.memory().unwrap_or_default();
        let rise = now.peak_kib.saturating_sub(peak);
        if n == 0 {
            first_rise = rise;
        } else {
            max_rise = max_rise.max(rise);
            max_kept = max_kept.max(now.rss_kib.saturating_sub(rss));
        }
        peak = peak.max(now.peak_kib);
        rss = now.rss_kib;
    }
    let end = gateway.memory().unwrap_or_default();
    let kib_ratio = |kib: u64| kib as f64 * 1024.0 / request_bytes as f64;
    let row = Amplification {
        shape: shape.id.into(),
        title: shape.title.into(),
        requests,
        request_bytes,
        answer,
        started_mib: started.rss_mib(),
        idle_mib: idle.rss_mib(),
        peak_mib: end.peak_mib(),
        final_rss_mib: end.rss_mib(),
        first_rise_kib: first_rise,
        first_rise_ratio: kib_ratio(first_rise),
        max_rise_kib: max_rise,
        max_rise_ratio: kib_ratio(max_rise),
        max_kept_kib: max_kept,
        peak_ratio: kib_ratio(end.peak_kib.saturating_sub(idle.rss_kib)),
    };
    println!(
        "  {} ({} × {} B): {} · warm {:.1} MiB · peak {:.1} MiB · first program +{} KiB peak (×{:.2} its size) · later +{} KiB peak at most (×{:.2}), +{} KiB kept at most",
        row.shape,
        row.requests,
        row.request_bytes,
        row.answer,
        row.idle_mib,
        row.peak_mib,
        row.first_rise_kib,
        row.first_rise_ratio,
        row.max_rise_kib,
        row.max_rise_ratio,
        row.max_kept_kib
    );
    Ok(row)
}

/// `valid`, `invalid` or the request-error kind of a validate answer.
fn describe(body: &[u8]) -> String {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let s = &v["result"]["structuredContent"];
    if let Some(kind) = s["error"]["kind"].as_str() {
        let why = s["error"]["message"].as_str().unwrap_or("");
        return format!("{kind} ({why})");
    }
    match s["valid"].as_bool() {
        Some(true) => "valid".into(),
        Some(false) => "invalid".into(),
        None => format!(
            "unexpected answer: {}",
            v.to_string().chars().take(200).collect::<String>()
        ),
    }
}

/// The markdown table of the rows, under the run's machine line and commit.
pub fn markdown(machine_line: &str, commit: Option<&str>, rows: &[Amplification]) -> String {
    use std::fmt::Write;
    let mut md = String::new();
    if rows.is_empty() {
        return md;
    }
    let _ = writeln!(
        md,
        "### Memory: a stream of distinct maximum-size programs\n\n{} · {} · release builds · \
         validate_workflow, one request at a time, a fresh gateway (embedded store, default \
         bounds and cache budgets) per shape\n",
        machine_line,
        commit.map_or("commit unknown".to_string(), |c| format!("commit `{c}`"))
    );
    let _ = writeln!(
        md,
        "| shape | programs | bytes each | answer | RSS after start / warm-up | peak RSS | peak rise, first program (× its bytes) | largest peak rise, later programs (× bytes) | largest RSS kept by one later program | (peak − warm) / request bytes |"
    );
    let _ = writeln!(md, "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let _ = writeln!(
            md,
            "| {} ({}) | {} | {} | {} | {:.1} / {:.1} MiB | {:.1} MiB | {} KiB (×{:.1}) | {} KiB (×{:.2}) | {} KiB | {:.1} |",
            r.shape,
            r.title,
            r.requests,
            r.request_bytes,
            r.answer,
            r.started_mib,
            r.idle_mib,
            r.peak_mib,
            r.first_rise_kib,
            r.first_rise_ratio,
            r.max_rise_kib,
            r.max_rise_ratio,
            r.max_kept_kib,
            r.peak_ratio
        );
    }
    md
}
