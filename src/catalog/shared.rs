//! Catalogs held once per distinct content. The catalog service keys a
//! tenant's built catalog by its `catalog_version` before programs (a
//! SHA-256 over the canonical text of every entry), so tenants get the same
//! `Arc` exactly when their entries are the same bytes; an adapter may key
//! what it parsed by a digest of what the engine served (n8n's node
//! descriptions). Different contents stay apart. Only weak references are
//! kept here: a catalog lives as long as something (a tenant's slot, an
//! engine, a request) holds it, and the map forgets it after.
//!
//! The catalog service's byte bound still weighs each tenant's slot with
//! the whole catalog: an upper bound of what the tenants hold, never
//! exceeded.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};

/// Built catalogs by content.
pub struct Shared<T> {
    built: Mutex<HashMap<String, Weak<T>>>,
}

impl<T> Default for Shared<T> {
    fn default() -> Self {
        Self {
            built: Mutex::new(HashMap::new()),
        }
    }
}

impl<T> Shared<T> {
    /// The catalog held for `content`, if one is.
    pub fn get(&self, content: &str) -> Option<Arc<T>> {
        self.built
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(content)
            .and_then(Weak::upgrade)
    }

    /// The catalog already held for `content`, else `built`, now held for
    /// it; `built` is dropped when another tenant's copy is reused.
    pub fn intern(&self, content: &str, built: T) -> Arc<T> {
        let mut map = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = map.get(content).and_then(Weak::upgrade) {
            return held;
        }
        map.retain(|_, held| held.strong_count() > 0);
        let catalog = Arc::new(built);
        map.insert(content.to_string(), Arc::downgrade(&catalog));
        catalog
    }

    /// How many distinct catalogs are held.
    pub fn distinct(&self) -> usize {
        self.built
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .filter(|held| held.strong_count() > 0)
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_content_is_held_once_and_forgotten_when_nobody_holds_it() {
        let shared = Shared::default();
        let alpha = shared.intern("cv_1", vec![1, 2, 3]);
        let beta = shared.intern("cv_1", vec![1, 2, 3]);
        assert!(Arc::ptr_eq(&alpha, &beta));
        let other = shared.intern("cv_2", vec![4]);
        assert!(!Arc::ptr_eq(&alpha, &other));
        assert!(
            shared
                .get("cv_2")
                .is_some_and(|held| Arc::ptr_eq(&held, &other))
        );
        assert_eq!(shared.distinct(), 2);
        drop((alpha, beta));
        assert_eq!(shared.distinct(), 1);
        let again = shared.intern("cv_1", vec![1, 2, 3]);
        assert_eq!(*again, vec![1, 2, 3]);
    }
}
