//! [`Store`] on Redis: the shared state of a multi-instance deployment.
//!
//! One [`ConnectionManager`] (a multiplexed connection that reconnects by
//! itself, at once over RESP3, and kept alive by a pinging keeper task) is
//! shared by all requests; against a Redis Cluster it is a cluster
//! connection routing by key slot instead, and with Sentinel the keeper
//! replaces the manager when the sentinels name a new master. Every operation is bounded by the
//! configured timeout and fails with [`StoreError::Unavailable`] instead of
//! waiting on a dead or frozen server, so a Redis outage costs a request at
//! most the timeout and never a stuck worker.
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
//! | `pilotage:v1:{scope}:cv:{version}` | catalog snapshot | `PX` |
//! | `pilotage:v1:session-revoked:{id}` | `true` | `PX` token lifetime |
//!
//! `{{scope}}` is the scope inside literal braces: a Redis Cluster hash tag, so
//! a principal's programs and their index live in one slot (see
//! [`hash_tag`]). Every other operation touches one key, untagged, and so
//! spreads over the cluster's slots.
//!
//! Keys are unambiguous only while no scope contains one of the segments above
//! (`:run:`, `:idem:`, `:prog:`, `:prog-index`, `:cv:`) or equals
//! `session-revoked`: whoever builds scopes (tenant names, anonymous session
//! ids) must keep to that, or two principals could address one key.

use std::future::Future;
use std::time::Duration;

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::{AsyncConnectionConfig, Client, ErrorKind, RedisError, Script, cmd};
use serde_json::Value;

use std::sync::{Arc, RwLock};

use super::redis_conn::StoreConnection;
use super::redis_sentinel::MasterLocator;
use super::{IdempotencyClaim, IdempotencyRecord, Store, StoreError, effective_ttl, now_ms};

/// Prefix of every key, carrying the schema version of what is stored.
/// Bump the version (not the layout in place) when a stored shape changes.
const KEY_PREFIX: &str = "pilotage:v1";

fn run_key(scope: &str, run_id: &str) -> String {
    format!("{KEY_PREFIX}:{scope}:run:{run_id}")
}

fn idempotency_key(scope: &str, key: &str) -> String {
    format!("{KEY_PREFIX}:{scope}:idem:{key}")
}

/// A principal's promoted programs and their index share the hash tag
/// `{scope}` (literal braces), so that the script writing both and the
/// `MGET` reading them touch one Redis Cluster slot. Runs and idempotency
/// records are untagged: each is one key per operation and spreads over the
/// whole cluster.
fn program_key(scope: &str, program_ref: &str) -> String {
    format!("{KEY_PREFIX}:{}:prog:{program_ref}", hash_tag(scope))
}

fn program_index_key(scope: &str) -> String {
    format!("{KEY_PREFIX}:{}:prog-index", hash_tag(scope))
}

/// The scope segment of a tagged key: `{scope}` (literal braces). The
/// cluster hashes the text between the first `{` and the next `}`, so a scope
/// holding a `}`, or an empty one, gets a tag of its own in front of the
/// scope instead (`{tag}:scope`); the scope itself always stays in the key.
fn hash_tag(scope: &str) -> String {
    if scope.is_empty() {
        return "{-}:".to_owned();
    }
    if scope.contains('}') {
        return format!("{{{}}}:{scope}", scope.replace('}', ")"));
    }
    format!("{{{scope}}}")
}

fn catalog_snapshot_key(scope: &str, catalog_version: &str) -> String {
    format!("{KEY_PREFIX}:{scope}:cv:{catalog_version}")
}

fn revoked_session_key(session_id: &str) -> String {
    format!("{KEY_PREFIX}:session-revoked:{session_id}")
}

