//! The retry budget of one engine: over a sliding window, retries may be at
//! most `ratio` of the calls made plus `min_per_second` for each second of
//! the window. A struggling engine therefore sees at most that share of
//! extra calls, however many callers retry at once.

use super::settings::RetryBudgetSettings;
use std::sync::Mutex;
use std::time::Instant;

/// Calls and retries counted per second of the window.
#[derive(Debug, Default, Clone, Copy)]
struct Second {
    /// Which second since the budget was made this slot counts.
    at: u64,
    calls: u64,
    retries: u64,
}

pub struct RetryBudget {
    settings: RetryBudgetSettings,
    born: Instant,
    seconds: Mutex<Vec<Second>>,
}

impl RetryBudget {
    pub fn new(settings: &RetryBudgetSettings) -> Self {
        let slots = settings.window_ms.div_ceil(1000).max(1) as usize;
        Self {
            settings: settings.clone(),
            born: Instant::now(),
            seconds: Mutex::new(vec![Second::default(); slots]),
        }
    }

    /// Counts one call (a first attempt).
    pub fn called(&self) {
        self.with_now(|s| s.calls += 1);
    }

    /// Takes one retry from the budget; `false` when it is spent.
    pub fn try_retry(&self) -> bool {
        let now = self.second();
        let mut seconds = self.lock();
        let live = seconds
            .iter()
            .filter(|s| now.saturating_sub(s.at) < seconds_len(&seconds));
        let (calls, retries) = live.fold((0, 0), |(c, r), s| (c + s.calls, r + s.retries));
        let floor = u64::from(self.settings.min_per_second) * seconds_len(&seconds);
        let allowed = (calls as f64 * self.settings.ratio).floor() as u64 + floor;
        if retries >= allowed {
            return false;
        }
        slot(&mut seconds, now).retries += 1;
        true
    }

    fn with_now(&self, f: impl FnOnce(&mut Second)) {
        let now = self.second();
        f(slot(&mut self.lock(), now));
    }

    fn second(&self) -> u64 {
        self.born.elapsed().as_secs()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Second>> {
        self.seconds
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    #[cfg(test)]
    fn aged(mut self, by: std::time::Duration) -> Self {
        self.born -= by;
        self
    }
}

fn seconds_len(seconds: &[Second]) -> u64 {
    seconds.len() as u64
}

/// The slot of second `now`, emptied when it last counted an older second.
fn slot(seconds: &mut [Second], now: u64) -> &mut Second {
    let len = seconds.len();
    let s = &mut seconds[(now % len as u64) as usize];
    if s.at != now {
        *s = Second {
            at: now,
            ..Second::default()
        };
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn budget(ratio: f64, min_per_second: u32) -> RetryBudget {
        RetryBudget::new(&RetryBudgetSettings {
            ratio,
            min_per_second,
            window_ms: 10_000,
        })
    }

    #[test]
    fn retries_are_a_share_of_the_calls() {
        let b = budget(0.1, 0);
        for _ in 0..50 {
            b.called();
        }
        let granted = (0..50).filter(|_| b.try_retry()).count();
        assert_eq!(granted, 5);
    }

    #[test]
    fn a_quiet_engine_still_gets_its_floor() {
        let b = budget(0.1, 1);
        b.called();
        let granted = (0..50).filter(|_| b.try_retry()).count();
        assert_eq!(granted, 10, "one per second of a 10 s window");
    }

    #[test]
    fn the_window_forgets_old_retries() {
        let b = budget(0.0, 1).aged(Duration::from_secs(100));
        let granted = (0..20).filter(|_| b.try_retry()).count();
        assert_eq!(granted, 10);
        let b = b.aged(Duration::from_secs(11));
        assert!(b.try_retry(), "a new window has its floor again");
    }
}
