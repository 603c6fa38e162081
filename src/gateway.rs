//! The gateway's shared state: configuration, engine client, catalog, store,
//! and one runtime per declared Language (guides, classifier rules, schemas).
//! Built once by `app.rs`; every tool call borrows it.

use crate::auth::Authenticator;
use crate::catalog::CatalogService;
use crate::classify::{Classifiers, RuleSource};
use crate::config::{Config, LanguageConfig};
use crate::engine::EngineClient;
use crate::guides::GuideSet;
use crate::metrics::Metrics;
use crate::store::Store;
use crate::validate::VerdictCache;
use std::sync::{Arc, RwLock};

/// Why the gateway cannot start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Config(#[from] crate::config::ConfigError),
    #[error("guides of language '{language}': {message}")]
    Guides { language: String, message: String },
    #[error("classifier rules of language '{language}': {message}")]
    Rules { language: String, message: String },
    #[error("language '{language}': no implementation is called '{kind}'")]
    Kind { language: String, kind: String },
    #[error("tool declarations: {0}")]
    Tools(String),
    #[error("store: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("TLS: {0}")]
    Tls(#[from] crate::tls::TlsError),
}

/// Everything one Language needs at request time.
pub struct LanguageRuntime {
    pub config: LanguageConfig,
    /// The implementation its `kind` names.
    pub language: Arc<dyn crate::languages::Language>,
    guides: RwLock<Arc<GuideSet>>,
    pub context_schema: Option<(serde_json::Value, jsonschema::Validator)>,
}

impl LanguageRuntime {
    pub fn load(config: &Config, lang: &LanguageConfig) -> Result<Self, StartError> {
        let language =
            crate::languages::registry::lookup(&lang.kind).ok_or_else(|| StartError::Kind {
                language: lang.name.clone(),
                kind: lang.kind.clone(),
            })?;
        let guides = load_guides(config, lang)?;
        let context_schema = match &lang.context_schema {
            Some(schema) => {
                let json = serde_json::to_value(schema).unwrap_or_default();
                let validator =
                    jsonschema::validator_for(&json).map_err(|e| StartError::Guides {
                        language: lang.name.clone(),
                        message: format!("context_schema: {e}"),
                    })?;
                Some((json, validator))
            }
            None => None,
        };
        Ok(Self {
            config: lang.clone(),
            language,
            guides: RwLock::new(Arc::new(guides)),
            context_schema,
        })
    }

    /// Where this language's classifier rules come from; the allowed codes
    /// are the closed-sets guide's.
    pub fn rule_source(&self, config: &Config) -> RuleSource {
        RuleSource {
            language: self.config.name.clone(),
            path: config.resolve(&self.config.classifier),
            allowed_codes: self.guides().diagnostic_codes(),
        }
    }

    /// The current guide set (swapped whole on reload).
    pub fn guides(&self) -> Arc<GuideSet> {
        self.guides
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

fn load_guides(config: &Config, lang: &LanguageConfig) -> Result<GuideSet, StartError> {
    GuideSet::load(
        &config.resolve(&lang.guides_dir),
        &lang.name,
        &lang.guide_id_prefix,
    )
    .map_err(|e| StartError::Guides {
        language: lang.name.clone(),
        message: e.to_string(),
    })
}

/// The shared state of one gateway process.
pub struct Gateway {
    pub config: Config,
    pub engine: EngineClient,
    pub store: Arc<dyn Store>,
    pub catalog: CatalogService,
    pub languages: Vec<Arc<LanguageRuntime>>,
    pub classifiers: Classifiers,
    pub auth: Authenticator,
    pub verdicts: VerdictCache,
    pub metrics: Arc<Metrics>,
    pub limits: crate::limits::Limits,
}

impl Gateway {
    /// Loads guides and rules (refusing to start on any error) and connects
    /// the store.
    pub async fn build(config: Config) -> Result<Arc<Gateway>, StartError> {
        let languages = config
            .languages
            .iter()
            .map(|l| LanguageRuntime::load(&config, l).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        let sources: Vec<RuleSource> = languages.iter().map(|l| l.rule_source(&config)).collect();
        // The failing file names its language (several may share one file).
        let owner = |file: &std::path::Path| {
            let names: Vec<&str> = sources
                .iter()
                .filter(|s| s.path == file)
                .map(|s| s.language.as_str())
                .collect();
            names.join(", ")
        };
        let classifiers = Classifiers::load(sources.clone()).map_err(|e| StartError::Rules {
            language: owner(e.file()),
            message: e.to_string(),
        })?;
        let ca = |key, path: &str| {
            let path = (!path.is_empty()).then(|| config.resolve(path));
            crate::tls::read_ca(key, path.as_deref())
        };
        let store_ca = ca("store.ca_file", &config.store.ca_file)?;
        let engine_ca = ca("engine.ca_file", &config.engine.ca_file)?;
        let redis = (!config.store.redis_url.is_empty()).then_some(config.store.redis_url.as_str());
        let limits = crate::store::memory::MemoryLimits {
            principal_bytes: config.store.memory_principal_bytes,
            total_bytes: config.store.memory_total_bytes,
            ..Default::default()
        };
        let store = crate::store::connect_with(
            redis,
            std::time::Duration::from_millis(config.store.op_timeout_ms),
            limits,
            store_ca,
        )
        .await?;
        let metrics = Arc::new(Metrics::new());
        metrics.declare_diagnostic_codes(classifiers.counts().keys().map(String::as_str));
        let store = crate::metrics::store::MeteredStore::wrap(store, metrics.clone());
        let engine =
            EngineClient::with_roots(&config.engine, crate::tls::http_roots(engine_ca.as_deref()))
                .with_metrics(metrics.clone());
        Ok(Arc::new(Gateway {
            catalog: CatalogService::new(engine.clone(), store.clone(), config.cache.catalog_bytes)
                .count_version_changes(metrics.catalog_version_changes.clone()),
            limits: crate::limits::Limits::new(&config.limits, metrics.clone()),
            metrics,
            auth: Authenticator::new(&config.auth),
            verdicts: VerdictCache::new(config.cache.verdict_bytes),
            engine,
            store,
            languages,
            classifiers,
            config,
        }))
    }

    pub fn language(&self, name: &str) -> Option<&Arc<LanguageRuntime>> {
        self.languages.iter().find(|l| l.config.name == name)
    }

    /// The language a request names, or the `not_found` request error that
    /// lists the declared ones.
    pub fn language_or_not_found(
        &self,
        name: &str,
    ) -> Result<&Arc<LanguageRuntime>, crate::pilotage::RequestError> {
        self.language(name).ok_or_else(|| {
            crate::pilotage::RequestError::not_found(format!(
                "unknown language '{name}'; this server has: {}",
                self.language_names().join(", ")
            ))
        })
    }

    /// Names of all declared languages (for `not_found` messages).
    pub fn language_names(&self) -> Vec<&str> {
        self.languages
            .iter()
            .map(|l| l.config.name.as_str())
            .collect()
    }

    /// Reloads every language's rules and guides; a broken file keeps the
    /// previous version in service.
    pub fn reload(&self) {
        for lang in &self.languages {
            match load_guides(&self.config, &lang.config) {
                Ok(guides) => {
                    *lang
                        .guides
                        .write()
                        .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(guides);
                }
                Err(e) => tracing::warn!(language = %lang.config.name, error = %e,
                    "guide reload failed; keeping the previous guides"),
            }
        }
        // Failures are logged by the classifiers, which keep the old tables.
        let _ = self.classifiers.reload();
        // Cached verdicts were classified with the old tables.
        self.verdicts.clear();
    }
}
