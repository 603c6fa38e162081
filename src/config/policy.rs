//! Validation of the policy fields a principal's configuration carries
//! (`permissions`, `max_risk`, `forbid_risk_hints`), shared by API keys and
//! anonymous callers.

use crate::auth::policy::{FORBIDDABLE_HINTS, Permissions, RiskCeiling, RiskLevel};

/// (key, problem, fix) triples for the fields under `prefix` (e.g.
/// `auth.key[0].` or `auth.anonymous_`).
pub fn problems(
    prefix: &str,
    permissions: Option<&[String]>,
    max_risk: Option<&str>,
    forbid_risk_hints: &[String],
) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let key = |k: &str| format!("{prefix}{k}");
    if let Some(names) = permissions {
        match Permissions::parse(names.iter().map(String::as_str)) {
            Err(unknown) => out.push((
                key("permissions"),
                format!("'{unknown}' is not a permission"),
                "use some of learn, validate, execute, deploy, trace".into(),
            )),
            Ok(p) if !p.has_floor() => out.push((
                key("permissions"),
                "every Pilotage caller needs learn and validate".into(),
                "add \"learn\" and \"validate\" (the manifest, guides and validate tools exist for every caller), or remove the caller".into(),
            )),
            Ok(_) => {}
        }
    }
    if let Some(m) = max_risk
        && RiskLevel::parse(m).is_none()
    {
        out.push((
            key("max_risk"),
            format!("'{m}' is not a risk level"),
            format!("use one of {}", RiskLevel::NAMES.join(", ")),
        ));
    }
    if let Err(h) = RiskCeiling::parse(None, forbid_risk_hints) {
        out.push((
            key("forbid_risk_hints"),
            format!("'{h}' cannot be forbidden"),
            format!("use some of {}", FORBIDDABLE_HINTS.join(", ")),
        ));
    }
    out
}

/// The permissions and ceiling of validated fields.
pub fn resolve(
    permissions: Option<&[String]>,
    max_risk: Option<&str>,
    forbid_risk_hints: &[String],
) -> (Permissions, RiskCeiling) {
    let perms = permissions
        .and_then(|names| Permissions::parse(names.iter().map(String::as_str)).ok())
        .unwrap_or(Permissions::ALL);
    let ceiling = RiskCeiling::parse(max_risk, forbid_risk_hints).unwrap_or_default();
    (perms, ceiling)
}
