//! `billing.*`: creating and listing invoices.

use serde_json::{Value, json};

use super::args::{integer, optional_text, text};
use crate::world::tenant::{Invoice, TenantWorld};

/// `billing.create_invoice {customer_id, amount_cents, memo?}` →
/// `{invoice_id, customer_id, amount_cents}`.
pub fn create_invoice(args: &Value, world: &mut TenantWorld, run: u64) -> Result<Value, String> {
    let customer_id = text(args, "customer_id")?;
    let amount_cents = integer(args, "amount_cents")?;
    let memo = optional_text(args, "memo")?;
    if world.customer(customer_id).is_none() {
        return Err(format!("no such customer '{customer_id}'"));
    }
    if amount_cents < 1 {
        return Err("amount_cents must be at least 1".to_owned());
    }
    let invoice_id = format!("inv_{}", world.next_invoice);
    world.next_invoice += 1;
    world.invoices.push(Invoice {
        invoice_id: invoice_id.clone(),
        customer_id: customer_id.to_owned(),
        amount_cents,
        memo: memo.map(str::to_owned),
    });
    world.audit(
        run,
        "billing.create_invoice",
        format!("{invoice_id} for {customer_id}: {amount_cents} cents"),
    );
    Ok(json!({"invoice_id": invoice_id, "customer_id": customer_id, "amount_cents": amount_cents}))
}

/// `billing.list_invoices {customer_id?}` → `{invoices: [..], count}`.
pub fn list_invoices(args: &Value, world: &TenantWorld) -> Result<Value, String> {
    let customer_id = optional_text(args, "customer_id")?;
    let invoices: Vec<&Invoice> = world
        .invoices
        .iter()
        .filter(|i| customer_id.is_none_or(|c| i.customer_id == c))
        .collect();
    Ok(json!({"count": invoices.len(), "invoices": invoices}))
}
