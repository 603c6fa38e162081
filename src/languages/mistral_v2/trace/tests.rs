//! Unit tests of the trace mapping: runs of a real document, each trace
//! held against the plan it must correspond to.

use super::super::fixtures::SHAPES;
use super::super::plan::derive;
use super::super::workflow::read;
use super::*;
use crate::pilotage::RiskHints;
use std::collections::HashSet;

fn task(name: &str, state: &str, by: &[(&str, &str)], actions: Vec<Value>) -> Value {
    json!({
        "task": name, "task_id": format!("id-{name}"), "state": state,
        "state_info": if state == "SUCCESS" { Value::Null } else { json!(format!("{name} broke")) },
        "triggered_by": by.iter().map(|(t, e)| json!({"task": t, "event": e})).collect::<Vec<_>>(),
        "published": {}, "result": null, "with_items": name == "each", "duration_ms": 12,
        "actions": actions,
    })
}

fn action(name: &str, state: &str, input: Value, output: Value) -> Value {
    json!({"name": name, "state": state, "input": input, "output": output,
        "state_info": if state == "SUCCESS" { Value::Null } else { json!("boom") }})
}

fn ids(trace: &[Value]) -> Vec<&str> {
    trace.iter().map(|s| s["id"].as_str().unwrap()).collect()
}

/// Part II §5.8.4 over unprefixed entries: every trace entry maps by
/// base id to the expected set; on success every expected step appears;
/// unselected arms stay absent.
fn corresponds(plan: &Value, trace: &[Value], success: bool) -> Result<(), String> {
    let steps = plan["steps"].as_array().unwrap();
    let base = |id: &str| id.split('#').next().unwrap().to_string();
    let mut selected: HashSet<(String, String)> = HashSet::new();
    let mut iterated: HashSet<String> = HashSet::new();
    for e in trace {
        for d in e
            .get("decisions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (at, took) = (d["at"].as_str().unwrap(), d["took"].as_str().unwrap());
            if took == "continue" {
                iterated.insert(at.to_string());
            } else {
                selected.insert((at.to_string(), took.to_string()));
            }
        }
    }
    let mut expected = HashSet::new();
    for s in steps {
        let id = s["id"].as_str().unwrap().to_string();
        match (s.get("arm"), s.get("loop")) {
            (Some(a), _) => {
                let key = (
                    a["branch"].as_str().unwrap().to_string(),
                    a["label"].as_str().unwrap().to_string(),
                );
                if selected.contains(&key) {
                    expected.insert(id);
                }
            }
            (None, Some(l)) => {
                if iterated.contains(l.as_str().unwrap()) {
                    expected.insert(id);
                }
            }
            (None, None) => {
                expected.insert(id);
            }
        }
    }
    let seen: HashSet<String> = trace
        .iter()
        .map(|e| base(e["id"].as_str().unwrap()))
        .collect();
    if let Some(stray) = seen.iter().find(|s| !expected.contains(*s)) {
        return Err(format!("trace entry {stray} is not expected"));
    }
    if success && let Some(missing) = expected.iter().find(|s| !seen.contains(*s)) {
        return Err(format!("expected step {missing} is absent"));
    }
    Ok(())
}

fn risks(_: &str, _: Option<&Value>) -> Option<(String, RiskHints)> {
    Some(("safe".into(), RiskHints::SAFE))
}

