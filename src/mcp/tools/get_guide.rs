//! `pilotage_get_guide` (Part III §4.1): the learn stage. Index form without
//! `id`, fetch form with `id`, topic form with `id` and `topic` when
//! `guides.topic_fetch` is declared.

use super::{Args, Reply, ToolResult, inapplicable};
use crate::gateway::Gateway;
use crate::guides::TopicError;
use crate::pilotage::RequestError;
use serde_json::json;

pub const NAME: &str = "pilotage_get_guide";

pub fn call(gw: &Gateway, args: &Args) -> ToolResult {
    let extra = args.unexpected(&["language", "id", "topic"]);
    if !extra.is_empty() {
        return Err(inapplicable(&extra, "to pilotage_get_guide"));
    }
    let language = args.str("language").unwrap_or_default();
    let lang = gw.language_or_not_found(language)?;
    let guides = lang.guides();
    let Some(id) = args.str("id") else {
        if args.has("topic") {
            return Err(RequestError::invalid(
                "'topic' needs the 'id' of the guide that holds it",
            ));
        }
        let index = guides.index();
        let n = index.len();
        return Ok(Reply::new(
            json!({"guides": index}),
            format!("{n} guides for {language}; fetch the core one first"),
        ));
    };
    let unknown_guide = || {
        RequestError::not_found(format!(
            "unknown guide '{id}'; guides of {language}: {}",
            guides.ids().join(", ")
        ))
    };
    match args.str("topic") {
        None => {
            let guide = guides.fetch(id).ok_or_else(unknown_guide)?;
            Ok(Reply::new(json!({"guide": guide}), format!("guide {id}")))
        }
        Some(topic) => {
            if !lang.config.capabilities.guides.topic_fetch {
                return Err(RequestError::invalid(format!(
                    "topic fetch is not declared for {language}: call again without 'topic' to get the whole guide"
                )));
            }
            match guides.fetch_topic(id, topic) {
                Ok(guide) => Ok(Reply::new(
                    json!({"guide": guide}),
                    format!("guide {id}, topic {topic}"),
                )),
                Err(e @ TopicError::UnknownGuide { .. }) => {
                    Err(RequestError::not_found(e.to_string()))
                }
                Err(e @ TopicError::UnknownTopic { .. }) => {
                    Err(RequestError::not_found(e.to_string()))
                }
            }
        }
    }
}
