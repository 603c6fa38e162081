//! The live, reloadable set of rule tables (one per language), with the per-code
//! diagnostic counters and the log of unclassified messages.
//!
//! Requests clone the current `Arc<RuleTable>` under a read lock held for a pointer
//! copy only, then classify without any lock; a reload builds the new table off to
//! the side and swaps the `Arc` in one short write. A request in flight keeps the
//! table it started with, so no request fails or sees half a table during a swap.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use super::{CONSTRAINT, Classified, ClassifyContext, EngineProblem, RuleFileError, RuleTable};

/// Distinct unclassified messages logged individually before rate limiting starts.
const DISTINCT_UNCLASSIFIED_LIMIT: usize = 1024;
/// Once the set is full, at most one summary line per this interval.
const SUMMARY_INTERVAL: Duration = Duration::from_secs(60);

/// Where one language's rules come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleSource {
    /// The language id (e.g. `workflow/v1`).
    pub language: String,
    /// The rule file.
    pub path: PathBuf,
    /// The language's closed diagnostic codes (from its closed-sets guide).
    pub allowed_codes: BTreeSet<String>,
}

/// One language's current table.
struct Slot {
    source: RuleSource,
    table: RwLock<Arc<RuleTable>>,
}

/// The classifiers of every configured language, live-reloadable.
///
/// Share it as `Arc<Classifiers>` between request handlers and the reload watcher
/// (started inside the Tokio runtime, so that SIGHUP reloads too):
///
/// ```no_run
/// use std::sync::Arc;
/// use pilotage_gateway::classify::{Classifiers, RuleSource};
///
/// # async fn run(sources: Vec<RuleSource>) -> Result<(), Box<dyn std::error::Error>> {
/// let classifiers = Arc::new(Classifiers::load(sources)?); // refuses to start on a bad file
/// let watched = Arc::clone(&classifiers);
/// let _watcher = pilotage_gateway::reload::spawn_reload_watcher(classifiers.paths(), move || {
///     // Errors are logged by reload(); the previous tables keep serving.
///     let _ = watched.reload();
/// })?;
/// # Ok(()) }
/// ```
pub struct Classifiers {
    slots: BTreeMap<String, Slot>,
    counts: BTreeMap<String, AtomicU64>,
    unclassified: UnclassifiedLog,
    /// Serializes reloads so that a slow reload cannot swap in an older file
    /// after a faster, newer one.
    reload_lock: Mutex<()>,
}

impl Classifiers {
    /// Loads every language's rule file; the first file that fails validation is
    /// returned as the error (the gateway refuses to start). A language listed
    /// twice keeps its last source.
    pub fn load(
        sources: impl IntoIterator<Item = RuleSource>,
    ) -> Result<Classifiers, RuleFileError> {
        let mut slots = BTreeMap::new();
        for source in sources {
            let table = RuleTable::load(&source.path, &source.allowed_codes)?;
            let slot = Slot {
                source,
                table: RwLock::new(Arc::new(table)),
            };
            slots.insert(slot.source.language.clone(), slot);
        }
        Ok(Classifiers {
            counts: zeroed_counts(&slots),
            slots,
            unclassified: UnclassifiedLog::default(),
            reload_lock: Mutex::new(()),
        })
    }

    /// The configured languages.
    pub fn languages(&self) -> impl Iterator<Item = &str> {
        self.slots.keys().map(String::as_str)
    }

    /// The rule files, for the reload watcher.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.slots.values().map(|s| s.source.path.clone()).collect()
    }

    /// The current table of a language (a cheap `Arc` clone).
    pub fn table(&self, language: &str) -> Option<Arc<RuleTable>> {
        let slot = self.slots.get(language)?;
        let table = slot
            .table
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        Some(Arc::clone(&table))
    }

    /// Classifies one engine problem with the language's current table, counts the
    /// diagnostic by code and logs the message if no rule matched. `None` when the
    /// language is not configured.
    pub fn classify(
        &self,
        language: &str,
        problem: &EngineProblem,
        ctx: &ClassifyContext<'_>,
    ) -> Option<Classified> {
        let classified = self.table(language)?.classify(problem, ctx);
        if let Some(counter) = self.counts.get(&classified.diagnostic.code) {
            counter.fetch_add(1, Ordering::Relaxed);
        }
        if classified.rule.is_none() {
            self.unclassified
                .record(language, &problem.text, Instant::now());
        }
        Some(classified)
    }

    /// Diagnostics produced so far, by code (every declared code is listed, zeros
    /// included, so a metrics scrape sees a stable set of series).
    pub fn counts(&self) -> BTreeMap<String, u64> {
        self.counts
            .iter()
            .map(|(code, n)| (code.clone(), n.load(Ordering::Relaxed)))
            .collect()
    }

    /// Re-reads every rule file. A file that fails validation leaves that
    /// language's previous table in service and is logged with the reason; the
    /// errors are also returned.
    pub fn reload(&self) -> Result<(), Vec<RuleFileError>> {
        let _serialized = self
            .reload_lock
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let errors: Vec<RuleFileError> = self
            .slots
            .values()
            .filter_map(|slot| reload_slot(slot).err())
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }
}

