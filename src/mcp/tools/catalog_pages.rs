//! Catalog list pages as they were answered, kept while the caller's
//! `catalog_version` holds: a page is a function of the visible entries
//! (which the version names), the language, the filters, the offset and
//! the limit, so the same request answers the same page until the version
//! moves. Keys start with the tenant, so no page is shared across tenants;
//! the cache is bounded by the pages' estimated bytes (`cache.page_bytes`).

use super::Reply;
use crate::mcp::answer::Rendered;
use std::sync::Arc;
use std::time::Duration;

/// A page nobody asked for this long leaves (a moved version's pages are
/// never asked for again).
const IDLE: Duration = Duration::from_secs(60);

/// One answered page: its structured content and its summary line.
pub struct Page {
    pub rendered: Arc<Rendered>,
    pub summary: String,
}

impl Page {
    /// The page as a tool's reply, sharing its content.
    pub fn reply(&self) -> Reply {
        Reply::shared(self.rendered.clone(), self.summary.clone())
    }
}

/// What names a page.
pub struct PageKey<'a> {
    pub tenant: &'a str,
    pub language: &'a str,
    pub version: &'a str,
    /// The filters as the cursor's hash reads them (unambiguous text).
    pub filters: &'a str,
    pub offset: usize,
    pub limit: usize,
}

impl PageKey<'_> {
    fn text(&self) -> String {
        // The tenant (a token's claim, any text) goes first with its
        // length, so no tenant's key can spell another's; the language is
        // configured, the version hex and the filters debug-quoted, so
        // none of them holds the newline between them.
        format!(
            "{}:{}\n{}\n{}\n{}\n{}\n{}",
            self.tenant.len(),
            self.tenant,
            self.language,
            self.version,
            self.filters,
            self.offset,
            self.limit
        )
    }
}

pub struct CatalogPages {
    pages: moka::sync::Cache<String, Arc<Page>>,
}

impl CatalogPages {
    pub fn new(max_bytes: u64) -> Self {
        Self {
            pages: moka::sync::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|key: &String, page: &Arc<Page>| {
                    crate::weigh::as_weight(
                        crate::weigh::text(key)
                            + crate::weigh::text(&page.summary)
                            + page.rendered.weight(),
                    )
                })
                .time_to_idle(IDLE)
                .build(),
        }
    }

    pub fn get(&self, key: &PageKey<'_>) -> Option<Arc<Page>> {
        self.pages.get(&key.text())
    }

    pub fn keep(&self, key: &PageKey<'_>, page: Arc<Page>) {
        self.pages.insert(key.text(), page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key<'a>(tenant: &'a str, version: &'a str) -> PageKey<'a> {
        PageKey {
            tenant,
            language: "workflow/v1",
            version,
            filters: "None|None|None",
            offset: 0,
            limit: 50,
        }
    }

    #[test]
    fn a_page_is_kept_per_tenant_and_version() {
        let pages = CatalogPages::new(1024 * 1024);
        let page = Arc::new(Page {
            rendered: Rendered::new(json!({"items": [], "catalog_version": "cv_1"})),
            summary: "0 of 0 entries".into(),
        });
        pages.keep(&key("acme", "cv_1"), page);
        assert!(pages.get(&key("acme", "cv_1")).is_some());
        assert!(
            pages.get(&key("globex", "cv_1")).is_none(),
            "another tenant"
        );
        assert!(pages.get(&key("acme", "cv_2")).is_none(), "another version");
        // A tenant whose name spells the start of another's key.
        let spelled = "acme\nworkflow/v1\ncv_1";
        assert!(pages.get(&key(spelled, "cv_1")).is_none());
    }
}
