//! Cron expressions as n8n's Schedule Trigger takes them: five fields
//! (minute hour day-of-month month day-of-week) or six (seconds first),
//! each `*`, a value, a range `a-b`, a list `a,b`, and a step `/n`; months
//! and week days also by their three-letter English names. n8n accepts an
//! invalid one when the workflow is saved and activated and only fails when
//! the trigger runs, so the adapter says it before.

/// (field name, lowest, highest, names for the values from `lowest`).
const FIELDS: [(&str, u32, u32, &[&str]); 6] = [
    ("second", 0, 59, &[]),
    ("minute", 0, 59, &[]),
    ("hour", 0, 23, &[]),
    ("day of month", 1, 31, &[]),
    (
        "month",
        1,
        12,
        &[
            "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
        ],
    ),
    // 7 is Sunday too.
    (
        "day of week",
        0,
        7,
        &["sun", "mon", "tue", "wed", "thu", "fri", "sat"],
    ),
];

/// Why `expression` is not a cron expression, if it is not.
pub fn problem(expression: &str) -> Option<String> {
    let parts: Vec<&str> = expression.split_whitespace().collect();
    let fields: &[(&str, u32, u32, &[&str])] = match parts.len() {
        5 => &FIELDS[1..],
        6 => &FIELDS[..],
        n => return Some(format!("it has {n} fields, not 5 or 6")),
    };
    for (part, (name, low, high, names)) in parts.iter().zip(fields) {
        if let Err(why) = field(part, *low, *high, names) {
            return Some(format!("{name} '{part}': {why}"));
        }
    }
    None
}

/// Checks one field: a comma-separated list of items.
fn field(text: &str, low: u32, high: u32, names: &[&str]) -> Result<(), String> {
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((r, s)) => (r, Some(s)),
            None => (item, None),
        };
        if let Some(step) = step {
            match step.parse::<u32>() {
                Ok(s) if s >= 1 => {}
                _ => return Err(format!("the step '{step}' is not a positive number")),
            }
        }
        if range == "*" || range == "?" {
            continue;
        }
        let (from, to) = match range.split_once('-') {
            Some((a, b)) => (a, Some(b)),
            None => (range, None),
        };
        let from = value(from, low, high, names)?;
        if let Some(to) = to {
            let to = value(to, low, high, names)?;
            if to < from {
                return Err(format!("the range {from}-{to} runs backwards"));
            }
        }
    }
    Ok(())
}

/// One value, by number or name, within `low..=high`.
fn value(text: &str, low: u32, high: u32, names: &[&str]) -> Result<u32, String> {
    if let Some(i) = names.iter().position(|n| n.eq_ignore_ascii_case(text)) {
        return Ok(low + i as u32);
    }
    match text.parse::<u32>() {
        Ok(v) if (low..=high).contains(&v) => Ok(v),
        Ok(v) => Err(format!("{v} is out of range ({low}-{high})")),
        Err(_) => Err(format!("'{text}' is not a number")),
    }
}

#[cfg(test)]
mod tests {
    use super::problem;

    #[test]
    fn valid_expressions_pass() {
        for e in [
            "0 9 * * 1-5",
            "*/5 * * * *",
            "0 0 1,15 * *",
            "30 0 9 * * mon-fri",
            "0 0 * JAN,jul sun",
            "0 12 * * 7",
        ] {
            assert_eq!(problem(e), None, "{e}");
        }
    }

    #[test]
    fn invalid_expressions_say_which_field() {
        assert_eq!(
            problem("0 25 * * *").as_deref(),
            Some("hour '25': 25 is out of range (0-23)")
        );
        assert_eq!(
            problem("every minute please").as_deref(),
            Some("it has 3 fields, not 5 or 6")
        );
        assert!(problem("*/0 * * * *").unwrap().contains("step"));
        assert!(problem("5-1 * * * *").unwrap().contains("backwards"));
        assert!(problem("* * * * funday").unwrap().contains("day of week"));
    }
}
