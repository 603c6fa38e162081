//! The README's tour, run for real: every block marked `<!-- tour -->` holds
//! one command (`$ …`) and the output it prints. The test starts
//! `pilotage-gateway demo` from an empty directory (so the demo runs on its
//! built-in configuration, guides and rules), runs each command in order
//! (`cat FILE` reads the repository's file; `pilotage …` is the Host CLI
//! pointed at that demo) and fails when an output differs from the README.
//!
//! Only what differs by nature between runs is masked on both sides: run ids,
//! idempotency keys, step durations and the demo's port. After an intended
//! change, `PILOTAGE_BLESS_README=1 cargo test --test readme_tour` rewrites
//! the blocks with the new outputs (review the diff).

mod common;

use common::repo_path;
use regex::Regex;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The URL the README shows; the test's demo listens elsewhere.
const README_URL: &str = "http://127.0.0.1:8080/mcp";
const MARKER: &str = "<!-- tour -->";

/// One `<!-- tour -->` block: the command and the output shown, with the
/// README line range the block's body occupies (for blessing).
struct Step {
    command: String,
    shown: String,
    body: std::ops::Range<usize>,
}

fn steps(readme: &str) -> Vec<Step> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != MARKER {
            i += 1;
            continue;
        }
        assert!(
            lines.get(i + 1).is_some_and(|l| l.starts_with("```")),
            "README line {}: {MARKER} must be followed by a code block",
            i + 1
        );
        let start = i + 2;
        let end = (start..lines.len())
            .find(|&j| lines[j].starts_with("```"))
            .unwrap_or_else(|| panic!("README line {}: unclosed tour block", i + 1));
        let command = lines[start]
            .strip_prefix("$ ")
            .unwrap_or_else(|| panic!("README line {}: a tour block starts with `$ `", start + 1))
            .to_string();
        out.push(Step {
            command,
            shown: lines[start + 1..end].join("\n"),
            body: start + 1..end,
        });
        i = end + 1;
    }
    out
}

/// Shell words of a README command: spaces split, single quotes group; a
/// trailing `< /dev/null` is what every command gets anyway.
fn words(command: &str) -> Vec<String> {
    let command = command.trim_end_matches("< /dev/null").trim_end();
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quoted = false;
    let mut any = false;
    for ch in command.chars() {
        match ch {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut word));
                    any = false;
                }
            }
            c => {
                word.push(c);
                any = true;
            }
        }
    }
    assert!(!quoted, "unbalanced quote in `{command}`");
    if any {
        out.push(word);
    }
    out
}

/// The demo, started from `cwd`; stopped with SIGTERM on drop, so it stops
/// its engine too (a SIGKILL would leave the engine running, orphaned).
struct Demo {
    child: Child,
    url: String,
    banner: String,
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Demo {
    fn start(cwd: &Path) -> Demo {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
            .arg("demo")
            .current_dir(cwd)
            // Free ports, picked by the kernel, instead of 8080 and 7070.
            .env("PILOTAGE_LISTEN", "127.0.0.1:0")
            .env("PILOTAGE_ENGINE_URL", "http://127.0.0.1:0")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start pilotage-gateway demo");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut banner = String::new();
            let address = Regex::new(r#""pilotage-gateway listening","address":"([0-9.:]+)""#)
                .expect("regex");
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if sent {
                    continue;
                }
                if let Some(c) = address.captures(&line) {
                    let _ = tx.send((c[1].to_string(), banner.clone()));
                    sent = true;
                } else if line.starts_with("demo:") {
                    banner.push_str(&line);
                    banner.push('\n');
                }
            }
        });
        let (address, banner) = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the demo printed its listening address");
        Demo {
            child,
            url: format!("http://{address}/mcp"),
            banner,
        }
    }
}

/// `pilotage` (the Host CLI of `host/`), built if this target has none yet.
fn host_cli() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable");
    let bin = exe
        .parent()
        .and_then(Path::parent)
        .expect("target dir")
        .join("pilotage");
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "pilotage-host", "--bin", "pilotage"])
            .status()
            .expect("cargo build -p pilotage-host");
        assert!(status.success(), "building the Host CLI failed");
    }
    bin
}

