//! Canonical JSON (object keys sorted at every level, no whitespace,
//! serde_json's escaping): the text `catalog_version` and the entries'
//! digests are hashed over, the same on every instance.

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The first 8 bytes of SHA-256 in hex: an entry's `revision` and its
/// changed_since digest.
pub(super) fn short_digest(text: &str) -> String {
    hex::encode(&Sha256::digest(text.as_bytes())[..8])
}

/// Canonical JSON: object keys sorted, no whitespace, serde_json's escaping.
pub fn canonical_json(value: &Value) -> String {
    let mut out = Vec::with_capacity(256);
    write_canonical(value, &mut out);
    // serde_json writes valid UTF-8 and so do the separators added here.
    String::from_utf8(out).unwrap_or_default()
}

/// Writes the canonical JSON of `value` to `out` (a hasher, say) without
/// building the whole text first.
pub fn write_canonical_to(value: &Value, out: &mut impl std::io::Write) -> std::io::Result<()> {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            out.write_all(b"{")?;
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                serde_json::to_writer(&mut *out, k)?;
                out.write_all(b":")?;
                write_canonical_to(&map[k], out)?;
            }
            out.write_all(b"}")
        }
        Value::Array(items) => {
            out.write_all(b"[")?;
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.write_all(b",")?;
                }
                write_canonical_to(v, out)?;
            }
            out.write_all(b"]")
        }
        scalar => Ok(serde_json::to_writer(&mut *out, scalar)?),
    }
}

fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    // Writing into a Vec cannot fail.
    let _ = write_canonical_to(value, out);
}
