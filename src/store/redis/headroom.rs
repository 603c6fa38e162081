//! Whether a Redis at its `maxmemory` can take a stored run: with the
//! `noeviction` policy Redis refuses every write once it is over the
//! ceiling, so a run admitted there would run on the engine and then lose
//! its record. [`RedisStore::admit`](super::RedisStore) asks `INFO memory`
//! first and refuses, before execution, when less than [`HEADROOM`] is left.

use crate::store::StoreError;

/// Room a stored execute needs below `maxmemory`: more than one run record
/// with its full trace, its replay response and its claim.
pub(super) const HEADROOM: u64 = 256 * 1024;

/// When a caller refused at the ceiling is told to try again: long enough
/// for records to expire or an operator to act, short enough to notice
/// recovery by itself.
pub(super) const RETRY_AFTER_MS: u64 = 2_000;

/// What `INFO memory` says about the ceiling.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Memory {
    pub(super) used: u64,
    pub(super) max: u64,
    pub(super) policy: String,
}

impl Memory {
    /// Reads the `used_memory`, `maxmemory` and `maxmemory_policy` lines.
    pub(super) fn parse(info: &str) -> Memory {
        let mut memory = Memory::default();
        for line in info.lines() {
            let Some((name, value)) = line.trim().split_once(':') else {
                continue;
            };
            match name {
                "used_memory" => memory.used = value.parse().unwrap_or(0),
                "maxmemory" => memory.max = value.parse().unwrap_or(0),
                "maxmemory_policy" => memory.policy = value.to_owned(),
                _ => {}
            }
        }
        memory
    }

    /// `Err(Full)` when writes are (or are about to be) refused.
    pub(super) fn admit(&self) -> Result<(), StoreError> {
        let refuses_writes = self.max > 0 && self.policy == "noeviction";
        if refuses_writes && self.used.saturating_add(HEADROOM) > self.max {
            return Err(StoreError::Full {
                detail: format!(
                    "redis is at its maxmemory ({} of {} bytes used, policy noeviction) and would refuse this run's record",
                    self.used, self.max
                ),
                retry_after_ms: RETRY_AFTER_MS,
            });
        }
        Ok(())
    }
}

/// The `INFO` texts of an answer: one from a single server, one per
/// node from a cluster (a map or list of them).
pub(super) fn node_texts(answer: &redis::Value) -> Vec<String> {
    let mut out = Vec::new();
    collect(answer, &mut out);
    out
}

fn collect(value: &redis::Value, out: &mut Vec<String>) {
    match value {
        redis::Value::BulkString(bytes) => out.push(String::from_utf8_lossy(bytes).into_owned()),
        redis::Value::SimpleString(text) => out.push(text.clone()),
        redis::Value::VerbatimString { text, .. } => out.push(text.clone()),
        redis::Value::Array(items) | redis::Value::Set(items) => {
            items.iter().for_each(|v| collect(v, out))
        }
        redis::Value::Map(pairs) => pairs.iter().for_each(|(_, v)| collect(v, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ceiling_refuses_only_without_eviction_and_near_the_limit() {
        let info = "# Memory\r\nused_memory:1000000\r\nmaxmemory:1100000\r\nmaxmemory_policy:noeviction\r\n";
        let memory = Memory::parse(info);
        assert_eq!(memory.used, 1_000_000);
        assert_eq!(memory.max, 1_100_000);
        assert!(matches!(
            memory.admit(),
            Err(StoreError::Full {
                retry_after_ms: RETRY_AFTER_MS,
                ..
            })
        ));
        let roomy = Memory {
            max: 10_000_000,
            ..Memory::parse(info)
        };
        assert!(roomy.admit().is_ok());
        let unlimited = Memory {
            max: 0,
            ..Memory::parse(info)
        };
        assert!(unlimited.admit().is_ok());
        let evicting = Memory {
            policy: "allkeys-lru".into(),
            ..Memory::parse(info)
        };
        assert!(evicting.admit().is_ok());
    }
}
