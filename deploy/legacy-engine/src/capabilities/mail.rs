//! `mail.send`: queues a message in the tenant's outbox (nothing leaves the engine).

use serde_json::{Value, json};

use super::args::text;
use crate::world::tenant::{Mail, TenantWorld};

/// `mail.send {to, subject, body}` → `{message_id, queued: true}`.
pub fn send(args: &Value, world: &mut TenantWorld, run: u64) -> Result<Value, String> {
    let to = text(args, "to")?;
    let message_id = format!("msg_{}", world.next_message);
    world.next_message += 1;
    world.outbox.push(Mail {
        message_id: message_id.clone(),
        to: to.to_owned(),
        subject: text(args, "subject")?.to_owned(),
        body: text(args, "body")?.to_owned(),
    });
    world.audit(run, "mail.send", format!("{message_id} to {to}"));
    Ok(json!({"message_id": message_id, "queued": true}))
}
