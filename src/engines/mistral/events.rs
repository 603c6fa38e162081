//! An execution's tasks as the events `mistral/v2`'s trace reads: one
//! object per task execution, in execution order. Mistral lists tasks in no
//! useful order and its timestamps tie within a second, so the order comes
//! from the trigger graph (`runtime_context.triggered_by`): a task comes
//! after every task that triggered it. Each task carries its result and its
//! action executions (with-items iterations and retries, in Mistral's
//! order), every JSON-in-a-string field decoded and every text cut to its
//! first line.

use super::MistralEngine;
use super::run::encode;
use super::text::{decode, first_line_of};
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};

impl MistralEngine {
    /// The events of execution `id`; `restore` puts the caller's workflow
    /// name back into Mistral's texts.
    pub(super) async fn events(
        &self,
        tenant: &str,
        id: &str,
        restore: &(dyn Fn(String) -> String + Sync),
    ) -> Result<Vec<Value>, String> {
        let listed = self
            .read(tenant, &format!("/executions/{}/tasks", encode(id)))
            .await?;
        let tasks = listed
            .get("tasks")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let names: HashMap<String, String> = tasks
            .iter()
            .filter_map(|t| Some((text(t, "id")?, text(t, "name")?)))
            .collect();
        let mut events = Vec::with_capacity(tasks.len());
        for task in order(&tasks) {
            events.push(self.event(tenant, task, &names, restore).await?);
        }
        Ok(events)
    }

    async fn event(
        &self,
        tenant: &str,
        task: &Value,
        names: &HashMap<String, String>,
        restore: &(dyn Fn(String) -> String + Sync),
    ) -> Result<Value, String> {
        let task_id = text(task, "id").unwrap_or_default();
        let state = text(task, "state").unwrap_or_default();
        let context = decode(task.get("runtime_context"));
        let triggered_by: Vec<Value> = triggers(&context)
            .into_iter()
            .map(|(parent, event)| {
                json!({"task": names.get(&parent).cloned().unwrap_or(parent), "event": event})
            })
            .collect();
        // The list has no result; the task itself has.
        let result = if matches!(state.as_str(), "SUCCESS" | "ERROR") {
            let full = self
                .read(tenant, &format!("/tasks/{}", encode(&task_id)))
                .await?;
            decode(full.get("result"))
        } else {
            Value::Null
        };
        let listed = self
            .read(
                tenant,
                &format!(
                    "/action_executions?task_execution_id={}&include_output=true",
                    encode(&task_id)
                ),
            )
            .await?;
        let actions: Vec<Value> = listed
            .get("action_executions")
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .map(|a| {
                        json!({
                            "name": text(a, "name"),
                            "state": text(a, "state"),
                            "input": decode(a.get("input")),
                            "output": decode(a.get("output")),
                            "state_info": first_line_of(a.get("state_info")).map(restore),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let published = match task.get("published") {
            None | Some(Value::Null) => Value::Null,
            p => decode(p),
        };
        Ok(json!({
            "task": text(task, "name"),
            "task_id": task_id,
            "state": state,
            "state_info": first_line_of(task.get("state_info")).map(restore),
            "triggered_by": triggered_by,
            "published": published,
            "result": result,
            "with_items": context.get("with_items").is_some(),
            "duration_ms": duration_ms(task),
            "actions": actions,
        }))
    }
}

/// A string field.
fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

/// (parent task id, event) of each taken transition into a task.
fn triggers(context: &Value) -> Vec<(String, String)> {
    context
        .get("triggered_by")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|t| Some((text(t, "task_id")?, text(t, "event")?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Tasks in execution order: each after the tasks that triggered it; among
/// the ready ones, by creation time, then name, then id.
pub(super) fn order(tasks: &[Value]) -> Vec<&Value> {
    let key = |t: &Value| {
        (
            text(t, "created_at").unwrap_or_default(),
            text(t, "name").unwrap_or_default(),
            text(t, "id").unwrap_or_default(),
        )
    };
    let ids: BTreeSet<String> = tasks.iter().filter_map(|t| text(t, "id")).collect();
    let parents: Vec<BTreeSet<String>> = tasks
        .iter()
        .map(|t| {
            triggers(&decode(t.get("runtime_context")))
                .into_iter()
                .map(|(p, _)| p)
                .filter(|p| ids.contains(p))
                .collect()
        })
        .collect();
    let mut done: BTreeSet<String> = BTreeSet::new();
    let mut left: Vec<usize> = (0..tasks.len()).collect();
    let mut out = Vec::with_capacity(tasks.len());
    while !left.is_empty() {
        let mut ready: Vec<usize> = left
            .iter()
            .copied()
            .filter(|&i| parents[i].iter().all(|p| done.contains(p)))
            .collect();
        if ready.is_empty() {
            // A cycle cannot happen (a trigger is always earlier); if the
            // records ever say otherwise, keep every task anyway.
            ready = left.clone();
        }
        ready.sort_by_key(|&i| key(&tasks[i]));
        let next = ready[0];
        left.retain(|&i| i != next);
        if let Some(id) = text(&tasks[next], "id") {
            done.insert(id);
        }
        out.push(&tasks[next]);
    }
    out
}

/// `finished_at - started_at` (Mistral's timestamps have 1 s resolution).
fn duration_ms(task: &Value) -> Option<u64> {
    let started = seconds(task.get("started_at")?.as_str()?)?;
    let finished = seconds(task.get("finished_at")?.as_str()?)?;
    finished.checked_sub(started).map(|s| s * 1000)
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) as seconds since 1970.
fn seconds(stamp: &str) -> Option<u64> {
    let (date, time) = stamp.split_once(' ')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.split(':').map(|p| p.parse::<i64>().ok());
    let (h, min, s) = (t.next()??, t.next()??, t.next()??);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + h * 3600 + min * 60 + s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, name: &str, created: &str, parents: &[&str]) -> Value {
        let triggered: Vec<Value> = parents
            .iter()
            .map(|p| json!({"task_id": p, "event": "on-success"}))
            .collect();
        json!({"id": id, "name": name, "created_at": created,
               "runtime_context": json!({"triggered_by": triggered}).to_string()})
    }

    #[test]
    fn triggers_order_tasks_whatever_the_list_and_the_clock_say() {
        // The list in the wrong order, every timestamp equal.
        let at = "2026-12-01 09:09:58";
        let tasks = vec![
            task("4", "join", at, &["2", "3"]),
            task("3", "right", at, &["1"]),
            task("1", "first", at, &[]),
            task("2", "left", at, &["1"]),
        ];
        let names: Vec<&str> = order(&tasks)
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["first", "left", "right", "join"]);
    }

    #[test]
    fn a_later_clock_never_overtakes_a_trigger() {
        let tasks = vec![
            task("2", "a_second", "2026-12-01 09:00:00", &["1"]),
            task("1", "z_first", "2026-12-01 09:00:01", &[]),
        ];
        let names: Vec<&str> = order(&tasks)
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["z_first", "a_second"]);
    }

    #[test]
    fn durations_come_from_the_timestamps() {
        let t = json!({"started_at": "2026-12-31 23:59:59", "finished_at": "2027-01-01 00:00:01"});
        assert_eq!(duration_ms(&t), Some(2000));
        assert_eq!(
            duration_ms(&json!({"started_at": "2026-12-01 09:00:00"})),
            None
        );
        assert_eq!(seconds("1970-01-01 00:00:00"), Some(0));
        assert_eq!(seconds("2000-03-01 00:00:00"), Some(951_868_800));
    }
}
