//! Pilotage gateway library.
pub mod store;
