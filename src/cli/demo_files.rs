//! The demo's files built into the binary: `deploy/gateway.local.toml`, the
//! `workflow/v1` guides and classifier rules. `pilotage-gateway demo` uses
//! them when no configuration is given and none is found on disk, so the demo
//! runs from any directory; files on disk (`--config`, or
//! `deploy/gateway.local.toml` under the working directory) take precedence.

use include_dir::{Dir, include_dir};
use std::path::{Path, PathBuf};

/// The configuration file's path inside the bundle (its relative paths,
/// `../guides/…` and `../classifiers/…`, point into the bundle too).
const CONFIG: &str = "deploy/gateway.local.toml";
const CONFIG_TEXT: &str = include_str!("../../deploy/gateway.local.toml");
static GUIDES: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/guides");
static CLASSIFIERS: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/classifiers");

/// Where the demo's configuration comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum DemoConfig {
    /// A file on disk.
    Disk(PathBuf),
    /// The built-in copy, written out to this configuration path.
    Bundled(PathBuf),
}

impl DemoConfig {
    pub fn path(&self) -> &Path {
        match self {
            DemoConfig::Disk(p) | DemoConfig::Bundled(p) => p,
        }
    }
}

/// `explicit` if given; else `deploy/gateway.local.toml` if it exists in the
/// working directory; else the built-in files, written under `scratch`.
pub fn choose(explicit: Option<PathBuf>, scratch: &Path) -> std::io::Result<DemoConfig> {
    if let Some(path) = explicit {
        return Ok(DemoConfig::Disk(path));
    }
    let local = PathBuf::from(CONFIG);
    if local.is_file() {
        return Ok(DemoConfig::Disk(local));
    }
    write_bundle(scratch).map(DemoConfig::Bundled)
}

/// Writes the built-in files under `root` in the repository's layout and
/// returns the configuration's path.
pub fn write_bundle(root: &Path) -> std::io::Result<PathBuf> {
    write_dir(&GUIDES, &root.join("guides"))?;
    write_dir(&CLASSIFIERS, &root.join("classifiers"))?;
    let config = root.join(CONFIG);
    if let Some(dir) = config.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(&config, CONFIG_TEXT)?;
    Ok(config)
}

fn write_dir(dir: &Dir<'_>, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for file in dir.files() {
        let name = file.path().file_name().unwrap_or_default();
        std::fs::write(to.join(name), file.contents())?;
    }
    for sub in dir.dirs() {
        let name = sub.path().file_name().unwrap_or_default();
        write_dir(sub, &to.join(name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundle_is_a_valid_configuration_with_its_guides_and_rules() {
        let root =
            std::env::temp_dir().join(format!("pilotage-demo-bundle-{}", std::process::id()));
        let config = write_bundle(&root).expect("write bundle");
        let loaded = crate::config::Config::parse(CONFIG_TEXT, &config).expect("parse");
        assert!(loaded.validate().is_empty(), "{:?}", loaded.validate());
        for lang in &loaded.languages {
            assert!(loaded.resolve(&lang.guides_dir).join("core.md").is_file());
            assert!(loaded.resolve(&lang.classifier).is_file());
        }
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn an_explicit_configuration_wins() {
        let chosen = choose(Some(PathBuf::from("my.toml")), Path::new("/nonexistent")).unwrap();
        assert_eq!(chosen, DemoConfig::Disk(PathBuf::from("my.toml")));
    }
}
