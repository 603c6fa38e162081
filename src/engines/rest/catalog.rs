//! The capability listing (conditional on its ETag), and the error body of a
//! refused call for `check-config --probe`.

use super::answer::{error_paths, error_text};
use super::transport::{Answer, Call};
use super::{CatalogFetch, EngineClient, EngineError};
use crate::engines::json_path::{pick, value_text};
use reqwest::header::ETAG;
use reqwest::{Method, StatusCode};
use serde_json::Value;

impl EngineClient {
    /// The tenant's capabilities, revalidated with `If-None-Match`.
    pub async fn catalog(
        &self,
        tenant: &str,
        etag: Option<&str>,
    ) -> Result<CatalogFetch, EngineError> {
        let m = &self.mapping.catalog;
        let headers: Vec<_> = etag
            .map(|t| (reqwest::header::IF_NONE_MATCH, t))
            .into_iter()
            .collect();
        let answer = self
            .call(tenant, Call::get("catalog", &m.path), None, &headers)
            .await?;
        if answer.status == StatusCode::NOT_MODIFIED {
            return Ok(CatalogFetch::NotModified);
        }
        let mut body = self.success_json(&answer, "catalog")?;
        let pointer = format!("/{}", m.list.replace('.', "/"));
        match body
            .pointer_mut(if m.list.is_empty() { "" } else { &pointer })
            .map(Value::take)
        {
            Some(Value::Array(capabilities)) => Ok(CatalogFetch::Fresh {
                etag: answer.header(ETAG).map(str::to_string),
                capabilities,
            }),
            _ => Err(EngineError::Failed(format!(
                "catalog response has no '{}' array (engine.mapping.catalog.list)",
                m.list
            ))),
        }
    }

    /// For `check-config --probe`: the catalog call for `tenant` (one the
    /// engine should not know). `None` when the engine answered 2xx; else the
    /// status and the error text the mapping's `error_paths` find (`None`:
    /// nothing found).
    pub async fn error_answer(
        &self,
        tenant: &str,
    ) -> Result<Option<(StatusCode, Option<String>)>, EngineError> {
        let answer = self
            .call(
                tenant,
                Call::once("catalog", Method::GET, &self.mapping.catalog.path),
                None,
                &[],
            )
            .await?;
        if answer.status.is_success() {
            return Ok(None);
        }
        let body = answer.json();
        let found = self
            .mapping
            .error_paths
            .iter()
            .filter(|p| !p.is_empty())
            .find_map(|p| pick(&body, p).and_then(value_text));
        Ok(Some((answer.status, found)))
    }

    /// The body of a 2xx answer as JSON, or the error it carries.
    fn success_json(&self, answer: &Answer, what: &str) -> Result<Value, EngineError> {
        if !answer.status.is_success() {
            let body = answer.json();
            let text = if body.is_null() {
                answer.text.chars().take(200).collect()
            } else {
                error_text(&body, &error_paths(&self.mapping, ""), answer.status)
            };
            return Err(EngineError::Failed(format!(
                "the engine answered HTTP {} to the {what} call: {text}",
                answer.status.as_u16()
            )));
        }
        serde_json::from_str(&answer.text)
            .map_err(|e| EngineError::Failed(format!("{what} answered invalid JSON: {e}")))
    }
}