/// Claims a free key for one attempt, or answers what holds it.
///
/// KEYS[1] idempotency key; ARGV[1] pending record (JSON); ARGV[2] lease in
/// ms; ARGV[3] attempt. Returns 1 when the key is now (or already was) this
/// attempt's, else the stored record as it is.
const CLAIM_SCRIPT: &str = r#"
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
const START_SCRIPT: &str = r#"
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
const COMPLETE_SCRIPT: &str = r#"
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
const RELEASE_SCRIPT: &str = r#"
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
const PUT_PROGRAM_SCRIPT: &str = r#"
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
"#;

/// Prunes the refs whose record expired and returns the rest (a script for
/// the reason given at [`PUT_PROGRAM_SCRIPT`]).
///
/// KEYS[1] index; ARGV[1] now (ms since the epoch).
const LIST_PROGRAMS_SCRIPT: &str = r#"
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
return redis.call('ZRANGE', KEYS[1], 0, -1)
"#;

/// Reconnection attempts per outage before the manager reports the error to
/// the waiting requests. Few attempts with a short cap keep recovery after a
/// Redis restart around a second; the keeper task starts over while Redis
/// stays away.
const RECONNECT_RETRIES: usize = 3;
const RECONNECT_MIN_DELAY: Duration = Duration::from_millis(50);
const RECONNECT_MAX_DELAY: Duration = Duration::from_secs(1);
/// Attempts of one cluster command through redirections and a failover in
/// progress; the operation timeout still bounds the whole call.
const CLUSTER_RETRIES: u32 = 8;
/// How often the keeper pings Redis, so a lost connection is re-established
/// between requests rather than by the next request failing.
const KEEPER_INTERVAL: Duration = Duration::from_millis(500);

/// The Redis-backed store.
pub struct RedisStore {
    /// Replaced by the keeper when Sentinel names a new master.
    conn: SharedConnection,
    op_timeout: Duration,
    claim: Script,
    start: Script,
    complete: Script,
    release: Script,
    put_program: Script,
    list_programs: Script,
    _keeper: Keeper,
}

type SharedConnection = Arc<RwLock<StoreConnection>>;

/// The background task that keeps the connection alive; ends with the store.
struct Keeper(tokio::task::JoinHandle<()>);

