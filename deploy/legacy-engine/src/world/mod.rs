//! The engine's shared state: registry, tenant worlds, run counters and faults, all
//! behind one mutex that is only ever held for short, non-async sections.
//!
//! Runs never mutate a live world directly: they work on a clone and `commit` it
//! afterwards, which is how a timed-out or dry run leaves no trace. Real runs that
//! may write take the tenant's run lock, so two writing runs never lose each other's
//! effects.

pub mod capability;
pub mod clock;
pub mod faults;
pub mod registry;
pub mod seed;
pub mod tenant;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use serde_json::{Value, json};

use capability::Capability;
use faults::{FaultSet, Faults};
use registry::{Registry, RegistryError};
use seed::Seed;
use tenant::TenantWorld;

/// What a tenant sees of the registry at one moment, for the validator and runner.
#[derive(Clone, Debug)]
pub struct CatalogView {
    pub tenant: String,
    pub visible: BTreeMap<String, Capability>,
    pub global: BTreeSet<String>,
}

/// A clone of a tenant's world handed to a run, with the generation it came from.
pub struct WorldLease {
    pub world: TenantWorld,
    generation: u64,
}

struct Inner {
    registry: Registry,
    worlds: BTreeMap<String, TenantWorld>,
    runs: BTreeMap<String, u64>,
    faults: Faults,
    /// Bumped by every reset, so a run that started before it cannot commit after it.
    generation: u64,
}

/// The engine.
pub struct Engine {
    seed: Seed,
    inner: Mutex<Inner>,
    run_locks: BTreeMap<String, tokio::sync::Mutex<()>>,
    /// Run numbers are never reused, not even across resets.
    run_seq: AtomicU64,
    /// Tenant requests received since the start or the last reset.
    tenant_requests: AtomicU64,
}

fn fresh(seed: &Seed, generation: u64) -> Inner {
    let worlds = seed
        .tenants
        .iter()
        .map(|(name, t)| {
            let customers = t.world.as_ref().unwrap_or(&seed.world).customers.clone();
            (name.clone(), TenantWorld::new(customers))
        })
        .collect();
    Inner {
        registry: Registry::from_seed(seed),
        worlds,
        runs: seed.tenants.keys().map(|t| (t.clone(), 0)).collect(),
        faults: Faults::default(),
        generation,
    }
}

impl Engine {
    pub fn new(seed: Seed) -> Self {
        let run_locks = seed
            .tenants
            .keys()
            .map(|t| (t.clone(), tokio::sync::Mutex::new(())))
            .collect();
        Engine {
            inner: Mutex::new(fresh(&seed, 0)),
            seed,
            run_locks,
            run_seq: AtomicU64::new(0),
            tenant_requests: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means another request panicked mid-update; the data
        // is still the best state there is, so keep serving it.
        self.inner
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub fn has_tenant(&self, tenant: &str) -> bool {
        self.seed.tenants.contains_key(tenant)
    }

    /// The tenant's visible capabilities with their usage counters, sorted by name.
    pub fn catalog(&self, tenant: &str) -> Vec<(Capability, u64)> {
        let inner = self.lock();
        inner
            .registry
            .visible(tenant)
            .into_values()
            .map(|c| {
                let used = inner.registry.usage(tenant, &c.name);
                (c, used)
            })
            .collect()
    }

    pub fn view(&self, tenant: &str) -> CatalogView {
        let inner = self.lock();
        CatalogView {
            tenant: tenant.to_owned(),
            visible: inner.registry.visible(tenant),
            global: inner.registry.global_names(),
        }
    }

    pub fn faults(&self, tenant: &str) -> FaultSet {
        self.lock().faults.for_tenant(tenant)
    }

    pub fn set_faults(
        &self,
        tenant: Option<String>,
        faults: FaultSet,
    ) -> Result<(), RegistryError> {
        if let Some(t) = &tenant
            && !self.has_tenant(t)
        {
            return Err(RegistryError::UnknownTenant(t.clone()));
        }
        self.lock().faults.set(tenant, faults);
        Ok(())
    }

    /// Allocates the next run number and counts the run for the tenant.
    pub fn next_run(&self, tenant: &str) -> u64 {
        *self.lock().runs.entry(tenant.to_owned()).or_insert(0) += 1;
        self.run_seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    pub fn record_use(&self, tenant: &str, capability: &str) {
        self.lock().registry.record_use(tenant, capability);
    }

    pub fn run_lock(&self, tenant: &str) -> Option<&tokio::sync::Mutex<()>> {
        self.run_locks.get(tenant)
    }

    /// A private copy of the tenant's world for a run.
    pub fn lease(&self, tenant: &str) -> Option<WorldLease> {
        let inner = self.lock();
        let world = inner.worlds.get(tenant)?.clone();
        Some(WorldLease {
            world,
            generation: inner.generation,
        })
    }

    /// Makes a run's world the live one, unless a reset happened meanwhile.
    pub fn commit(&self, tenant: &str, lease: WorldLease) {
        let mut inner = self.lock();
        if inner.generation == lease.generation
            && let Some(live) = inner.worlds.get_mut(tenant)
        {
            *live = lease.world;
        }
    }

    /// `GET /admin/state`: digest, run count and the world itself.
    pub fn state(&self, tenant: &str) -> Option<Value> {
        let inner = self.lock();
        let world = inner.worlds.get(tenant)?;
        Some(json!({
            "tenant": tenant,
            "digest": world.digest(),
            "runs": inner.runs.get(tenant).copied().unwrap_or(0),
            "customers": world.customers,
            "invoices": world.invoices,
            "outbox": world.outbox,
            "audit": world.audit,
        }))
    }

    /// Counts one tenant request.
    pub fn count_tenant_request(&self) {
        self.tenant_requests.fetch_add(1, Ordering::Relaxed);
    }

    pub fn tenant_requests(&self) -> u64 {
        self.tenant_requests.load(Ordering::Relaxed)
    }

    /// Everything back to the seed: worlds, registry, counters and faults.
    pub fn reset(&self) {
        self.tenant_requests.store(0, Ordering::Relaxed);
        let mut inner = self.lock();
        let generation = inner.generation + 1;
        *inner = fresh(&self.seed, generation);
    }

    pub fn put_capability(
        &self,
        capability: Capability,
        tenant: Option<&str>,
    ) -> Result<(), RegistryError> {
        if let Some(t) = tenant
            && !self.has_tenant(t)
        {
            return Err(RegistryError::UnknownTenant(t.to_owned()));
        }
        self.lock().registry.put(capability, tenant)
    }

    pub fn remove_capability(&self, name: &str, tenant: Option<&str>) -> Result<(), RegistryError> {
        self.lock().registry.remove(name, tenant)
    }
}
