//! Micro benchmark of `catalog_version` over catalogs of 10, 1,000 and
//! 10,000 capabilities, through the gateway's real code path
//! (`CatalogService::view`) against an in-process stand-in for the engine's
//! catalog endpoint (ETag + `If-None-Match`), with the embedded store.
//!
//! Rows (criterion ids `catalog_version/<row>/<entries>`):
//! - `engine_304`: the conditional GET alone, answered 304 (the floor of a
//!   revalidation; the gateway pays it on every request);
//! - `view_unchanged`: a whole view when the engine says 304. With no rehash
//!   when unchanged, this stays at `engine_304` plus a constant, whatever
//!   the catalog size;
//! - `engine_full_fetch`: an unconditional GET of the whole listing, parsed;
//! - `view_rebuild`: a whole view when the engine's ETag moved (as it does
//!   whenever a usage counter moves): fetch, map, canonicalise, hash;
//! - `version_of`: the token from scratch over the entries as a catalog
//!   keeps them (their canonical text, hashed again; two threads from 2,000
//!   entries on), without any fetching;
//! - `canonical_only`: writing the mapped entries' canonical text from
//!   their trees, one thread (what a rebuild does once per entry before
//!   hashing it); `sha256_only`: hashing those texts, one thread.
//!
//! `view_rebuild − engine_full_fetch` is the gateway's own cost of
//! recomputing a catalog_version; the target is ≤ 5 ms at 10,000.

/// The gateway's own allocator (src/main.rs), so the rows measure what the
/// gateway pays, not the system allocator's costs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pilotage_gateway::auth::Principal;
use pilotage_gateway::catalog::{CatalogService, Currency, Entry, canonical_json, version_of};
use pilotage_gateway::config::EngineConfig;
use pilotage_gateway::engines::CatalogFetch;
use pilotage_gateway::engines::rest::EngineClient;
use pilotage_gateway::store::Store;
use pilotage_gateway::store::memory::MemoryStore;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const SIZES: [usize; 3] = [10, 1_000, 10_000];

/// One realistic engine capability (about 700 bytes of JSON), volatile
/// fields included.
fn capability(i: usize) -> Value {
    let effects = ["read", "write", "delete", "external"];
    json!({
        "name": format!("domain{}.operation_{i:05}", i % 17),
        "title": format!("Operation {i}"),
        "doc": format!("Performs operation {i} on a record of domain {}; returns the record as stored after the change, with its id and version.", i % 17),
        "params": {"type": "object", "required": ["id", "amount_cents"], "additionalProperties": false,
                   "properties": {"id": {"type": "string"}, "amount_cents": {"type": "integer", "minimum": 1},
                                  "memo": {"type": "string"}}},
        "returns": {"type": "object", "properties": {"id": {"type": "string"}, "version": {"type": "integer"}}},
        "effect": effects[i % effects.len()],
        "tags": [format!("domain{}", i % 17), "generated"],
        "deprecated": i.is_multiple_of(50),
        "usage_count": i * 3,
        "updated_at": "2026-01-01T00:00:00Z"
    })
}

/// The catalog stand-in: tenant `fixed-<n>` answers 304 to its ETag;
/// tenant `moving-<n>` answers a new ETag (and the whole body) every time,
/// as the legacy engine does while runs move its usage counters.
struct FakeEngine {
    bodies: HashMap<usize, axum::body::Bytes>,
    counter: AtomicU64,
}

