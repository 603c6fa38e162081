//! The Lua scripts of the store: each is one atomic step on one slot, so a
//! Redis Cluster can run it, and each recognises its own attempt, so a
//! repeated call does no harm.

/// Claims a free key for one attempt, or answers what holds it.
///
/// KEYS[1] idempotency key; ARGV[1] pending record (JSON); ARGV[2] lease in
/// ms; ARGV[3] attempt. Returns 1 when the key is now (or already was) this
/// attempt's, else the stored record as it is.
pub(super) const CLAIM_SCRIPT: &str = r#"
local raw = redis.call('GET', KEYS[1])
if not raw then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
local ok, rec = pcall(cjson.decode, raw)
if ok and type(rec) == 'table' and rec.state == 'pending' and rec.attempt == ARGV[3] then
  return 1
end
return raw
"#;

/// Marks the owner's pending claim as started and keeps it for the window.
///
/// KEYS[1] idempotency key; ARGV[1] attempt; ARGV[2] window in ms. Returns 1
/// marked (or already marked), 0 not ours (absent, another attempt's,
/// completed), -1 unreadable record.
pub(super) const START_SCRIPT: &str = r#"
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, rec = pcall(cjson.decode, raw)
if not ok or type(rec) ~= 'table' then return -1 end
if rec.state ~= 'pending' or rec.attempt ~= ARGV[1] then return 0 end
rec.started = true
redis.call('SET', KEYS[1], cjson.encode(rec), 'PX', ARGV[2])
return 1
"#;

/// Records the owner's response, only over the owner's still-pending claim.
///
/// KEYS[1] idempotency key; ARGV[1] attempt; ARGV[2] completed record
/// (JSON); ARGV[3] expiry in ms. Returns 1 written (or already written by
/// this attempt), 0 not ours (absent, another attempt's), -1 unreadable record.
pub(super) const COMPLETE_SCRIPT: &str = r#"
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, rec = pcall(cjson.decode, raw)
if not ok or type(rec) ~= 'table' then return -1 end
if rec.state == 'completed' and rec.attempt == ARGV[1] then return 1 end
if rec.state ~= 'pending' or rec.attempt ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
"#;

/// Deletes the attempt's claim, only while it is still pending.
///
/// KEYS[1] idempotency key; ARGV[1] attempt. Returns 1 deleted, 0 not ours
/// or completed (kept), -1 unreadable record (kept).
pub(super) const RELEASE_SCRIPT: &str = r#"
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, rec = pcall(cjson.decode, raw)
if not ok or type(rec) ~= 'table' then return -1 end
if rec.state ~= 'pending' or rec.attempt ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
"#;

/// Stores a program record and lists its ref in the principal's index.
///
/// A script rather than `MULTI`/`EXEC`: the cluster client follows `MOVED`
/// and `ASK` for one command, but hands a transaction's redirections back
/// as an aborted transaction, so a promotion would fail after every slot
/// migration until something else refreshed the slot map. Atomic all the same.
///
/// KEYS[1] program key, KEYS[2] index (one hash tag, one slot); ARGV[1]
/// record (JSON); ARGV[2] lifetime in ms; ARGV[3] expiry (ms since the
/// epoch, the member's score); ARGV[4] ref. The index lives as long as its
/// newest member; expired members are pruned by score on listing.
pub(super) const PUT_PROGRAM_SCRIPT: &str = r#"
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
"#;

/// Prunes the refs whose record expired and returns the rest (a script for
/// the reason given at [`PUT_PROGRAM_SCRIPT`]); the task index is read the
/// same way.
///
/// KEYS[1] index; ARGV[1] now (ms since the epoch).
pub(super) const LIST_PROGRAMS_SCRIPT: &str = r#"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
return redis.call('ZRANGE', KEYS[1], 0, -1)
"#;

/// Creates or moves a task record and lists its id in the principal's task
/// index (one hash tag, one slot, as programs).
///
/// KEYS[1] task key, KEYS[2] task index; ARGV[1] record (JSON); ARGV[2] the
/// lifetime left in ms; ARGV[3] expiry (ms since the epoch, the member's
/// score); ARGV[4] task id; ARGV[5] the revision the stored record must
/// have, or "" to create. Returns 1 written (or this very record already
/// stored: a repeated call), 0 not written (exists, absent, or another
/// revision), -1 unreadable record. The index lives as long as its
/// longest-lived member.
pub(super) const PUT_TASK_SCRIPT: &str = r#"
local raw = redis.call('GET', KEYS[1])
if raw == ARGV[1] then return 1 end
if ARGV[5] == '' then
  if raw then return 0 end
else
  if not raw then return 0 end
  local ok, rec = pcall(cjson.decode, raw)
  if not ok or type(rec) ~= 'table' then return -1 end
  if rec.revision ~= tonumber(ARGV[5]) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
if redis.call('PTTL', KEYS[2]) < tonumber(ARGV[2]) then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return 1
"#;
