//! One deadline for a whole engine operation: waiting for a slot, every
//! attempt and every pause between attempts come out of the same
//! `timeout_ms`, so a retry can never stretch the caller's wait.

use std::time::{Duration, Instant};

/// The end of an operation that started with a budget of `total`.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    total: Duration,
    ends: Instant,
}

impl Deadline {
    pub fn after(total: Duration) -> Self {
        Self {
            total,
            ends: Instant::now() + total,
        }
    }

    /// The whole budget, as the caller's message states it.
    pub fn total(&self) -> Duration {
        self.total
    }

    pub fn remaining(&self) -> Duration {
        self.ends.saturating_duration_since(Instant::now())
    }

    /// Whether a pause of `pause` still leaves an attempt of `attempt`.
    pub fn holds(&self, pause: Duration, attempt: Duration) -> bool {
        self.remaining() > pause + attempt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pause_and_an_attempt_must_fit_in_what_is_left() {
        let d = Deadline::after(Duration::from_secs(3));
        assert!(d.remaining() <= Duration::from_secs(3));
        assert!(d.holds(Duration::from_secs(1), Duration::from_secs(1)));
        assert!(!d.holds(Duration::from_secs(2), Duration::from_secs(1)));
        assert!(!Deadline::after(Duration::ZERO).holds(Duration::ZERO, Duration::ZERO));
    }
}
