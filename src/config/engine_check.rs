//! Start-up checks of `[engine]` and `[engine.mapping]`: every problem names
//! its key and the fix, so a mapping that cannot work never starts.

use super::EngineConfig;
use crate::engines::rest::answer::is_status_key;
use crate::engines::rest::body::{encoding_problem, placeholder, unknown_placeholders};
use crate::engines::rest::mapping::{Runner, StateMeaning};

/// (key, problem, fix) for everything wrong with the engine settings.
pub fn engine_problems(engine: &EngineConfig) -> Vec<(String, String, String)> {
    let m = &engine.mapping;
    let mut out = Vec::new();
    let mut problem = |key: &str, what: String, fix: &str| {
        out.push((key.to_string(), what, fix.to_string()));
    };
    if !crate::engines::registry::kinds().contains(&engine.kind.as_str()) {
        problem(
            "engine.kind",
            format!("no engine adapter is called '{}'", engine.kind),
            &format!(
                "use one of: {}",
                crate::engines::registry::kinds().join(", ")
            ),
        );
    }
    if engine.max_in_flight() == 0 {
        problem(
            "engine.max_in_flight",
            "0 would never let a call through".into(),
            "allow at least 1 concurrent engine call (default 64; 8 for kind \"mistral\")",
        );
    }
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
    out.extend(mistral_problems(engine));
    out
}

