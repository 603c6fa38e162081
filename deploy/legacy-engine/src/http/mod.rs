//! The HTTP surfaces: one REST dialect (`a`, `b` or `c`, chosen at start) in front of the
//! shared engine, plus the admin endpoints, identical in both dialects.

mod admin;
mod body;
mod dialect_a;
mod dialect_b;
mod dialect_c;
mod etag;
mod fault_gate;
mod fields;
mod reply;
mod trace_log;

use std::sync::Arc;

use axum::Router;

use crate::world::Engine;

/// Which REST dialect the engine speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Dialect {
    /// `/api/v1/...` with `X-Tenant` (the default).
    A,
    /// `/v2/...` with `X-Org-Id`.
    B,
    /// `/v3/...` with `X-Workspace`, an asynchronous runner.
    C,
}

/// The whole application for one dialect.
pub fn router(engine: Arc<Engine>, dialect: Dialect) -> Router {
    let surface = match dialect {
        Dialect::A => dialect_a::routes(),
        Dialect::B => dialect_b::routes(),
        Dialect::C => dialect_c::routes(),
    };
    surface
        .merge(admin::routes())
        .layer(axum::middleware::from_fn_with_state(
            engine.clone(),
            fault_gate::gate,
        ))
        .with_state(engine)
        .layer(axum::middleware::from_fn(trace_log::log))
}
