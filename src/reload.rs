//! Calls a reload callback when watched files change or the process gets SIGHUP.
//!
//! Files are watched through their parent directories rather than directly:
//! editors and configuration managers replace a file by writing a new one and
//! renaming it over the old, which a watch on the old inode would miss. Bursts of
//! events (one save is often several) are debounced into a single call.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use notify::event::{AccessKind, AccessMode, MetadataKind, ModifyKind};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};

/// Quiet time after the last relevant event before the callback runs.
pub const DEBOUNCE: Duration = Duration::from_millis(300);

/// Why the watcher could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ReloadWatchError {
    /// A directory could not be watched.
    #[error("cannot watch {dir} for changes: {source}")]
    Watch {
        /// The directory.
        dir: PathBuf,
        /// The underlying error.
        #[source]
        source: notify::Error,
    },
    /// The file watcher could not be created.
    #[error("cannot create a file watcher: {0}")]
    Watcher(#[source] notify::Error),
    /// The SIGHUP handler or the debounce thread could not be set up.
    #[error("cannot set up reload signalling: {0}")]
    Io(#[from] std::io::Error),
}

/// Keeps the watch alive; dropping it stops the file watch and the SIGHUP listener.
pub struct ReloadWatcher {
    _watcher: RecommendedWatcher,
    sighup: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for ReloadWatcher {
    fn drop(&mut self) {
        if let Some(task) = self.sighup.take() {
            task.abort();
        }
    }
}

/// Calls `on_change` (at most once per [`DEBOUNCE`] burst) when any of `paths` is
/// created, modified, replaced or removed, and on every SIGHUP.
///
/// The SIGHUP listener needs a Tokio runtime: when called outside one, only the file
/// watch is installed (and a warning is logged). `on_change` runs on a dedicated
/// thread or on Tokio's blocking pool, so it may do blocking file I/O.
pub fn spawn_reload_watcher(
    paths: Vec<PathBuf>,
    on_change: impl Fn() + Send + Sync + 'static,
) -> Result<ReloadWatcher, ReloadWatchError> {
    let on_change: Arc<dyn Fn() + Send + Sync> = Arc::new(on_change);
    let files: Vec<PathBuf> = paths.iter().map(|p| absolute(p)).collect();
    let (tx, rx) = channel();
    let watcher = watch_directories(&files, tx)?;
    let debounced = Arc::clone(&on_change);
    std::thread::Builder::new()
        .name("reload-debounce".to_owned())
        .spawn(move || debounce(&rx, DEBOUNCE, || call_guarded(debounced.as_ref())))?;
    Ok(ReloadWatcher {
        _watcher: watcher,
        sighup: spawn_sighup_listener(on_change)?,
    })
}

/// Relative paths are resolved now so that event paths (always absolute) compare.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

fn watch_directories(
    files: &[PathBuf],
    tx: Sender<()>,
) -> Result<RecommendedWatcher, ReloadWatchError> {
    let relevant_files = files.to_vec();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
        match event {
            Ok(event) if is_relevant(&event, &relevant_files) => {
                // The receiver is gone only when the watcher is being dropped.
                let _ = tx.send(());
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "file watch error"),
        }
    })
    .map_err(ReloadWatchError::Watcher)?;
    let dirs: BTreeSet<PathBuf> = files
        .iter()
        .map(|file| file.parent().unwrap_or(Path::new("/")).to_owned())
        .collect();
    for dir in dirs {
        watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .map_err(|source| ReloadWatchError::Watch { dir, source })?;
    }
    Ok(watcher)
}

/// An event matters when it touches a watched file and can change its content, or
/// when the OS dropped events (a rescan), after which nothing can be assumed.
/// Opens and reads are ignored: the reload itself reads the file, and reacting to
/// that would loop forever.
fn is_relevant(event: &Event, files: &[PathBuf]) -> bool {
    if event.need_rescan() {
        return true;
    }
    let content_may_change = match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        _ => true,
    };
    content_may_change && event.paths.iter().any(|p| files.contains(p))
}

/// Waits for a first event, then for [`DEBOUNCE`] of quiet, then calls `on_change`.
/// Returns when the sending side (the watcher) is dropped.
fn debounce(rx: &Receiver<()>, quiet: Duration, on_change: impl Fn()) {
    while rx.recv().is_ok() {
        loop {
            match rx.recv_timeout(quiet) {
                Ok(()) => continue,
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        on_change();
    }
}

/// A panicking callback must not end the debounce thread, or every later change
/// would be ignored without a trace.
fn call_guarded(on_change: &(dyn Fn() + Send + Sync)) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(on_change)).is_err() {
        tracing::warn!("reload callback panicked; still watching for changes");
    }
}