/// The `kind = "mistral"` checks: its settings, its URL and its call bound.
fn mistral_problems(engine: &EngineConfig) -> Vec<(String, String, String)> {
    use crate::engines::mistral::settings::MAX_IN_FLIGHT;
    let mut out = Vec::new();
    if engine.kind != "mistral" {
        if engine.mistral.is_some() {
            out.push((
                "engine.mistral".into(),
                format!("Mistral settings on an engine of kind '{}'", engine.kind),
                "set kind = \"mistral\", or remove the mistral table".into(),
            ));
        }
        return out;
    }
    if !engine.url.trim_end_matches('/').ends_with("/v2") {
        out.push((
            "engine.url".into(),
            format!("'{}' is not Mistral's v2 API base", engine.url),
            "end the URL with /v2, e.g. http://127.0.0.1:8989/v2".into(),
        ));
    }
    if engine.max_in_flight() > MAX_IN_FLIGHT {
        out.push((
            "engine.max_in_flight".into(),
            format!(
                "{} concurrent calls overrun Mistral's API ({MAX_IN_FLIGHT} worker threads; it resets connections beyond its queue)",
                engine.max_in_flight()
            ),
            "use at most 10 (default 8)".into(),
        ));
    }
    if let Some(settings) = &engine.mistral {
        out.extend(settings.problems());
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
        ] {
            let found = problems(engine_keys, mapping);
            assert!(
                found.iter().any(|p| p.starts_with(&format!("{key}:"))),
                "{key} not named for {mapping:?}: {found:?}"
            );
        }
    }

    /// The problems of a `kind = "mistral"` engine with `keys` and a
    /// `[engine.mistral]` table of `settings`.
    fn mistral_problems(url: &str, keys: &str, settings: &str) -> Vec<String> {
        let text = format!(
            "[session]\nsecret = \"0123456789abcdef0123\"\n\
             [engine]\nurl = \"http://127.0.0.1:1\"\n\
             [engines.m]\nkind = \"mistral\"\nurl = \"{url}\"\n{keys}\n[engines.m.mistral]\n{settings}\n"
        );
        Config::parse(&text, Path::new("gateway.toml"))
            .expect("parses")
            .validate()
            .into_iter()
            .filter(|p| p.key.starts_with("engine"))
            .map(|p| {
                assert_eq!(p.file, "gateway.toml");
                assert!(!p.fix.is_empty());
                format!("{}: {}", p.key, p.problem)
            })
            .collect()
    }

    #[test]
    fn a_mistral_engine_with_defaults_is_valid_and_bounded_to_eight_calls() {
        assert!(
            mistral_problems("http://127.0.0.1:1/v2", "", "").is_empty(),
            "{:?}",
            mistral_problems("http://127.0.0.1:1/v2", "", "")
        );
        let config = Config::parse(
            "[engine]\nurl = \"http://127.0.0.1:1/v2\"\nkind = \"mistral\"\n",
            Path::new("g.toml"),
        )
        .unwrap();
        assert_eq!(config.engine.max_in_flight(), 8);
        let rest = Config::parse("[engine]\nurl = \"http://x\"\n", Path::new("g.toml")).unwrap();
        assert_eq!(rest.engine.max_in_flight(), 64);
    }

    #[test]
    fn every_wrong_mistral_key_is_named() {
        for (url, keys, settings, key) in [
            ("http://127.0.0.1:1", "", "", "engines.m.url"),
            (
                "http://127.0.0.1:1/v2",
                "max_in_flight = 11",
                "",
                "engines.m.max_in_flight",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "risk = [{ glob = \"std.*\", effect = \"harmless\" }]",
                "engines.m.mistral.risk[0].effect",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "risk = [{ glob = \"\", effect = \"safe\" }]",
                "engines.m.mistral.risk[0].glob",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "visibility = { acme = [\"std.echo\", \"std .x\"] }",
                "engines.m.mistral.visibility.\"acme\"[1]",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "poll_interval_ms = 0",
                "engines.m.mistral.poll_interval_ms",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "poll_interval_ms = 100\nmax_poll_interval_ms = 50",
                "engines.m.mistral.max_poll_interval_ms",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "page_size = 0",
                "engines.m.mistral.page_size",
            ),
            (
                "http://127.0.0.1:1/v2",
                "",
                "max_pages = 0",
                "engines.m.mistral.max_pages",
            ),
            (
                "http://127.0.0.1:1/v2",
                "kind = \"rest\"",
                "",
                "engines.m.mistral",
            ),
        ] {
            let keys_and_kind = keys.to_string();
            let found = if keys.starts_with("kind") {
                let text = format!(
                    "[session]\nsecret = \"0123456789abcdef0123\"\n[engine]\nurl = \"http://127.0.0.1:1\"\n\
                     [engines.m]\n{keys_and_kind}\nurl = \"{url}\"\n[engines.m.mistral]\n"
                );
                Config::parse(&text, Path::new("gateway.toml"))
                    .expect("parses")
                    .validate()
                    .into_iter()
                    .map(|p| format!("{}: {}", p.key, p.problem))
                    .collect()
            } else {
                mistral_problems(url, keys, settings)
            };
            assert!(
                found.iter().any(|p| p.starts_with(&format!("{key}:"))),
                "{key} not named for {keys:?} {settings:?}: {found:?}"
            );
        }
    }

    #[test]
    fn unknown_mistral_keys_are_refused_when_parsed() {
        let text = "[engine]\nurl = \"http://127.0.0.1:1/v2\"\nkind = \"mistral\"\n[engine.mistral]\npoll_ms = 5\n";
        let e = Config::parse(text, Path::new("gateway.toml")).unwrap_err();
        assert!(e.to_string().contains("poll_ms"), "{e}");
    }

    #[test]
    fn the_search_path_is_tried_before_the_config_directory() {
        let dir = std::env::temp_dir().join(format!("pilotage-search-{}", std::process::id()));
        let shared = dir.join("shared");
        std::fs::create_dir_all(shared.join("rules")).unwrap();
        std::fs::write(shared.join("rules/x.toml"), "").unwrap();
        let mut config = Config::parse(
            "[engine]\nurl = \"http://127.0.0.1:1\"\n",
            &dir.join("etc/gateway.toml"),
        )
        .unwrap();
        config.apply_env(|k| {
            (k == "PILOTAGE_SEARCH_PATH").then(|| format!("missing:{}", shared.display()))
        });
        assert_eq!(config.resolve("rules/x.toml"), shared.join("rules/x.toml"));
        assert_eq!(
            config.resolve("rules/y.toml"),
            dir.join("etc/rules/y.toml"),
            "not found on the search path: next to the file"
        );
        assert_eq!(config.resolve("/abs/z"), Path::new("/abs/z"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