impl Drop for Keeper {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Keeper {
    /// Pings every [`KEEPER_INTERVAL`]: a failed ping makes the connection
    /// manager reconnect now, and the transitions are logged for operators.
    /// With Sentinel, it first asks which server is the master and moves the
    /// connection there when that changed (a failover).
    fn spawn(
        shared: SharedConnection,
        op_timeout: Duration,
        sentinel: Option<(Arc<MasterLocator>, String)>,
    ) -> Keeper {
        Keeper(tokio::spawn(async move {
            let mut healthy = true;
            let mut sentinel = sentinel;
            loop {
                tokio::time::sleep(KEEPER_INTERVAL).await;
                if let Some((locator, current)) = &mut sentinel {
                    follow_master(&shared, locator, current, op_timeout).await;
                }
                let mut c = read_connection(&shared);
                let ping =
                    tokio::time::timeout(op_timeout, cmd("PING").query_async::<String>(&mut c))
                        .await;
                match (ping, healthy) {
                    (Ok(Ok(_)), false) => {
                        tracing::info!(backend = "redis", "store connection re-established");
                        healthy = true;
                    }
                    (Ok(Err(e)), true) => {
                        tracing::warn!(backend = "redis", error = %e, "store connection lost; reconnecting");
                        healthy = false;
                    }
                    (Err(_), true) => {
                        tracing::warn!(
                            backend = "redis",
                            "store not answering within the operation timeout"
                        );
                        healthy = false;
                    }
                    _ => {}
                }
            }
        }))
    }
}

fn read_connection(shared: &SharedConnection) -> StoreConnection {
    shared.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Asks the sentinels for the master; when it is another server than
/// `current`, connects there and swaps the shared connection.
async fn follow_master(
    shared: &SharedConnection,
    locator: &MasterLocator,
    current: &mut String,
    op_timeout: Duration,
) {
    let found = tokio::time::timeout(op_timeout, locator.master()).await;
    let (client, addr) = match found {
        Ok(Ok(found)) => found,
        Ok(Err(e)) => {
            tracing::debug!(backend = "redis", error = %e, "sentinels not answering");
            return;
        }
        Err(_) => return,
    };
    if addr == *current {
        return;
    }
    let manager = tokio::time::timeout(
        op_timeout,
        ConnectionManager::new_with_config(client, manager_config(op_timeout)),
    )
    .await;
    match manager {
        Ok(Ok(manager)) => {
            tracing::warn!(backend = "redis", master = %locator.master_name, from = %current, to = %addr, "sentinel failover: following the new master");
            *shared.write().unwrap_or_else(|e| e.into_inner()) = StoreConnection::Single(manager);
            *current = addr;
        }
        Ok(Err(e)) => {
            tracing::warn!(backend = "redis", error = %e, to = %addr, "cannot connect to the new master yet")
        }
        Err(_) => {}
    }
}

/// How the single-server connection manager reconnects.
fn manager_config(op_timeout: Duration) -> ConnectionManagerConfig {
    ConnectionManagerConfig::new()
        .set_connection_timeout(Some(op_timeout))
        .set_response_timeout(Some(op_timeout))
        .set_number_of_retries(RECONNECT_RETRIES)
        .set_min_delay(RECONNECT_MIN_DELAY)
        .set_max_delay(RECONNECT_MAX_DELAY)
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("op_timeout", &self.op_timeout)
            .finish_non_exhaustive()
    }
}

/// Either failure an operation body can hit, so `?` works on both.
enum OpError {
    Redis(RedisError),
    Store(StoreError),
}

impl From<RedisError> for OpError {
    fn from(err: RedisError) -> Self {
        OpError::Redis(err)
    }
}

impl From<StoreError> for OpError {
    fn from(err: StoreError) -> Self {
        OpError::Store(err)
    }
}

impl RedisStore {
    /// Connects to `url`, pings once and loads the scripts, each step within `op_timeout`.
    pub async fn connect(url: &str, op_timeout: Duration) -> Result<Self, StoreError> {
        Self::connect_with_ca(url, op_timeout, None).await
    }

