//! "Did you mean": an `unexpected_parameter` diagnostic without a hint gets
//! the close matches among the parameters of the step's capability, drawn
//! from the caller's own catalog view (so a hint never names anything the
//! caller cannot see).

use crate::catalog::CatalogView;
use crate::classify::Diagnostic;
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
        .input_schema()?
        .get("properties")?
        .as_object()?
        .keys()
        .cloned()
        .collect();
    let takes = params.join(", ");
    Some(match closest(&wanted, &params) {
        Some(best) => format!("did you mean '{best}'? {capability} takes: {takes}"),
        None => format!("{capability} takes: {takes}"),
    })
}

/// The parameter nearest to `wanted` by edit distance (a swap counts as
/// one edit), when it is near enough for a typo: parameter names are short,
/// so an absolute distance reads better than a ratio ("idd" → "id").
/// Ties go to the alphabetically first, the same on every instance.
fn closest<'a>(wanted: &str, params: &'a [String]) -> Option<&'a str> {
    let wanted = wanted.to_lowercase();
    let allowed = (wanted.chars().count() / 3).max(1);
    params
        .iter()
        .map(|p| (strsim::damerau_levenshtein(&wanted, &p.to_lowercase()), p))
        .filter(|(distance, _)| *distance <= allowed)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)))
        .map(|(_, p)| p.as_str())
}

#[cfg(test)]
mod tests {
    use super::closest;

    #[test]
    fn a_typo_finds_its_parameter_and_a_stranger_finds_none() {
        let params = ["query".to_string(), "limit".to_string(), "id".to_string()];
        assert_eq!(closest("qury", &params), Some("query"));
        assert_eq!(closest("idd", &params), Some("id"));
        assert_eq!(closest("lmiit", &params), Some("limit"));
        assert_eq!(closest("colour", &params), None);
    }
}
