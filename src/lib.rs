//! Pilotage gateway library.

pub mod classify;
pub mod reload;