    /// [`RedisStore::connect`]; a `rediss://` URL also trusts the CA
    /// certificates of `ca_pem` besides the system roots.
    pub async fn connect_with_ca(
        url: &str,
        op_timeout: Duration,
        ca_pem: Option<Vec<u8>>,
    ) -> Result<Self, StoreError> {
        let shown = redact_url(url);
        let client = client_for(url, ca_pem)
            .map_err(|e| StoreError::Unavailable(format!("invalid Redis URL {shown}: {e}")))?;
        let config = manager_config(op_timeout);
        let unreachable = |detail: String| {
            StoreError::Unavailable(format!(
                "cannot connect to Redis at {shown} (timeout {} ms): {detail}",
                op_timeout.as_millis()
            ))
        };
        // A one-shot probe first: the manager retries with backoff, so it would
        // report a refused connection or a wrong password only as a timeout.
        let probe = async {
            let probe_config = AsyncConnectionConfig::new()
                .set_connection_timeout(Some(op_timeout))
                .set_response_timeout(Some(op_timeout));
            let mut conn = client
                .get_multiplexed_async_connection_with_config(&probe_config)
                .await?;
            cmd("PING").query_async::<String>(&mut conn).await
        };
        match tokio::time::timeout(op_timeout, probe).await {
            Ok(Ok(_pong)) => {}
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("no answer in time".into())),
        }
        let conn = match tokio::time::timeout(
            op_timeout,
            ConnectionManager::new_with_config(client, config),
        )
        .await
        {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("no answer in time".into())),
        };
        let store = Self::over(StoreConnection::Single(conn), op_timeout, None);
        // Loaded now so that each script is one EVALSHA round trip; after a
        // Redis restart the first call reloads transparently (NOSCRIPT).
        store
            .bounded("script load", || async {
                let mut conn = store.conn();
                for script in [
                    &store.claim,
                    &store.start,
                    &store.complete,
                    &store.release,
                    &store.put_program,
                    &store.list_programs,
                ] {
                    script.load_async(&mut conn).await?;
                }
                Ok(())
            })
            .await
            .map_err(|e| unreachable(e.detail().to_owned()))?;
        tracing::info!(backend = "redis", url = %shown, "connected to the shared store");
        Ok(store)
    }

    /// Connects to the Redis Cluster that `urls` (some or all of its nodes)
    /// belong to: reads the slot map, then routes each command to the master
    /// of its key's slot. A `MOVED` (slot migrated, replica promoted) or `ASK`
    /// reply is followed and refreshes the map; each step is bounded by
    /// `op_timeout`.
    pub async fn connect_cluster(
        urls: &[String],
        op_timeout: Duration,
        ca_pem: Option<Vec<u8>>,
    ) -> Result<Self, StoreError> {
        use ::redis::ProtocolVersion;
        use ::redis::cluster::ClusterClientBuilder;
        let shown = urls
            .iter()
            .map(|u| redact_url(u))
            .collect::<Vec<_>>()
            .join(", ");
        let unreachable = |detail: String| {
            StoreError::Unavailable(format!(
                "cannot connect to the Redis Cluster at {shown} (timeout {} ms): {detail}",
                op_timeout.as_millis()
            ))
        };
        let mut builder = ClusterClientBuilder::new(urls.to_vec())
            .use_protocol(ProtocolVersion::RESP3)
            .connection_timeout(op_timeout)
            .response_timeout(op_timeout)
            // Redirections and a failover in progress are retried within the
            // operation timeout, which bounds the whole call anyway.
            .retries(CLUSTER_RETRIES)
            .min_retry_wait(RECONNECT_MIN_DELAY.as_millis() as u64)
            .max_retry_wait(RECONNECT_MAX_DELAY.as_millis() as u64);
        if let Some(root_cert) = ca_pem {
            crate::tls::install_crypto_provider();
            builder = builder.certs(::redis::TlsCertificates {
                client_tls: None,
                root_cert: Some(root_cert),
            });
        }
        let client = builder.build().map_err(|e| {
            StoreError::Unavailable(format!("invalid Redis Cluster URLs {shown}: {e}"))
        })?;
        let conn = match tokio::time::timeout(op_timeout, client.get_async_connection()).await {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("no answer in time".into())),
        };
        let store = Self::over(StoreConnection::Cluster(conn), op_timeout, None);
        store
            .ping()
            .await
            .map_err(|e| unreachable(e.detail().to_owned()))?;
        tracing::info!(backend = "redis", mode = "cluster", urls = %shown, "connected to the shared store");
        Ok(store)
    }

    /// Connects to the master that the sentinels at `urls` monitor as
    /// `master_name`, and follows it: when Sentinel promotes a replica, the
    /// keeper moves the connection to it within about [`KEEPER_INTERVAL`]
    /// of the sentinels announcing it.
    pub async fn connect_sentinel(
        urls: &[String],
        master_name: &str,
        op_timeout: Duration,
    ) -> Result<Self, StoreError> {
        let shown = urls
            .iter()
            .map(|u| redact_url(u))
            .collect::<Vec<_>>()
            .join(", ");
        let unreachable = |detail: String| {
            StoreError::Unavailable(format!(
                "cannot reach master '{master_name}' through the sentinels at {shown} (timeout {} ms): {detail}",
                op_timeout.as_millis()
            ))
        };
        let locator = MasterLocator::new(urls, master_name)
            .map_err(|e| StoreError::Unavailable(format!("invalid sentinel URLs {shown}: {e}")))?;
        let (client, addr) = match tokio::time::timeout(op_timeout, locator.master()).await {
            Ok(Ok(found)) => found,
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("no answer in time".into())),
        };
        let conn = match tokio::time::timeout(
            op_timeout,
            ConnectionManager::new_with_config(client, manager_config(op_timeout)),
        )
        .await
        {
            Ok(Ok(conn)) => conn,
            Ok(Err(e)) => return Err(unreachable(e.to_string())),
            Err(_) => return Err(unreachable("no answer in time".into())),
        };
        tracing::info!(backend = "redis", mode = "sentinel", master = %master_name, at = %addr, "connected to the shared store");
        Ok(Self::over(
            StoreConnection::Single(conn),
            op_timeout,
            Some((Arc::new(locator), addr)),
        ))
    }

    /// The connection in use now.
    fn conn(&self) -> StoreConnection {
        read_connection(&self.conn)
    }

    /// The store over an established connection, with its keeper running.
    /// Scripts are sent by digest and loaded on a node's first `NOSCRIPT`.
    fn over(
        conn: StoreConnection,
        op_timeout: Duration,
        sentinel: Option<(Arc<MasterLocator>, String)>,
    ) -> Self {
        let conn = Arc::new(RwLock::new(conn));
        RedisStore {
            _keeper: Keeper::spawn(conn.clone(), op_timeout, sentinel),
            conn,
            op_timeout,
            claim: Script::new(CLAIM_SCRIPT),
            start: Script::new(START_SCRIPT),
            complete: Script::new(COMPLETE_SCRIPT),
            release: Script::new(RELEASE_SCRIPT),
            put_program: Script::new(PUT_PROGRAM_SCRIPT),
            list_programs: Script::new(LIST_PROGRAMS_SCRIPT),
        }
    }

    /// Runs one store operation under the timeout, mapping every failure.
    ///
    /// An operation that failed because the connection was lost (Redis
    /// restarted, a proxy dropped it) is tried once more on the connection
    /// the manager re-establishes: every operation here is safe to repeat
    /// (plain reads and overwrites, and scripts that recognise their own
    /// attempt). A timeout is not retried: the command may still be queued.
    async fn bounded<T, F>(&self, op: &'static str, work: impl Fn() -> F) -> Result<T, StoreError>
    where
        F: Future<Output = Result<T, OpError>>,
    {
        let mut retried = false;
        loop {
            match tokio::time::timeout(self.op_timeout, work()).await {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(OpError::Store(err))) => return Err(err),
                Ok(Err(OpError::Redis(err))) if !retried && connection_lost(&err) => {
                    tracing::info!(backend = "redis", op, error = %err, "store connection lost; retrying once on a new connection");
                    retried = true;
                }
                Ok(Err(OpError::Redis(err))) => return Err(map_redis_error(op, &err)),
                Err(_) => {
                    return Err(StoreError::Unavailable(format!(
                        "redis {op}: no reply within {} ms",
                        self.op_timeout.as_millis()
                    )));
                }
            }
        }
    }

    async fn get_json(&self, op: &'static str, key: String) -> Result<Option<Value>, StoreError> {
        self.bounded(op, || async {
            let mut conn = self.conn();
            let raw: Option<Vec<u8>> = cmd("GET").arg(&key).query_async(&mut conn).await?;
            match raw {
                Some(bytes) => Ok(Some(decode(&key, &bytes)?)),
                None => Ok(None),
            }
        })
        .await
    }

    async fn set_json_px(
        &self,
        op: &'static str,
        key: String,
        value: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let json = encode(value)?;
        self.bounded(op, || async {
            let mut conn = self.conn();
            let () = cmd("SET")
                .arg(&key)
                .arg(&json)
                .arg("PX")
                .arg(ttl_ms(ttl))
                .query_async(&mut conn)
                .await?;
            Ok(())
        })
        .await
    }
}

