//! Range checks for numeric settings: every number a configuration can hold
//! is checked at start against the values the gateway can serve with, so no
//! setting reaches a request path that cannot handle it (a page size of 0, a
//! timeout of 0, a bound above what the parser itself allows).

/// A (key, problem, fix) triple when `value` lies outside `min..=max`.
pub fn outside(
    key: &str,
    value: u64,
    min: u64,
    max: u64,
    default: u64,
) -> Option<(String, String, String)> {
    (value < min || value > max).then(|| {
        (
            key.to_string(),
            format!("{value} is outside {min}..={max}"),
            format!(
                "use a value from {min} to {max}, or remove the key for the default ({default})"
            ),
        )
    })
}

/// Every triple of `checks` that found a problem.
pub fn problems(
    checks: impl IntoIterator<Item = Option<(String, String, String)>>,
) -> Vec<(String, String, String)> {
    checks.into_iter().flatten().collect()
}

/// A `usize` setting as `u64` (lossless on every supported target).
pub fn size(value: usize) -> u64 {
    u64::try_from(value).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ends_are_inside_and_beyond_them_is_outside() {
        assert!(outside("k", 1, 1, 5, 3).is_none());
        assert!(outside("k", 5, 1, 5, 3).is_none());
        let (key, problem, fix) = outside("a.b", 0, 1, 5, 3).unwrap();
        assert_eq!(key, "a.b");
        assert!(problem.contains("0 is outside 1..=5"), "{problem}");
        assert!(fix.contains("default (3)"), "{fix}");
        assert!(outside("k", 6, 1, 5, 3).is_some());
    }
}
