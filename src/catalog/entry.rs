//! One catalog entry as a tenant's catalog keeps it: its canonical JSON
//! text, which is what its digest and `catalog_version` hash, and its
//! small members as a tree for the readers that filter, judge risk or check
//! a step (kind, tags, risk, `risk_when`, an adapter's kept members).
//!
//! The schemas, usually most of an entry, live only in the text: a reader
//! that needs them (a page, `get`, a parameter hint, a promotion's
//! baseline) reads the whole entry back with [`Entry::to_json`]. An entry
//! therefore costs its text plus a small tree, not a tree of every schema
//! node, and a catalog's version from scratch hashes stored bytes.

use super::canonical::{EntryDigest, VersionHasher, canonical_json, in_halves, revision};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The members kept only in the text.
const SCHEMAS: [&str; 2] = ["input_schema", "output_schema"];

pub struct Entry {
    /// Canonical JSON of the entry without its `revision`.
    text: Box<str>,
    /// Every member but the schemas, with `revision`.
    members: Map<String, Value>,
}

impl Entry {
    /// Keeps `entry` (an object without `revision`) as its canonical text
    /// and small members; gives its digest, whose start is its `revision`.
    pub fn new(entry: Value) -> (Entry, EntryDigest) {
        let text = canonical_json(&entry).into_boxed_str();
        let digest: EntryDigest = Sha256::digest(text.as_bytes()).into();
        let mut members = match entry {
            Value::Object(members) => members,
            // Entries are objects; anything else keeps its text alone.
            _ => Map::new(),
        };
        for schema in SCHEMAS {
            members.remove(schema);
        }
        members.insert("revision".into(), Value::String(revision(&digest)));
        (Entry { text, members }, digest)
    }

    /// The entry's canonical JSON without its `revision`.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The entry's id (empty when it has none).
    pub fn id(&self) -> &str {
        self.member("id").and_then(Value::as_str).unwrap_or("")
    }

    /// A member other than the schemas (`None` for a schema: read those
    /// through [`Entry::to_json`]).
    pub fn member(&self, name: &str) -> Option<&Value> {
        self.members.get(name)
    }

    /// The whole entry, schemas and `revision` included, read back from its
    /// text.
    pub fn to_json(&self) -> Value {
        let mut whole: Value = serde_json::from_str(&self.text).unwrap_or_default();
        if let (Some(obj), Some(revision)) = (whole.as_object_mut(), self.members.get("revision")) {
            obj.insert("revision".into(), revision.clone());
        }
        whole
    }

    /// The entry's `input_schema`, read from its text (the other members
    /// are skipped, not built).
    pub fn input_schema(&self) -> Option<Value> {
        #[derive(serde::Deserialize)]
        struct Schema {
            input_schema: Option<Value>,
        }
        serde_json::from_str::<Schema>(&self.text)
            .ok()?
            .input_schema
    }

    /// Estimated heap bytes of the entry.
    pub fn weight(&self) -> u64 {
        crate::weigh::text(&self.text) + crate::weigh::json_members(&self.members)
    }
}

/// `catalog_version` of `entries` (already in catalog order), from scratch:
/// every entry's stored text hashed again (on two threads for large
/// catalogs), then the token.
pub fn version_of(entries: &[&Entry]) -> String {
    let digests = in_halves(entries.to_vec(), |e| Sha256::digest(e.text()));
    let mut hasher = VersionHasher::default();
    for digest in digests {
        hasher.add(&digest.into());
    }
    hasher.token()
}

#[cfg(test)]
mod tests {
    use super::super::canonical::PARALLEL_FROM;
    use super::*;
    use serde_json::json;

    #[test]
    fn the_whole_entry_comes_back_and_the_small_members_stay_at_hand() {
        let value = json!({"id": "a.b", "kind": "capability", "tags": ["x"],
            "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}},
            "output_schema": null});
        let (entry, digest) = Entry::new(value.clone());
        assert_eq!(entry.text(), canonical_json(&value));
        assert_eq!(digest, <[u8; 32]>::from(Sha256::digest(entry.text())));
        assert_eq!(entry.id(), "a.b");
        assert_eq!(entry.member("tags"), Some(&json!(["x"])));
        assert_eq!(entry.member("input_schema"), None);
        assert_eq!(entry.input_schema(), Some(value["input_schema"].clone()));
        let mut whole = value;
        whole["revision"] = json!(revision(&digest));
        assert_eq!(entry.to_json(), whole);
        assert!(entry.weight() > entry.text().len() as u64);
    }

    #[test]
    fn the_version_follows_every_entry_and_their_order() {
        let version = |values: &[Value]| {
            let entries: Vec<Entry> = values.iter().map(|v| Entry::new(v.clone()).0).collect();
            version_of(&entries.iter().collect::<Vec<_>>())
        };
        let (a, b) = (json!({"id": "a", "n": 1}), json!({"id": "b", "n": 2}));
        let base = version(&[a.clone(), b.clone()]);
        assert_eq!(base, version(&[a.clone(), b.clone()]));
        assert_ne!(base, version(&[b.clone(), a.clone()]));
        assert_ne!(base, version(std::slice::from_ref(&a)));
        let changed = json!({"id": "b", "n": 3});
        assert_ne!(base, version(&[a.clone(), changed]));
        // Member order inside an entry does not matter.
        let reordered = json!({"n": 2, "id": "b"});
        assert_eq!(base, version(&[a, reordered]));
    }

    #[test]
    fn two_threads_give_the_token_one_gives() {
        let entries: Vec<(Entry, EntryDigest)> = (0..PARALLEL_FROM + 3)
            .map(|i| Entry::new(json!({"id": format!("e{i}"), "w": i})))
            .collect();
        let mut serial = VersionHasher::default();
        for (_, digest) in &entries {
            serial.add(digest);
        }
        let refs: Vec<&Entry> = entries.iter().map(|(e, _)| e).collect();
        assert_eq!(version_of(&refs), serial.token());
        assert_eq!(revision(&entries[0].1).len(), 16);
    }
}