/// A client for `url`, speaking RESP3 unless the URL asks otherwise: over
/// RESP3 the connection reports its own loss, and the manager reconnects at
/// once instead of when the next request fails.
fn client_for(url: &str, ca_pem: Option<Vec<u8>>) -> Result<Client, RedisError> {
    use ::redis::{IntoConnectionInfo, ProtocolVersion};
    let info = url.into_connection_info()?;
    let info = if url.contains("protocol=") {
        info
    } else {
        let settings = info
            .redis_settings()
            .clone()
            .set_protocol(ProtocolVersion::RESP3);
        info.set_redis_settings(settings)
    };
    match ca_pem {
        Some(root_cert) => {
            crate::tls::install_crypto_provider();
            Client::build_with_tls(
                info,
                ::redis::TlsCertificates {
                    client_tls: None,
                    root_cert: Some(root_cert),
                },
            )
        }
        None => Client::open(info),
    }
}

/// Whether a failure means the connection is gone (and a new one is coming).
fn connection_lost(err: &RedisError) -> bool {
    err.is_io_error() || err.is_connection_dropped() || err.is_connection_refusal()
}

/// Classifies a Redis failure: data we cannot read is `Corrupt`, anything
/// else (connection, timeout, server state) is `Unavailable`.
fn map_redis_error(op: &str, err: &RedisError) -> StoreError {
    let wrong_data =
        err.kind() == ErrorKind::UnexpectedReturnType || err.code() == Some("WRONGTYPE");
    if wrong_data {
        StoreError::Corrupt(format!("redis {op}: {err}"))
    } else {
        StoreError::Unavailable(format!("redis {op}: {err}"))
    }
}

