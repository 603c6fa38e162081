//! Pilotage gateway library.

pub mod guides;
