//! Where each record lives in Redis: the key layout, schema `v1`.
//!
//! # Key layout (schema `v1`)
//!
//! All values are JSON strings. `{scope}` is the principal namespace and may
//! itself contain `:`.
//!
//! | key | value | expiry |
//! |---|---|---|
//! | `pilotage:v1:{scope}:run:{run_id}` | run record | `PX` retention |
//! | `pilotage:v1:{scope}:idem:{key}` | `{"state":"pending",fingerprint,claimed_at_ms,attempt,started}` or `{"state":"completed",fingerprint,response,completed_at_ms,attempt}` | `PX` claim lease until started, then the dedup window |
//! | `pilotage:v1:{{scope}}:prog:{ref}` | program record | `PX` promotion lifetime |
//! | `pilotage:v1:{{scope}}:prog-index` | sorted set of refs, scored by their expiry (ms since the epoch) | `PX` promotion lifetime of the latest promotion |
//! | `pilotage:v1:{{scope}}:task:{id}` | task record (`tasks/`) | `PX` the task's lifetime left |
//! | `pilotage:v1:{{scope}}:task-index` | sorted set of task ids, scored by their expiry | `PX` the longest lifetime left |
//! | `pilotage:v1:{scope}:cv:{version}` | catalog snapshot | `PX` |
//! | `pilotage:v1:session-revoked:{id}` | `true` | `PX` token lifetime |
//!
//! `{{scope}}` is the scope inside literal braces: a Redis Cluster hash tag, so
//! a principal's programs and their index live in one slot (see
//! `hash_tag`). Every other operation touches one key, untagged, and so
//! spreads over the cluster's slots.
//!
//! Keys are unambiguous only while no scope contains one of the segments above
//! (`:run:`, `:idem:`, `:prog:`, `:prog-index`, `:task:`, `:task-index`, `:cv:`) or equals
//! `session-revoked`: whoever builds scopes (tenant names, anonymous session
//! ids) must keep to that, or two principals could address one key.

/// Prefix of every key, carrying the schema version of what is stored.
/// Bump the version (not the layout in place) when a stored shape changes.
pub(super) const KEY_PREFIX: &str = "pilotage:v1";

pub(super) fn run_key(scope: &str, run_id: &str) -> String {
    format!("{KEY_PREFIX}:{scope}:run:{run_id}")
}

pub(super) fn idempotency_key(scope: &str, key: &str) -> String {
    format!("{KEY_PREFIX}:{scope}:idem:{key}")
}

/// A principal's promoted programs and their index share the hash tag
/// `{scope}` (literal braces), so that the script writing both and the
/// `MGET` reading them touch one Redis Cluster slot. Runs and idempotency
/// records are untagged: each is one key per operation and spreads over the
/// whole cluster.
pub(super) fn program_key(scope: &str, program_ref: &str) -> String {
    format!("{KEY_PREFIX}:{}:prog:{program_ref}", hash_tag(scope))
}

pub(super) fn program_index_key(scope: &str) -> String {
    format!("{KEY_PREFIX}:{}:prog-index", hash_tag(scope))
}

/// Tasks are tagged like programs: a task and its index share a slot.
pub(super) fn task_key(scope: &str, task_id: &str) -> String {
    format!("{KEY_PREFIX}:{}:task:{task_id}", hash_tag(scope))
}

pub(super) fn task_index_key(scope: &str) -> String {
    format!("{KEY_PREFIX}:{}:task-index", hash_tag(scope))
}

/// The scope segment of a tagged key: `{scope}` (literal braces). The
/// cluster hashes the text between the first `{` and the next `}`, so a scope
/// holding a `}`, or an empty one, gets a tag of its own in front of the
/// scope instead (`{tag}:scope`); the scope itself always stays in the key.
pub(super) fn hash_tag(scope: &str) -> String {
    if scope.is_empty() {
        return "{-}:".to_owned();
    }
    if scope.contains('}') {
        return format!("{{{}}}:{scope}", scope.replace('}', ")"));
    }
    format!("{{{scope}}}")
}

pub(super) fn catalog_snapshot_key(scope: &str, catalog_version: &str) -> String {
    format!("{KEY_PREFIX}:{scope}:cv:{catalog_version}")
}

pub(super) fn revoked_session_key(session_id: &str) -> String {
    format!("{KEY_PREFIX}:session-revoked:{session_id}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_follow_the_documented_layout() {
        assert_eq!(run_key("tenant:a", "r1"), "pilotage:v1:tenant:a:run:r1");
        assert_eq!(idempotency_key("t", "k"), "pilotage:v1:t:idem:k");
        assert_eq!(program_key("t", "p"), "pilotage:v1:{t}:prog:p");
        assert_eq!(program_index_key("t"), "pilotage:v1:{t}:prog-index");
        assert_eq!(program_key("a}b", "p"), "pilotage:v1:{a)b}:a}b:prog:p");
        assert_eq!(program_key("", "p"), "pilotage:v1:{-}::prog:p");
        assert_eq!(catalog_snapshot_key("t", "cv_1"), "pilotage:v1:t:cv:cv_1");
        assert_eq!(revoked_session_key("s"), "pilotage:v1:session-revoked:s");
    }
}
