//! Estimated heap bytes of what the gateway keeps in memory, for caches and
//! budgets bounded by bytes rather than by entry count (an entry count says
//! nothing about memory when one entry can be a thousand times another).
//!
//! Estimates, not exact counts: close enough that a budget in bytes bounds
//! the process, cheap enough to compute on every insert.

use serde_json::{Map, Value};

/// Size of a `Value` itself: every value sits inline in its parent's
/// buffer (or in its owner), whatever its kind.
const NODE: u64 = std::mem::size_of::<Value>() as u64;
/// Allocator bookkeeping and rounding of one heap block.
const ALLOC: u64 = 16;
/// An object's hash table and entry buffer headers.
const MAP: u64 = 64;
/// One object entry besides its value: the key `String`, its hash and its
/// slot in the index table.
const ENTRY: u64 = 24 + 16;

/// Estimated heap bytes of a JSON value.
///
/// Iterative (an explicit stack) so that a pathologically deep value cannot
/// overflow the thread stack while merely being measured.
pub fn json(value: &Value) -> u64 {
    let mut total = 0u64;
    let mut stack = vec![value];
    while let Some(v) = stack.pop() {
        total = total.saturating_add(NODE);
        match v {
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
            Value::String(s) => total = total.saturating_add(s.len() as u64 + ALLOC),
            Value::Array(items) => {
                total = total.saturating_add(ALLOC);
                stack.extend(items.iter());
            }
            Value::Object(map) => {
                total = total.saturating_add(object_without_values(map));
                stack.extend(map.values());
            }
        }
    }
    total
}

/// Estimated heap bytes of an object's members held outside a `Value`.
pub fn json_members(members: &Map<String, Value>) -> u64 {
    members
        .values()
        .fold(object_without_values(members), |total, v| {
            total.saturating_add(json(v))
        })
}

/// An object's table and keys, without its values.
fn object_without_values(map: &Map<String, Value>) -> u64 {
    map.keys().fold(MAP + 2 * ALLOC, |total, k| {
        total.saturating_add(ENTRY + k.len() as u64 + ALLOC)
    })
}

/// Estimated heap bytes of a string held in a struct.
pub fn text(s: &str) -> u64 {
    s.len() as u64 + 24
}

/// A weight for moka's `u32` weigher: saturates instead of wrapping.
pub fn as_weight(bytes: u64) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_grows_with_content() {
        let small = json(&json!({"a": 1}));
        let large = json(&json!({"a": "x".repeat(10_000)}));
        assert!(small > 0);
        assert!(large > 10_000 && large > small);
        assert_eq!(json(&json!([1, 2, 3])), 4 * NODE + ALLOC);
        assert_eq!(as_weight(u64::MAX), u32::MAX);
    }

    #[test]
    fn json_survives_very_deep_values() {
        let mut deep = json!(null);
        for _ in 0..100_000 {
            deep = Value::Array(vec![deep]);
        }
        assert_eq!(json(&deep), 100_001 * NODE + 100_000 * ALLOC);
        // Dropping a value this deep recurses in serde_json; leak it instead so
        // the test exercises only our measuring code.
        std::mem::forget(deep);
    }
}
