//! Pilotage gateway library.
