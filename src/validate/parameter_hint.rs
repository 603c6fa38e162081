//! "Did you mean": an `unexpected_parameter` diagnostic without a hint gets
//! the close matches among the parameters of the step's capability, drawn
//! from the caller's own catalog view (so a hint never names anything the
//! caller cannot see).

use crate::catalog::CatalogView;
use crate::classify::Diagnostic;
use crate::classify::template::close_matches;
use crate::languages::StepInfo;

const CODE: &str = "unexpected_parameter";

/// Adds the hint to every `unexpected_parameter` diagnostic that has none.
pub fn add(diagnostics: &mut [Diagnostic], steps: &[StepInfo], view: &CatalogView) {
    for d in diagnostics
        .iter_mut()
        .filter(|d| d.code == CODE && d.hint.is_none())
    {
        d.hint = hint(&d.path, steps, view);
    }
}

fn hint(path: &str, steps: &[StepInfo], view: &CatalogView) -> Option<String> {
    // The innermost step whose pointer holds the diagnostic's.
    let step = steps
        .iter()
        .filter(|s| path.starts_with(&format!("{}/", s.pointer)))
        .max_by_key(|s| s.pointer.len())?;
    let capability = step.capability.as_deref()?;
    let wanted = path
        .rsplit('/')
        .next()?
        .replace("~1", "/")
        .replace("~0", "~");
    let entry = view.get(capability)?;
    let params: Vec<String> = entry
        .get("input_schema")?
        .get("properties")?
        .as_object()?
        .keys()
        .cloned()
        .collect();
    let closest = close_matches(&wanted, &params);
    let takes = params.join(", ");
    Some(match closest.first() {
        Some(best) => format!("did you mean '{best}'? {capability} takes: {takes}"),
        None => format!("{capability} takes: {takes}"),
    })
}