fn reload_slot(slot: &Slot) -> Result<(), RuleFileError> {
    let language = slot.source.language.as_str();
    match RuleTable::load(&slot.source.path, &slot.source.allowed_codes) {
        Ok(table) => {
            let rules = table.len();
            *slot.table.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(table);
            tracing::info!(
                language,
                file = %slot.source.path.display(),
                rules,
                "classifier rules reloaded"
            );
            Ok(())
        }
        Err(error) => {
            tracing::warn!(
                language,
                %error,
                "classifier reload rejected; the previous rules stay in service"
            );
            Err(error)
        }
    }
}

/// One counter per code any language declares, plus `constraint`. The map never
/// changes after construction, so counting needs no lock.
fn zeroed_counts(slots: &BTreeMap<String, Slot>) -> BTreeMap<String, AtomicU64> {
    slots
        .values()
        .flat_map(|slot| slot.source.allowed_codes.iter().cloned())
        .chain(std::iter::once(CONSTRAINT.to_owned()))
        .map(|code| (code, AtomicU64::new(0)))
        .collect()
}

/// What happened to one unclassified message in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LogDecision {
    /// First sighting: logged in full.
    Logged,
    /// Already logged once.
    Seen,
    /// The distinct-message set is full: counted, not logged.
    Suppressed,
    /// The set is full and the interval elapsed: a summary line was logged.
    Summarized(u64),
}

/// Logs each distinct unclassified message once, so operators learn what to add
/// to the rule files without the log growing with traffic. The set is bounded;
/// beyond it, messages are only counted and summarized once per interval.
#[derive(Default)]
struct UnclassifiedLog {
    state: Mutex<UnclassifiedState>,
}

#[derive(Default)]
struct UnclassifiedState {
    seen: HashSet<String>,
    suppressed: u64,
    last_summary: Option<Instant>,
}

impl UnclassifiedLog {
    fn record(&self, language: &str, text: &str, now: Instant) -> LogDecision {
        let decision = self.decide(text, now);
        match decision {
            LogDecision::Logged => {
                tracing::warn!(
                    language,
                    message = text,
                    "unclassified engine message (falls to constraint)"
                );
            }
            LogDecision::Summarized(count) => {
                tracing::warn!(
                    count,
                    "further unclassified engine messages were not logged individually \
                     (distinct-message log is full)"
                );
            }
            LogDecision::Seen | LogDecision::Suppressed => {}
        }
        decision
    }

    fn decide(&self, text: &str, now: Instant) -> LogDecision {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.seen.contains(text) {
            return LogDecision::Seen;
        }
        if state.seen.len() < DISTINCT_UNCLASSIFIED_LIMIT {
            state.seen.insert(text.to_owned());
            return LogDecision::Logged;
        }
        state.suppressed += 1;
        let due = state
            .last_summary
            .is_none_or(|last| now.duration_since(last) >= SUMMARY_INTERVAL);
        if !due {
            return LogDecision::Suppressed;
        }
        state.last_summary = Some(now);
        LogDecision::Summarized(std::mem::take(&mut state.suppressed))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_distinct_message_is_logged_once() {
        let log = UnclassifiedLog::default();
        let now = Instant::now();
        assert_eq!(log.record("l", "a", now), LogDecision::Logged);
        assert_eq!(log.record("l", "a", now), LogDecision::Seen);
        assert_eq!(log.record("l", "b", now), LogDecision::Logged);
    }

    #[test]
    fn a_full_set_is_summarized_once_per_interval() {
        let log = UnclassifiedLog::default();
        let start = Instant::now();
        for i in 0..DISTINCT_UNCLASSIFIED_LIMIT {
            assert_eq!(log.decide(&format!("m{i}"), start), LogDecision::Logged);
        }
        assert_eq!(log.decide("m0", start), LogDecision::Seen);
        assert_eq!(log.decide("new 1", start), LogDecision::Summarized(1));
        assert_eq!(log.decide("new 2", start), LogDecision::Suppressed);
        let later = start + Duration::from_secs(30);
        assert_eq!(log.decide("new 3", later), LogDecision::Suppressed);
        let after_interval = start + SUMMARY_INTERVAL;
        assert_eq!(
            log.decide("new 4", after_interval),
            LogDecision::Summarized(3)
        );
    }
}
