//! One tenant's world: customers, invoices, the mail outbox and the audit log, plus
//! the digest `GET /admin/state` shows. Every real side effect appends an audit
//! entry, so the digest moves exactly when something happened.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A customer record.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Customer {
    pub id: String,
    pub name: String,
    pub tier: String,
    pub email: String,
}

/// An invoice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Invoice {
    pub invoice_id: String,
    pub customer_id: String,
    pub amount_cents: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memo: Option<String>,
}

/// A message queued by `mail.send`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Mail {
    pub message_id: String,
    pub to: String,
    pub subject: String,
    pub body: String,
}

/// One audit log line: which run did what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AuditEntry {
    pub seq: u64,
    pub run: u64,
    pub capability: String,
    pub detail: String,
}

/// A tenant's mutable state. Runs work on a clone and commit it when they may.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TenantWorld {
    pub customers: Vec<Customer>,
    pub invoices: Vec<Invoice>,
    pub outbox: Vec<Mail>,
    pub audit: Vec<AuditEntry>,
    pub next_invoice: u64,
    pub next_message: u64,
}

impl TenantWorld {
    /// A fresh world holding the seeded customers.
    pub fn new(customers: Vec<Customer>) -> Self {
        TenantWorld {
            customers,
            invoices: Vec::new(),
            outbox: Vec::new(),
            audit: Vec::new(),
            next_invoice: 1,
            next_message: 1,
        }
    }

    /// Hex SHA-256 of the whole world as JSON (the `digest` of `/admin/state`).
    pub fn digest(&self) -> String {
        let bytes = serde_json::to_vec(self).unwrap_or_default();
        hex::encode(Sha256::digest(&bytes))
    }

    /// Records a side effect of `capability` performed by run number `run`.
    pub fn audit(&mut self, run: u64, capability: &str, detail: String) {
        let seq = self.audit.len() as u64 + 1;
        self.audit.push(AuditEntry {
            seq,
            run,
            capability: capability.to_owned(),
            detail,
        });
    }

    pub fn customer(&self, id: &str) -> Option<&Customer> {
        self.customers.iter().find(|c| c.id == id)
    }

    pub fn customer_mut(&mut self, id: &str) -> Option<&mut Customer> {
        self.customers.iter_mut().find(|c| c.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_moves_with_side_effects_only() {
        let mut world = TenantWorld::new(vec![Customer {
            id: "cus_1".into(),
            name: "Ada".into(),
            tier: "gold".into(),
            email: "ada@example.com".into(),
        }]);
        let before = world.digest();
        assert_eq!(before, world.clone().digest());
        world.audit(1, "crm.set_tier", "cus_1 gold -> gold".into());
        assert_ne!(before, world.digest());
    }
}