/// The handler is installed before returning, so a SIGHUP sent right after cannot
/// hit the default action (terminating the process).
fn spawn_sighup_listener(
    on_change: Arc<dyn Fn() + Send + Sync>,
) -> std::io::Result<Option<tokio::task::JoinHandle<()>>> {
    use tokio::signal::unix::{SignalKind, signal};

    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        tracing::warn!("no Tokio runtime: reload on SIGHUP is disabled, file watch only");
        return Ok(None);
    };
    let mut hangups = {
        let _entered = runtime.enter();
        signal(SignalKind::hangup())?
    };
    Ok(Some(runtime.spawn(async move {
        while hangups.recv().await.is_some() {
            tracing::info!("SIGHUP: reloading");
            let on_change = Arc::clone(&on_change);
            if let Err(error) = tokio::task::spawn_blocking(move || on_change()).await {
                tracing::warn!(%error, "reload after SIGHUP panicked");
            }
        }
    })))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    /// SIGHUP reaches every listener in the process, so tests that assert "no call"
    /// must not overlap the one that sends it.
    static SIGNAL_SENSITIVE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    /// A file in its own temporary directory, removed (with the directory) on drop,
    /// even when the test fails. Shared with the classifier's reload tests.
    pub(crate) struct ScratchFile {
        pub(crate) dir: PathBuf,
        pub(crate) file: PathBuf,
    }

    impl ScratchFile {
        pub(crate) fn new(tag: &str, content: &str) -> ScratchFile {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            let unique = format!("{tag}-{}-{nanos}", std::process::id());
            let dir = std::env::temp_dir().join(unique);
            std::fs::create_dir_all(&dir).unwrap();
            let file = dir.join("rules.toml");
            std::fs::write(&file, content).unwrap();
            ScratchFile { dir, file }
        }

        pub(crate) fn write(&self, content: &str) {
            std::fs::write(&self.file, content).unwrap();
        }
    }

    impl Drop for ScratchFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    /// A watched scratch file and the number of callback calls so far.
    fn watched(tag: &str) -> (ScratchFile, Arc<AtomicUsize>, ReloadWatcher) {
        let scratch = ScratchFile::new(tag, "a");
        let (count, on_change) = counter();
        let watcher = spawn_reload_watcher(vec![scratch.file.clone()], on_change).unwrap();
        (scratch, count, watcher)
    }

    fn counter() -> (Arc<AtomicUsize>, impl Fn() + Send + Sync + 'static) {
        let count = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&count);
        (count, move || {
            seen.fetch_add(1, Ordering::SeqCst);
        })
    }

    async fn wait_for(count: &AtomicUsize, at_least: usize) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if count.load(Ordering::SeqCst) >= at_least {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        false
    }

    #[test]
    fn a_burst_of_events_gives_one_call() {
        let (tx, rx) = channel();
        let (count, on_change) = counter();
        for _ in 0..5 {
            tx.send(()).unwrap();
        }
        let worker =
            std::thread::spawn(move || debounce(&rx, Duration::from_millis(50), on_change));
        // Wait for the burst's call (bounded) before the last event, so a busy
        // machine cannot fold that event into the burst.
        let until = std::time::Instant::now() + Duration::from_secs(10);
        while count.load(Ordering::SeqCst) < 1 && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(
            count.load(Ordering::SeqCst),
            1,
            "one call for the whole burst"
        );
        tx.send(()).unwrap();
        drop(tx);
        worker.join().unwrap();
        // The last event's debounce is cut short by the disconnect, which
        // means "stop", so it does not call.
        assert_eq!(count.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn reads_and_other_files_are_irrelevant_but_writes_and_rescans_are() {
        let file = PathBuf::from("/etc/gateway/rules.toml");
        let files = vec![file.clone()];
        let at = |kind: EventKind, path: &str| Event::new(kind).add_path(PathBuf::from(path));
        let open = EventKind::Access(AccessKind::Open(AccessMode::Any));
        let written = EventKind::Access(AccessKind::Close(AccessMode::Write));
        let renamed = EventKind::Modify(ModifyKind::Name(notify::event::RenameMode::To));
        assert!(!is_relevant(&at(open, "/etc/gateway/rules.toml"), &files));
        assert!(is_relevant(&at(written, "/etc/gateway/rules.toml"), &files));
        assert!(is_relevant(&at(renamed, "/etc/gateway/rules.toml"), &files));
        assert!(!is_relevant(
            &at(renamed, "/etc/gateway/other.toml"),
            &files
        ));
        let rescan = Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        assert!(is_relevant(&rescan, &files));
    }

    #[test]
    fn a_panicking_callback_does_not_stop_the_watch() {
        let (tx, rx) = channel();
        let (count, counted) = counter();
        let worker = std::thread::spawn(move || {
            debounce(&rx, Duration::from_millis(20), || {
                call_guarded(&|| {
                    counted();
                    panic!("reload failed badly");
                })
            })
        });
        // Each change is sent only after the previous call happened, so a
        // busy machine cannot merge the two into one debounce window.
        let reached = |n: usize| {
            let until = std::time::Instant::now() + Duration::from_secs(10);
            while count.load(Ordering::SeqCst) < n && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            count.load(Ordering::SeqCst)
        };
        tx.send(()).unwrap();
        assert_eq!(reached(1), 1);
        tx.send(()).unwrap();
        assert_eq!(reached(2), 2, "the watch survived the panicking call");
        drop(tx);
        worker.join().unwrap();
    }

    #[tokio::test]
    async fn replacing_a_file_by_rename_triggers_a_call() {
        let (scratch, count, _watcher) = watched("reload-rename");
        let staged = scratch.dir.join(".rules.toml.tmp");
        std::fs::write(&staged, "b").unwrap();
        std::fs::rename(&staged, &scratch.file).unwrap();
        assert!(wait_for(&count, 1).await, "no reload after rename");
    }

    #[tokio::test]
    async fn other_files_and_reads_do_not_trigger() {
        let _exclusive = SIGNAL_SENSITIVE.lock().await;
        let (scratch, count, _watcher) = watched("reload-other");
        std::fs::write(scratch.dir.join("unrelated.txt"), "x").unwrap();
        let _ = std::fs::read_to_string(&scratch.file).unwrap();
        tokio::time::sleep(DEBOUNCE * 3).await;
        assert_eq!(count.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn sighup_triggers_a_call() {
        let _exclusive = SIGNAL_SENSITIVE.lock().await;
        let (_scratch, count, _watcher) = watched("reload-hup");
        // The handler is installed by now, so the signal cannot end the test process.
        let status = std::process::Command::new("sh")
            .args(["-c", &format!("kill -HUP {}", std::process::id())])
            .status()
            .unwrap();
        assert!(status.success());
        assert!(wait_for(&count, 1).await, "no reload after SIGHUP");
    }
}
