//! Placeholder until the watcher lands.
pub fn spawn_reload_watcher(_paths: Vec<std::path::PathBuf>, _on_change: impl Fn() + Send + Sync + 'static) {}
