//! The engine adapters: the transport promises of the engine client, the
//! REST mapping through the real engine, the Mistral adapter against a real
//! Mistral, the n8n adapter against a real n8n, several named engines on
//! one gateway, and the mapping probe.

#[path = "../common/mod.rs"]
mod common;

mod client;
mod listing;
mod mapping;
mod mistral;
mod n8n;
mod n8n_agreement;
mod n8n_create;
mod n8n_shared_catalog;
mod n8n_silent;
mod named;
mod probe;
