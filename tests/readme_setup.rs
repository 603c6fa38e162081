//! The README's "ready" lines, checked against the demo: started as
//! `scripts/demo` starts it (from the repository root, so with
//! `deploy/gateway.local.toml`), it must print the lines the block marked
//! `<!-- ready -->` shows, in that order, and `/readyz` must answer what the
//! README says. `…` in a README line stands for any text; the demo runs on
//! ports the kernel picks, written back as the README's 8080 and 7070.

use regex::Regex;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

const MARKER: &str = "<!-- ready -->";
const README_GATEWAY: &str = "127.0.0.1:8080";
const README_ENGINE: &str = "127.0.0.1:7070";
/// The last line the README shows: the demo is ready once it is printed.
const READY_MESSAGE: &str = r#""message":"pilotage-gateway listening""#;

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md")
}

/// The lines of the code block after the marker.
fn ready_block(readme: &str) -> Vec<String> {
    let after = readme
        .split_once(MARKER)
        .unwrap_or_else(|| panic!("README.md has no {MARKER} block"))
        .1;
    let body = after
        .trim_start()
        .strip_prefix("```text\n")
        .unwrap_or_else(|| panic!("{MARKER} must be followed by a ```text block"));
    let end = body.find("\n```").expect("the ready block is closed");
    body[..end].lines().map(str::to_string).collect()
}

/// A README line as a pattern: literal text, `…` any text.
fn pattern(line: &str) -> Regex {
    let parts: Vec<String> = line.split('…').map(regex::escape).collect();
    Regex::new(&format!("^{}$", parts.join(".*"))).expect("pattern")
}

/// The demo, as `scripts/demo` runs it; stopped with SIGTERM on drop so it
/// stops its engine too.
struct Demo {
    child: Child,
    lines: Vec<String>,
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
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
    fn start() -> Demo {
        let mut child = Command::new(env!("CARGO_BIN_EXE_pilotage-gateway"))
            .arg("demo")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .env("PILOTAGE_LISTEN", "127.0.0.1:0")
            .env("PILOTAGE_ENGINE_URL", "http://127.0.0.1:0")
            .env_remove("RUST_LOG")
            .env_remove("PILOTAGE_CONFIG")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start pilotage-gateway demo");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = Vec::new();
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if sent {
                    continue;
                }
                let ready = line.contains(READY_MESSAGE);
                lines.push(line);
                if ready {
                    let _ = tx.send(lines.clone());
                    sent = true;
                }
            }
        });
        let lines = rx.recv_timeout(Duration::from_secs(60));
        let mut demo = Demo {
            child,
            lines: Vec::new(),
        };
        demo.lines = lines.expect("the demo printed its listening line within 60 s");
        demo
    }

    /// `host:port` after `prefix` in some line.
    fn address_after(&self, prefix: &str) -> String {
        let found =
            Regex::new(&format!("{}([0-9.]+:[0-9]+)", regex::escape(prefix))).expect("regex");
        self.lines
            .iter()
            .find_map(|line| found.captures(line).map(|c| c[1].to_string()))
            .unwrap_or_else(|| panic!("no line with {prefix:?} in {:#?}", self.lines))
    }
}

#[tokio::test]
async fn the_demo_prints_the_ready_lines_the_readme_shows() {
    let readme = readme();
    let expected = ready_block(&readme);
    assert!(expected.len() >= 2, "the ready block: {expected:?}");
    let demo = Demo::start();
    let engine = demo.address_after("legacy-engine listening on http://");
    let gateway = demo.address_after(r#""address":""#);
    let shown: Vec<String> = demo
        .lines
        .iter()
        .map(|line| {
            line.replace(&engine, README_ENGINE)
                .replace(&gateway, README_GATEWAY)
                // The banner names the configured listen address, port 0.
                .replace("127.0.0.1:0/", &format!("{README_GATEWAY}/"))
        })
        .collect();
    assert_eq!(
        shown.len(),
        expected.len(),
        "the demo printed {shown:#?}, the README shows {expected:#?}"
    );
    for (got, want) in shown.iter().zip(&expected) {
        assert!(
            pattern(want).is_match(got),
            "the demo printed\n  {got}\nwhere the README shows\n  {want}"
        );
    }

    let readyz = Regex::new(r"readyz` then answers\s+`(\{[^`]+\})`")
        .expect("regex")
        .captures(&readme)
        .expect("the README says what /readyz answers")[1]
        .to_string();
    let readyz: Value = serde_json::from_str(&readyz).expect("the README's /readyz body is JSON");
    let answer: Value = reqwest::get(format!("http://{gateway}/readyz"))
        .await
        .expect("GET /readyz")
        .json()
        .await
        .expect("/readyz answers JSON");
    assert_eq!(answer, readyz, "GET /readyz");
}
