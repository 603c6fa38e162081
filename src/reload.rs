//! Calls a reload callback when watched files change or the process gets SIGHUP.
//!
//! Two kinds of targets: files (classifier rules) and directories (a
//! language's guides). A file is watched through its parent directory rather
//! than directly: editors and configuration managers replace a file by
//! writing a new one and renaming it over the old, which a watch on the old
//! inode would miss. A directory is watched recursively, so editing
//! `guides/workflow-v1/core.md` (or a file in a subfolder, or a Kubernetes
//! ConfigMap swapping its `..data` link inside the folder) reloads. Bursts of
//! events (one save is often several) are debounced by `notify-debouncer-full`
//! into one call per quiet period.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::event::{AccessKind, AccessMode, MetadataKind, ModifyKind};
use notify::{Event, EventKind, RecursiveMode};
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

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
    /// The SIGHUP handler could not be set up.
    #[error("cannot set up reload signalling: {0}")]
    Io(#[from] std::io::Error),
}

/// Keeps the watch alive; dropping it stops the file watch and the SIGHUP listener.
pub struct ReloadWatcher {
    _debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
    sighup: Option<tokio::task::JoinHandle<()>>,
}

impl Drop for ReloadWatcher {
    fn drop(&mut self) {
        if let Some(task) = self.sighup.take() {
            task.abort();
        }
    }
}

/// What one watched path is, decided when the watch starts.
#[derive(Debug, Clone, PartialEq)]
enum Target {
    /// A file: relevant events name it.
    File(PathBuf),
    /// A directory: relevant events name something inside it.
    Tree(PathBuf),
}

impl Target {
    fn of(path: &Path) -> Target {
        let path = absolute(path);
        if path.is_dir() {
            Target::Tree(path)
        } else {
            Target::File(path)
        }
    }

    fn covers(&self, event_path: &Path) -> bool {
        match self {
            Target::File(file) => event_path == file,
            Target::Tree(dir) => event_path.starts_with(dir),
        }
    }

    /// The directory handed to the OS watch, and how.
    fn watch(&self) -> (PathBuf, RecursiveMode) {
        match self {
            Target::File(file) => (
                file.parent().unwrap_or(Path::new("/")).to_owned(),
                RecursiveMode::NonRecursive,
            ),
            Target::Tree(dir) => (dir.clone(), RecursiveMode::Recursive),
        }
    }
}

/// Calls `on_change` (once per [`DEBOUNCE`] burst) when any of `paths` (files,
/// or directories watched with everything inside them) is created, modified,
/// replaced or removed, and on every SIGHUP.
///
/// The SIGHUP listener needs a Tokio runtime: when called outside one, only the file
/// watch is installed (and a warning is logged). `on_change` runs on the
/// debouncer's thread or on Tokio's blocking pool, so it may do blocking file I/O.
pub fn spawn_reload_watcher(
    paths: Vec<PathBuf>,
    on_change: impl Fn() + Send + Sync + 'static,
) -> Result<ReloadWatcher, ReloadWatchError> {
    let on_change: Arc<dyn Fn() + Send + Sync> = Arc::new(on_change);
    let targets: Vec<Target> = paths.iter().map(|p| Target::of(p)).collect();
    let debouncer = watch(targets, Arc::clone(&on_change))?;
    Ok(ReloadWatcher {
        _debouncer: debouncer,
        sighup: spawn_sighup_listener(on_change)?,
    })
}

/// Relative paths are resolved now so that event paths (always absolute) compare.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

fn watch(
    targets: Vec<Target>,
    on_change: Arc<dyn Fn() + Send + Sync>,
) -> Result<Debouncer<notify::RecommendedWatcher, RecommendedCache>, ReloadWatchError> {
    let relevant_targets = targets.clone();
    let mut debouncer =
        new_debouncer(
            DEBOUNCE,
            None,
            move |result: DebounceEventResult| match result {
                Ok(events) => {
                    if events.iter().any(|e| is_relevant(e, &relevant_targets)) {
                        call_guarded(on_change.as_ref());
                    }
                }
                Err(errors) => {
                    for error in errors {
                        tracing::warn!(%error, "file watch error");
                    }
                }
            },
        )
        .map_err(ReloadWatchError::Watcher)?;
    let mut watched: Vec<(PathBuf, RecursiveMode)> = Vec::new();
    for target in &targets {
        let (dir, mode) = target.watch();
        if watched.iter().any(|(d, m)| *d == dir && *m == mode) {
            continue;
        }
        debouncer
            .watch(&dir, mode)
            .map_err(|source| ReloadWatchError::Watch {
                dir: dir.clone(),
                source,
            })?;
        watched.push((dir, mode));
    }
    Ok(debouncer)
}

/// An event matters when it touches a watched target and can change its
/// content, or when the OS dropped events (a rescan), after which nothing can
/// be assumed. Opens and reads are ignored: the reload itself reads the files,
/// and reacting to that would loop forever.
fn is_relevant(event: &Event, targets: &[Target]) -> bool {
    if event.need_rescan() {
        return true;
    }
    let content_may_change = match event.kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime)) => false,
        _ => true,
    };
    content_may_change
        && event
            .paths
            .iter()
            .any(|p| targets.iter().any(|t| t.covers(p)))
}

/// A panicking callback must not end the watch, or every later change would
/// be ignored without a trace.
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
    fn reads_and_other_files_are_irrelevant_but_writes_and_rescans_are() {
        let files = vec![
            Target::File(PathBuf::from("/etc/gateway/rules.toml")),
            Target::Tree(PathBuf::from("/etc/gateway/guides")),
        ];
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
        assert!(is_relevant(
            &at(written, "/etc/gateway/guides/sub/core.md"),
            &files
        ));
        assert!(!is_relevant(
            &at(open, "/etc/gateway/guides/core.md"),
            &files
        ));
        assert!(!is_relevant(&at(written, "/etc/gateway/guidesx"), &files));
        let rescan = Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        assert!(is_relevant(&rescan, &files));
    }

    #[tokio::test]
    async fn a_panicking_callback_does_not_stop_the_watch() {
        let scratch = ScratchFile::new("reload-panic", "a");
        let (count, counted) = counter();
        let _watcher = spawn_reload_watcher(vec![scratch.file.clone()], move || {
            counted();
            panic!("reload failed badly");
        })
        .unwrap();
        // Each change is written only after the previous call happened, so a
        // busy machine cannot merge the two into one debounce window.
        scratch.write("b");
        assert!(wait_for(&count, 1).await, "no call after the first change");
        scratch.write("c");
        assert!(
            wait_for(&count, 2).await,
            "the watch survived the panicking call"
        );
    }

    #[tokio::test]
    async fn a_file_inside_a_watched_directory_triggers_a_call() {
        let scratch = ScratchFile::new("reload-tree", "a");
        let guides = scratch.dir.join("guides");
        std::fs::create_dir_all(guides.join("nested")).unwrap();
        std::fs::write(guides.join("core.md"), "one").unwrap();
        std::fs::write(guides.join("nested/topic.md"), "one").unwrap();
        let (count, on_change) = counter();
        let _watcher = spawn_reload_watcher(vec![guides.clone()], on_change).unwrap();
        std::fs::write(guides.join("core.md"), "two").unwrap();
        assert!(
            wait_for(&count, 1).await,
            "no reload after editing a file in the folder"
        );
        let before = count.load(Ordering::SeqCst);
        std::fs::write(guides.join("nested/topic.md"), "two").unwrap();
        assert!(
            wait_for(&count, before + 1).await,
            "no reload after editing a file in a subfolder"
        );
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