/// Runs `argv` with stdout and stderr in one stream, in the order written.
fn run(program: &Path, args: &[String], cache: &Path) -> String {
    let (mut reader, writer) = std::io::pipe().expect("pipe");
    let mut child = Command::new(program)
        .args(args)
        .current_dir(repo_path(""))
        .env("XDG_CACHE_HOME", cache)
        .env_remove("PILOTAGE_URL")
        .env_remove("PILOTAGE_KEY")
        .stdin(Stdio::null())
        .stdout(writer.try_clone().expect("clone pipe"))
        .stderr(writer)
        .spawn()
        .expect("run the Host CLI");
    let mut output = String::new();
    reader.read_to_string(&mut output).expect("read output");
    child.wait().expect("wait");
    output.trim_end().to_string()
}

/// Masks what legitimately differs between runs.
fn masked(text: &str) -> String {
    let rules = [
        (r"run_[0-9a-f]{32}", "run_<id>"),
        (r"pilotage-[0-9a-f]{32}", "pilotage-<key>"),
        (r"\b\d+ ms\b", "<n> ms"),
    ];
    rules.iter().fold(text.to_string(), |t, (re, with)| {
        Regex::new(re)
            .expect("regex")
            .replace_all(&t, *with)
            .into_owned()
    })
}

#[test]
fn the_readme_tour_produces_the_outputs_it_shows() {
    let readme_path = repo_path("README.md");
    let readme = std::fs::read_to_string(&readme_path).expect("read README.md");
    let tour = steps(&readme);
    assert!(tour.len() >= 6, "the README tour has {} blocks", tour.len());

    let scratch = std::env::temp_dir().join(format!("pilotage-tour-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let empty = scratch.join("elsewhere");
    let cache = scratch.join("cache");
    std::fs::create_dir_all(&empty).expect("scratch dir");
    let demo = Demo::start(&empty);
    assert!(
        demo.banner.contains("built-in configuration"),
        "from a directory without deploy/, the demo uses its built-in files: {}",
        demo.banner
    );
    let pilotage = host_cli();
    let run_id = Regex::new(r"run_[0-9a-f]{32}").expect("regex");

    let mut last_run: Option<String> = None;
    let mut produced = Vec::new();
    let mut commands = Vec::new();
    for step in &tour {
        // A run id in a command is the one of the run before it.
        let command = match &last_run {
            Some(id) => run_id.replace_all(&step.command, id.as_str()).into_owned(),
            None => step.command.clone(),
        };
        commands.push(command.clone());
        let argv = words(&command);
        let output = match argv.first().map(String::as_str) {
            Some("cat") => std::fs::read_to_string(repo_path(&argv[1]))
                .expect("a file the tour shows")
                .trim_end()
                .to_string(),
            Some("pilotage") => {
                let args: Vec<String> = argv[1..]
                    .iter()
                    .map(|a| a.replace(README_URL, &demo.url))
                    .collect();
                run(&pilotage, &args, &cache).replace(&demo.url, README_URL)
            }
            other => panic!("the tour runs cat and pilotage only, not {other:?}"),
        };
        if let Some(m) = run_id.find(&output) {
            last_run = Some(m.as_str().to_string());
        }
        produced.push(output);
    }
    let _ = std::fs::remove_dir_all(&scratch);

    if std::env::var("PILOTAGE_BLESS_README").is_ok_and(|v| v == "1") {
        let mut lines: Vec<String> = readme.lines().map(str::to_string).collect();
        for ((step, output), command) in tour.iter().zip(&produced).zip(&commands).rev() {
            lines.splice(step.body.clone(), output.lines().map(str::to_string));
            lines[step.body.start - 1] = format!("$ {command}");
        }
        std::fs::write(&readme_path, lines.join("\n") + "\n").expect("write README.md");
        return;
    }
    for (step, output) in tour.iter().zip(&produced) {
        assert_eq!(
            masked(&step.shown),
            masked(output),
            "README tour block `$ {}` differs from what it prints now (after an intended change: PILOTAGE_BLESS_README=1 cargo test --test readme_tour)",
            step.command
        );
    }
}
