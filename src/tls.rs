//! TLS of the gateway's outgoing connections (an `https://` engine, a
//! `rediss://` Redis): rustls with the aws-lc-rs crypto provider (no
//! OpenSSL), the system's root certificates, and optionally a private CA
//! (`engine.ca_file`, `store.ca_file`) trusted in addition.

use std::path::{Path, PathBuf};

/// A CA file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("{key} '{path}': cannot read: {source}")]
    Unreadable {
        key: String,
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{key} '{path}': no PEM certificate in it ({detail})")]
    NotPem {
        key: String,
        path: PathBuf,
        detail: String,
    },
}

/// Makes aws-lc-rs the process's rustls provider, once (later calls are
/// no-ops), before the redis crate builds its TLS configuration: rustls
/// refuses to pick one by itself when a dependency also compiles another.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
}

/// The PEM text of the CA file `path` (the setting `key`, for messages), or
/// `None` when no CA file is configured.
pub fn read_ca(key: &str, path: Option<&Path>) -> Result<Option<Vec<u8>>, TlsError> {
    let Some(path) = path else { return Ok(None) };
    let pem = std::fs::read(path).map_err(|source| TlsError::Unreadable {
        key: key.to_string(),
        path: path.to_path_buf(),
        source,
    })?;
    // Parsed once here so a wrong file fails at start, naming the setting.
    match reqwest::Certificate::from_pem_bundle(&pem) {
        Ok(certs) if !certs.is_empty() => Ok(Some(pem)),
        Ok(_) => Err(TlsError::NotPem {
            key: key.to_string(),
            path: path.to_path_buf(),
            detail: "the file holds no certificate".into(),
        }),
        Err(e) => Err(TlsError::NotPem {
            key: key.to_string(),
            path: path.to_path_buf(),
            detail: e.to_string(),
        }),
    }
}

/// The certificates of a PEM bundle already checked by [`read_ca`].
pub fn http_roots(pem: Option<&[u8]>) -> Vec<reqwest::Certificate> {
    pem.and_then(|p| reqwest::Certificate::from_pem_bundle(p).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_ca_file_is_no_extra_root() {
        assert!(read_ca("engine.ca_file", None).unwrap().is_none());
        assert!(http_roots(None).is_empty());
    }

    #[test]
    fn a_missing_file_names_the_setting() {
        let e = read_ca("store.ca_file", Some(Path::new("/nonexistent/ca.pem"))).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("store.ca_file '/nonexistent/ca.pem'"),
            "{e}"
        );
    }

    #[test]
    fn a_file_without_certificates_is_refused() {
        let path =
            std::env::temp_dir().join(format!("pilotage-not-a-ca-{}.pem", std::process::id()));
        std::fs::write(&path, "not a certificate\n").unwrap();
        let e = read_ca("engine.ca_file", Some(&path)).unwrap_err();
        assert!(matches!(e, TlsError::NotPem { .. }), "{e}");
    }
}
