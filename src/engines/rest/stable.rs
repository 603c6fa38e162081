//! The stable part of a capability listing, fingerprinted without building
//! it: an engine whose listing carries usage counters or timestamps changes
//! its ETag on every run, yet what reaches a catalog entry did not move.
//! The fingerprint reads each capability's members as raw text (no tree is
//! built), leaves out the volatile ones, and hashes the rest; an unchanged
//! fingerprint keeps the tenant's catalog as it is, so a 200 that only moved
//! counters costs a scan instead of a parse and a rebuild.
//!
//! The validator the catalog keeps is both: the fingerprint, then the
//! engine's own ETag ([`Validator`]).

use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

/// Marks a kept validator as ours (fingerprint first), so an ETag of any
/// length is never read as one.
const MARK: &str = "stable:";
/// Hex digits of a fingerprint.
const FINGERPRINT_LEN: usize = 64;

/// What the catalog keeps to revalidate a listing: the stable part's
/// fingerprint and the engine's ETag.
pub struct Validator<'a> {
    pub fingerprint: Option<&'a str>,
    pub etag: Option<&'a str>,
}

impl<'a> Validator<'a> {
    /// Reads what [`Self::write`] wrote; anything else is a bare ETag.
    pub fn read(kept: Option<&'a str>) -> Self {
        let ours = kept
            .and_then(|k| k.strip_prefix(MARK))
            .filter(|rest| rest.len() >= FINGERPRINT_LEN && rest.is_char_boundary(FINGERPRINT_LEN));
        match ours {
            Some(rest) => {
                let (fingerprint, etag) = rest.split_at(FINGERPRINT_LEN);
                Self {
                    fingerprint: Some(fingerprint),
                    etag: Some(etag).filter(|e| !e.is_empty()),
                }
            }
            None => Self {
                fingerprint: None,
                etag: kept,
            },
        }
    }

    /// The kept form of `fingerprint` and the engine's `etag`.
    pub fn write(fingerprint: &str, etag: Option<&str>) -> String {
        format!("{MARK}{fingerprint}{}", etag.unwrap_or(""))
    }
}

/// The fingerprint of the listing at `list` (dotted; empty: the body is the
/// list) in `body`, leaving out each capability's members named in
/// `volatile`. `None` when the body is not shaped so (the full parse then
/// says what is wrong).
pub fn fingerprint(body: &str, list: &str, volatile: &[&str]) -> Option<String> {
    let mut at: &str = body;
    for segment in list.split('.').filter(|s| !s.is_empty()) {
        let object: HashMap<Cow<'_, str>, &RawValue> = serde_json::from_str(at).ok()?;
        at = object.get(segment)?.get();
    }
    let capabilities: Vec<Members<'_>> = serde_json::from_str(at).ok()?;
    let mut h = Sha256::new();
    for Members(members) in &capabilities {
        for (name, value) in members {
            if volatile.contains(&name.as_ref()) {
                continue;
            }
            h.update(name.as_bytes());
            h.update([0]);
            h.update(value.get().as_bytes());
            h.update([0]);
        }
        h.update([1]);
    }
    Some(hex::encode(h.finalize()))
}

/// One capability's members as raw text, in name order.
#[derive(Deserialize)]
struct Members<'a>(#[serde(borrow)] BTreeMap<Cow<'a, str>, &'a RawValue>);

#[cfg(test)]
mod tests {
    use super::*;

    const VOLATILE: &[&str] = &["usage_count", "updated_at"];

    #[test]
    fn counters_do_not_move_it_and_the_contract_does() {
        let a = r#"{"capabilities":[{"name":"x","usage_count":1,"doc":"d"}],"generated_at":"1"}"#;
        let counted =
            r#"{"capabilities":[{"name":"x","usage_count":9,"doc":"d"}],"generated_at":"2"}"#;
        let changed =
            r#"{"capabilities":[{"name":"x","usage_count":9,"doc":"e"}],"generated_at":"2"}"#;
        let fa = fingerprint(a, "capabilities", VOLATILE).expect("shaped");
        assert_eq!(
            Some(fa.clone()),
            fingerprint(counted, "capabilities", VOLATILE)
        );
        assert_ne!(Some(fa), fingerprint(changed, "capabilities", VOLATILE));
    }

    #[test]
    fn dotted_and_bare_lists_and_odd_bodies() {
        let nested = r#"{"data":{"items":[{"name":"x"}]}}"#;
        let bare = r#"[{"name":"x"}]"#;
        assert_eq!(
            fingerprint(nested, "data.items", VOLATILE),
            fingerprint(bare, "", VOLATILE)
        );
        assert_eq!(fingerprint(r#"{"data":1}"#, "data", VOLATILE), None);
        assert_eq!(fingerprint("not json", "capabilities", VOLATILE), None);
        let escaped = r#"[{"na\u006de":"x"}]"#;
        assert!(fingerprint(escaped, "", VOLATILE).is_some());
    }

    #[test]
    fn the_validator_keeps_both_parts() {
        let fp = "a".repeat(FINGERPRINT_LEN);
        let kept = Validator::write(&fp, Some("\"e1\""));
        let long_etag = format!("\"{}\"", "b".repeat(FINGERPRINT_LEN));
        let bare_long = Validator::read(Some(&long_etag));
        assert_eq!(
            (bare_long.fingerprint, bare_long.etag),
            (None, Some(long_etag.as_str()))
        );
        let read = Validator::read(Some(&kept));
        assert_eq!(read.fingerprint, Some(fp.as_str()));
        assert_eq!(read.etag, Some("\"e1\""));
        let bare = Validator::read(Some("\"e1\""));
        assert_eq!((bare.fingerprint, bare.etag), (None, Some("\"e1\"")));
        let no_etag = Validator::write(&fp, None);
        assert_eq!(Validator::read(Some(&no_etag)).etag, None);
    }
}
