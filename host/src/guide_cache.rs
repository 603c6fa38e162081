//! Guide bodies cached on disk, keyed by the complete tuple
//! (server, Language identifier, guide version) plus the guide id (Part II
//! §3.3, §11.2): never by Language alone, because one Language name on two
//! servers may be two different grammars.
//!
//! Layout: `<root>/<sha256(server)>/<sha256(language, id, version)>.json`,
//! each file a JSON object that repeats its key, so a read also checks it
//! got the entry it asked for. The root is `$XDG_CACHE_HOME/pilotage`, else
//! `$HOME/.cache/pilotage`.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The identity of one cached guide body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuideKey<'a> {
    pub server: &'a str,
    pub language: &'a str,
    pub id: &'a str,
    pub version: &'a str,
}

/// A guide cache rooted at a directory.
#[derive(Debug, Clone)]
pub struct GuideCache {
    root: PathBuf,
}

fn digest(parts: &[&str]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        // Length-prefixed, so ("ab","c") and ("a","bc") differ.
        h.update((p.len() as u64).to_be_bytes());
        h.update(p.as_bytes());
    }
    hex::encode(h.finalize())
}

impl GuideCache {
    pub fn new(root: impl Into<PathBuf>) -> GuideCache {
        GuideCache { root: root.into() }
    }

    /// The default location from the environment, when one is known.
    pub fn from_env() -> Option<GuideCache> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME")
                    .filter(|v| !v.is_empty())
                    .map(|h| Path::new(&h).join(".cache"))
            })?;
        Some(GuideCache::new(base.join("pilotage")))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn path(&self, key: &GuideKey<'_>) -> PathBuf {
        self.root.join(&digest(&[key.server])[..32]).join(format!(
            "{}.json",
            &digest(&[key.language, key.id, key.version])[..32]
        ))
    }

    /// The cached body, if this exact (server, language, id, version) is
    /// stored. A damaged or mismatching file is a miss, never an error.
    pub fn get(&self, key: &GuideKey<'_>) -> Option<String> {
        let text = std::fs::read_to_string(self.path(key)).ok()?;
        let v: Value = serde_json::from_str(&text).ok()?;
        let same = v["server"] == key.server
            && v["language"] == key.language
            && v["id"] == key.id
            && v["version"] == key.version;
        same.then(|| v["body"].as_str().map(str::to_string))
            .flatten()
    }

    /// Stores a body; written to a temporary file and renamed, so a reader
    /// never sees half a guide.
    pub fn put(&self, key: &GuideKey<'_>, body: &str) -> std::io::Result<()> {
        let path = self.path(key);
        let dir = path.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir)?;
        let entry = json!({"server": key.server, "language": key.language, "id": key.id,
            "version": key.version, "body": body});
        let tmp = dir.join(format!(".{}.tmp", std::process::id()));
        std::fs::write(&tmp, entry.to_string())?;
        std::fs::rename(&tmp, &path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_root(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "pilotage-cache-test-{tag}-{}-{}",
            std::process::id(),
            rand::random::<u64>()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn keys_by_server_language_id_and_version() {
        let root = temp_root("keys");
        let cache = GuideCache::new(&root);
        let k = GuideKey {
            server: "http://a/mcp",
            language: "workflow/v1",
            id: "core",
            version: "1",
        };
        assert_eq!(cache.get(&k), None);
        cache.put(&k, "body one").expect("put");
        assert_eq!(cache.get(&k).as_deref(), Some("body one"));
        let other_server = GuideKey {
            server: "http://b/mcp",
            ..k.clone()
        };
        let other_version = GuideKey {
            version: "2",
            ..k.clone()
        };
        let other_language = GuideKey {
            language: "workflow/v2",
            ..k.clone()
        };
        assert_eq!(cache.get(&other_server), None);
        assert_eq!(cache.get(&other_version), None);
        assert_eq!(cache.get(&other_language), None);
        let _ = std::fs::remove_dir_all(root);
    }

    #[test]
    fn a_damaged_entry_is_a_miss() {
        let root = temp_root("damaged");
        let cache = GuideCache::new(&root);
        let k = GuideKey {
            server: "s",
            language: "l",
            id: "core",
            version: "1",
        };
        cache.put(&k, "ok").expect("put");
        std::fs::write(cache.path(&k), "{not json").expect("damage");
        assert_eq!(cache.get(&k), None);
        let _ = std::fs::remove_dir_all(root);
    }
}
