//! The capability listing (conditional on its ETag), and the error body of a
//! refused call for `check-config --probe`.

use super::answer::{error_paths, error_text};
use super::stable::{self, Validator};
use super::transport::{Answer, Call};
use super::{CatalogFetch, EngineClient, EngineError};
use crate::engines::json_path::{pick, value_text};
use reqwest::header::ETAG;
use reqwest::{Method, StatusCode};
use serde_json::Value;

impl EngineClient {
    /// The tenant's capabilities, revalidated with `If-None-Match`; a new
    /// listing whose stable part did not move keeps the catalog
    /// ([`stable`]). `kept` is what the last answer gave the catalog to keep.
    pub async fn catalog(
        &self,
        tenant: &str,
        kept: Option<&str>,
    ) -> Result<CatalogFetch, EngineError> {
        let m = &self.mapping.catalog;
        let known = Validator::read(kept);
        let headers: Vec<_> = known
            .etag
            .map(|t| (reqwest::header::IF_NONE_MATCH, t))
            .into_iter()
            .collect();
        let answer = self
            .call(tenant, Call::get("catalog", &m.path), None, &headers)
            .await?;
        if answer.status == StatusCode::NOT_MODIFIED {
            return Ok(CatalogFetch::NotModified);
        }
        let fingerprint = answer
            .status
            .is_success()
            .then(|| stable::fingerprint(&answer.text, &m.list, &self.volatile_members()))
            .flatten();
        let etag = answer.header(ETAG);
        if let Some(fp) = &fingerprint
            && known.fingerprint == Some(fp.as_str())
        {
            return Ok(CatalogFetch::Same {
                etag: Some(Validator::write(fp, etag)),
            });
        }
        let mut body = self.success_json(&answer, "catalog")?;
        let pointer = format!("/{}", m.list.replace('.', "/"));
        match body
            .pointer_mut(if m.list.is_empty() { "" } else { &pointer })
            .map(Value::take)
        {
            Some(Value::Array(capabilities)) => Ok(CatalogFetch::Fresh {
                etag: match &fingerprint {
                    Some(fp) => Some(Validator::write(fp, etag)),
                    None => etag.map(str::to_string),
                },
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

    /// The capability members that may move without the contract moving:
    /// the volatile ones the mapping does not read (a field both volatile
    /// and mapped counts as part of the contract).
    fn volatile_members(&self) -> Vec<&str> {
        let c = &self.mapping.catalog;
        let mapped = [
            &c.name,
            &c.title,
            &c.description,
            &c.params,
            &c.returns,
            &c.effect,
            &c.tags,
            &c.deprecated,
        ];
        let read = |member: &str| {
            mapped
                .into_iter()
                .chain(&c.kept)
                .any(|f| f.split('.').next() == Some(member))
        };
        c.volatile
            .iter()
            .map(String::as_str)
            .filter(|v| !read(v))
            .collect()
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
