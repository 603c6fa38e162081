//! The diagnostic of a step calling a capability the caller cannot see
//! (Part II §6.3): the same whether the capability exists for someone else
//! or nowhere, with hints that name only visible entries.

use crate::classify::{Diagnostic, Severity};

/// `unknown_capability` at `locator`; `what` names the called thing in the
/// language's own words (`capability`, `action or workflow`).
pub fn unknown_capability(
    locator: String,
    what: &str,
    name: &str,
    visible: &[String],
) -> Diagnostic {
    let close = crate::classify::close_matches(name, visible);
    Diagnostic {
        severity: Severity::Error,
        code: "unknown_capability".into(),
        path: locator,
        message: format!("unknown {what} '{name}'"),
        hint: (!close.is_empty()).then(|| format!("close match: {}", close.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_name_only_close_visible_entries() {
        let visible = vec!["crm.lookup".to_string(), "mail.send".to_string()];
        let d = unknown_capability(
            "/steps/0/capability".into(),
            "capability",
            "crm.lookpu",
            &visible,
        );
        assert_eq!(d.message, "unknown capability 'crm.lookpu'");
        assert_eq!(d.hint.as_deref(), Some("close match: crm.lookup"));
        let far = unknown_capability("@1:1-1:2".into(), "action or workflow", "zzz", &visible);
        assert_eq!((far.path.as_str(), far.hint), ("@1:1-1:2", None));
    }
}
