//! How often a running run's status is read: a first wait, doubled after
//! each read up to a longest one. The polling adapters' settings give the
//! two waits in milliseconds; their start-up checks are here once.

use std::time::Duration;

/// The waits between two status reads of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    pub first: Duration,
    pub longest: Duration,
}

impl Pacing {
    /// From milliseconds; each wait is at least 1 ms.
    pub fn from_ms(first: u64, longest: u64) -> Self {
        Self {
            first: Duration::from_millis(first.max(1)),
            longest: Duration::from_millis(longest.max(1)),
        }
    }

    /// The wait after one of `wait`.
    pub fn next(&self, wait: Duration) -> Duration {
        (wait * 2).min(self.longest)
    }
}

/// The start-up checks of the settings `poll_interval_ms` (`first`) and
/// `max_poll_interval_ms` (`longest`), as (key, problem, fix). `reads`
/// names what a poll reads; `defaults` are the two defaults.
pub fn problems(
    first: u64,
    longest: u64,
    reads: &str,
    defaults: (u64, u64),
) -> Vec<(&'static str, String, String)> {
    let mut out = Vec::new();
    if first == 0 {
        out.push((
            "poll_interval_ms",
            format!("0 would read {reads} in a busy loop"),
            format!("use a positive interval (default {})", defaults.0),
        ));
    }
    if longest < first {
        out.push((
            "max_poll_interval_ms",
            format!("{longest} ms is below poll_interval_ms ({first} ms)"),
            format!("use at least poll_interval_ms (default {})", defaults.1),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_up_to_the_longest_and_never_reach_zero() {
        let p = Pacing::from_ms(0, 300);
        assert_eq!(p.first, Duration::from_millis(1));
        assert_eq!(
            p.next(Duration::from_millis(100)),
            Duration::from_millis(200)
        );
        assert_eq!(
            p.next(Duration::from_millis(200)),
            Duration::from_millis(300)
        );
    }

    #[test]
    fn a_busy_loop_and_a_longest_below_the_first_are_named() {
        assert!(problems(50, 500, "it", (50, 500)).is_empty());
        let keys: Vec<_> = problems(0, 0, "it", (50, 500))
            .into_iter()
            .map(|(k, ..)| k)
            .collect();
        assert_eq!(keys, ["poll_interval_ms"]);
        let keys: Vec<_> = problems(100, 50, "it", (50, 500))
            .into_iter()
            .map(|(k, ..)| k)
            .collect();
        assert_eq!(keys, ["max_poll_interval_ms"]);
    }
}
