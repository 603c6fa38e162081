//! rmcp 3's own client, on revision 2026-07-28 with the tasks extension
//! declared (`enable_tasks`): a long run comes back as a task, `tasks/get`
//! carries its result once ended, and a cancelled task stays cancelled.
//! A client nobody here wrote, reading every answer into its typed model.

use super::wire::{ENDS_WITHIN, long_program};
use crate::common::{ACME_OPS, FEATURES, TestEnv};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, ClientCapabilities, ClientConfig,
    GetTaskParams, Implementation, ProtocolVersion, TaskPayload, TaskStatus,
};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Map, json};
use std::time::{Duration, Instant};

async fn connect(url: &str) -> RunningService<RoleClient, ClientConfig> {
    let mut capabilities = ClientCapabilities::builder().enable_tasks().build();
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert("io.github.jafarsa0/pilotage".into(), Map::new());
    let config = ClientConfig::new(
        capabilities,
        Implementation::new("pilotage-tasks-rmcp", "1"),
    )
    .with_protocol_version(ProtocolVersion::V_2026_07_28);
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url.to_string()).auth_header(ACME_OPS),
    );
    config
        .serve_with_lifecycle(
            transport,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
        .await
        .expect("rmcp client connects")
}

fn run(program: serde_json::Value) -> CallToolRequestParams {
    let arguments = json!({"mode": "immediate", "workflow": program, "trace_level": "full"});
    CallToolRequestParams::new("run_workflow")
        .with_arguments(arguments.as_object().cloned().unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread")]
async fn rmcp_client_gets_a_task_and_its_result() {
    let env = TestEnv::with_config(FEATURES, |_| {}).await;
    let client = connect(&env.url).await;
    let answer = client
        .call_tool_once(run(long_program(3, 1000, "rmcp")))
        .await
        .expect("tools/call");
    let CallToolResponse::Task(created) = answer else {
        panic!("a run past the inline bound is a task: {answer:?}");
    };
    let task_id = created.task.task_id.clone();
    let until = Instant::now() + ENDS_WITHIN;
    let ended = loop {
        let got = client
            .get_task(GetTaskParams::new(task_id.clone()))
            .await
            .expect("tasks/get");
        if got.task.status().is_terminal() {
            break got;
        }
        assert!(Instant::now() < until, "task still {:?}", got.task.status());
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(ended.task.status(), TaskStatus::Completed);
    let TaskPayload::Completed { result } = &ended.task.payload else {
        panic!("a completed task carries its result: {ended:?}");
    };
    assert_eq!(
        result["structuredContent"]["output"],
        json!({"said": "rmcp"})
    );

    let answer = client
        .call_tool_once(run(long_program(3, 1500, "stopped")))
        .await
        .expect("tools/call");
    let CallToolResponse::Task(created) = answer else {
        panic!("a task: {answer:?}");
    };
    client
        .cancel_task(CancelTaskParams::new(created.task.task_id.clone()))
        .await
        .expect("tasks/cancel");
    let got = client
        .get_task(GetTaskParams::new(created.task.task_id.clone()))
        .await
        .expect("tasks/get");
    assert_eq!(got.task.status(), TaskStatus::Cancelled);
    let _ = client.cancel().await;
}