async fn capabilities(
    axum::extract::State(engine): axum::extract::State<Arc<FakeEngine>>,
    headers: axum::http::HeaderMap,
) -> axum::response::Response {
    use axum::http::{StatusCode, header};
    use axum::response::IntoResponse;
    let tenant = headers
        .get("x-tenant")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let Some((mode, n)) = tenant.split_once('-') else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(body) = n.parse().ok().and_then(|n: usize| engine.bodies.get(&n)) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let etag = if mode == "fixed" {
        format!("\"fixed-{n}\"")
    } else {
        format!(
            "\"moving-{}\"",
            engine.counter.fetch_add(1, Ordering::Relaxed)
        )
    };
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        == Some(etag.as_str());
    if matches {
        return (StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response();
    }
    (
        [
            (header::ETAG, etag),
            (header::CONTENT_TYPE, "application/json".to_string()),
        ],
        body.clone(),
    )
        .into_response()
}

/// The token of `entries` by the gateway's own definition (SHA-256 over
/// each entry's canonical-JSON digest, in order).
fn token(entries: &[Arc<Entry>]) -> String {
    version_of(&entries.iter().map(|e| &**e).collect::<Vec<_>>())
}

fn principal(tenant: &str) -> Principal {
    Principal {
        scope: format!("key:{tenant}:bench"),
        tenant: tenant.to_string(),
        lasting: true,
        permissions: pilotage_gateway::auth::policy::Permissions::ALL,
        ceiling: pilotage_gateway::auth::policy::RiskCeiling::NONE,
        approve_above: None,
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let bodies = SIZES
        .iter()
        .map(|&n| {
            let list: Vec<Value> = (0..n).map(capability).collect();
            let body = json!({"capabilities": list, "generated_at": "2026-03-01T12:00:00.000Z"});
            (n, axum::body::Bytes::from(body.to_string()))
        })
        .collect();
    let engine = Arc::new(FakeEngine {
        bodies,
        counter: AtomicU64::new(0),
    });
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let app = axum::Router::new()
        .route("/api/v1/capabilities", axum::routing::get(capabilities))
        .with_state(engine);
    rt.spawn(async move { axum::serve(listener, app).await });
    let config: EngineConfig = serde_json::from_value(json!({"url": url})).expect("engine config");
    let client = EngineClient::new(&config);
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let service = CatalogService::new(Arc::new(client.clone()), store, 32 * 1024 * 1024);

    let mut group = c.benchmark_group("catalog_version");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(4));
    for n in SIZES {
        let fixed = principal(&format!("fixed-{n}"));
        let moving = principal(&format!("moving-{n}"));
        // Fill the service's per-tenant cache, and learn the ETag.
        let view = rt
            .block_on(service.view(&fixed, Currency::Confirmed))
            .expect("view");
        assert_eq!(view.entries.len(), n);
        let etag = format!("\"fixed-{n}\"");
        group.bench_with_input(BenchmarkId::new("engine_304", n), &n, |b, _| {
            b.iter(|| {
                let fetch = rt
                    .block_on(client.catalog(&fixed.tenant, Some(&etag)))
                    .expect("304");
                assert!(matches!(fetch, CatalogFetch::NotModified));
            });
        });
        group.bench_with_input(BenchmarkId::new("view_unchanged", n), &n, |b, _| {
            b.iter(|| {
                black_box(
                    rt.block_on(service.view(&fixed, Currency::Confirmed))
                        .expect("view")
                        .version,
                )
            });
        });
        group.bench_with_input(BenchmarkId::new("engine_full_fetch", n), &n, |b, _| {
            b.iter(|| {
                black_box(
                    rt.block_on(client.catalog(&moving.tenant, None))
                        .expect("fetch"),
                )
            });
        });
        group.bench_with_input(BenchmarkId::new("view_rebuild", n), &n, |b, _| {
            b.iter(|| {
                black_box(
                    rt.block_on(service.view(&moving, Currency::Confirmed))
                        .expect("view")
                        .version,
                )
            });
        });
        // The same token as the service's own, so this row measures the
        // real definition.
        assert_eq!(view.version, token(&view.entries));
        group.bench_with_input(BenchmarkId::new("version_of", n), &n, |b, _| {
            b.iter(|| black_box(token(&view.entries)));
        });
        // The mapped entries as trees, without their `revision`.
        let entries: Vec<Value> = view
            .entries
            .iter()
            .map(|e| {
                let mut e = e.to_json();
                if let Some(o) = e.as_object_mut() {
                    o.remove("revision");
                }
                e
            })
            .collect();
        // The two halves of the row above, to tell serialisation from hashing.
        group.bench_with_input(BenchmarkId::new("canonical_only", n), &n, |b, _| {
            b.iter(|| {
                for e in &entries {
                    black_box(canonical_json(e));
                }
            });
        });
        let texts: Vec<String> = entries.iter().map(canonical_json).collect();
        group.bench_with_input(BenchmarkId::new("sha256_only", n), &n, |b, _| {
            b.iter(|| {
                let mut h = Sha256::new();
                for t in &texts {
                    h.update(Sha256::digest(t.as_bytes()));
                }
                black_box(h.finalize())
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
