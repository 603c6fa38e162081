//! Start-up checks of the REST adapter's `[engine.mapping]`: every problem
//! names its key and the fix, so a mapping that cannot work never starts.

use super::{EngineMapping, Runner, StateMeaning};
use crate::config::EngineConfig;
use crate::engines::rest::answer::is_status_key;
use crate::engines::rest::body::{encoding_problem, placeholder, unknown_placeholders};

/// (key, problem, fix) for everything wrong with the REST adapter's keys of
/// an engine table.
pub fn engine_problems(engine: &EngineConfig) -> Vec<(String, String, String)> {
    match super::read(engine) {
        Ok(mapping) => problems(&mapping),
        Err(why) => vec![(
            format!("engine.{}", super::TABLE),
            why,
            "correct the mapping table (docs/adapting.md lists every key)".into(),
        )],
    }
}

/// (key, problem, fix) for everything wrong with a mapping.
pub fn problems(m: &EngineMapping) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut problem = |key: &str, what: String, fix: &str| {
        out.push((key.to_string(), what, fix.to_string()));
    };
    for (call, body, encodings) in [
        ("check", &m.check.body, &m.check.encodings),
        ("run", &m.run.body, &m.run.encodings),
    ] {
        if !body.is_table() {
            problem(
                &format!("engine.mapping.{call}.body"),
                "not a table".into(),
                "write the request body as a TOML table, e.g. { workflow = \"{{program}}\" }",
            );
        }
        for (key, name) in unknown_placeholders(body, &format!("engine.mapping.{call}.body")) {
            problem(
                &key,
                format!("unknown placeholder {{{{{name}}}}}"),
                "use one of {{program}}, {{input}}, {{context}}, {{trace}}, {{dry_run}}, {{deadline}}",
            );
        }
        if !uses(body, "program") {
            problem(
                &format!("engine.mapping.{call}.body"),
                "the body never sends the program".into(),
                "put \"{{program}}\" where the engine expects the program",
            );
        }
        for (name, encoding) in [
            ("program", &encodings.program),
            ("input", &encodings.input),
            ("context", &encodings.context),
            ("trace", &encodings.trace),
            ("dry_run", &encodings.dry_run),
            ("deadline", &encodings.deadline),
        ] {
            if let Some(why) = encoding_problem(name, encoding) {
                problem(
                    &format!("engine.mapping.{call}.encodings.{name}"),
                    why,
                    "see docs/adapting.md, \"Request bodies\"",
                );
            }
        }
    }
    let status_keys = m
        .check
        .status
        .keys()
        .map(|k| ("check", k))
        .chain(m.run.status.keys().map(|k| ("run", k)));
    for (call, key) in status_keys {
        if !is_status_key(key) {
            problem(
                &format!("engine.mapping.{call}.status.\"{key}\""),
                format!("'{key}' is neither an HTTP status nor a class"),
                "use a code such as \"422\" or a class such as \"5xx\"",
            );
        }
    }
    if m.events.counter_base > 1 {
        problem(
            "engine.mapping.events.counter_base",
            format!("{} is not a counter base", m.events.counter_base),
            "use 0 (the engine counts iterations from 0) or 1",
        );
    }
    if !m.run.states.values().any(|s| *s == StateMeaning::Completed) {
        problem(
            "engine.mapping.run.states",
            "no state value means \"completed\"".into(),
            "map the engine's success state, e.g. { COMPLETED = \"completed\", ... }",
        );
    }
    if m.run.runner == Runner::Async {
        let r = &m.run;
        if !r.poll.path.contains("{run_id}") {
            problem(
                "engine.mapping.run.poll.path",
                format!("'{}' has no {{run_id}}", r.poll.path),
                "an asynchronous runner needs its status call, e.g. \"/runs/{run_id}\"",
            );
        }
        if !r.states.values().any(|s| *s == StateMeaning::Running) {
            problem(
                "engine.mapping.run.states",
                "no state value means \"running\"".into(),
                "map the states of an unfinished run to \"running\"",
            );
        }
        for (key, path) in [
            ("cancel.path", &r.cancel.path),
            ("output.path", &r.output.path),
            ("log.path", &r.log.path),
        ] {
            if !path.is_empty() && !path.contains("{run_id}") {
                problem(
                    &format!("engine.mapping.run.{key}"),
                    format!("'{path}' has no {{run_id}}"),
                    "name the run in the path, e.g. \"/runs/{run_id}/...\", or leave the path empty",
                );
            }
        }
        if !r.log.path.is_empty() && !r.log.next.is_empty() && !r.log.path.contains("{cursor}") {
            problem(
                "engine.mapping.run.log.path",
                format!(
                    "'{}' has no {{cursor}} but log.next names a next page",
                    r.log.path
                ),
                "put {cursor} where the engine takes the page cursor, or set log.next = \"\"",
            );
        }
    }
    out
}

