//! The catalog (Part II §5.4, §6.3): engine capabilities mapped to Pilotage
//! entries, plus the caller's promoted programs, scoped to the caller and
//! versioned by `catalog_version`.
//!
//! `catalog_version` = `cv_` + hex SHA-256 over the digests (SHA-256 of the
//! canonical JSON: sorted keys, no whitespace) of the caller-visible entries,
//! ordered capabilities first then programs, each by id ([`canonical`]).
//! Volatile engine fields never reach an entry and `revision` is left out of
//! the hash, so the same visible catalog gives the same token on every
//! instance and after restarts (Part IV §3).
//!
//! Currency ([`fresh`]): every view is confirmed by an engine answer (a
//! conditional request with the cached ETag) that began after the call
//! arrived; concurrent calls of one tenant share one such confirmation.
//! Only read-only calls may opt into reusing a confirmed catalog for
//! `cache.read_only_catalog_staleness_ms`, never execute. A changed body
//! whose mapped entries are the same (a usage counter moved) keeps the
//! cached catalog: entries, digests and hashes are rebuilt only when the
//! contract changed. Tenants served the same entries share one built
//! catalog ([`shared`]).

mod canonical;
mod entry;
pub mod fresh;
mod mapping;
pub mod risk_when;
pub mod shared;
mod view;

use canonical::VersionHasher;
pub use canonical::canonical_json;
pub use entry::Entry;
pub use entry::version_of;
pub use fresh::Currency;
use mapping::paths_apart;
pub use view::CatalogView;
use view::compose;

use crate::auth::Principal;
use crate::engines::profile::{CatalogFields, EngineProfile};
use crate::engines::{CatalogFetch, EngineError, SharedEngine};
use crate::pilotage::RiskHints;
use crate::store::Store;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

/// Entry kinds of `workflow/v1` (enumerated in the closed-sets guide).
pub const KIND_CAPABILITY: &str = "capability";
pub const KIND_PROGRAM: &str = "program";

/// Why a caller's view could not be built, named for the part that failed.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The engine's catalog could not be read.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The caller's promoted programs could not be read from the store.
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
}

impl CatalogError {
    /// The `internal` request error of a view that failed before execution.
    pub fn before_execution(&self) -> crate::pilotage::RequestError {
        match self {
            CatalogError::Engine(e) => crate::pilotage::internal(e),
            CatalogError::Store(e) => crate::pilotage::store_internal(
                e,
                "the caller's promoted programs could not be read; nothing was executed: retry later",
            ),
        }
    }
}

/// How long changed_since baselines are kept.
const SNAPSHOT_TTL: Duration = Duration::from_secs(7 * 24 * 3600);

/// One tenant's capability entries, rebuilt only when the engine's body changes.
struct TenantCatalog {
    entries: Vec<Arc<Entry>>,
    /// Capability id → (position in `entries`, risk).
    index: Arc<HashMap<String, (usize, RiskHints)>>,
    /// The version's hash state after the capabilities, cloned per request
    /// so unchanged capabilities are never rehashed.
    prefix: VersionHasher,
    /// Entry id → digest of the capabilities (the changed_since baseline).
    digests: Arc<BTreeMap<String, String>>,
    /// The token of a caller without promoted programs.
    version: String,
    /// Estimated heap bytes of all of the above.
    weight: u64,
}

/// One tenant's cached catalog, with the ETag it was read under.
type TenantSlot = fresh::Slot<TenantCatalog>;

/// Estimated bytes of a tenant's cached catalog (the cache's weigher).
fn slot_weight(slot: &TenantSlot) -> u64 {
    256 + slot.current().map_or(0, |(etag, catalog)| {
        etag.as_deref().map_or(0, crate::weigh::text) + catalog.weight
    })
}

