//! The rmcp `ServerHandler`: the extension declaration and welcome text
//! (Part III §1.2, §3.4), the manifest in initialize and `server/discover`
//! `_meta` (§3.2), `tools/list`, and `tools/call` dispatch with structural
//! argument checks (missing required member or wrong JSON type → `-32602`,
//! §7.1); everything else travels as Pilotage values. Each principal is
//! served the surface of its permissions: its own tools, manifest and
//! initialize/discover result, a tool outside them being unknown (`-32602`).

use super::answer::Answer;
use super::budget;
use super::call_request::CallRequest;
use super::tool_list::{self, ToolRole, ToolSpec};
use super::tools::validate::FromText;
use super::tools::{self, CallArguments, envelope, manifest};
use crate::auth::policy::Permissions;
use crate::auth::{Principal, Reach};
use crate::execute::RunTerms;
use crate::gateway::Gateway;
use crate::pilotage::{EXTENSION_ID, VERSION};
use crate::telemetry::tool_call::{self, ToolScope};
use crate::telemetry::trace_context::TraceContext;
use axum::http::request::Parts;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, DiscoverResult, GetTaskParams,
    GetTaskResult, InitializeRequestParams, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, Tool, UpdateTaskParams,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use tracing::Instrument;

/// Built once; cloned (cheaply) for every request by the transport.
#[derive(Clone)]
pub struct PilotageServer {
    inner: Arc<Inner>,
}

struct Inner {
    gw: Arc<Gateway>,
    /// One surface per distinct permission set (see
    /// [`Permissions::surface_index`]) for lasting callers, then the same
    /// for passing ones ([`Reach`]); the last of each has every permission.
    surfaces: Vec<Surface>,
    /// Catalog list pages, while their version holds.
    pages: tools::catalog_pages::CatalogPages,
    /// Runs held by MCP tasks.
    tasks: Arc<super::tasks::Tasks>,
}

/// What a principal with one permission set is offered: its tools (with
/// their argument validators), its manifest, and its initialize result.
struct Surface {
    specs: Vec<ToolSpec>,
    tools: Vec<Tool>,
    validators: HashMap<String, jsonschema::Validator>,
    info: InitializeResult,
    manifest: manifest::ManifestAnswer,
}

/// The welcome text (Part III §3.4).
pub const INSTRUCTIONS: &str = "This server speaks Pilotage (io.github.jafarsa0/pilotage 1.1): program languages an agent can learn, check and run safely. Call pilotage_manifest first: it lists the languages and the tools for each stage (guides → catalog → validate → execute → trace).";

impl Surface {
    fn build(gw: &Gateway, perms: Permissions, reach: Reach) -> Result<Surface, String> {
        let specs = tool_list::all(gw, perms, reach);
        let mut tools = Vec::with_capacity(specs.len());
        let mut validators = HashMap::new();
        for spec in &specs {
            let tool: Tool = serde_json::from_value(spec.json.clone())
                .map_err(|e| format!("tool {}: {e}", spec.name()))?;
            tools.push(tool);
            let v = jsonschema::validator_for(&spec.checked)
                .map_err(|e| format!("input schema of {}: {e}", spec.name()))?;
            validators.insert(spec.name().to_string(), v);
        }
        let manifest = manifest::build(gw, perms, reach);
        let info: InitializeResult = serde_json::from_value(json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {"listChanged": false}, "extensions": {EXTENSION_ID: {"version": VERSION}, rmcp::model::TASKS_EXTENSION_ID: {}}},
            "serverInfo": {"name": "pilotage-gateway", "version": env!("CARGO_PKG_VERSION")},
            "instructions": INSTRUCTIONS,
            "_meta": {EXTENSION_ID: {"manifest": manifest}},
        }))
        .map_err(|e| format!("initialize result: {e}"))?;
        Ok(Surface {
            specs,
            tools,
            validators,
            info,
            manifest: manifest::ManifestAnswer::new(gw, manifest),
        })
    }
}