fn decode<T: serde::de::DeserializeOwned>(key: &str, bytes: &[u8]) -> Result<T, StoreError> {
    serde_json::from_slice(bytes)
        .map_err(|e| StoreError::Corrupt(format!("value at {key} is not a valid record: {e}")))
}

fn encode<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    // Cannot fail for `Value` or our own records; mapped rather than unwrapped anyway.
    serde_json::to_string(value)
        .map_err(|e| StoreError::Corrupt(format!("cannot encode record: {e}")))
}

/// Expiry in whole milliseconds for `PX` (see [`effective_ttl`]).
fn ttl_ms(ttl: Duration) -> u64 {
    u64::try_from(effective_ttl(ttl).as_millis()).unwrap_or(u64::MAX)
}

/// The URL without credentials, for messages and logs.
pub(crate) fn redact_url(url: &str) -> String {
    let mut shown = url.to_owned();
    // `redis://user:secret@host`: hide the user info. First, so that a `?` or
    // `#` inside a password cannot cut it in half below. Over-hides at worst.
    if let (Some(scheme_end), Some(at)) = (shown.find("://"), shown.rfind('@'))
        && at > scheme_end
    {
        shown.replace_range(scheme_end + 3..at, "***");
    }
    // `redis+unix:///path?pass=secret`: drop the query.
    if let Some(query) = shown.find('?') {
        shown.truncate(query);
        shown.push_str("?…");
    }
    shown
}

