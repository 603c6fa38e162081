//! The gateway as an operator runs it: the commands, logs and metrics, live
//! reload, per-principal limits, key permissions and ceilings, promotion
//! lifetimes, and the hardening regressions.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod hardening;
mod limits;
mod metrics;
mod operability;
mod policies;
mod promotion_lifetime;
mod reload;
