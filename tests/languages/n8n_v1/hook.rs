//! A little HTTP server on 127.0.0.1 that the workflows of `runs` call with
//! an HTTP Request node: every request it gets is a node that really ran in
//! n8n, so counting them counts runs, from outside n8n and outside the
//! gateway. A request to a path under `/hold` gets no answer until the test
//! releases it: while it waits, the execution is surely running in n8n.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

/// The longest a test waits for a request it expects.
const ARRIVAL: Duration = Duration::from_secs(60);
/// The longest request head the server reads.
const MAX_HEAD: usize = 16 * 1024;

pub struct Hook {
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    paths: Arc<Mutex<Vec<String>>>,
    arrived: tokio::sync::Mutex<mpsc::UnboundedReceiver<String>>,
    release: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Hook {
    pub async fn start() -> Hook {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let paths = Arc::new(Mutex::new(Vec::new()));
        let (release, released) = watch::channel(false);
        let (tx, rx) = mpsc::unbounded_channel();
        let p = paths.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, p.clone(), tx.clone(), released.clone()));
            }
        });
        Hook {
            base,
            paths,
            arrived: tokio::sync::Mutex::new(rx),
            release,
            task,
        }
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The paths requested so far, in order.
    pub fn paths(&self) -> Vec<String> {
        self.paths.lock().expect("paths").clone()
    }

    /// Waits (bounded) for the next request; its path.
    pub async fn next(&self) -> String {
        let mut rx = self.arrived.lock().await;
        tokio::time::timeout(ARRIVAL, rx.recv())
            .await
            .expect("a request reached the hook in time")
            .expect("the hook is serving")
    }

    /// Answers every held request, and every later one at once.
    pub fn release(&self) {
        self.release.send_replace(true);
    }
}

impl Drop for Hook {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Reads one request, records its path, answers (after the release for
/// `/hold…`) with `{"ok": true}`.
async fn serve(
    mut stream: TcpStream,
    paths: Arc<Mutex<Vec<String>>>,
    arrived: mpsc::UnboundedSender<String>,
    mut released: watch::Receiver<bool>,
) {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let text = String::from_utf8_lossy(&head);
    let path = text
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .split('?')
        .next()
        .unwrap_or("")
        .to_string();
    paths.lock().expect("paths").push(path.clone());
    let _ = arrived.send(path.clone());
    if path.starts_with("/hold") {
        // The sender lives as long as the hook; gone, nothing is held.
        let _ = released.wait_for(|r| *r).await;
    }
    let body = br#"{"ok":true}"#;
    let answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.write_all(body).await;
    let _ = stream.shutdown().await;
}
