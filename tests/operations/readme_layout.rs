//! The README's Layout section names only paths that exist, so it cannot
//! drift from the tree again unnoticed.

use crate::common::repo_path;

/// The backquoted repository paths of the README's `## Layout` section.
fn layout_paths(readme: &str) -> Vec<String> {
    let section = readme
        .split("\n## Layout")
        .nth(1)
        .expect("README has a Layout section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|p| p.contains('/') && !p.contains(' '))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_path_the_readme_layout_names_exists() {
    let readme = std::fs::read_to_string(repo_path("README.md")).expect("README.md");
    let paths = layout_paths(&readme);
    assert!(paths.len() >= 5, "the Layout names the folders: {paths:?}");
    let missing: Vec<&String> = paths
        .iter()
        .filter(|p| !repo_path(p.trim_end_matches('/')).exists())
        .collect();
    assert!(
        missing.is_empty(),
        "README Layout names missing paths: {missing:?}"
    );
}

#[test]
fn a_layout_naming_a_removed_file_is_caught() {
    let readme = "# x\n\n## Layout\n\n`src/engine.rs` the engine · `tests/` the tests\n\n## Next\n";
    let paths = layout_paths(readme);
    assert_eq!(paths, ["src/engine.rs", "tests/"]);
    assert!(!repo_path("src/engine.rs").exists());
}
