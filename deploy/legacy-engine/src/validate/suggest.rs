//! "Did you mean" for unknown capabilities. The candidates are the global registry's
//! names, so a suggestion may name a capability the tenant cannot see: a legacy flaw
//! kept on purpose (the gateway is expected to hide it).

use std::collections::BTreeSet;

/// The closest candidate by edit distance, if it is close enough to be a typo
/// (at most a third of the name's length, and never less than 2). Ties go to the
/// alphabetically first name.
pub fn closest(name: &str, candidates: &BTreeSet<String>) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let limit = (name.chars().count() / 3).max(2);
    candidates
        .iter()
        .map(|c| (strsim::levenshtein(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_only_close_names() {
        let names: BTreeSet<String> = ["crm.get_customer", "crm.set_tier", "util.echo"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            closest("crm.get_custmer", &names).as_deref(),
            Some("crm.get_customer")
        );
        assert_eq!(closest("util.ech", &names).as_deref(), Some("util.echo"));
        assert_eq!(closest("payroll.run", &names), None);
        assert_eq!(closest("", &names), None);
    }
}
