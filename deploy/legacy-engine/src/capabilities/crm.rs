//! `crm.*`: finding, reading, re-tiering and deleting customers.

use serde_json::{Value, json};

use super::args::text;
use crate::world::tenant::TenantWorld;

const TIERS: [&str; 3] = ["bronze", "silver", "gold"];

fn no_such(id: &str) -> String {
    format!("no such customer '{id}'")
}

/// `crm.find_customer {query}` → `{matches: [{id, name, tier}], count}`.
pub fn find(args: &Value, world: &TenantWorld) -> Result<Value, String> {
    let query = text(args, "query")?.to_lowercase();
    let matches: Vec<Value> = world
        .customers
        .iter()
        .filter(|c| {
            [&c.id, &c.name, &c.email]
                .iter()
                .any(|f| f.to_lowercase().contains(&query))
        })
        .map(|c| json!({"id": c.id, "name": c.name, "tier": c.tier}))
        .collect();
    Ok(json!({"count": matches.len(), "matches": matches}))
}

/// `crm.get_customer {id}` → `{id, name, tier, email}`.
pub fn get(args: &Value, world: &TenantWorld) -> Result<Value, String> {
    let id = text(args, "id")?;
    let c = world.customer(id).ok_or_else(|| no_such(id))?;
    Ok(json!({"id": c.id, "name": c.name, "tier": c.tier, "email": c.email}))
}

/// `crm.set_tier` / `crm.update_tier {id, tier}` → `{id, tier, previous}`.
pub fn set_tier(
    capability: &str,
    args: &Value,
    world: &mut TenantWorld,
    run: u64,
) -> Result<Value, String> {
    let id = text(args, "id")?;
    let tier = text(args, "tier")?;
    if !TIERS.contains(&tier) {
        return Err(format!("unknown tier '{tier}'"));
    }
    let customer = world.customer_mut(id).ok_or_else(|| no_such(id))?;
    let previous = std::mem::replace(&mut customer.tier, tier.to_owned());
    world.audit(run, capability, format!("{id} tier {previous} -> {tier}"));
    Ok(json!({"id": id, "tier": tier, "previous": previous}))
}

/// `crm.delete_customer {id}` → `{id, deleted: true}`.
pub fn delete(args: &Value, world: &mut TenantWorld, run: u64) -> Result<Value, String> {
    let id = text(args, "id")?;
    let position = world
        .customers
        .iter()
        .position(|c| c.id == id)
        .ok_or_else(|| no_such(id))?;
    world.customers.remove(position);
    world.audit(run, "crm.delete_customer", format!("deleted {id}"));
    Ok(json!({"id": id, "deleted": true}))
}
