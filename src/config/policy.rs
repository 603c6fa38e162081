//! Validation of the policy fields a principal's configuration carries
//! (`permissions`, `max_risk`, `forbid_risk_hints`, `approve_above`), shared
//! by API keys and anonymous callers.

use crate::auth::policy::{FORBIDDABLE_HINTS, Permissions, RiskCeiling, RiskLevel};

/// A principal's configured policy fields, as read.
#[derive(Debug, Clone, Copy, Default)]
pub struct PolicyFields<'a> {
    pub permissions: Option<&'a [String]>,
    pub max_risk: Option<&'a str>,
    pub forbid_risk_hints: &'a [String],
    pub approve_above: Option<&'a str>,
}

/// A principal's policy, resolved.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub permissions: Permissions,
    pub ceiling: RiskCeiling,
    /// Runs whose plan is riskier than this wait for a person's approval.
    pub approve_above: Option<RiskLevel>,
}

/// (key, problem, fix) triples for the fields under `prefix` (e.g.
/// `auth.key[0].` or `auth.anonymous_`).
pub fn problems(prefix: &str, fields: PolicyFields<'_>) -> Vec<(String, String, String)> {
    let PolicyFields {
        permissions,
        max_risk,
        forbid_risk_hints,
        approve_above,
    } = fields;
    let mut out = Vec::new();
    let key = |k: &str| format!("{prefix}{k}");
    if let Some(names) = permissions {
        match Permissions::parse(names.iter().map(String::as_str)) {
            Err(unknown) => out.push((
                key("permissions"),
                format!("'{unknown}' is not a permission"),
                "use some of learn, validate, execute, deploy, trace, approve".into(),
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
    if let Some(a) = approve_above
        && RiskLevel::parse(a).is_none()
    {
        out.push((
            key("approve_above"),
            format!("'{a}' is not a risk level"),
            format!(
                "use one of {}: runs riskier than it wait for a person's approval",
                RiskLevel::NAMES.join(", ")
            ),
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

/// The policy of validated fields.
pub fn resolve(fields: PolicyFields<'_>) -> Policy {
    let permissions = fields
        .permissions
        .and_then(|names| Permissions::parse(names.iter().map(String::as_str)).ok())
        .unwrap_or(Permissions::ALL);
    let ceiling = RiskCeiling::parse(fields.max_risk, fields.forbid_risk_hints).unwrap_or_default();
    Policy {
        permissions,
        ceiling,
        approve_above: fields.approve_above.and_then(RiskLevel::parse),
    }
}
