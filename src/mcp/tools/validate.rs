//! The validate loop tool (Part II §6.4): diagnostics with closed codes, the
//! plan with risk when valid, and the caller's `catalog_version`. An invalid
//! program is an ordinary result (`isError: false`).
//!
//! A plain call is first looked up by its text alone ([`from_text`]): the
//! verdict of a program sent again in the same text answers it without its
//! arguments being read into a tree.

use super::{Args, Reply, ToolResult};
use crate::auth::Principal;
use crate::catalog::{CatalogView, Currency};
use crate::gateway::{Gateway, LanguageRuntime};
use crate::mcp::arguments::Received;
use crate::pilotage::RequestError;
use crate::validate::{self, Subject, Verdict};

/// Validates the program in `args`; `view` is the caller's catalog when
/// [`from_text`] read it already.
pub async fn call(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    args: &Args,
    view: Option<CatalogView>,
) -> ToolResult {
    let argument = &lang.config.argument;
    let Some(program) = args.value(argument) else {
        return Err(RequestError::invalid(format!(
            "the program goes in '{argument}'"
        )));
    };
    // Bounds first: an oversized program costs nothing else, not even the
    // caller's catalog.
    lang.language.check_bounds(program, &lang.config.bounds)?;
    let view = match view {
        Some(view) => view,
        None => lang
            .catalog
            .view(principal, Currency::MayReuse)
            .await
            .map_err(|e| e.before_execution())?,
    };
    let subject = Subject {
        program,
        program_text: args.received(argument),
        context: args.value("context"),
        context_text: args.received("context"),
    };
    let verdict = validate::validate(gw, lang, principal, &view, subject).await?;
    Ok(reply(&verdict))
}

/// What a plain call's text alone gave.
pub enum FromText {
    /// The verdict made for this very text.
    Answered(Reply),
    /// No verdict: the call is read and validated ([`call`]), with the
    /// caller's catalog when it was read here.
    Missed(Option<CatalogView>),
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
    // A program whose text is over the size bound is refused by the read
    // before any catalog is.
    if program.get().len() > lang.config.bounds.max_program_bytes {
        return FromText::Missed(None);
    }
    // A catalog that cannot be read is reported by the read, after the
    // argument checks that come first.
    let Ok(view) = lang.catalog.view(principal, Currency::MayReuse).await else {
        return FromText::Missed(None);
    };
    match validate::cached(gw, lang, principal, &view, program, context).await {
        Some(verdict) => FromText::Answered(reply(&verdict)),
        None => FromText::Missed(Some(view)),
    }
}

fn reply(verdict: &Verdict) -> Reply {
    Reply::shared(
        verdict.response.answer.clone(),
        verdict.response.summary.clone(),
    )
}
