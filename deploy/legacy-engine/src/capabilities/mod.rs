//! The built-in capability handlers, found by name. A capability added through the
//! admin API without a built-in handler is listed and validated like any other but
//! fails when called. Editing a built-in one keeps its handler.

mod args;
mod billing;
mod crm;
mod mail;
mod util;

use std::time::Instant;

use serde_json::Value;

use crate::world::tenant::TenantWorld;

/// What a handler may know about the run calling it.
pub struct CallEnv {
    /// The run number, recorded in audit entries.
    pub run: u64,
    /// Handlers that wait (`util.sleep`) never wait past it.
    pub deadline: Instant,
}

/// A handler's answer.
#[derive(Debug, PartialEq)]
pub enum Invoked {
    Done(Value),
    Failed(String),
    TimedOut,
}

/// True for handlers that change the world: a real run calling one of them takes
/// the tenant's run lock and commits its world afterwards.
pub fn mutates(name: &str) -> bool {
    matches!(
        name,
        "crm.set_tier"
            | "crm.update_tier"
            | "crm.delete_customer"
            | "billing.create_invoice"
            | "mail.send"
    )
}

/// Calls the handler of `name` with already checked arguments.
pub async fn invoke(name: &str, args: &Value, world: &mut TenantWorld, env: &CallEnv) -> Invoked {
    if name == "util.sleep" {
        return util::sleep(args, env.deadline).await;
    }
    let result = match name {
        "crm.find_customer" => crm::find(args, world),
        "crm.get_customer" => crm::get(args, world),
        "crm.set_tier" | "crm.update_tier" => crm::set_tier(name, args, world, env.run),
        "crm.delete_customer" => crm::delete(args, world, env.run),
        "billing.create_invoice" => billing::create_invoice(args, world, env.run),
        "billing.list_invoices" => billing::list_invoices(args, world),
        "mail.send" => mail::send(args, world, env.run),
        "util.echo" => util::echo(args),
        "util.fail" => util::fail(args),
        _ => Err(format!("capability '{name}' has no handler on this engine")),
    };
    match result {
        Ok(value) => Invoked::Done(value),
        Err(message) => Invoked::Failed(message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::seed::{DEFAULT_SEED, Seed};
    use serde_json::json;
    use std::time::Duration;

    fn world() -> TenantWorld {
        TenantWorld::new(Seed::parse(DEFAULT_SEED).expect("seed").world.customers)
    }

    fn env() -> CallEnv {
        CallEnv {
            run: 7,
            deadline: Instant::now() + Duration::from_secs(5),
        }
    }

    #[tokio::test]
    async fn handlers_change_the_world_and_audit_it() {
        let mut w = world();
        let set = invoke(
            "crm.set_tier",
            &json!({"id": "cus_3", "tier": "gold"}),
            &mut w,
            &env(),
        )
        .await;
        assert_eq!(
            set,
            Invoked::Done(json!({"id": "cus_3", "tier": "gold", "previous": "bronze"}))
        );
        let inv = invoke(
            "billing.create_invoice",
            &json!({"customer_id": "cus_1", "amount_cents": 5}),
            &mut w,
            &env(),
        )
        .await;
        assert_eq!(
            inv,
            Invoked::Done(
                json!({"invoice_id": "inv_1", "customer_id": "cus_1", "amount_cents": 5})
            )
        );
        let mail = invoke(
            "mail.send",
            &json!({"to": "a@b", "subject": "s", "body": "b"}),
            &mut w,
            &env(),
        )
        .await;
        assert_eq!(
            mail,
            Invoked::Done(json!({"message_id": "msg_1", "queued": true}))
        );
        let del = invoke(
            "crm.delete_customer",
            &json!({"id": "cus_2"}),
            &mut w,
            &env(),
        )
        .await;
        assert_eq!(del, Invoked::Done(json!({"id": "cus_2", "deleted": true})));
        assert_eq!(w.audit.len(), 4);
        assert!(w.audit.iter().all(|a| a.run == 7));
        let list = invoke("billing.list_invoices", &json!({}), &mut w, &env()).await;
        assert!(matches!(list, Invoked::Done(v) if v["count"] == 1));
    }

    #[tokio::test]
    async fn reads_and_failures() {
        let mut w = world();
        let found = invoke(
            "crm.find_customer",
            &json!({"query": "ADA"}),
            &mut w,
            &env(),
        )
        .await;
        assert!(
            matches!(&found, Invoked::Done(v) if v["count"] == 1),
            "{found:?}"
        );
        let missing = invoke("crm.get_customer", &json!({"id": "cus_9"}), &mut w, &env()).await;
        assert_eq!(missing, Invoked::Failed("no such customer 'cus_9'".into()));
        let fail = invoke("util.fail", &json!({"message": "boom"}), &mut w, &env()).await;
        assert_eq!(fail, Invoked::Failed("boom".into()));
        let none = invoke("x.y", &json!({}), &mut w, &env()).await;
        assert_eq!(
            none,
            Invoked::Failed("capability 'x.y' has no handler on this engine".into())
        );
        let short = CallEnv {
            run: 1,
            deadline: Instant::now() + Duration::from_millis(20),
        };
        assert_eq!(
            invoke("util.sleep", &json!({"ms": 1000}), &mut w, &short).await,
            Invoked::TimedOut
        );
        assert!(w.audit.is_empty());
    }
}
