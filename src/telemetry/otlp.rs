//! Span export over OTLP/HTTP (JSON), behind `[telemetry]
//! otlp_traces_endpoint` or the standard `OTEL_EXPORTER_OTLP_*` variables
//! (`otel_env.rs`): the `request`, `tools/call`, `execute` and `engine` spans
//! go to a collector in batches, as children of the caller's `traceparent`.
//!
//! The exporter sends through the gateway's own HTTP client, run on the
//! gateway's tokio runtime (the batch processor exports from a thread of its
//! own, where an async client could not run by itself).

use crate::config::Config;
use opentelemetry::KeyValue;
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use std::sync::OnceLock;

static PROVIDER: OnceLock<SdkTracerProvider> = OnceLock::new();

/// Why export could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("telemetry.otlp_traces_endpoint: {0}")]
pub struct OtlpError(String);

/// The tracer of the configured exporter, or `None` when export is off.
/// Must run inside the tokio runtime.
pub fn tracer(config: &Config) -> Result<Option<SdkTracer>, OtlpError> {
    let Some(settings) =
        super::otel_env::export_settings(&config.telemetry, |k| std::env::var(k).ok())
    else {
        return Ok(None);
    };
    if let Some(protocol) = &settings.unsupported_protocol {
        tracing::warn!(
            protocol = %protocol,
            "OTEL_EXPORTER_OTLP_PROTOCOL: this build exports http/json only; sending JSON"
        );
    }
    let client = RuntimeClient {
        http: reqwest::Client::builder()
            .timeout(settings.timeout)
            .build()
            .map_err(|e| OtlpError(e.to_string()))?,
        runtime: tokio::runtime::Handle::try_current().map_err(|e| OtlpError(e.to_string()))?,
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_protocol(Protocol::HttpJson)
        .with_endpoint(settings.endpoint.clone())
        .with_timeout(settings.timeout)
        .build()
        .map_err(|e| OtlpError(e.to_string()))?;
    let resource = Resource::builder()
        .with_service_name(settings.service_name)
        .with_attribute(KeyValue::new(
            "service.instance.id",
            config.server.instance.clone(),
        ))
        .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build();
    let provider = SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build();
    let tracer = provider.tracer("pilotage-gateway");
    let _ = PROVIDER.set(provider);
    Ok(Some(tracer))
}

/// Whether spans are exported: span fields only a collector reads are
/// recorded only then (each record is also written into the span's log
/// fields).
pub fn exporting() -> bool {
    PROVIDER.get().is_some()
}

/// Sends the spans still buffered (at exit).
pub fn flush() {
    if let Some(p) = PROVIDER.get()
        && let Err(e) = p.shutdown()
    {
        tracing::warn!(error = %e, "trace export: the last spans were not sent");
    }
}

/// reqwest on the gateway's runtime, callable from any thread.
#[derive(Debug)]
struct RuntimeClient {
    http: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

#[async_trait::async_trait]
impl HttpClient for RuntimeClient {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let http = self.http.clone();
        let (parts, body) = request.into_parts();
        let sent = self.runtime.spawn(async move {
            let resp = http
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body)
                .send()
                .await?;
            let status = resp.status();
            let headers = resp.headers().clone();
            let bytes = resp.bytes().await?;
            let mut out = Response::new(bytes);
            *out.status_mut() = status;
            *out.headers_mut() = headers;
            Ok::<_, reqwest::Error>(out)
        });
        Ok(sent.await??)
    }
}
