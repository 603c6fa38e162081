//! `pilotage guides [ID] [--topic T]`: the guide index, or one guide's
//! body through the on-disk cache. A topic is fetched only when the
//! Language declares `guides.topic_fetch`; otherwise the Host says so
//! instead of sending a member the server would have to refuse.

use super::{Rendered, Stopped};
use crate::discovery::{self, GUIDE_TOOL};
use crate::guide_cache::GuideCache;
use crate::learn;
use crate::report::Exit;
use crate::server::{PilotageServer, Timeouts, args, call_structured};
use serde_json::{Value, json};

pub async fn run<S: PilotageServer>(
    server: &S,
    cache: Option<&GuideCache>,
    language: Option<&str>,
    id: Option<&str>,
    topic: Option<&str>,
    timeouts: Timeouts,
) -> Result<Rendered, Stopped> {
    let d = discovery::discover(server, timeouts)
        .await
        .map_err(|e| Stopped::new("discover", e))?;
    let lang = discovery::pick(&d, language, "guides", |l| l.caps.guides)
        .map_err(|e| Stopped::new("discover", e))?;
    let index = learn::index(server, &lang.name, timeouts)
        .await
        .map_err(|e| Stopped::new("learn", e))?;
    let Some(id) = id else {
        let mut text = format!("guides of {}:\n", lang.name);
        for g in &index {
            text.push_str(&format!(
                "  {:<20} {:<10} version {:<14} {:>6} bytes  {}\n      topics: {}\n",
                g.id,
                g.level,
                g.version,
                g.size_bytes
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "?".into()),
                g.title,
                g.topics.join(", ")
            ));
        }
        let json = json!({"language": lang.name, "guides": index.iter().map(|g| json!({
            "id": g.id, "title": g.title, "level": g.level, "version": g.version,
            "size_bytes": g.size_bytes, "topics": g.topics})).collect::<Vec<_>>()});
        return Ok(Rendered {
            text,
            json,
            exit: Exit::Success,
        });
    };
    if let Some(t) = topic {
        if !lang.caps.topic_fetch {
            return Err(Stopped::new(
                "learn",
                format!(
                    "{} does not declare guides.topic_fetch; fetch the whole guide instead",
                    lang.name
                ),
            ));
        }
        let v = call_structured(
            server,
            GUIDE_TOOL,
            args([
                ("language", json!(lang.name)),
                ("id", json!(id)),
                ("topic", json!(t)),
            ]),
            timeouts.call,
        )
        .await
        .map_err(|e| Stopped::new("learn", e))?;
        let body = v["guide"]["body"].as_str().unwrap_or_default().to_string();
        return Ok(Rendered {
            json: json!({"language": lang.name, "id": id, "topic": t, "cached": false, "body": body}),
            text: body,
            exit: Exit::Success,
        });
    }
    let Some(meta) = index.iter().find(|g| g.id == id) else {
        let known: Vec<&str> = index.iter().map(|g| g.id.as_str()).collect();
        return Err(Stopped::new(
            "learn",
            format!(
                "{} has no guide {id:?}; its guides are {}",
                lang.name,
                known.join(", ")
            ),
        ));
    };
    let g = learn::fetch(server, cache, &lang.name, meta, timeouts)
        .await
        .map_err(|e| Stopped::new("learn", e))?;
    Ok(Rendered {
        json: json!({"language": lang.name, "id": g.meta.id, "version": g.meta.version,
            "cached": g.cached, "body": Value::String(g.body.clone())}),
        text: g.body,
        exit: Exit::Success,
    })
}
