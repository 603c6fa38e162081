//! The two client-target vectors of `vectors.json`, proved against the
//! `pilotage` binary talking to the real gateway and engine:
//!
//! - PIL-CLIENT-GATE-DESTRUCTIVE-B (Part II §7.3): without approval the
//!   destructive or open-world execute request is never transmitted. The
//!   proof is on the server's side: no `run_workflow` call reached the
//!   gateway, the engine's runs counter did not move, the world digest did
//!   not change.
//! - PIL-CLIENT-VALUES-NOT-FAILURES-G (Part II §8, Part III §7.1):
//!   `valid: false` and `ok: false` are values: reported, exit 1, exactly
//!   one call each, no retry; an unknown `ok: false` status is handled as
//!   `partial` and an unknown request-error kind as `internal`.

mod common;

use common::Env;
use serde_json::{Value, json};

fn delete_customer() -> Value {
    json!({"name": "drop-linus", "steps": [
        {"id": "drop", "kind": "call", "capability": "crm.delete_customer", "with": {"id": "cus_3"}}
    ], "output": {"deleted": "$.steps.drop.output.deleted"}})
}

fn send_mail() -> Value {
    json!({"name": "notify", "steps": [
        {"id": "tell", "kind": "call", "capability": "mail.send",
         "with": {"to": "ops@example.com", "subject": "hello", "body": "from the Host test"}}
    ], "output": {"id": "$.steps.tell.output.message_id"}})
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_client_gate_destructive_b() {
    let env = Env::start().await;
    for (name, program, risk) in [
        ("delete", delete_customer(), "destructive: true"),
        ("mail", send_mail(), "openWorld: true"),
    ] {
        let file = env.program(name, &program);
        let before = env.engine.runs_and_digest("acme").await;
        env.front.clear();

        // No --approve, stdin not a terminal: nobody can approve.
        let r = env.pilotage(&["run", &file]).await;
        assert_eq!(r.code, 2, "{name}: refused by the gate\n{}", r.all());
        let all = r.all();
        assert!(all.contains("approval required"), "{name}: {all}");
        assert!(all.contains(risk), "{name}: names the risk: {all}");
        assert!(
            all.contains("unverified claims made by the server"),
            "{name}: says risk labels are unverified server claims: {all}"
        );
        assert!(all.contains("NOT sent"), "{name}: {all}");
        // The loop ran up to the gate: exactly one validation...
        assert_eq!(
            env.front.count("tools/call validate_workflow"),
            1,
            "{:?}",
            env.front.lines()
        );
        // ...and the execute request never reached the gateway.
        assert_eq!(
            env.front.count("tools/call run_workflow"),
            0,
            "{:?}",
            env.front.lines()
        );
        assert_eq!(
            env.engine.runs_and_digest("acme").await,
            before,
            "{name}: no run recorded, world unchanged"
        );

        // The same refusal in machine output.
        let r = env.pilotage(&["--json", "run", &file]).await;
        assert_eq!(r.code, 2, "{}", r.all());
        let doc: Value = serde_json::from_str(&r.stdout).expect("one JSON document");
        assert_eq!(doc["result"], "refused");
        assert_eq!(doc["gates"][0]["approval_required"], true);
        assert_eq!(doc["gates"][0]["approval"]["granted"], false);
        assert!(
            doc["gates"][0]["notice"]
                .as_str()
                .is_some_and(|n| n.contains("unverified"))
        );
        assert!(doc.get("executions").is_none(), "{doc}");
        assert_eq!(env.front.count("tools/call validate_workflow"), 2);
        assert_eq!(env.front.count("tools/call run_workflow"), 0);
        assert_eq!(env.engine.runs_and_digest("acme").await, before);

        // Approval given outside the model: the run happens, once.
        let r = env.pilotage(&["run", &file, "--approve"]).await;
        assert_eq!(r.code, 0, "{name}: approved and executed\n{}", r.all());
        assert!(r.stdout.contains("approved by --approve"), "{}", r.stdout);
        assert!(
            r.stdout.contains("unverified claims made by the server"),
            "{}",
            r.stdout
        );
        assert_eq!(env.front.count("tools/call run_workflow"), 1);
        let after = env.engine.runs_and_digest("acme").await;
        assert_eq!(after.0, before.0 + 1, "{name}: exactly one run");
        assert_ne!(after.1, before.1, "{name}: the side effect happened");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn pil_client_values_not_failures_g() {
    let env = Env::start().await;

    // valid:false → diagnostics printed, exit 1, one validate, nothing else.
    let invalid = json!({"steps": [
        {"id": "find", "kind": "call", "capability": "crm.find_custmer", "with": {"query": "Ada"}}
    ]});
    let file = env.program("invalid", &invalid);
    let before = env.engine.runs_and_digest("acme").await;
    env.front.clear();
    let r = env.pilotage(&["run", &file]).await;
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(r.stdout.contains("invalid"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("unknown_capability at /steps/0/capability"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("close match: crm.find_customer"),
        "{}",
        r.stdout
    );
    assert_eq!(
        env.front.count("tools/call validate_workflow"),
        1,
        "{:?}",
        env.front.lines()
    );
    assert_eq!(env.front.count("tools/call run_workflow"), 0);
    assert_eq!(env.front.count("initialize"), 1, "no reconnect either");
    assert_eq!(env.engine.runs_and_digest("acme").await, before);

    // ok:false → outcome and trace printed, exit 1, one execute, no retry.
    let failing = json!({"steps": [
        {"id": "hello", "kind": "call", "capability": "util.echo", "with": {"value": "hi"}},
        {"id": "boom", "kind": "call", "capability": "util.fail", "with": {"message": "disk on fire"}}
    ], "output": {"said": "$.steps.hello.output.value"}});
    let file = env.program("failing", &failing);
    env.front.clear();
    let r = env.pilotage(&["run", &file]).await;
    assert_eq!(r.code, 1, "{}", r.all());
    assert!(r.stdout.contains("outcome: partial"), "{}", r.stdout);
    assert!(r.stdout.contains("disk on fire"), "{}", r.stdout);
    assert!(
        r.stdout.contains("trace (full level, 2 steps)"),
        "{}",
        r.stdout
    );
    assert_eq!(env.front.count("tools/call validate_workflow"), 1);
    assert_eq!(
        env.front.count("tools/call run_workflow"),
        1,
        "{:?}",
        env.front.lines()
    );
    assert_eq!(
        env.engine.runs_and_digest("acme").await.0,
        before.0 + 1,
        "one started run, not two"
    );

    // An ok:false status this Host does not know: handled as partial.
    env.front.rewrite("run_workflow", |result| {
        result["structuredContent"]["outcome"]["status"] = json!("quarantined");
    });
    env.front.clear();
    let r = env.pilotage(&["--json", "run", &file]).await;
    assert_eq!(r.code, 1, "{}", r.all());
    let doc: Value = serde_json::from_str(&r.stdout).expect("one JSON document");
    let exec = &doc["executions"][0];
    assert_eq!(exec["answer"]["outcome"]["status"], "quarantined");
    assert_eq!(exec["outcome_class"], "partial");
    assert_eq!(exec["side_effects_possible"], true);
    assert_eq!(env.front.count("tools/call run_workflow"), 1);

    // A request-error kind this Host does not know: handled as internal,
    // a server error (exit 3), not retried.
    env.front.rewrite("run_workflow", |result| {
        result["isError"] = json!(true);
        result["structuredContent"] =
            json!({"error": {"kind": "rate_limited", "message": "try later"}});
    });
    env.front.clear();
    let r = env.pilotage(&["run", &file]).await;
    assert_eq!(r.code, 3, "{}", r.all());
    assert!(r.stderr.contains("request error internal"), "{}", r.stderr);
    assert!(r.stderr.contains("rate_limited"), "{}", r.stderr);
    assert_eq!(
        env.front.count("tools/call run_workflow"),
        1,
        "{:?}",
        env.front.lines()
    );
}