#[test]
fn a_successful_run_with_a_condition_a_loop_and_a_join() {
    let wf = &read(SHAPES).unwrap().workflows[0];
    let events = vec![
        task(
            "start",
            "SUCCESS",
            &[],
            vec![action(
                "std.echo",
                "SUCCESS",
                json!({"output": 1}),
                json!({"result": 1}),
            )],
        ),
        task(
            "each",
            "SUCCESS",
            &[("start", "on-success")],
            vec![
                action(
                    "std.http",
                    "SUCCESS",
                    json!({"url": "u"}),
                    json!({"result": "a"}),
                ),
                action(
                    "std.http",
                    "SUCCESS",
                    json!({"url": "u"}),
                    json!({"result": "b"}),
                ),
            ],
        ),
        task(
            "done",
            "SUCCESS",
            &[("start", "on-complete"), ("each", "on-success")],
            vec![action(
                "std.noop",
                "SUCCESS",
                json!({}),
                json!({"result": null}),
            )],
        ),
    ];
    let t = map_events(Some(wf), &events, RunEnd::Completed);
    assert_eq!(
        ids(&t),
        [
            "start",
            "start.next",
            "each.items",
            "each#1",
            "each#2",
            "each.next",
            "done"
        ]
    );
    assert_eq!(t[0]["calls"], "std.echo");
    assert_eq!(t[0]["input"], json!({"output": 1}));
    assert_eq!(t[0]["output"], json!({"result": 1}));
    assert_eq!(t[0]["t_ms"], 12);
    assert_eq!(
        t[1]["decisions"],
        json!([
            {"at": "start.next", "took": "on-success -> each", "because": "<% $.go %>"},
            {"at": "start.next", "took": "on-complete", "because": "start completed"},
        ])
    );
    assert_eq!(t[2]["decisions"].as_array().unwrap().len(), 3);
    assert_eq!(
        t[2]["decisions"][2],
        json!({"at": "each.items", "took": "exit", "because": "items exhausted after 2"})
    );
    assert!(t[2].get("input").is_none() && t[2].get("calls").is_none());
    assert_eq!(t[3]["calls"], "std.http");
    assert_eq!(t[4]["output"], json!({"result": "b"}));
    assert_eq!(t[5]["decisions"][0]["took"], "on-success");
    // done has no transitions: no branch entry after it.
    assert!(t.iter().all(|e| e["outcome"]["ok"] == true));
    corresponds(&derive(wf, &risks), &t, true).unwrap();
}

#[test]
fn an_unmatched_condition_is_decision_none_when_the_run_completed() {
    let wf = &read(SHAPES).unwrap().workflows[0];
    let events = vec![
        task(
            "start",
            "SUCCESS",
            &[],
            vec![action("std.echo", "SUCCESS", json!({}), json!(1))],
        ),
        task("done", "SUCCESS", &[("start", "on-complete")], vec![]),
    ];
    let t = map_events(Some(wf), &events, RunEnd::Completed);
    assert_eq!(ids(&t), ["start", "start.next", "done"]);
    assert_eq!(t[1]["decisions"].as_array().unwrap().len(), 1);
    corresponds(&derive(wf, &risks), &t, true).unwrap();
    // `each` and `cleanup` were not selected and are absent.
    let plan = derive(wf, &risks);
    assert!(
        corresponds(
            &plan,
            &[t[0].clone(), t[1].clone(), json!({"id": "cleanup"})],
            false
        )
        .is_err()
    );
}

