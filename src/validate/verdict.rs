//! The verdict of one validation and the cache that keeps it (Part IV §6):
//! keyed by (tenant, ceiling, language, catalog_version, program, context)
//! and bounded by the verdicts' estimated bytes, so execute after validate
//! does not ask the engine twice. The gateway holds the cache; nothing here
//! knows the gateway.

use crate::auth::Principal;
use crate::catalog::CatalogView;
use crate::classify::Diagnostic;
use crate::languages::{StepInfo, StepKind};
use serde_json::Value;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use std::sync::Arc;

/// The result of validating one program against one catalog view.
#[derive(Debug)]
pub struct Verdict {
    pub valid: bool,
    pub diagnostics: Vec<Diagnostic>,
    /// The validate tool's answer, with the plan.
    pub response: super::Response,
    pub steps: Vec<StepInfo>,
}

/// Verdict cache shared by validate and execute, bounded by the estimated
/// bytes of its verdicts (`cache.verdict_bytes`): a verdict's plan and
/// diagnostics grow with its program, so a count would bound nothing.
pub struct VerdictCache {
    cache: Arc<moka::future::Cache<String, Arc<Verdict>>>,
}

/// A verdict nobody asked for this long leaves: execute follows its validate
/// within seconds, and a burst of one-off programs (a fuzzer, a scan) must
/// not hold the cache's whole budget for the full time to live.
const IDLE: std::time::Duration = std::time::Duration::from_secs(60);
/// How often expired verdicts are swept out. moka evicts only while the cache
/// is used; without the sweep a gateway gone quiet after a burst kept every
/// expired verdict resident.
const SWEEP: std::time::Duration = std::time::Duration::from_secs(20);

impl VerdictCache {
    pub fn new(max_bytes: u64) -> Self {
        let cache = Arc::new(
            moka::future::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|key: &String, verdict: &Arc<Verdict>| {
                    crate::weigh::as_weight(crate::weigh::text(key) + verdict.weight())
                })
                .time_to_live(std::time::Duration::from_secs(600))
                .time_to_idle(IDLE)
                .build(),
        );
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            // Holds the cache weakly: the sweep ends with the cache.
            let weak = Arc::downgrade(&cache);
            runtime.spawn(async move {
                loop {
                    tokio::time::sleep(SWEEP).await;
                    let Some(cache) = weak.upgrade() else { return };
                    cache.run_pending_tasks().await;
                }
            });
        }
        Self { cache }
    }

    /// Verdicts held (moka counts lazily: settled first).
    pub async fn entry_count(&self) -> u64 {
        self.cache.run_pending_tasks().await;
        self.cache.entry_count()
    }

    /// Drops every verdict (after a rule reload).
    pub fn clear(&self) {
        self.cache.invalidate_all();
    }

    /// The verdict cached under `key`, if any.
    pub async fn get(&self, key: &str) -> Option<Arc<Verdict>> {
        self.cache.get(key).await
    }

    /// Caches `verdict` under `key`.
    pub(super) async fn insert(&self, key: String, verdict: Arc<Verdict>) {
        self.cache.insert(key, verdict).await;
    }

    /// Estimated bytes held, after pending evictions ran (tests, benchmarks).
    pub async fn weighted_size(&self) -> u64 {
        self.cache.run_pending_tasks().await;
        self.cache.weighted_size()
    }
}

impl Verdict {
    /// Estimated heap bytes of this verdict.
    fn weight(&self) -> u64 {
        use crate::weigh::text;
        let diagnostics: u64 = self
            .diagnostics
            .iter()
            .map(|d| {
                text(&d.code) + text(&d.path) + text(&d.message) + d.hint.as_deref().map_or(0, text)
            })
            .sum();
        let steps: u64 = self
            .steps
            .iter()
            .map(|s| {
                // Enclosing ids are shared between steps: counted once per
                // step as a pointer, their text is in the program's weight.
                96 + text(&s.pointer)
                    + s.id.as_deref().map_or(0, text)
                    + s.capability.as_deref().map_or(0, text)
            })
            .sum();
        let shared: u64 = self
            .steps
            .iter()
            .filter(|s| s.kind != StepKind::Call && s.kind != StepKind::Set)
            .filter_map(|s| s.id.as_deref().map(text))
            .sum();
        64 + diagnostics + steps + shared + self.response.weight()
    }
}

/// How the program or the context enters a verdict's key: the text it
/// arrived in, when the front kept it, else its tree (hashed as its compact
/// JSON).
#[derive(Clone, Copy)]
pub enum Keyed<'a> {
    Text(&'a RawValue),
    Tree(&'a Value),
}

impl Keyed<'_> {
    fn hash_into(self, h: &mut Sha256) {
        match self {
            Keyed::Text(text) => h.update(text.get().as_bytes()),
            // Streamed into the hash: a large program is never written out whole.
            Keyed::Tree(tree) => {
                let _ = serde_json::to_writer(HashSink(h), tree);
            }
        }
    }
}

/// The key of a verdict: everything the verdict depends on, hashed.
///
/// Equal bytes mean an equal program (a tree read from a text, compact JSON
/// reads back as the tree it was written from), so a program sent again in
/// the same text finds its verdict without being read or written out. The
/// same program in other text (spaces, key order) is validated again: a
/// miss, never a wrong verdict.
pub(super) fn cache_key(
    principal: &Principal,
    language: &str,
    view: &CatalogView,
    program: Keyed<'_>,
    context: Option<Keyed<'_>>,
) -> String {
    let mut h = Sha256::new();
    // Principals of one tenant share verdicts unless their ceilings differ.
    let ceiling = format!("{:?}", principal.ceiling);
    for part in [&principal.tenant, language, &view.version, &ceiling] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    program.hash_into(&mut h);
    h.update([0]);
    if let Some(c) = context {
        c.hash_into(&mut h);
    }
    hex::encode(h.finalize())
}

/// `io::Write` into a SHA-256 state.
struct HashSink<'a>(&'a mut Sha256);

impl std::io::Write for HashSink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
