//! The standard OpenTelemetry environment variables, for what `[telemetry]`
//! leaves unset: an explicit key of the file wins (and `PILOTAGE_*`
//! variables override the file, as everywhere), the `OTEL_*` variables fill
//! the rest, then the defaults.
//!
//! Read here: `OTEL_SDK_DISABLED`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the
//! traces URL as given), `OTEL_EXPORTER_OTLP_ENDPOINT` (a base URL, `/v1/traces`
//! appended), `OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_[TRACES_]TIMEOUT` and
//! `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`. The OpenTelemetry SDK itself reads
//! `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG`, `OTEL_RESOURCE_ATTRIBUTES`
//! and `OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`, none of which the file has.

use crate::config::TelemetryConfig;
use std::time::Duration;

/// Bound of one export request unless a variable sets another.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the exporter is built with.
#[derive(Debug, PartialEq)]
pub struct ExportSettings {
    /// The OTLP/HTTP traces URL.
    pub endpoint: String,
    pub service_name: String,
    pub timeout: Duration,
    /// A protocol other than `http/json` was asked for: this build sends
    /// JSON (every OTLP/HTTP collector accepts both on one port).
    pub unsupported_protocol: Option<String>,
}

/// The settings of trace export, or `None` when it is off (no endpoint in
/// the file nor in the environment, or `OTEL_SDK_DISABLED=true`).
pub fn export_settings(
    telemetry: &TelemetryConfig,
    get: impl Fn(&str) -> Option<String>,
) -> Option<ExportSettings> {
    let get = |k: &str| {
        get(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return None;
    }
    let endpoint = Some(telemetry.otlp_traces_endpoint.clone())
        .filter(|e| !e.is_empty())
        .or_else(|| get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        .or_else(|| {
            get("OTEL_EXPORTER_OTLP_ENDPOINT")
                .map(|base| format!("{}/v1/traces", base.trim_end_matches('/')))
        })?;
    let default_name = TelemetryConfig::default().service_name;
    let service_name = if telemetry.service_name != default_name {
        telemetry.service_name.clone()
    } else {
        get("OTEL_SERVICE_NAME").unwrap_or(default_name)
    };
    let timeout = get("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
        .or_else(|| get("OTEL_EXPORTER_OTLP_TIMEOUT"))
        .and_then(|ms| ms.parse::<u64>().ok())
        .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
    let unsupported_protocol = get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        .or_else(|| get("OTEL_EXPORTER_OTLP_PROTOCOL"))
        .filter(|p| p != "http/json");
    Some(ExportSettings {
        endpoint,
        service_name,
        timeout,
        unsupported_protocol,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn nothing_configured_exports_nothing() {
        assert_eq!(export_settings(&TelemetryConfig::default(), env(&[])), None);
    }

    #[test]
    fn the_environment_fills_what_the_file_leaves_unset() {
        let s = export_settings(
            &TelemetryConfig::default(),
            env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
                ("OTEL_SERVICE_NAME", "gw-eu"),
                ("OTEL_EXPORTER_OTLP_TIMEOUT", "2500"),
            ]),
        )
        .unwrap();
        assert_eq!(s.endpoint, "http://collector:4318/v1/traces");
        assert_eq!(s.service_name, "gw-eu");
        assert_eq!(s.timeout, Duration::from_millis(2500));
        assert_eq!(s.unsupported_protocol, None);
    }

    #[test]
    fn the_traces_endpoint_is_taken_as_given_and_wins_over_the_base() {
        let s = export_settings(
            &TelemetryConfig::default(),
            env(&[
                ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318"),
                ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:4318/custom"),
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
            ]),
        )
        .unwrap();
        assert_eq!(s.endpoint, "http://t:4318/custom");
        assert_eq!(s.unsupported_protocol.as_deref(), Some("http/protobuf"));
    }

    #[test]
    fn explicit_keys_of_the_file_win() {
        let file = TelemetryConfig {
            otlp_traces_endpoint: "http://file:4318/v1/traces".into(),
            service_name: "from-file".into(),
        };
        let s = export_settings(
            &file,
            env(&[
                (
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "http://env:4318/v1/traces",
                ),
                ("OTEL_SERVICE_NAME", "from-env"),
            ]),
        )
        .unwrap();
        assert_eq!(s.endpoint, "http://file:4318/v1/traces");
        assert_eq!(s.service_name, "from-file");
    }

    #[test]
    fn the_sdk_switch_turns_export_off() {
        let file = TelemetryConfig {
            otlp_traces_endpoint: "http://file:4318/v1/traces".into(),
            ..TelemetryConfig::default()
        };
        assert_eq!(
            export_settings(&file, env(&[("OTEL_SDK_DISABLED", "true")])),
            None
        );
    }
}