/// Builds caller views over the engine catalog and the store.
pub struct CatalogService {
    engine: SharedEngine,
    store: Arc<dyn Store>,
    fields: CatalogFields,
    mapping: EngineProfile,
    /// Bounded by the estimated bytes of each tenant's mapped catalog.
    tenants: moka::sync::Cache<String, Arc<TenantSlot>>,
    /// The built catalogs by content: tenants served the same entries hold
    /// one copy.
    shared: shared::Shared<TenantCatalog>,
    /// (scope, version) pairs already written as baselines by this instance,
    /// bounded by bytes too (one marker per principal and version).
    snapshots_written: moka::sync::Cache<String, ()>,
    /// Counts contract changes of a tenant's catalog (a new version).
    version_changes: prometheus::IntCounter,
    /// How long read-only calls may reuse a confirmed catalog or listing.
    fresh: fresh::Staleness,
    /// Principals' promoted programs, reused by read-only calls within it.
    programs: fresh::ProgramLists,
    /// The mapping's schema, tags and kept fields never overlap, so a
    /// capability's are moved into its entry rather than copied.
    moves_apart: bool,
    /// The bytes `tenants` holds; a catalog heavier than this is not kept.
    tenant_bytes: u64,
    /// Counts catalogs built too large to keep.
    oversized: prometheus::IntCounter,
    /// When a catalog too large to keep was last reported (ms on `fresh`'s
    /// clock; 0: never), so the warning is at most one a minute.
    oversize_warned: std::sync::atomic::AtomicU64,
}

impl CatalogService {
    /// `max_bytes` bounds the cached catalogs (three quarters), the
    /// baseline markers and the program listings (one eighth each). Every
    /// view is confirmed unless [`Self::with_read_only_staleness`] lets
    /// read-only calls reuse one.
    pub fn new(engine: SharedEngine, store: Arc<dyn Store>, max_bytes: u64) -> Self {
        let mapping = engine.profile().clone();
        let f = &mapping.catalog;
        let moved: Vec<&str> = [&f.params, &f.returns, &f.tags]
            .into_iter()
            .chain(&f.kept)
            .map(String::as_str)
            .collect();
        let moves_apart = paths_apart(&moved);
        let tenant_bytes = max_bytes - max_bytes / 4;
        Self {
            moves_apart,
            tenant_bytes,
            oversize_warned: Default::default(),
            oversized: prometheus::IntCounter::new("unregistered", "-").expect("valid counter"),
            engine,
            store,
            fields: mapping.catalog.clone(),
            mapping,
            tenants: moka::sync::Cache::builder()
                .max_capacity(tenant_bytes)
                .weigher(|tenant: &String, slot: &Arc<TenantSlot>| {
                    crate::weigh::as_weight(crate::weigh::text(tenant) + slot_weight(slot))
                })
                .build(),
            snapshots_written: moka::sync::Cache::builder()
                .max_capacity(max_bytes / 8)
                .weigher(|marker: &String, _: &()| {
                    crate::weigh::as_weight(crate::weigh::text(marker) + 64)
                })
                .build(),
            shared: shared::Shared::default(),
            version_changes: prometheus::IntCounter::new("unregistered", "-")
                .expect("valid counter"),
            fresh: fresh::Staleness::new(Duration::ZERO),
            programs: fresh::ProgramLists::new(max_bytes / 8),
        }
    }

    /// Lets read-only calls reuse a confirmed catalog or program listing
    /// for `max` (a departure from Part II §6.4; execute never does).
    pub fn with_read_only_staleness(mut self, max: Duration) -> Self {
        self.fresh = fresh::Staleness::new(max);
        self
    }

    /// Forgets `scope`'s promoted programs: it just promoted one, and its
    /// next view must show it.
    pub fn forget_programs(&self, scope: &str) {
        self.programs.forget(scope);
    }

    /// The promoted programs of `scope`, from the store unless a call of
    /// `currency` may reuse a listing.
    async fn list_programs(
        &self,
        scope: &str,
        currency: Currency,
    ) -> Result<Arc<Vec<Value>>, CatalogError> {
        if let Some(programs) = self.programs.reusable(&self.fresh, currency, scope) {
            return Ok(programs);
        }
        let at = self.fresh.now();
        let programs = Arc::new(self.store.list_programs(scope).await?);
        if self.fresh.enabled() {
            self.programs.keep(scope, at, programs.clone());
        }
        Ok(programs)
    }

    /// Counts every catalog_version change in `counter`.
    pub fn count_version_changes(mut self, counter: prometheus::IntCounter) -> Self {
        self.version_changes = counter;
        self
    }

