//! Prints the W3C trace context of every request that carries one, one line
//! on stdout each, so a caller's test can check what reached the engine:
//! `trace-context POST /api/v1/run traceparent=00-... tracestate=...`.

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use std::io::Write;

pub async fn log(req: Request, next: Next) -> Response {
    if let Some(line) = line(&req) {
        print(&line);
    }
    next.run(req).await
}

fn line(req: &Request) -> Option<String> {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let traceparent = header("traceparent")?;
    Some(format!(
        "trace-context {} {} traceparent={traceparent} tracestate={}",
        req.method(),
        req.uri().path(),
        header("tracestate").unwrap_or_default()
    ))
}

fn print(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{line}");
    let _ = stdout.flush();
}
