//! What the REST adapter's calls carry: the tenant in the mapping's header,
//! a call's own headers and the rendered JSON body. The deadline, the
//! slots, the breaker and the repetition of safe calls are
//! `engines::http_client`'s.

use super::EngineClient;
use super::body::{Rendered, to_json};
pub(super) use crate::engines::http_client::{Answer, Call};
pub(super) use crate::engines::transport::CallError;
use reqwest::header::{CONTENT_TYPE, HeaderName};

impl EngineClient {
    /// One call for `tenant` with `headers` and `body`.
    pub(super) async fn call(
        &self,
        tenant: &str,
        call: Call<'_>,
        body: Option<&Rendered<'_>>,
        headers: &[(HeaderName, &str)],
    ) -> Result<Answer, CallError> {
        self.link
            .call(&call, |req| {
                let mut req = req.header(&self.mapping.tenant_header, tenant);
                for (name, value) in headers {
                    req = req.header(name, *value);
                }
                match body {
                    Some(b) => req
                        .header(CONTENT_TYPE, "application/json")
                        .body(to_json(b)),
                    None => req,
                }
            })
            .await
    }
}
