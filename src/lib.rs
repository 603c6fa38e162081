//! Pilotage gateway: a stateless MCP server that speaks Pilotage 1.1 to
//! agents and a legacy workflow engine's own REST dialect to the engine.

pub mod app;
pub mod auth;
pub mod catalog;
pub mod classify;
pub mod cli;
pub mod config;
pub mod engines;
pub mod execute;
pub mod gateway;
pub mod guides;
pub mod languages;
pub mod limits;
pub mod mcp;
pub mod metrics;
pub mod pilotage;
pub mod random_id;
pub mod reload;
pub mod shipped;
pub mod store;
pub mod telemetry;
pub mod tls;
pub mod validate;
pub mod weigh;
