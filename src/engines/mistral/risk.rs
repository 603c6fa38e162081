//! The risk table: Mistral's actions carry no side-effect information, so
//! the configuration names each action's effect by name globs, in order,
//! the first match winning. An action no row matches gets no effect, which
//! the catalog reads as destructive (fail closed).

use serde::Deserialize;

/// The effects a row may name (the four Pilotage risks).
pub const EFFECTS: [&str; 4] = ["safe", "write", "external", "destructive"];

/// One row: actions whose name matches `glob` have `effect`.
#[derive(Debug, Clone, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RiskRule {
    /// Action names this row covers (`*` matches any text).
    pub glob: String,
    /// Their effect: `safe`, `write`, `external` or `destructive`.
    pub effect: String,
}

/// The built-in table for Mistral's 14 standard actions.
pub fn default_rules() -> Vec<RiskRule> {
    let rule = |glob: &str, effect: &str| RiskRule {
        glob: glob.into(),
        effect: effect.into(),
    };
    vec![
        // Compute only: no state outside the execution.
        rule("std.echo", "safe"),
        rule("std.noop", "safe"),
        rule("std.async_noop", "safe"),
        rule("std.fail", "safe"),
        rule("std.sleep", "safe"),
        rule("std.test_dict", "safe"),
        // The scripts run in an embedded interpreter without I/O.
        rule("std.js", "safe"),
        rule("std.javascript", "safe"),
        // Reach other systems.
        rule("std.http", "external"),
        rule("std.mistral_http", "external"),
        rule("std.email", "external"),
        // A shell on another machine can do anything.
        rule("std.ssh*", "destructive"),
        rule("std.wait_ssh", "destructive"),
    ]
}

/// The effect of `name`: the first matching row's, `None` when none matches.
pub fn effect<'a>(rules: &'a [RiskRule], name: &str) -> Option<&'a str> {
    rules
        .iter()
        .find(|r| glob_match(&r.glob, name))
        .map(|r| r.effect.as_str())
}

/// Whether `name` matches `glob`: `*` is any run of characters, `?` one
/// character, everything else itself.
pub fn glob_match(glob: &str, name: &str) -> bool {
    let g: Vec<char> = glob.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative matching with one backtrack point (the last `*`): linear
    // in practice, never exponential.
    let (mut gi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if gi < g.len() && (g[gi] == '?' || (g[gi] != '*' && g[gi] == n[ni])) {
            gi += 1;
            ni += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some((gi, ni));
            gi += 1;
        } else if let Some((sg, sn)) = star {
            gi = sg + 1;
            ni = sn + 1;
            star = Some((sg, sn + 1));
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|c| *c == '*')
}

/// Why a glob is unusable, if it is.
pub fn glob_problem(glob: &str) -> Option<String> {
    if glob.trim().is_empty() {
        return Some("an empty glob matches nothing".into());
    }
    if glob.chars().any(char::is_whitespace) {
        return Some(format!("'{glob}' has a space; Mistral names never do"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        for (glob, name, expected) in [
            ("std.echo", "std.echo", true),
            ("std.echo", "std.echoes", false),
            ("std.ssh*", "std.ssh", true),
            ("std.ssh*", "std.ssh_proxied", true),
            ("std.ssh*", "std.wait_ssh", false),
            ("*", "anything", true),
            ("*.http", "std.mistral_http", false),
            ("*http", "std.mistral_http", true),
            ("std.?s", "std.js", true),
            ("std.?s", "std.jss", false),
            ("a*b*c", "axxbyyc", true),
            ("a*b*c", "axxbyy", false),
            ("", "", true),
        ] {
            assert_eq!(glob_match(glob, name), expected, "{glob} ~ {name}");
        }
    }

    #[test]
    fn the_first_matching_row_wins_and_unknown_names_get_none() {
        let rules = vec![
            RiskRule {
                glob: "std.echo".into(),
                effect: "safe".into(),
            },
            RiskRule {
                glob: "std.*".into(),
                effect: "write".into(),
            },
        ];
        assert_eq!(effect(&rules, "std.echo"), Some("safe"));
        assert_eq!(effect(&rules, "std.noop"), Some("write"));
        assert_eq!(effect(&rules, "custom.deploy"), None);
    }

    #[test]
    fn the_built_in_table_covers_the_standard_actions() {
        let rules = default_rules();
        for (name, expected) in [
            ("std.async_noop", "safe"),
            ("std.echo", "safe"),
            ("std.email", "external"),
            ("std.fail", "safe"),
            ("std.http", "external"),
            ("std.javascript", "safe"),
            ("std.js", "safe"),
            ("std.mistral_http", "external"),
            ("std.noop", "safe"),
            ("std.sleep", "safe"),
            ("std.ssh", "destructive"),
            ("std.ssh_proxied", "destructive"),
            ("std.test_dict", "safe"),
            ("std.wait_ssh", "destructive"),
        ] {
            assert_eq!(effect(&rules, name), Some(expected), "{name}");
        }
        assert_eq!(effect(&rules, "acme.deploy"), None);
        for r in &rules {
            assert!(EFFECTS.contains(&r.effect.as_str()), "{r:?}");
            assert_eq!(glob_problem(&r.glob), None);
        }
    }
}
