//! Reading the benchmark's Redis with `redis-cli` (installed beside
//! `redis-server`): `INFO` fields, network byte counters, and the bytes one
//! key takes (`MEMORY USAGE`, `STRLEN`).

use crate::procs::Proc;
use std::process::Stdio;

/// `redis-cli` against the benchmark's Redis.
pub async fn redis_cli(redis: &Proc, args: &[&str]) -> Result<String, String> {
    let out = tokio::process::Command::new("redis-cli")
        .args(["-h", &redis.addr.ip().to_string()])
        .args(["-p", &redis.addr.port().to_string()])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .await
        .map_err(|e| format!("redis-cli (installed with redis-server): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "redis-cli {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A numeric field of `INFO <section>`.
pub async fn info_field(redis: &Proc, section: &str, fields: &[&str]) -> Result<Vec<u64>, String> {
    let text = redis_cli(redis, &["info", section]).await?;
    fields
        .iter()
        .map(|f| {
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{f}:")))
                .and_then(|v| v.trim().parse().ok())
                .ok_or_else(|| format!("INFO {section} has no {f}"))
        })
        .collect()
}

pub async fn net_bytes(redis: &Proc) -> Result<(u64, u64), String> {
    let v = info_field(
        redis,
        "stats",
        &["total_net_input_bytes", "total_net_output_bytes"],
    )
    .await?;
    Ok((v[0], v[1]))
}

pub async fn used_memory(redis: &Proc) -> Result<u64, String> {
    Ok(info_field(redis, "memory", &["used_memory"]).await?[0])
}

/// `MEMORY USAGE` and `STRLEN` of the one key matching `pattern`, `None`
/// when none does.
pub async fn key_bytes(redis: &Proc, pattern: &str) -> Result<Option<(u64, u64)>, String> {
    let keys = redis_cli(redis, &["--scan", "--pattern", pattern]).await?;
    let Some(key) = keys.lines().find(|l| !l.is_empty()) else {
        return Ok(None);
    };
    let number = |command: &'static str, text: String| {
        text.trim()
            .parse()
            .map_err(|_| format!("{command} {key}: {text}"))
    };
    let usage = number(
        "MEMORY USAGE",
        redis_cli(redis, &["memory", "usage", key]).await?,
    )?;
    let length = number("STRLEN", redis_cli(redis, &["strlen", key]).await?)?;
    Ok(Some((usage, length)))
}