impl PilotageServer {
    pub fn new(gw: Arc<Gateway>) -> Result<Self, String> {
        // Eight permission sets at most, for each reach: every surface is
        // built once, here.
        let surfaces = [Reach::Lasting, Reach::Passing]
            .into_iter()
            .flat_map(|reach| (0..Permissions::SURFACES).map(move |i| (reach, i)))
            .map(|(reach, i)| Surface::build(&gw, Permissions::from_surface_index(i), reach))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            inner: Arc::new(Inner {
                pages: tools::catalog_pages::CatalogPages::new(gw.config.cache.page_bytes),
                tasks: Arc::new(super::tasks::Tasks::new(gw.config.tasks.clone())),
                gw,
                surfaces,
            }),
        })
    }

    fn surface(&self, principal: Option<&Principal>) -> &Surface {
        let perms = principal.map_or(Permissions::ALL, |p| p.permissions);
        let passing = principal.is_some_and(|p| Reach::of(p) == Reach::Passing);
        let passing_offset = if passing { Permissions::SURFACES } else { 0 };
        &self.inner.surfaces[perms.surface_index() + passing_offset]
    }

    pub fn gateway(&self) -> &Arc<Gateway> {
        &self.inner.gw
    }

    pub fn tasks(&self) -> &Arc<super::tasks::Tasks> {
        &self.inner.tasks
    }

    /// The tool `name` as `principal` is offered it, with `arguments`
    /// checked against its schema (`-32602` as in a call).
    fn offered(
        &self,
        principal: &Principal,
        name: &str,
        arguments: &Value,
    ) -> Result<&ToolSpec, McpError> {
        let spec = self.tool_for(principal, name)?;
        self.check_arguments(principal, spec, arguments)?;
        Ok(spec)
    }

    /// The tool `name` as `principal` is offered it. A tool this principal
    /// is not offered does not exist for it, the same answer as for a
    /// capability the language does not declare.
    fn tool_for(&self, principal: &Principal, name: &str) -> Result<&ToolSpec, McpError> {
        let surface = self.surface(Some(principal));
        surface
            .specs
            .iter()
            .find(|s| s.name() == name)
            .ok_or_else(|| McpError::invalid_params(format!("Unknown tool: {name}"), None))
    }

    /// `arguments` against the schema of `spec` as `principal` is offered it.
    fn check_arguments(
        &self,
        principal: &Principal,
        spec: &ToolSpec,
        arguments: &Value,
    ) -> Result<(), McpError> {
        let surface = self.surface(Some(principal));
        match surface.validators.get(spec.name()) {
            Some(v) => match v.iter_errors(arguments).next() {
                Some(err) => Err(McpError::invalid_params(
                    super::refusal::structural(spec, &err),
                    None,
                )),
                None => Ok(()),
            },
            None => Ok(()),
        }
    }

    /// Whether a `tools/call` may be held by a task: only an execute tool
    /// (any other is `-32601`, as revision 2025-11-25 asks of a tool that
    /// does not support tasks), with arguments its schema accepts.
    pub fn task_call(
        &self,
        principal: &Principal,
        name: &str,
        arguments: &serde_json::Map<String, Value>,
    ) -> Result<super::tasks::TaskCall, McpError> {
        let arguments = Value::Object(arguments.clone());
        let spec = self.offered(principal, name, &arguments)?;
        let ToolRole::Execute(language) = &spec.role else {
            return Err(McpError::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("{name} cannot run as a task: only the execute tools can"),
                None,
            ));
        };
        let Some(lang) = self.inner.gw.language(language) else {
            return Err(McpError::internal_error("language vanished", None));
        };
        Ok(super::tasks::TaskCall {
            idempotent: lang.config.capabilities.execute.idempotency,
            retention_ms: lang
                .config
                .retention_duration()
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        })
    }

    /// The run deadline of a task holding a call of the execute tool `name`.
    pub fn task_deadline(&self, name: &str) -> Option<std::time::Duration> {
        let spec = self.surface(None).specs.iter().find(|s| s.name() == name)?;
        let ToolRole::Execute(language) = &spec.role else {
            return None;
        };
        let lang = self.inner.gw.language(language)?;
        Some(std::time::Duration::from_millis(
            lang.config.task_run_deadline_ms,
        ))
    }

    /// Runs one tool call for `principal`.
    pub async fn dispatch(
        &self,
        name: &str,
        arguments: CallArguments,
        principal: &Principal,
        terms: RunTerms,
    ) -> Result<Answer, McpError> {
        let inner = &self.inner;
        let surface = self.surface(Some(principal));
        let spec = self.tool_for(principal, name)?;
        let gw = &inner.gw;
        let language = |l: &str| gw.language(l).cloned();
        // A plain validate call whose program's text has a verdict is
        // answered from it, its arguments never read (see `from_text`).
        let mut looked = None;
        let args = match arguments {
            CallArguments::Unread(text) => {
                if let ToolRole::Validate(l) = &spec.role
                    && let Some(lang) = language(l)
                {
                    match Box::pin(tools::validate::from_text(gw, &lang, principal, &text)).await {
                        FromText::Answered(reply) => return Ok(envelope(Ok(reply))),
                        FromText::Missed(read) => looked = read,
                    }
                }
                CallArguments::Unread(text)
            }
            other => other,
        }
        .read()?;
        self.check_arguments(principal, spec, args.as_value())?;
        // The tools that wait are boxed, each in its own arm: their state
        // (execute's is large) sits in an allocation of its own, so the box
        // `call` puts every call in stays small, and is cheap to fill, for
        // the tools answered from memory (manifest, guides).
        let result = match &spec.role {
            ToolRole::Manifest => tools::manifest::call(&surface.manifest),
            ToolRole::Guide => tools::get_guide::call(gw, &args),
            ToolRole::Catalog => {
                Box::pin(tools::catalog::call(gw, &inner.pages, principal, &args)).await
            }
            ToolRole::Validate(l) => match language(l) {
                Some(lang) => {
                    Box::pin(tools::validate::call(gw, &lang, principal, &args, looked)).await
                }
                None => return Err(McpError::internal_error("language vanished", None)),
            },
            ToolRole::Execute(l) => match language(l) {
                Some(lang) => {
                    Box::pin(tools::execute::call(gw, &lang, principal, args, terms)).await
                }
                None => return Err(McpError::internal_error("language vanished", None)),
            },
            ToolRole::Approvals => Box::pin(tools::approvals::call(self, principal, &args)).await,
            ToolRole::Trace(l) => match language(l) {
                Some(lang) => Box::pin(tools::trace::call(gw, &lang, principal, &args)).await,
                None => return Err(McpError::internal_error("language vanished", None)),
            },
        };
        Ok(envelope(result))
    }
}

