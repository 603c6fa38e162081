//! The validate loop tool (Part II §6.4): diagnostics with closed codes, the
//! plan with risk when valid, and the caller's `catalog_version`. An invalid
//! program is an ordinary result (`isError: false`).

use super::{Args, Reply, ToolResult};
use crate::auth::Principal;
use crate::gateway::{Gateway, LanguageRuntime};
use crate::pilotage::RequestError;
use crate::validate;

pub async fn call(
    gw: &Gateway,
    lang: &LanguageRuntime,
    principal: &Principal,
    args: &Args,
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
    let view = lang
        .catalog
        .view(principal, crate::catalog::Currency::MayReuse)
        .await
        .map_err(|e| e.before_execution())?;
    let verdict = validate::validate(
        gw,
        lang,
        principal,
        &view,
        (program, args.received(argument)),
        args.value("context"),
    )
    .await?;
    Ok(Reply::shared(
        verdict.response.answer.clone(),
        verdict.response.summary.clone(),
    ))
}
