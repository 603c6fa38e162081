//! Signed `Mcp-Session-Id` tokens: `<session>.<issued-at>.<mac>`, where mac is
//! HMAC-SHA256 over (session, principal scope, issued-at) under the shared
//! secret. Any instance verifies a token without shared state; a token used
//! with another principal's credentials, altered, or expired does not verify.
//! Revocation (DELETE) is the only session state, and it lives in the store.
//!
//! Tokens are signed with the current secret and verified with it or any
//! previous one (`session.previous_secrets`), so the secret can be rotated
//! without ending the sessions it signed.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::time::{SystemTime, UNIX_EPOCH};

type HmacSha256 = Hmac<Sha256>;

/// Issues and verifies session tokens.
#[derive(Clone)]
pub struct SessionSigner {
    secret: Vec<u8>,
    /// Accepted to verify only.
    previous: Vec<Vec<u8>>,
    ttl_secs: u64,
}

/// A token that verified.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    pub id: String,
    pub issued_at: u64,
}

impl SessionSigner {
    pub fn new(secret: &str, ttl_secs: u64) -> Self {
        Self {
            secret: secret.as_bytes().to_vec(),
            previous: Vec::new(),
            ttl_secs,
        }
    }

    /// Also accepts tokens signed with any of `previous`.
    pub fn with_previous(mut self, previous: &[String]) -> Self {
        self.previous = previous.iter().map(|s| s.as_bytes().to_vec()).collect();
        self
    }

    /// A fresh random session id (128 bits).
    pub fn new_id() -> String {
        format!("{:032x}", rand::random::<u128>())
    }

    /// The token for `session_id` bound to `scope`.
    pub fn issue(&self, session_id: &str, scope: &str) -> String {
        let now = now_secs();
        format!(
            "{session_id}.{now}.{}",
            hex::encode(self.mac(session_id, scope, now))
        )
    }

    /// The session id inside a token, before any check (to derive the
    /// anonymous principal the mac must then match).
    pub fn session_id(token: &str) -> Option<&str> {
        token.split('.').next().filter(|s| !s.is_empty())
    }

    /// Verifies signature, principal binding and age.
    pub fn verify(&self, token: &str, scope: &str) -> Option<Session> {
        let mut parts = token.split('.');
        let (id, issued, mac) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || id.is_empty() {
            return None;
        }
        let issued_at: u64 = issued.parse().ok()?;
        let mac = hex::decode(mac).ok()?;
        std::iter::once(&self.secret)
            .chain(&self.previous)
            .any(|secret| {
                let mut m = keyed(secret);
                feed(&mut m, id, scope, issued_at);
                m.verify_slice(&mac).is_ok()
            })
            .then_some(())?;
        let age = now_secs().checked_sub(issued_at)?;
        (age <= self.ttl_secs).then(|| Session {
            id: id.to_string(),
            issued_at,
        })
    }

    /// Seconds a verified session has left (the revocation marker's lifetime).
    pub fn remaining(&self, session: &Session) -> u64 {
        (session.issued_at + self.ttl_secs)
            .saturating_sub(now_secs())
            .max(1)
    }

    fn mac(&self, id: &str, scope: &str, issued_at: u64) -> Vec<u8> {
        let mut m = keyed(&self.secret);
        feed(&mut m, id, scope, issued_at);
        m.finalize().into_bytes().to_vec()
    }
}

fn keyed(secret: &[u8]) -> HmacSha256 {
    <HmacSha256 as KeyInit>::new_from_slice(secret).expect("HMAC accepts any key length")
}

fn feed(m: &mut HmacSha256, id: &str, scope: &str, issued_at: u64) {
    // Length-prefixed fields, so no two inputs share an encoding.
    for part in [
        id.as_bytes(),
        scope.as_bytes(),
        issued_at.to_string().as_bytes(),
    ] {
        m.update(&(part.len() as u64).to_be_bytes());
        m.update(part);
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_verify_only_for_their_principal() {
        let s = SessionSigner::new("0123456789abcdef", 60);
        let t = s.issue("abc", "key:acme:ops");
        assert_eq!(
            s.verify(&t, "key:acme:ops").map(|x| x.id),
            Some("abc".into())
        );
        assert!(s.verify(&t, "key:globex:ops").is_none());
        assert!(s.verify(&t.replace("abc", "abd"), "key:acme:ops").is_none());
        let other = SessionSigner::new("another-secret-!!", 60);
        assert!(other.verify(&t, "key:acme:ops").is_none());
        assert!(s.verify("garbage", "x").is_none());
        let expired = SessionSigner::new("0123456789abcdef", 0);
        let old = format!("abc.1.{}", hex::encode(expired.mac("abc", "x", 1)));
        assert!(expired.verify(&old, "x").is_none());
    }

    #[test]
    fn a_previous_secret_verifies_but_never_signs() {
        let old = SessionSigner::new("the-old-secret-0123", 60);
        let rotated = SessionSigner::new("the-new-secret-4567", 60)
            .with_previous(&["the-old-secret-0123".into()]);
        let t = old.issue("abc", "k");
        assert!(rotated.verify(&t, "k").is_some());
        assert!(rotated.verify(&t, "other").is_none());
        let fresh = rotated.issue("def", "k");
        assert!(
            old.verify(&fresh, "k").is_none(),
            "signed with the new secret"
        );
        assert!(
            SessionSigner::new("the-new-secret-4567", 60)
                .verify(&fresh, "k")
                .is_some()
        );
    }
}
