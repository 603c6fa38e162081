//! The message shapes documented in README.md ("Message shapes" table), as patterns
//! the tests match every emitted text against — so the README stays the complete
//! list an operator can tune classifier rules with.

/// The documented texts of one dialect: `'a'` or `'b'`.
pub fn documented(dialect: char) -> Vec<String> {
    let readme = include_str!("../../README.md");
    let column = if dialect == 'a' { 2 } else { 4 };
    let section = readme
        .split("## Message shapes")
        .nth(1)
        .and_then(|rest| rest.split("\n### ").next())
        .expect("README has a Message shapes section");
    section
        .lines()
        .filter(|line| {
            line.starts_with("| ") && line.chars().nth(2).is_some_and(|c| c.is_ascii_digit())
        })
        .map(|line| {
            let cells = split_row(line);
            cells[column].trim().trim_matches('`').replace("\\|", "|")
        })
        .collect()
}

/// Splits a markdown table row on `|` that are not escaped as `\|`.
fn split_row(line: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut current = String::new();
    let mut previous = ' ';
    for c in line.trim().trim_start_matches('|').chars() {
        if c == '|' && previous != '\\' {
            cells.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
        previous = c;
    }
    cells
}

/// True when `text` is an instance of `pattern`, where `<NAME>` stands for any text.
pub fn matches(pattern: &str, text: &str) -> bool {
    let parts = literal_parts(pattern);
    let (first, rest) = parts.split_first().expect("at least one part");
    let Some(mut remaining) = text.strip_prefix(first.as_str()) else {
        return false;
    };
    if rest.is_empty() {
        return remaining.is_empty();
    }
    let (last, middle) = rest.split_last().expect("non-empty");
    for part in middle {
        match remaining.find(part.as_str()) {
            Some(at) => remaining = &remaining[at + part.len()..],
            None => return false,
        }
    }
    remaining.ends_with(last.as_str())
}

/// The literal text between placeholders (`<` + capitals + `>`).
fn literal_parts(pattern: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut rest = pattern;
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let close = after.find('>');
        let is_placeholder =
            close.is_some_and(|c| c > 0 && after[..c].chars().all(|ch| ch.is_ascii_uppercase()));
        let last = parts.last_mut().expect("non-empty");
        if let (true, Some(c)) = (is_placeholder, close) {
            last.push_str(&rest[..open]);
            parts.push(String::new());
            rest = &after[c + 1..];
        } else {
            last.push_str(&rest[..=open]);
            rest = after;
        }
    }
    if let Some(last) = parts.last_mut() {
        last.push_str(rest);
    }
    parts
}

/// Every text must match a documented pattern, and every pattern must be hit.
pub fn assert_complete(dialect: char, texts: &[String]) {
    let patterns = documented(dialect);
    assert!(
        patterns.len() >= 28,
        "README lists {} shapes",
        patterns.len()
    );
    for text in texts {
        assert!(
            patterns.iter().any(|p| matches(p, text)),
            "dialect {dialect}: text {text:?} matches no documented shape"
        );
    }
    for pattern in &patterns {
        assert!(
            texts.iter().any(|t| matches(pattern, t)),
            "dialect {dialect}: documented shape {pattern:?} was never produced"
        );
    }
}