#[async_trait::async_trait]
impl Store for RedisStore {
    fn backend(&self) -> &'static str {
        "redis"
    }

    async fn ping(&self) -> Result<(), StoreError> {
        self.bounded("ping", || async {
            let mut conn = self.conn();
            let _: String = cmd("PING").query_async(&mut conn).await?;
            Ok(())
        })
        .await
    }

    async fn put_run(
        &self,
        scope: &str,
        run_id: &str,
        record: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        // Acknowledged by Redis before we return; how durable that is depends on
        // the server's persistence settings (AOF), an operations choice.
        self.set_json_px("put_run", run_key(scope, run_id), record, ttl)
            .await
    }

    async fn get_run(&self, scope: &str, run_id: &str) -> Result<Option<Value>, StoreError> {
        self.get_json("get_run", run_key(scope, run_id)).await
    }

    async fn claim_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        attempt: &str,
        lease: Duration,
    ) -> Result<IdempotencyClaim, StoreError> {
        let key = idempotency_key(scope, key);
        let pending = encode(&IdempotencyRecord::Pending {
            fingerprint: fingerprint.to_owned(),
            claimed_at_ms: now_ms(),
            attempt: attempt.to_owned(),
            started: false,
        })?;
        let lease_ms = ttl_ms(lease);
        let found: ::redis::Value = self
            .bounded("claim_idempotency", || async {
                let mut conn = self.conn();
                let mut call = self.claim.prepare_invoke();
                call.key(&key).arg(&pending).arg(lease_ms).arg(attempt);
                Ok(call.invoke_async(&mut conn).await?)
            })
            .await?;
        match found {
            ::redis::Value::Int(1) => Ok(IdempotencyClaim::Acquired),
            ::redis::Value::BulkString(bytes) => {
                let record: IdempotencyRecord = decode(&key, &bytes)?;
                Ok(record.into_claim())
            }
            other => Err(StoreError::Corrupt(format!(
                "redis claim_idempotency: unexpected script reply {other:?}"
            ))),
        }
    }

    async fn start_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
        window: Duration,
    ) -> Result<bool, StoreError> {
        let key = idempotency_key(scope, key);
        let outcome: i64 = self
            .bounded("start_idempotency", || async {
                let mut conn = self.conn();
                let mut call = self.start.prepare_invoke();
                call.key(&key).arg(attempt).arg(ttl_ms(window));
                Ok(call.invoke_async(&mut conn).await?)
            })
            .await?;
        match outcome {
            1 => Ok(true),
            0 => Ok(false),
            _ => Err(StoreError::Corrupt(format!(
                "value at {key} is not a valid idempotency record"
            ))),
        }
    }

    async fn complete_idempotency(
        &self,
        scope: &str,
        key: &str,
        fingerprint: &str,
        attempt: &str,
        response: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let key = idempotency_key(scope, key);
        let completed = encode(&IdempotencyRecord::Completed {
            fingerprint: fingerprint.to_owned(),
            response: response.clone(),
            completed_at_ms: now_ms(),
            attempt: attempt.to_owned(),
        })?;
        let outcome: i64 = self
            .bounded("complete_idempotency", || async {
                let mut conn = self.conn();
                let mut call = self.complete.prepare_invoke();
                call.key(&key).arg(attempt).arg(&completed).arg(ttl_ms(ttl));
                Ok(call.invoke_async(&mut conn).await?)
            })
            .await?;
        match outcome {
            1 => Ok(()),
            0 => {
                tracing::warn!(
                    backend = "redis",
                    "idempotency claim no longer owned at completion; response not recorded"
                );
                Ok(())
            }
            _ => Err(StoreError::Corrupt(format!(
                "value at {key} is not a valid idempotency record"
            ))),
        }
    }

    async fn release_idempotency(
        &self,
        scope: &str,
        key: &str,
        attempt: &str,
    ) -> Result<(), StoreError> {
        let key = idempotency_key(scope, key);
        let outcome: i64 = self
            .bounded("release_idempotency", || async {
                let mut conn = self.conn();
                let mut call = self.release.prepare_invoke();
                call.key(&key).arg(attempt);
                Ok(call.invoke_async(&mut conn).await?)
            })
            .await?;
        if outcome < 0 {
            return Err(StoreError::Corrupt(format!(
                "value at {key} is not a valid idempotency record"
            )));
        }
        Ok(())
    }

    async fn put_program(
        &self,
        scope: &str,
        program_ref: &str,
        record: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let json = encode(record)?;
        let ttl = ttl_ms(ttl);
        let expires_at = now_ms().saturating_add(ttl);
        self.bounded("put_program", || async {
            let mut conn = self.conn();
            let mut call = self.put_program.prepare_invoke();
            call.key(program_key(scope, program_ref))
                .key(program_index_key(scope))
                .arg(&json)
                .arg(ttl)
                .arg(expires_at)
                .arg(program_ref);
            let _: i64 = call.invoke_async(&mut conn).await?;
            Ok(())
        })
        .await
    }

    async fn get_program(
        &self,
        scope: &str,
        program_ref: &str,
    ) -> Result<Option<Value>, StoreError> {
        self.get_json("get_program", program_key(scope, program_ref))
            .await
    }

    async fn list_programs(&self, scope: &str) -> Result<Vec<Value>, StoreError> {
        self.bounded("list_programs", || async {
            let mut conn = self.conn();
            // Members whose record expired go first; the rest in ref order.
            let mut call = self.list_programs.prepare_invoke();
            call.key(program_index_key(scope)).arg(now_ms());
            let mut refs: Vec<String> = call.invoke_async(&mut conn).await?;
            refs.sort_unstable();
            if refs.is_empty() {
                return Ok(Vec::new());
            }
            let keys: Vec<String> = refs.iter().map(|r| program_key(scope, r)).collect();
            let raws: Vec<Option<Vec<u8>>> = cmd("MGET").arg(&keys).query_async(&mut conn).await?;
            let mut programs = Vec::with_capacity(raws.len());
            for (key, raw) in keys.iter().zip(raws) {
                match raw {
                    Some(bytes) => programs.push(decode(key, &bytes)?),
                    // Expired between the pruning and this read (or deleted
                    // by hand): no longer promoted.
                    None => tracing::debug!(backend = "redis", %key, "indexed program expired"),
                }
            }
            Ok(programs)
        })
        .await
    }

    async fn put_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
        snapshot: &Value,
        ttl: Duration,
    ) -> Result<(), StoreError> {
        let key = catalog_snapshot_key(scope, catalog_version);
        self.set_json_px("put_catalog_snapshot", key, snapshot, ttl)
            .await
    }

    async fn get_catalog_snapshot(
        &self,
        scope: &str,
        catalog_version: &str,
    ) -> Result<Option<Value>, StoreError> {
        let key = catalog_snapshot_key(scope, catalog_version);
        self.get_json("get_catalog_snapshot", key).await
    }

    async fn revoke_session(&self, session_id: &str, ttl: Duration) -> Result<(), StoreError> {
        let key = revoked_session_key(session_id);
        self.set_json_px("revoke_session", key, &Value::Bool(true), ttl)
            .await
    }

    async fn is_session_revoked(&self, session_id: &str) -> Result<bool, StoreError> {
        let key = revoked_session_key(session_id);
        self.bounded("is_session_revoked", || async {
            let mut conn = self.conn();
            let found: i64 = cmd("EXISTS").arg(&key).query_async(&mut conn).await?;
            Ok(found > 0)
        })
        .await
    }
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

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(
            redact_url("redis://127.0.0.1:6379/0"),
            "redis://127.0.0.1:6379/0"
        );
        assert_eq!(
            redact_url("redis://user:secret@redis:6379/1"),
            "redis://***@redis:6379/1"
        );
        assert_eq!(
            redact_url("redis://:pa?ss@redis:6379"),
            "redis://***@redis:6379"
        );
        assert_eq!(
            redact_url("redis+unix:///run/redis.sock?db=1&pass=secret"),
            "redis+unix:///run/redis.sock?…"
        );
    }

    #[test]
    fn ttl_is_whole_milliseconds_at_least_one() {
        assert_eq!(ttl_ms(Duration::ZERO), 1);
        assert_eq!(ttl_ms(Duration::from_micros(2500)), 3);
        assert_eq!(ttl_ms(Duration::from_secs(86_400)), 86_400_000);
    }

    #[tokio::test]
    async fn invalid_url_is_unavailable_not_a_panic() {
        let err = RedisStore::connect("not a url", Duration::from_millis(100)).await;
        assert!(matches!(err, Err(StoreError::Unavailable(m)) if m.contains("invalid Redis URL")));
    }
}
