//! The gateway as an operator runs it: the commands, logs and metrics, live
//! reload, per-principal limits, key permissions and ceilings, promotion
//! lifetimes, the hardening regressions, and the README's Layout against the
//! tree.

#[path = "../common/mod.rs"]
mod common;

mod cli;
mod freshness;
mod hardening;
mod limits;
mod metrics;
mod operability;
mod policies;
mod promotion_lifetime;
mod readme_layout;
mod reload;
