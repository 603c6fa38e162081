//! The document's form: text the gateway can read, one direct workflow,
//! written out without YAML aliases or merge keys.

use super::super::workflow::Document;
use super::error;
use crate::classify::Diagnostic;

/// Text the gateway cannot read as YAML. Mistral reports its own YAML
/// errors with their positions; the gateway refuses such text as well,
/// because a document it cannot read is one whose actions it cannot check
/// (its parser and Mistral's could disagree).
pub fn unreadable(text: &str) -> Option<Diagnostic> {
    let failure = super::super::document::parse(text).err()?;
    Some(error(
        "invalid_structure",
        failure.at,
        format!(
            "the program is not a YAML document the gateway can read: {}",
            failure.message
        ),
        Some("fix the YAML syntax at this position".into()),
    ))
}

/// One direct workflow per program, written without YAML aliases or merge
/// keys.
pub fn structure(doc: &Document) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = doc
        .unsupported
        .iter()
        .map(|(what, at)| {
            error(
                "invalid_structure",
                *at,
                format!("the document uses {what}; mistral/v2 programs are written out in full"),
                Some("write the aliased or merged values out where they are used".into()),
            )
        })
        .collect();
    out.extend(doc
        .workflows
        .iter()
        .skip(1)
        .map(|extra| {
            error(
                "invalid_structure",
                extra.name_range,
                format!(
                    "the document defines a second workflow '{}'; a mistral/v2 program is exactly one workflow",
                    extra.name
                ),
                Some("send each workflow as a program of its own".into()),
            )
        }));
    if let Some(wf) = doc.workflows.first()
        && wf.kind != "direct"
    {
        out.push(error(
            "invalid_structure",
            wf.kind_range.unwrap_or(wf.name_range),
            format!(
                "workflow type '{}' is not served; only 'direct' workflows can be planned and traced",
                wf.kind
            ),
            Some("use type: direct (the default) with on-success/on-error/on-complete transitions".into()),
        ));
    }
    out
}
