//! What the Host presents and trusts: the API key (from the command line,
//! the environment, or a file kept out of both) and the extra CA roots for
//! https:// servers with a private CA.

use std::path::Path;

/// Why the key or the CA file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error("--key-file and --key (or PILOTAGE_KEY) both give the key; give one")]
    TwoKeys,
    #[error("cannot read the key file {path}: {source}")]
    KeyFile {
        path: String,
        source: std::io::Error,
    },
    #[error("the key file {0} is empty")]
    EmptyKey(String),
    #[error("cannot read the CA file {path}: {source}")]
    CaFile {
        path: String,
        source: std::io::Error,
    },
    #[error("the CA file {0} holds no PEM certificate")]
    NoCertificate(String),
}

/// The API key: `--key`/`PILOTAGE_KEY`, or the content of `--key-file`
/// with its trailing newline trimmed (editors and `echo` add one).
pub fn key(given: Option<&str>, file: Option<&Path>) -> Result<Option<String>, CredentialError> {
    match (given, file) {
        (Some(_), Some(_)) => Err(CredentialError::TwoKeys),
        (Some(k), None) => Ok(Some(k.to_string())),
        (None, None) => Ok(None),
        (None, Some(path)) => {
            let shown = path.display().to_string();
            let text =
                std::fs::read_to_string(path).map_err(|source| CredentialError::KeyFile {
                    path: shown.clone(),
                    source,
                })?;
            let key = text.trim_end_matches(['\n', '\r']);
            if key.trim().is_empty() {
                return Err(CredentialError::EmptyKey(shown));
            }
            Ok(Some(key.to_string()))
        }
    }
}

/// The certificates of `--ca-file` (one PEM certificate or a bundle),
/// trusted beside the platform's roots.
pub fn extra_roots(file: Option<&Path>) -> Result<Vec<reqwest::Certificate>, CredentialError> {
    let Some(path) = file else {
        return Ok(Vec::new());
    };
    let shown = path.display().to_string();
    let pem = std::fs::read(path).map_err(|source| CredentialError::CaFile {
        path: shown.clone(),
        source,
    })?;
    match reqwest::Certificate::from_pem_bundle(&pem) {
        Ok(certs) if !certs.is_empty() => Ok(certs),
        _ => Err(CredentialError::NoCertificate(shown)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str, content: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("pilotage-cred-{}-{name}", std::process::id()));
        std::fs::write(&p, content).expect("write scratch file");
        p
    }

    #[test]
    fn the_key_file_loses_only_its_trailing_newline() {
        let p = scratch("key", "s3cret value\r\n");
        assert_eq!(
            key(None, Some(&p)).expect("key").as_deref(),
            Some("s3cret value")
        );
        assert!(matches!(
            key(Some("k"), Some(&p)),
            Err(CredentialError::TwoKeys)
        ));
        let empty = scratch("empty", "\n");
        assert!(matches!(
            key(None, Some(&empty)),
            Err(CredentialError::EmptyKey(_))
        ));
        let _ = std::fs::remove_file(p);
        let _ = std::fs::remove_file(empty);
    }

    #[test]
    fn a_ca_file_without_a_certificate_is_refused() {
        let p = scratch("ca", "not a certificate\n");
        assert!(matches!(
            extra_roots(Some(&p)),
            Err(CredentialError::NoCertificate(_))
        ));
        assert!(extra_roots(None).expect("none").is_empty());
        let _ = std::fs::remove_file(p);
    }
}
