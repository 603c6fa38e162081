//! A tenant's n8n identity: a member user of its own, whose API key serves
//! the public API and whose login serves what only a login may do (node
//! types, credentials list, manual runs). Both are read from files, never
//! from the configuration text; the owner's key never serves a tenant.

use std::path::Path;

/// What a tenant's folder holds.
#[derive(Clone)]
pub struct TenantSecrets {
    pub api_key: String,
    pub email: String,
    pub password: String,
}

impl std::fmt::Debug for TenantSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TenantSecrets")
            .field("email", &self.email)
            .finish_non_exhaustive()
    }
}

/// Why a tenant's secrets do not read (the texts name the file and never
/// its content).
#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    #[error("{file} cannot be read: {why}")]
    Unreadable { file: String, why: String },
    #[error("{file} is empty")]
    Empty { file: String },
    #[error("{file} is not a JSON object with \"email\" and \"password\" strings")]
    NotAUser { file: String },
}

impl TenantSecrets {
    /// The secrets in `folder` (`api-key`, `user.json`).
    pub fn read(folder: &Path) -> Result<Self, SecretsError> {
        let read = |name: &str| {
            let file = folder.join(name);
            std::fs::read_to_string(&file).map_err(|e| SecretsError::Unreadable {
                file: file.display().to_string(),
                why: e.kind().to_string(),
            })
        };
        let api_key = read("api-key")?.trim().to_string();
        if api_key.is_empty() {
            return Err(SecretsError::Empty {
                file: folder.join("api-key").display().to_string(),
            });
        }
        let user: serde_json::Value =
            serde_json::from_str(&read("user.json")?).unwrap_or(serde_json::Value::Null);
        let field = |k: &str| {
            user.get(k)
                .and_then(serde_json::Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let (Some(email), Some(password)) = (field("email"), field("password")) else {
            return Err(SecretsError::NotAUser {
                file: folder.join("user.json").display().to_string(),
            });
        };
        Ok(Self {
            api_key,
            email,
            password,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_read_from_the_two_files_and_errors_name_the_file() {
        let dir = std::env::temp_dir().join(format!("n8n-tenant-{:x}", rand::random::<u64>()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = TenantSecrets::read(&dir).unwrap_err().to_string();
        assert!(missing.contains("api-key"), "{missing}");
        std::fs::write(dir.join("api-key"), "key-1\n").unwrap();
        std::fs::write(dir.join("user.json"), "{\"email\": \"a@x\"}").unwrap();
        let no_password = TenantSecrets::read(&dir).unwrap_err().to_string();
        assert!(no_password.contains("user.json"), "{no_password}");
        std::fs::write(
            dir.join("user.json"),
            "{\"email\": \"a@x\", \"password\": \"Pw1\"}",
        )
        .unwrap();
        let s = TenantSecrets::read(&dir).unwrap();
        assert_eq!((s.api_key.as_str(), s.email.as_str()), ("key-1", "a@x"));
        assert!(!format!("{s:?}").contains("key-1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