    /// Counts every catalog built too large to keep in `counter`.
    pub fn count_oversized(mut self, counter: prometheus::IntCounter) -> Self {
        self.oversized = counter;
        self
    }

    /// Tenants whose catalog this instance holds.
    pub fn tenant_count(&self) -> u64 {
        // moka counts lazily; settle first so a scrape reads the true size.
        self.tenants.run_pending_tasks();
        self.tenants.entry_count()
    }

    /// The view of `principal` as current as `currency` asks; stores it
    /// as a changed_since baseline the first time this version is seen
    /// (never for a principal no later request can be: nobody could ask
    /// for changes since it).
    pub async fn view(
        &self,
        principal: &Principal,
        currency: Currency,
    ) -> Result<CatalogView, CatalogError> {
        let tenant = self.tenant(&principal.tenant, currency).await?;
        // A principal no later request can be has a scope of its own that
        // nothing was ever promoted under: no store read.
        let programs = if principal.lasting {
            self.list_programs(&principal.scope, currency).await?
        } else {
            Arc::default()
        };
        let view = compose(&tenant, &programs);
        let marker = format!("{}\u{0}{}", principal.scope, view.version);
        if principal.lasting && !self.snapshots_written.contains_key(&marker) {
            let stored = self
                .store
                .put_catalog_snapshot(
                    &principal.scope,
                    &view.version,
                    &view.snapshot(),
                    SNAPSHOT_TTL,
                )
                .await;
            if stored.is_ok() {
                self.snapshots_written.insert(marker, ());
            }
        }
        Ok(view)
    }

    /// Entry changes since `baseline`; `None` when the baseline is unknown.
    pub async fn changes_since(
        &self,
        principal: &Principal,
        view: &CatalogView,
        baseline: &str,
    ) -> Result<Option<Vec<Value>>, crate::store::StoreError> {
        if baseline == view.version {
            return Ok(Some(Vec::new()));
        }
        let Some(old) = self
            .store
            .get_catalog_snapshot(&principal.scope, baseline)
            .await?
        else {
            return Ok(None);
        };
        let Some(old) = old.as_object() else {
            return Ok(None);
        };
        let mut changes = Vec::new();
        for (id, digest) in view.digests.iter() {
            match old.get(id).and_then(Value::as_str) {
                None => changes.push(json!({"id": id, "change": "added"})),
                Some(d) if d != digest => changes.push(json!({"id": id, "change": "modified"})),
                _ => {}
            }
        }
        for id in old.keys() {
            if !view.digests.contains_key(id) {
                changes.push(json!({"id": id, "change": "removed"}));
            }
        }
        changes.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
        Ok(Some(changes))
    }

    async fn tenant(
        &self,
        tenant: &str,
        currency: Currency,
    ) -> Result<Arc<TenantCatalog>, EngineError> {
        let slot = self
            .tenants
            .get_with_by_ref(tenant, || Arc::new(TenantSlot::default()));
        if let Some(catalog) = slot.reusable(&self.fresh, currency) {
            return Ok(catalog);
        }
        let (confirming, cached) = match slot.turn().await {
            fresh::Turn::Shared(catalog) => return Ok(catalog),
            fresh::Turn::Confirm(confirming, cached) => (confirming, cached),
        };
        let etag = cached.as_ref().and_then(|(e, _)| e.clone());
        let began = self.fresh.now();
        let (kept, catalog) = match self.engine.catalog(tenant, etag.as_deref()).await? {
            CatalogFetch::NotModified => match cached {
                Some((_, catalog)) => (None, catalog),
                None => {
                    return Err(EngineError::Failed(
                        "engine answered 304 to an unconditional request".into(),
                    ));
                }
            },
            CatalogFetch::Same { etag } => match cached {
                Some((_, catalog)) => (Some((etag, catalog.clone())), catalog),
                None => {
                    return Err(EngineError::Failed(
                        "engine listing judged unchanged with nothing to compare".into(),
                    ));
                }
            },
            CatalogFetch::Fresh { etag, capabilities } => {
                let built = self.build(capabilities);
                self.warn_if_oversized(tenant, &built);
                // Only volatile fields moved: keep the catalog (and its hashes).
                let catalog = match cached {
                    Some((_, old)) if old.version == built.version => old,
                    Some(_) => {
                        self.version_changes.inc();
                        self.intern(built)
                    }
                    None => self.intern(built),
                };
                (Some((etag, catalog.clone())), catalog)
            }
        };
        let reweigh = kept.is_some();
        slot.confirmed(confirming, began, kept);
        if reweigh {
            // Inserted again so the cache weighs the slot's new content.
            self.tenants.insert(tenant.to_string(), slot.clone());
        }
        Ok(catalog)
    }

