//! The validate loop tool (Part II §6.4): diagnostics with closed codes, the
//! plan with risk when valid, and the caller's `catalog_version`. An invalid
//! program is an ordinary result (`isError: false`).
//!
//! A plain call is first looked up by its text alone ([`from_text`]): the
//! verdict of a program sent again in the same text answers it without its
//! arguments being read into a tree.

use super::{Args, Reply, ToolResult};
use crate::auth::Principal;
use crate::catalog::{CatalogError, CatalogView, Currency};
use crate::gateway::{Gateway, LanguageRuntime};
use crate::mcp::arguments::Received;
use crate::pilotage::RequestError;
use crate::validate::{self, Subject, Verdict};
use serde_json::value::RawValue;

/// Validates the program in `args`; `looked` is what [`from_text`] read
/// (the caller's catalog, or why it could not be read, and the verdict's
/// key) when it looked first.
pub async fn call(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    args: &Args,
    looked: Option<Looked>,
) -> ToolResult {
    let argument = &lang.config.argument;
    let Some(program) = args.value(argument) else {
        return Err(RequestError::invalid(format!(
            "the program goes in '{argument}'"
        )));
    };
    // Bounds first: an oversized program costs nothing else, not even the
    // caller's catalog (unless a plain call's lookup read it: a program of
    // the right type within the size bound whose depth, steps or ids are
    // out of bounds).
    lang.language.check_bounds(program, &lang.config.bounds)?;
    let context = args.value("context");
    let verdict = match looked {
        Some(Looked::Catalog { view, key }) => {
            validate::validate_as(gw, lang, principal, &view, (program, context), key).await?
        }
        Some(Looked::Unreadable(e)) => return Err(e.before_execution()),
        None => {
            let view = lang
                .catalog
                .view(principal, Currency::MayReuse)
                .await
                .map_err(|e| e.before_execution())?;
            let subject = Subject {
                program,
                program_text: args.received(argument),
                context,
                context_text: args.received("context"),
            };
            validate::validate(gw, lang, principal, &view, subject).await?
        }
    };
    Ok(reply(&verdict))
}

/// What [`from_text`] read on its way to a miss, so that the call does not
/// read it again (each catalog read can be a request to the engine).
pub enum Looked {
    /// The caller's catalog and the key of the verdict the call will make.
    Catalog { view: CatalogView, key: String },
    /// The caller's catalog could not be read: what the call reports once
    /// its arguments pass their checks.
    Unreadable(CatalogError),
}

/// What a plain call's text alone gave.
pub enum FromText {
    /// The verdict made for this very text.
    Answered(Reply),
    /// No verdict: the call is read and validated ([`call`]), with what
    /// was read here.
    Missed(Option<Looked>),
}

/// Answers a plain call from the verdict made for its program's (and
/// context's) text, when the arguments hold nothing else. Such a verdict
/// was made only after that text was read, passed the tool's argument
/// schema (the program's JSON type, the context an object: the same for the
/// validate and execute tools, whose calls both make verdicts) and the
/// language's bounds, none of which changes while the gateway runs; equal
/// text means an equal tree. So the answer is the one reading the call
/// would give, and anything it cannot vouch for is read as before.
pub async fn from_text(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    text: &Received,
) -> FromText {
    let Some((program, context)) = text.program_and_context(&lang.config.argument) else {
        return FromText::Missed(None);
    };
    // What the read refuses before any catalog is read (a program of
    // another JSON type than the schema's, a context that is no object, a
    // program text over the size bound) is left to it.
    let opens = |text: &RawValue, json_type: &str| match json_type {
        "object" => text.get().starts_with('{'),
        "string" => text.get().starts_with('"'),
        _ => false,
    };
    if !opens(program, lang.language.program_json_type())
        || context.is_some_and(|c| !opens(c, "object"))
        || program.get().len() > lang.config.bounds.max_program_bytes
    {
        return FromText::Missed(None);
    }
    // A catalog that cannot be read is reported by the call after the
    // argument checks that come first.
    let view = match lang.catalog.view(principal, Currency::MayReuse).await {
        Ok(view) => view,
        Err(e) => return FromText::Missed(Some(Looked::Unreadable(e))),
    };
    let key = validate::text_key(lang, principal, &view, program, context);
    match gw.verdicts.get(&key).await {
        Some(verdict) => FromText::Answered(reply(&verdict)),
        None => FromText::Missed(Some(Looked::Catalog { view, key })),
    }
}

fn reply(verdict: &Verdict) -> Reply {
    Reply::shared(
        verdict.response.answer.clone(),
        verdict.response.summary.clone(),
    )
}
