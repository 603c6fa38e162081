//! Secrets that change while the gateway runs: previous session secrets
//! (accepted to verify sessions during a rotation, never to sign) and the
//! API keys file, read again on change.
//!
//! Rotating the session secret without logging everyone out: put the new
//! value in `session.secret` (or its file) and the old one in
//! `session.previous_secrets` (or a file listed in
//! `session.previous_secret_files`), restart the instances one by one, and
//! drop the old one after `session.ttl_secs`, when no session it signed is
//! still valid.

use super::{ApiKeyConfig, Config, ConfigProblem};

impl Config {
    /// Reads each file of `session.previous_secret_files` into
    /// `session.previous_secrets` (without its trailing newline).
    pub(super) fn read_previous_secret_files(&mut self) -> Vec<ConfigProblem> {
        let mut problems = Vec::new();
        for (i, path) in self
            .session
            .previous_secret_files
            .clone()
            .iter()
            .enumerate()
        {
            match std::fs::read_to_string(self.resolve(path)) {
                Ok(text) => self
                    .session
                    .previous_secrets
                    .push(text.trim_end_matches(['\n', '\r']).to_string()),
                Err(e) => problems.push(ConfigProblem {
                    file: self.source.display().to_string(),
                    key: format!("session.previous_secret_files[{i}]"),
                    problem: format!("cannot read '{path}': {e}"),
                    fix: "name a readable file (relative paths start at the configuration's folder), or drop it from the list".into(),
                }),
            }
        }
        problems
    }

    /// (key, problem, fix) for previous session secrets too weak to have
    /// been a current one.
    pub(super) fn previous_secret_problems(&self) -> Vec<(String, String, String)> {
        self.session
            .previous_secrets
            .iter()
            .enumerate()
            .filter(|(_, s)| s.len() < 16)
            .map(|(i, _)| {
                (
                    format!("session.previous_secrets[{i}]"),
                    "shorter than 16 bytes".into(),
                    "list only secrets that signed sessions before (each at least 16 bytes)".into(),
                )
            })
            .collect()
    }

    /// The API keys as they would be in force now: those of the
    /// configuration itself and those `auth.keys_file` holds today, checked
    /// like at start. The problems name the file and key when not.
    pub fn reloaded_api_keys(&self) -> Result<Vec<ApiKeyConfig>, Vec<ConfigProblem>> {
        let mut fresh = self.clone();
        let inline = self.auth.keys.len() - self.auth.keys_from_file;
        fresh.auth.keys.truncate(inline);
        fresh.auth.keys_from_file = 0;
        let problems = fresh.read_keys_file();
        if !problems.is_empty() {
            return Err(problems);
        }
        let problems = fresh.validate();
        if problems.is_empty() {
            Ok(fresh.auth.keys)
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
[session]
secret = "current-secret-0123456789"
previous_secrets = ["previous-secret-0123456789", "short"]
[engine]
url = "http://127.0.0.1:7070"
[auth]
keys_file = "keys.toml"
[[auth.key]]
name = "inline"
tenant = "acme"
sha256 = "e2b3e1e2e33342be927c417095dae1b134accda8be5501aa427e6cb2b5ecd3ab"
"#;

    fn key_block(name: &str) -> String {
        format!(
            "[[key]]\nname = \"{name}\"\ntenant = \"acme\"\nsha256 = \"{}\"\n",
            "a".repeat(64)
        )
    }

    #[test]
    fn short_previous_secrets_are_refused_and_files_are_read() {
        let dir = std::env::temp_dir().join(format!("pilotage-rotation-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("keys.toml"), key_block("ci")).unwrap();
        std::fs::write(dir.join("old.secret"), "from-a-file-0123456789\n").unwrap();
        let mut c = Config::parse(BASE, &dir.join("gateway.toml")).unwrap();
        c.session.previous_secret_files = vec!["old.secret".into(), "missing.secret".into()];
        let problems = c.apply_env(|_| None);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].key, "session.previous_secret_files[1]");
        assert_eq!(c.session.previous_secrets[2], "from-a-file-0123456789");
        let weak: Vec<String> = c
            .previous_secret_problems()
            .into_iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(weak, ["session.previous_secrets[1]"]);

        // A keys file that no longer parses is reported, naming its key
        // (tests/secret_rotation.rs reloads good ones through the endpoint).
        std::fs::write(dir.join("keys.toml"), "[[key]]\nname = \"broken\"\n").unwrap();
        let problems = c.reloaded_api_keys().unwrap_err();
        assert_eq!(problems[0].key, "auth.keys_file", "{problems:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