impl PilotageServer {
    /// The language a tool call is for (its loop tool's, or a declared
    /// `language` argument; empty otherwise, so caller text never becomes a
    /// label), and whether the tool executes.
    fn tool_language(&self, name: &str, arguments: &CallArguments) -> (String, bool) {
        // Tool names are a closed set; the full surface knows every one.
        match self
            .surface(None)
            .specs
            .iter()
            .find(|s| s.name() == name)
            .map(|s| &s.role)
        {
            Some(ToolRole::Execute(l)) => (l.clone(), true),
            Some(ToolRole::Validate(l)) | Some(ToolRole::Trace(l)) => (l.clone(), false),
            _ => {
                let named = arguments.language();
                let declared = named.filter(|l| self.inner.gw.language(l).is_some());
                (declared.unwrap_or_default(), false)
            }
        }
    }
}

impl ServerHandler for PilotageServer {
    /// The full surface; requests with a principal get theirs (below).
    fn get_info(&self) -> InitializeResult {
        self.surface(None).info.clone()
    }

    /// The initialize result carries the caller's own manifest.
    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let negotiated = self.negotiate_initialize(&request)?;
        let mut info = self.surface(principal_of(&context)).info.clone();
        info.protocol_version = negotiated.protocol_version;
        Ok(info)
    }

    /// `server/discover` (2026-07-28) carries the caller's own manifest.
    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, McpError> {
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.surface(principal_of(&context)).info.clone(),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        // `with_all_items` sets `resultType`, which revision 2026-07-28 requires
        // (rmcp drops it again for older peers).
        let tools = self.surface(principal_of(&context)).tools.clone();
        Ok(ListToolsResult::with_all_items(tools))
    }

    /// The revisions the Pilotage binding supports (Part III: 2025-06-18 and later).
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(&[
            ProtocolVersion::V_2025_06_18,
            ProtocolVersion::V_2025_11_25,
            ProtocolVersion::V_2026_07_28,
        ])
    }

    /// Any tool of the full surface (the transport has no principal here);
    /// `dispatch` refuses the ones the caller is not offered.
    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.surface(None)
            .tools
            .iter()
            .find(|t| t.name == name)
            .cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let Some(mut call) = context
            .extensions
            .get::<Parts>()
            .and_then(CallRequest::from_parts)
        else {
            return Err(McpError::internal_error(
                "no principal on the request",
                None,
            ));
        };
        let client_tasks = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if client_tasks && super::tasks::extension::may_hold(self, call.principal, &request.name) {
            let arguments = CallArguments::of(&mut call, request.arguments)
                .read()?
                .into_members();
            return super::tasks::extension::call(self, call.principal, &request.name, arguments)
                .await;
        }
        self.call(request, call)
            .await
            .map(|answer| CallToolResponse::from(answer.into_result()))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        let principal = principal_of(&context)
            .ok_or_else(|| McpError::internal_error("no principal on the request", None))?;
        super::tasks::extension::get(self, principal, &request.task_id).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let principal = principal_of(&context)
            .ok_or_else(|| McpError::internal_error("no principal on the request", None))?;
        super::tasks::extension::cancel(self, principal, &request.task_id).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        let principal = principal_of(&context)
            .ok_or_else(|| McpError::internal_error("no principal on the request", None))?;
        super::tasks::extension::update(self, principal, &request.task_id, &request.input_responses)
            .await
    }
}

