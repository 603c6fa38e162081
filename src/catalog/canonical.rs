//! Canonical JSON (object keys sorted at every level, no whitespace,
//! serde_json's escaping), the entries' content digests, and the
//! `catalog_version` made from them: the same on every instance.
//!
//! An entry's digest is SHA-256 of its canonical JSON; its `revision` is the
//! digest's first 8 bytes in hex. `catalog_version` is `cv_` + hex SHA-256
//! over the entries' digests in catalog order, so each entry is read and
//! hashed once, and large catalogs hash their entries on both cores.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// SHA-256 of an entry's canonical JSON.
pub type EntryDigest = [u8; 32];

/// From this many entries on, digests are computed on two threads.
pub(super) const PARALLEL_FROM: usize = 2_000;

/// Canonical JSON: object keys sorted, no whitespace, serde_json's escaping.
pub fn canonical_json(value: &Value) -> String {
    let mut out = Vec::with_capacity(256);
    // Writing into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut out, &Canonical(value));
    // serde_json writes valid UTF-8.
    String::from_utf8(out).unwrap_or_default()
}

/// `f` over `items`, in order: on two threads from [`PARALLEL_FROM`] items
/// on (a catalog's entries are independent), on this one below.
pub fn in_halves<T: Send, U: Send>(mut items: Vec<T>, f: impl Fn(T) -> U + Sync) -> Vec<U> {
    if items.len() < PARALLEL_FROM {
        return items.into_iter().map(f).collect();
    }
    let second = items.split_off(items.len() / 2);
    let f = &f;
    // The second thread logs where the caller does, inside its span and
    // its request's scopes, so what it logs (an unmapped effect, say) still
    // names the request.
    let dispatch = tracing::dispatcher::get_default(Clone::clone);
    let span = tracing::Span::current();
    let scopes = crate::telemetry::carried::Carried::current();
    std::thread::scope(|scope| {
        let other = scope.spawn(move || {
            tracing::dispatcher::with_default(&dispatch, || {
                let _in_caller = span.enter();
                scopes.run(|| second.into_iter().map(f).collect::<Vec<_>>())
            })
        });
        let mut out: Vec<U> = items.into_iter().map(f).collect();
        match other.join() {
            Ok(rest) => out.extend(rest),
            // The other half panicked: so does the caller, as it would have
            // on one thread.
            Err(panic) => std::panic::resume_unwind(panic),
        }
        out
    })
}

/// An entry's `revision`: the first 8 bytes of its digest, in hex.
pub fn revision(digest: &EntryDigest) -> String {
    hex::encode(&digest[..8])
}

/// `catalog_version`, built from the entries' digests in catalog order.
#[derive(Clone, Default)]
pub struct VersionHasher(Sha256);

impl VersionHasher {
    pub fn add(&mut self, digest: &EntryDigest) {
        self.0.update(digest);
    }

    pub fn token(self) -> String {
        format!("cv_{}", hex::encode(self.0.finalize()))
    }
}

/// Objects up to this many members are written in key order without a
/// sorted copy of their members.
const SMALL_OBJECT: usize = 8;

/// A value serialized with its object keys sorted. Keys already in order
/// (entries built in order, or read back from canonical text) are written
/// as they are, without sorting a copy.
struct Canonical<'a>(&'a Value);

impl Serialize for Canonical<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                if map.keys().is_sorted() {
                    for (k, v) in map {
                        out.serialize_entry(k, &Canonical(v))?;
                    }
                } else if map.len() <= SMALL_OBJECT {
                    // Small objects (most of a schema's) pick their next key
                    // in place: a few comparisons cost less than a sorted copy.
                    let mut last: Option<&String> = None;
                    for _ in 0..map.len() {
                        let next = map
                            .iter()
                            .filter(|(k, _)| last.is_none_or(|l| *k > l))
                            .min_by(|a, b| a.0.cmp(b.0));
                        let Some((k, v)) = next else { break };
                        out.serialize_entry(k, &Canonical(v))?;
                        last = Some(k);
                    }
                } else {
                    let mut members: Vec<(&String, &Value)> = map.iter().collect();
                    members.sort_unstable_by(|a, b| a.0.cmp(b.0));
                    for (k, v) in members {
                        out.serialize_entry(k, &Canonical(v))?;
                    }
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for v in items {
                    out.serialize_element(&Canonical(v))?;
                }
                out.end()
            }
            scalar => scalar.serialize(serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_second_thread_works_inside_the_callers_span_and_request() {
        use crate::telemetry::trace_context::TraceContext;
        tracing::subscriber::with_default(tracing_subscriber::registry(), || {
            let request = tracing::info_span!("request");
            let _in_request = request.enter();
            let mut trace = TraceContext::from_headers(&Default::default());
            trace.request_id = "req-7".into();
            let seen = trace.sync_scope(|| {
                in_halves((0..PARALLEL_FROM).collect(), |_: usize| {
                    (
                        std::thread::current().id(),
                        tracing::Span::current().id(),
                        TraceContext::with_current(|t| t.request_id.clone()),
                    )
                })
            });
            let threads: std::collections::HashSet<_> = seen.iter().map(|s| s.0).collect();
            assert_eq!(threads.len(), 2, "the items were shared by two threads");
            assert!(request.id().is_some());
            assert!(seen.iter().all(|s| s.1 == request.id()));
            assert!(seen.iter().all(|s| s.2.as_deref() == Some("req-7")));
        });
    }

    #[test]
    fn keys_are_sorted_at_every_level_without_whitespace() {
        let v = json!({"b": [{"z": 1, "a": "x\"y"}], "a": {"d": null, "c": true}});
        assert_eq!(
            canonical_json(&v),
            r#"{"a":{"c":true,"d":null},"b":[{"a":"x\"y","z":1}]}"#
        );
    }

    #[test]
    fn large_and_small_objects_sort_alike() {
        let members: serde_json::Map<String, Value> = (0..2 * SMALL_OBJECT)
            .rev()
            .map(|i| (format!("k{i:02}"), json!(i)))
            .collect();
        let large = Value::Object(members.clone());
        let small = Value::Object(members.into_iter().take(SMALL_OBJECT).collect());
        for v in [large, small] {
            let text = canonical_json(&v);
            let back: Value = serde_json::from_str(&text).unwrap();
            let keys: Vec<&String> = back.as_object().unwrap().keys().collect();
            assert!(keys.is_sorted(), "{text}");
            assert_eq!(back, v);
        }
    }
}
