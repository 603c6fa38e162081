//! The stores a gateway keeps its runs, programs and sessions in, against
//! real `redis-server` processes: one server, Sentinel, Cluster failover and
//! slot migration, and several gateways sharing one Redis.

#[path = "../common/mod.rs"]
mod common;

mod drift_race;
mod failover;
mod multi_instance;
mod redis;
mod slot_migration;
