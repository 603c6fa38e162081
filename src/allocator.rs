//! The gateway's allocator, mimalloc, and how the memory it freed goes back
//! to the operating system after a burst.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// mimalloc: the gateway allocates many short-lived JSON values per request,
/// where glibc's allocator spent a quarter of the CPU under load
/// (docs/performance.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Memory that comes back after a burst. mimalloc returns freed pages to
/// the OS only `purge_delay` ms after they empty (10 by default, times 10
/// for its arenas), and only when some later allocation passes by: a
/// gateway that goes quiet after a burst kept its peak resident for good
/// (docs/performance.md, "Memory that comes back"). Purging at once costs
/// nothing measurable under load. An operator's `MIMALLOC_PURGE_DELAY`
/// wins.
pub fn purge_freed_memory_at_once() {
    use std::ffi::{c_int, c_long};
    unsafe extern "C" {
        fn mi_option_get(option: c_int) -> c_long;
        fn mi_option_set(option: c_int, value: c_long);
    }
    /// `mi_option_purge_delay` in mimalloc 3's `mi_option_t`; the crate
    /// does not export it, so its default (10) is checked before setting,
    /// and another numbering leaves the allocator as it is.
    const PURGE_DELAY: c_int = 15;
    const PURGE_DELAY_DEFAULT: c_long = 10;
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_some() {
        return;
    }
    // SAFETY: both read or write one of mimalloc's option slots; any option
    // index is accepted (out of range ones are ignored), no memory is passed.
    unsafe {
        if mi_option_get(PURGE_DELAY) == PURGE_DELAY_DEFAULT {
            mi_option_set(PURGE_DELAY, 0);
        }
    }
}

unsafe extern "C" {
    fn mi_collect(force: bool);
}

/// How often every runtime thread hands back what it freed.
const COLLECT_EVERY: Duration = Duration::from_secs(10);

/// Counts [`COLLECT_EVERY`] periods; a thread collects once per period.
static PERIOD: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static COLLECTED_IN: Cell<u64> = const { Cell::new(0) };
}

/// Runs as a runtime thread goes idle: once per period, the thread's heap
/// is collected. mimalloc returns a page only from the thread that owns it,
/// and only while that thread allocates; blocks freed by another thread (a
/// cache's sweep, a connection's buffers dropped elsewhere) wait in the
/// owner's queue. A worker gone quiet after a burst therefore kept its
/// pages resident for good (about 30 MiB after a minute of new programs);
/// collecting as it parks lets them go. One relaxed load per park
/// otherwise.
pub fn collect_when_due() {
    let period = PERIOD.load(Ordering::Relaxed);
    COLLECTED_IN.with(|done| {
        if done.get() != period {
            done.set(period);
            // SAFETY: takes no pointer; collects the calling thread's heap.
            unsafe { mi_collect(true) };
        }
    });
}

/// Starts the clock of [`collect_when_due`]: each period it wakes the
/// runtime's idle threads with empty tasks, so they park again and collect.
pub fn start_collecting(runtime: &tokio::runtime::Handle) {
    let runtime = runtime.clone();
    let threads = runtime.metrics().num_workers();
    let started = std::thread::Builder::new()
        .name("memory-collect".into())
        .spawn(move || {
            loop {
                std::thread::sleep(COLLECT_EVERY);
                PERIOD.fetch_add(1, Ordering::Relaxed);
                for _ in 0..threads {
                    runtime.spawn(tokio::task::yield_now());
                }
            }
        });
    if let Err(e) = started {
        eprintln!("memory collection not started: {e}");
    }
}