#[test]
fn a_failed_run_handled_by_on_error_and_a_failing_iteration() {
    let wf = &read(SHAPES).unwrap().workflows[0];
    let events = vec![
        task(
            "start",
            "ERROR",
            &[],
            vec![
                action("std.echo", "ERROR", json!({}), json!({"result": "boom"})),
                action("std.echo", "ERROR", json!({}), json!({"result": "boom"})),
            ],
        ),
        task("cleanup", "ERROR", &[("start", "on-error")], vec![]),
        task("done", "RUNNING", &[("start", "on-complete")], vec![]),
    ];
    let t = map_events(Some(wf), &events, RunEnd::Failed);
    assert_eq!(ids(&t), ["start", "start", "start.next", "cleanup", "done"]);
    assert_eq!(
        t[0].get("t_ms"),
        None,
        "the duration is the task's: on its last try"
    );
    assert_eq!(
        t[1]["outcome"],
        json!({"ok": false, "status": "error", "error": "boom"})
    );
    let took: Vec<_> = t[2]["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["took"].as_str().unwrap())
        .collect();
    assert_eq!(took, ["on-error", "on-complete"]);
    assert_eq!(t[3]["calls"], "sub");
    assert_eq!(t[3]["outcome"]["error"], "cleanup broke");
    assert_eq!(t[4]["outcome"]["status"], "error");
    corresponds(&derive(wf, &risks), &t, false).unwrap();

    let events = vec![
        task(
            "start",
            "SUCCESS",
            &[],
            vec![action("std.echo", "SUCCESS", json!({}), json!(1))],
        ),
        task(
            "each",
            "ERROR",
            &[("start", "on-success")],
            vec![
                action("std.http", "SUCCESS", json!({}), json!(1)),
                action("std.http", "ERROR", json!({}), json!("boom")),
            ],
        ),
    ];
    let t = map_events(Some(wf), &events, RunEnd::Failed);
    // each failed without on-error: its branch decision is certain.
    assert_eq!(
        ids(&t),
        [
            "start",
            "start.next",
            "each.items",
            "each#1",
            "each#2",
            "each.next"
        ]
    );
    assert_eq!(t[2]["outcome"]["status"], "error");
    assert_eq!(
        t[2]["decisions"][2]["because"],
        "stopped after 2: an item failed"
    );
    assert_eq!(t[4]["outcome"]["error"], "boom");
    assert_eq!(t[5]["decisions"][0]["took"], "none");
    corresponds(&derive(wf, &risks), &t, false).unwrap();
    // An iteration that failed without a reason of its own gives its
    // task's reason, never a bare status.
    let mut silent = events.clone();
    silent[1]["actions"][1]["state_info"] = Value::Null;
    let t = map_events(Some(wf), &silent, RunEnd::Failed);
    assert_eq!(t[4]["outcome"]["error"], "each broke");
}

#[test]
fn a_timed_out_run_invents_nothing() {
    let wf = &read(SHAPES).unwrap().workflows[0];
    let events = vec![
        task(
            "start",
            "SUCCESS",
            &[],
            vec![action("std.echo", "SUCCESS", json!({}), json!(1))],
        ),
        task(
            "each",
            "RUNNING",
            &[("start", "on-success")],
            vec![action("std.http", "RUNNING", json!({}), Value::Null)],
        ),
    ];
    let t = map_events(Some(wf), &events, RunEnd::TimedOut);
    assert_eq!(ids(&t), ["start", "start.next", "each.items", "each#1"]);
    assert_eq!(t[2]["outcome"]["status"], "timeout");
    assert_eq!(
        t[2]["decisions"].as_array().unwrap().len(),
        1,
        "no exit: the loop never ended"
    );
    assert_eq!(t[3]["outcome"]["status"], "timeout");
    corresponds(&derive(wf, &risks), &t, false).unwrap();

    // A task that finished, with nothing after it, in a run cut short:
    // whether its transitions fired is unknown, so no branch entry.
    let t = map_events(Some(wf), &events[..1], RunEnd::TimedOut);
    assert_eq!(ids(&t), ["start"]);
}

#[test]
fn a_zero_item_loop_exits_once_and_unknown_tasks_are_kept() {
    let wf = &read(SHAPES).unwrap().workflows[0];
    let events = vec![
        task("each", "SUCCESS", &[], vec![]),
        json!({"task": "elsewhere", "state": "SUCCESS", "actions": [action("std.noop", "SUCCESS", json!({}), Value::Null)]}),
        json!({"state": "SUCCESS"}),
    ];
    let t = map_events(Some(wf), &events, RunEnd::Completed);
    assert_eq!(ids(&t), ["each.items", "each.next", "elsewhere"]);
    assert_eq!(
        t[0]["decisions"],
        json!([{"at": "each.items", "took": "exit", "because": "no items"}])
    );
    assert_eq!(t[2]["calls"], "std.noop");
    assert_eq!(map_events(None, &events[1..2], RunEnd::Completed).len(), 1);
}