impl PilotageServer {
    /// One `tools/call`, for rmcp's handler and for the front's direct path
    /// alike.
    pub async fn call(
        &self,
        request: CallToolRequestParams,
        mut call: CallRequest<'_>,
    ) -> Result<Answer, McpError> {
        let principal = call.principal;
        let name = request.name.to_string();
        // The front lifted a call's arguments out of the message (rmcp saw
        // `{}` in their place).
        let arguments = CallArguments::of(&mut call, request.arguments);
        let (language, execute) = self.tool_language(&name, &arguments);
        // Lines logged during the call name it by its scope; a span (tool,
        // language, tenant, outcome, run_id, duration) is made only for the
        // collector.
        let exporting = crate::telemetry::otlp::exporting();
        let span = if exporting {
            tracing::info_span!(
                target: crate::telemetry::span_context::EXPORTED,
                "tools/call",
                tool = %name,
                language = %language,
                tenant = %principal.tenant,
                outcome = tracing::field::Empty,
                run_id = tracing::field::Empty,
                duration_ms = tracing::field::Empty,
            )
        } else {
            tracing::Span::none()
        };
        let scope = ToolScope {
            tool: name.clone(),
            language: language.clone(),
            tenant: principal.tenant.clone(),
        };
        let started = std::time::Instant::now();
        // rmcp serves the call on another task: carry the request's trace
        // context over so engine calls propagate it and lines name the
        // request. (The front's own task has it already.)
        let trace = call
            .trace
            .filter(|_| TraceContext::with_current(|_| ()).is_none())
            .cloned();
        let gw = &self.inner.gw;
        let caller = budget::caller_of(gw, &call);
        let result = match budget::refusal(gw, principal, &caller) {
            Some(refusal) => Ok(refusal),
            None => {
                // A panic inside the call answers `internal` (and is counted
                // as such) instead of ending the task and leaving the client
                // waiting. The call runs as its caller, so the run cap counts
                // it the same way.
                let served = caller.serving(super::panic_guard::guarded(
                    &name,
                    scope.run(
                        self.dispatch(&name, arguments, principal, std::mem::take(&mut call.terms))
                            .instrument(span.clone()),
                    ),
                ));
                // Boxed with every scope it runs in: the front's request
                // future, which holds this one, is copied as it is handed
                // around, and each scope held by value doubles what it wraps.
                match trace {
                    Some(t) => Box::pin(t.scope(served)).await,
                    None => Box::pin(served).await,
                }
            }
        };
        super::retry_after::ask_retry(call.retry_after, &result);
        let took = started.elapsed();
        let run_id = result
            .as_ref()
            .ok()
            .and_then(Answer::structured)
            .and_then(|s| s.get("run_id"))
            .and_then(Value::as_str);
        // Only a collector reads the span's closing fields: the request's
        // log line carries them already.
        if exporting && let Some(run_id) = run_id {
            span.record("run_id", run_id);
        }
        let outcome = tool_call::outcome(&result);
        // A name no tool has is the caller's text: one series for all of them.
        let known = self.surface(None).specs.iter().any(|s| s.name() == name);
        tool_call::record(
            &self.inner.gw.metrics,
            execute,
            if known { &name } else { "unknown" },
            &language,
            &result,
            &outcome,
            took,
        );
        if exporting {
            span.record("outcome", outcome.as_str());
            span.record("duration_ms", took.as_secs_f64() * 1000.0);
        }
        if let Some(fields) = call.fields {
            fields.set_tool(name, language, outcome);
            if let Some(run_id) = run_id {
                fields.set_run_id(run_id);
            }
            if let Err(e) = &result {
                fields.set_carrier_error(e.code.0, &e.message);
            }
        }
        result
    }
}

/// The principal the front attached to the HTTP request.
fn principal_of(context: &RequestContext<RoleServer>) -> Option<&Principal> {
    context
        .extensions
        .get::<Parts>()
        .and_then(|p| p.extensions.get::<Principal>())
}

/// Tasks reach the server through what they need of it.
#[async_trait::async_trait]
impl super::tasks::TaskHost for PilotageServer {
    fn gateway(&self) -> &Arc<Gateway> {
        PilotageServer::gateway(self)
    }

    fn tasks(&self) -> &Arc<super::tasks::Tasks> {
        PilotageServer::tasks(self)
    }

    fn task_call(
        &self,
        principal: &Principal,
        tool: &str,
        arguments: &serde_json::Map<String, Value>,
    ) -> Result<super::tasks::TaskCall, McpError> {
        PilotageServer::task_call(self, principal, tool, arguments)
    }

    fn task_deadline(&self, tool: &str) -> Option<std::time::Duration> {
        PilotageServer::task_deadline(self, tool)
    }

    async fn call(
        &self,
        params: CallToolRequestParams,
        request: CallRequest<'_>,
    ) -> Result<Answer, McpError> {
        PilotageServer::call(self, params, request).await
    }

    fn shared(&self) -> Arc<dyn super::tasks::TaskHost> {
        Arc::new(self.clone())
    }
}
