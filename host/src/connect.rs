//! The MCP side of the Host: rmcp's Streamable HTTP client, an `initialize`
//! that declares the Pilotage extension (Part III §1.2), and
//! [`PilotageServer`] over it. No JSON-RPC or HTTP is written by hand here.
//!
//! Two transport choices matter for the Host's duties:
//! - rmcp's transparent re-initialisation on an expired session is off: it
//!   would re-send the failed POST, and the Host alone decides whether an
//!   execute request is transmitted (Part II §2, §7.3).
//! - every request is bounded: a connect timeout and an overall timeout on
//!   the HTTP client, and a per-call timeout around each `tools/call`.

use crate::server::{PilotageServer, Timeouts, ToolAnswer, TransportError};
use crate::transport_diagnosis::Diagnosis;
use crate::values::EXTENSION_ID;
use rmcp::ServiceExt;
use rmcp::handler::client::ClientHandler;
use rmcp::model::{
    CallToolRequestParams, ClientCapabilities, ClientConfig, ExtensionCapabilities, Implementation,
    JsonObject, ProtocolVersion,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The handshake bound: discovery must not hang a terminal.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The client side of the MCP session: declares the extension and notes
/// tool-list changes so the loop can rediscover.
#[derive(Clone)]
struct HostHandler {
    tools_changed: Arc<AtomicBool>,
}

impl ClientHandler for HostHandler {
    fn get_info(&self) -> ClientConfig {
        let mut extensions = ExtensionCapabilities::new();
        extensions.insert(EXTENSION_ID.to_string(), JsonObject::new());
        let mut capabilities = ClientCapabilities::default();
        capabilities.extensions = Some(extensions);
        // 2025-11-25 is the newest revision with `initialize`, which carries
        // the extension declaration and the manifest accelerator.
        ClientConfig::new(
            capabilities,
            Implementation::new("pilotage", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.store(true, Ordering::SeqCst);
    }
}

/// A live MCP session with a Pilotage server.
pub struct McpConnection {
    url: String,
    service: RunningService<RoleClient, HostHandler>,
    init_meta: Option<Value>,
    declared: bool,
    tools_changed: Arc<AtomicBool>,
    timeouts: Timeouts,
}

impl McpConnection {
    /// Connects and initialises. `key` is sent as `Authorization: Bearer`;
    /// `extra_roots` are trusted beside the platform's roots.
    pub async fn connect(
        url: &str,
        key: Option<&str>,
        extra_roots: Vec<reqwest::Certificate>,
        timeouts: Timeouts,
    ) -> Result<McpConnection, TransportError> {
        let http = reqwest::Client::builder()
            // The platform's roots (and SSL_CERT_FILE / SSL_CERT_DIR on
            // Unix), plus a private CA given with --ca-file.
            .tls_certs_merge(extra_roots)
            .connect_timeout(CONNECT_TIMEOUT)
            // A safety net above every per-call bound.
            .timeout(timeouts.execute.max(timeouts.call) + Duration::from_secs(5))
            // A redirect could replay the credentials elsewhere or turn the
            // POST into a GET; report it instead of following it.
            .redirect(reqwest::redirect::Policy::none())
            .pool_max_idle_per_host(0)
            .build()
            .map_err(|e| {
                TransportError::Connection(format!("cannot set up the HTTP client: {e}"))
            })?;
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
            .reinit_on_expired_session(false)
            .control_request_timeout(Duration::from_secs(5))
            .session_recovery_timeout(Duration::from_secs(5));
        if let Some(k) = key {
            config = config.auth_header(k.to_string());
        }
        let transport = StreamableHttpClientTransport::with_client(http, config);
        let tools_changed = Arc::new(AtomicBool::new(false));
        let handler = HostHandler {
            tools_changed: tools_changed.clone(),
        };
        let service =
            tokio::time::timeout(CONNECT_TIMEOUT + timeouts.call, handler.serve(transport))
                .await
                .map_err(|_| TransportError::Timeout {
                    what: "initialize".into(),
                    secs: (CONNECT_TIMEOUT + timeouts.call).as_secs(),
                })?
                .map_err(|e| TransportError::Connection(Diagnosis::of(&e).message(url)))?;
        let info = service.peer_info();
        let declared = info
            .as_ref()
            .and_then(|i| i.capabilities.extensions.as_ref())
            .is_some_and(|e| e.contains_key(EXTENSION_ID));
        let init_meta = info
            .as_ref()
            .and_then(|i| i.meta.as_ref())
            .and_then(|m| m.0.get(EXTENSION_ID))
            .cloned();
        Ok(McpConnection {
            url: url.to_string(),
            service,
            init_meta,
            declared,
            tools_changed,
            timeouts,
        })
    }

    /// Ends the session (bounded; a server that does not answer the close
    /// does not hold the terminal).
    pub async fn close(self) {
        let mut service = self.service;
        let _ = tokio::time::timeout(Duration::from_secs(5), service.close()).await;
    }
}

fn transport_error(url: &str, e: ServiceError) -> TransportError {
    match e {
        ServiceError::McpError(data) => TransportError::Carrier {
            code: data.code.0,
            message: data.message.to_string(),
        },
        ServiceError::Timeout { timeout } => TransportError::Timeout {
            what: "request".into(),
            secs: timeout.as_secs(),
        },
        ServiceError::UnexpectedResponse => TransportError::Unexpected("not a tools result".into()),
        other => TransportError::Connection(Diagnosis::of(&other).message(url)),
    }
}

impl PilotageServer for McpConnection {
    fn identity(&self) -> &str {
        &self.url
    }

    fn initialize_meta(&self) -> Option<&Value> {
        self.init_meta.as_ref()
    }

    fn declared_extension(&self) -> bool {
        self.declared
    }

    fn take_tools_changed(&self) -> bool {
        self.tools_changed.swap(false, Ordering::SeqCst)
    }

    async fn list_tools(&self) -> Result<Vec<Value>, TransportError> {
        let bound = self.timeouts.call;
        let tools = tokio::time::timeout(bound, self.service.list_all_tools())
            .await
            .map_err(|_| TransportError::Timeout {
                what: "tools/list".into(),
                secs: bound.as_secs(),
            })?
            .map_err(|e| transport_error(&self.url, e))?;
        // Tools are handled as JSON so `_meta` and `inputSchema` are read
        // exactly as the server sent them.
        tools
            .into_iter()
            .map(|t| serde_json::to_value(t).map_err(|e| TransportError::Unexpected(e.to_string())))
            .collect()
    }

    async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        timeout: Duration,
    ) -> Result<ToolAnswer, TransportError> {
        let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
        let result = tokio::time::timeout(timeout, self.service.call_tool(params))
            .await
            .map_err(|_| TransportError::Timeout {
                what: format!("tools/call {name}"),
                secs: timeout.as_secs(),
            })?
            .map_err(|e| transport_error(&self.url, e))?;
        Ok(ToolAnswer {
            structured: result.structured_content,
            is_error: result.is_error.unwrap_or(false),
        })
    }
}