    /// `built`, or the same catalog another tenant already holds.
    fn intern(&self, built: TenantCatalog) -> Arc<TenantCatalog> {
        let content = built.version.clone();
        self.shared.intern(&content, built)
    }

    /// How many distinct capability catalogs the tenants hold.
    pub fn distinct_catalogs(&self) -> usize {
        self.shared.distinct()
    }

    /// A catalog heavier than the cache's share for catalogs is dropped
    /// soon after it is built, so it is fetched whole and rebuilt up to once
    /// per request: the operator hears of it (counted every time, logged at
    /// most once a minute, with the size that would keep it).
    fn warn_if_oversized(&self, tenant: &str, catalog: &TenantCatalog) {
        use std::sync::atomic::Ordering;
        let Some(needed_mib) = catalog_bytes_to_keep(catalog.weight, self.tenant_bytes) else {
            return;
        };
        self.oversized.inc();
        let now = self.fresh.now();
        let last = self.oversize_warned.load(Ordering::Relaxed);
        let quiet = last != 0 && now.saturating_sub(last) < 60_000;
        if quiet
            || self
                .oversize_warned
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        tracing::warn!(
            tenant,
            entries = catalog.entries.len(),
            estimated_bytes = catalog.weight,
            key = "cache.catalog_bytes",
            "this tenant's catalog is larger than the catalog cache holds, so it is dropped and fetched whole from the engine again, up to once per request: set [cache] catalog_bytes to at least {needed_mib} MiB"
        );
    }
}

/// The `[cache] catalog_bytes`, in MiB, that would keep a catalog of
/// `weight` estimated bytes, when the share catalogs get now
/// (`tenant_bytes`, three quarters of it) cannot.
fn catalog_bytes_to_keep(weight: u64, tenant_bytes: u64) -> Option<u64> {
    const MIB: u64 = 1024 * 1024;
    (weight > tenant_bytes).then(|| (weight + weight / 3).div_ceil(MIB) + 1)
}

#[cfg(test)]
mod tests {
    use super::canonical_json;
    use crate::config::EngineConfig;
    use serde_json::json;

    /// The `[engine]` table of a configuration made of `toml`.
    pub(super) fn engine_config(toml: &str) -> EngineConfig {
        crate::config::Config::parse(toml, std::path::Path::new("g.toml"))
            .unwrap()
            .engine
    }

    pub(super) fn service(engine: crate::engines::SharedEngine) -> super::CatalogService {
        let store = std::sync::Arc::new(crate::store::memory::MemoryStore::new());
        super::CatalogService::new(engine, store, 1 << 20)
    }

    #[test]
    fn a_catalog_too_large_to_keep_names_the_size_that_would() {
        use super::catalog_bytes_to_keep;
        const MIB: u64 = 1024 * 1024;
        // The default 32 MiB keeps 24 MiB of catalogs.
        assert_eq!(catalog_bytes_to_keep(20 * MIB, 24 * MIB), None);
        assert_eq!(catalog_bytes_to_keep(24 * MIB, 24 * MIB), None);
        let needed = catalog_bytes_to_keep(60 * MIB, 24 * MIB).unwrap();
        // Three quarters of the advice hold the catalog.
        assert!(needed * MIB * 3 / 4 >= 60 * MIB, "{needed}");
        assert!(needed <= 82, "{needed}");
    }

    #[test]
    fn canonical_sorts_keys_at_every_level() {
        let a = json!({"b": 1, "a": {"y": [1, {"d": 2, "c": 3}], "x": "é\n"}});
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":"é\n","y":[1,{"c":3,"d":2}]},"b":1}"#
        );
    }
}