fn uses(template: &toml::Value, name: &str) -> bool {
    match template {
        toml::Value::String(s) => placeholder(s) == Some(name),
        toml::Value::Table(t) => t.values().any(|v| uses(v, name)),
        toml::Value::Array(a) => a.iter().any(|v| uses(v, name)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use std::path::Path;

    /// The `engine…` problems of a config with `engine_keys` under
    /// `[engine]` and then the `mapping` tables.
    fn problems(engine_keys: &str, mapping: &str) -> Vec<String> {
        let text = format!(
            "[session]\nsecret = \"0123456789abcdef0123\"\n\
             [engine]\nurl = \"http://127.0.0.1:1\"\n{engine_keys}\n{mapping}\n"
        );
        Config::parse(&text, Path::new("gateway.toml"))
            .expect("parses")
            .validate()
            .into_iter()
            .filter(|p| p.key.starts_with("engine"))
            .map(|p| format!("{}: {}", p.key, p.problem))
            .collect()
    }

    #[test]
    fn the_defaults_are_a_valid_mapping() {
        assert!(problems("", "").is_empty(), "{:?}", problems("", ""));
    }

    #[test]
    fn every_wrong_mapping_key_is_named() {
        for (engine_keys, mapping, key) in [
            (
                "",
                "[engine.mapping.run]\nbody = { workflow = \"{{programme}}\" }",
                "engine.mapping.run.body.workflow",
            ),
            (
                "",
                "[engine.mapping.check]\nbody = { ctx = \"{{context}}\" }",
                "engine.mapping.check.body",
            ),
            (
                "",
                "[engine.mapping.run.encodings]\ndeadline = \"minutes\"",
                "engine.mapping.run.encodings.deadline",
            ),
            (
                "",
                "[engine.mapping.run.encodings]\ndry_run = \"seconds\"",
                "engine.mapping.run.encodings.dry_run",
            ),
            (
                "",
                "[engine.mapping.run]\nstatus = { \"5XX\" = \"failed\" }",
                "engine.mapping.run.status.\"5XX\"",
            ),
            (
                "",
                "[engine.mapping.events]\ncounter_base = 2",
                "engine.mapping.events.counter_base",
            ),
            (
                "",
                "[engine.mapping.run]\nstates = { DONE = \"failed\" }",
                "engine.mapping.run.states",
            ),
            (
                "",
                "[engine.mapping.run]\nrunner = \"async\"",
                "engine.mapping.run.poll.path",
            ),
            (
                "",
                "[engine.mapping.run]\nrunner = \"async\"\nstates = { OK = \"completed\", GO = \"running\" }\n\
                 poll = { path = \"/r/{run_id}\" }\nlog = { path = \"/r/{run_id}/log\", next = \"more\" }",
                "engine.mapping.run.log.path",
            ),
            ("max_in_flight = 0", "", "engine.max_in_flight"),
            ("urll = \"http://x\"", "", "engine.urll"),
            (
                "",
                "[engine.mapping]\ntenant_headr = \"X-T\"",
                "engine.mapping",
            ),
            ("", "[engine.mistral]\npage_size = 5", "engine.mistral"),
        ] {
            let found = problems(engine_keys, mapping);
            assert!(
                found.iter().any(|p| p.starts_with(&format!("{key}:"))),
                "{key} not named for {mapping:?}: {found:?}"
            );
        }
    }
}
