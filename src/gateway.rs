//! The gateway's shared state: configuration, engine client, catalog, store,
//! and one runtime per declared Language (guides, classifier rules, schemas).
//! Built once by `app.rs`; every tool call borrows it.

use crate::auth::Authenticator;
use crate::catalog::CatalogService;
use crate::classify::{Classifiers, RuleSource};
use crate::config::{Config, LanguageConfig};
use crate::engines::SharedEngine;
use crate::guides::GuideSet;
use crate::metrics::Metrics;
use crate::store::Store;
use crate::validate::verdict::VerdictCache;
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
    #[error("language '{language}': no engine is called '{engine}'")]
    Engine { language: String, engine: String },
    #[error("engine '{engine}': no engine adapter is called '{kind}'")]
    EngineKind { engine: String, kind: String },
    #[error("tool declarations: {0}")]
    Tools(String),
    #[error("store: {0}")]
    Store(#[from] crate::store::StoreError),
    #[error("TLS: {0}")]
    Tls(#[from] crate::tls::TlsError),
    #[error("engine credentials: {0}")]
    Credentials(#[from] crate::engines::credentials::CredentialError),
}

/// Everything one Language needs at request time.
pub struct LanguageRuntime {
    pub config: LanguageConfig,
    /// The implementation its `kind` names.
    pub language: Arc<dyn crate::languages::Language>,
    /// The engine it runs on, that engine's configuration, and the catalog
    /// service over that engine.
    pub engine: SharedEngine,
    pub engine_config: crate::config::EngineConfig,
    pub catalog: Arc<CatalogService>,
    guides: RwLock<Arc<GuideSet>>,
    pub context_schema: ContextSchema,
}

/// A language's `context_schema`, as written and compiled.
pub type ContextSchema = Option<(serde_json::Value, jsonschema::Validator)>;

impl LanguageRuntime {
    pub fn load(
        config: &Config,
        lang: &LanguageConfig,
        engine: &EngineRuntime,
    ) -> Result<Self, StartError> {
        let (language, guides, context_schema) = Self::parts(config, lang)?;
        Ok(Self {
            config: lang.clone(),
            language,
            engine: engine.client.clone(),
            engine_config: engine.config.clone(),
            catalog: engine.catalog.clone(),
            guides: RwLock::new(Arc::new(guides)),
            context_schema,
        })
    }

    /// Checks what `load` reads from files (implementation, guides,
    /// context schema) without an engine, and names the rule source
    /// (`check-config`).
    pub fn check(config: &Config, lang: &LanguageConfig) -> Result<RuleSource, StartError> {
        let (_, guides, _) = Self::parts(config, lang)?;
        Ok(RuleSource {
            language: lang.name.clone(),
            path: config.resolve(&lang.classifier),
            allowed_codes: guides.diagnostic_codes(),
        })
    }

    /// The implementation, guides and context schema of a language.
    fn parts(
        config: &Config,
        lang: &LanguageConfig,
    ) -> Result<(Arc<dyn crate::languages::Language>, GuideSet, ContextSchema), StartError> {
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
        Ok((language, guides, context_schema))
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

/// Connects the configured store (Redis, or memory when no URL is set).
async fn connect_store(config: &Config) -> Result<Arc<dyn Store>, StartError> {
    let path = (!config.store.ca_file.is_empty()).then(|| config.resolve(&config.store.ca_file));
    let store_ca = crate::tls::read_ca("store.ca_file", path.as_deref())?;
    let sentinel = &config.store.redis_sentinel;
    let backend = if !sentinel.urls.is_empty() {
        crate::store::Backend::RedisSentinel {
            urls: &sentinel.urls,
            master_name: &sentinel.master_name,
        }
    } else if !config.store.redis_cluster.is_empty() {
        crate::store::Backend::RedisCluster(&config.store.redis_cluster)
    } else if !config.store.redis_url.is_empty() {
        crate::store::Backend::Redis(&config.store.redis_url)
    } else {
        crate::store::Backend::Memory
    };
    let limits = crate::store::memory::MemoryLimits::configured(
        config.store.memory_principal_bytes,
        config.store.memory_total_bytes,
    );
    Ok(crate::store::connect_with(
        backend,
        std::time::Duration::from_millis(config.store.op_timeout_ms),
        limits,
        store_ca,
    )
    .await?)
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

/// One engine the gateway fronts: its client and the catalog over it.
pub struct EngineRuntime {
    pub config: crate::config::EngineConfig,
    pub client: SharedEngine,
    pub catalog: Arc<CatalogService>,
}

/// The shared state of one gateway process.
pub struct Gateway {
    pub config: Config,
    /// The default engine (`[engine]`) and its catalog.
    pub engine: SharedEngine,
    pub store: Arc<dyn Store>,
    pub catalog: Arc<CatalogService>,
    /// Every engine by name, the default one included.
    pub engines: std::collections::BTreeMap<String, Arc<EngineRuntime>>,
    pub languages: Vec<Arc<LanguageRuntime>>,
    pub classifiers: Classifiers,
    pub auth: Authenticator,
    pub verdicts: VerdictCache,
    /// Programs' input schemas, compiled once per distinct schema.
    pub input_schemas: crate::execute::input_schemas::InputSchemas,
    pub metrics: Arc<Metrics>,
    pub limits: crate::limits::Limits,
}

/// What compiled input schemas may hold: a few hundred typical schemas.
const INPUT_SCHEMA_BYTES: u64 = 4 << 20;

impl Gateway {
    /// Loads guides and rules (refusing to start on any error) and connects
    /// the store.
    pub async fn build(config: Config) -> Result<Arc<Gateway>, StartError> {
        let metrics = Arc::new(Metrics::for_config(&config));
        let store = connect_store(&config).await?;
        let store = crate::metrics::store::MeteredStore::wrap(store, metrics.clone());
        let mut engines = std::collections::BTreeMap::new();
        let named = std::iter::once((crate::config::DEFAULT_ENGINE, &config.engine))
            .chain(config.engines.iter().map(|(n, e)| (n.as_str(), e)));
        for (name, engine_config) in named {
            let prefix = if name == crate::config::DEFAULT_ENGINE {
                "engine".to_string()
            } else {
                format!("engines.{name}")
            };
            let path =
                (!engine_config.ca_file.is_empty()).then(|| config.resolve(&engine_config.ca_file));
            let engine_ca = crate::tls::read_ca(&format!("{prefix}.ca_file"), path.as_deref())?;
            let roots = crate::tls::http_roots(engine_ca.as_deref());
            let credentials = crate::engines::credentials::for_engine(
                engine_config,
                &prefix,
                &|p: &str| config.resolve(p),
                &roots,
            )?;
            let client = crate::engines::registry::connect(
                engine_config,
                roots,
                credentials,
                Arc::new(metrics.for_engine(name)),
            )
            .ok_or_else(|| StartError::EngineKind {
                engine: name.to_string(),
                kind: engine_config.kind.clone(),
            })?;
            let catalog =
                CatalogService::new(client.clone(), store.clone(), config.cache.catalog_bytes)
                    .count_version_changes(metrics.catalog_version_changes.clone())
                    .count_oversized(metrics.catalog_oversized.clone())
                    .with_read_only_staleness(std::time::Duration::from_millis(
                        config.cache.read_only_catalog_staleness_ms,
                    ));
            engines.insert(
                name.to_string(),
                Arc::new(EngineRuntime {
                    config: engine_config.clone(),
                    client,
                    catalog: Arc::new(catalog),
                }),
            );
        }
        let languages = config
            .languages
            .iter()
            .map(|l| {
                let name = l.engine.as_deref().unwrap_or(crate::config::DEFAULT_ENGINE);
                let engine = engines.get(name).ok_or_else(|| StartError::Engine {
                    language: l.name.clone(),
                    engine: name.to_string(),
                })?;
                LanguageRuntime::load(&config, l, engine).map(Arc::new)
            })
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
        metrics.declare_diagnostic_codes(classifiers.counts().keys().map(String::as_str));
        let default = engines
            .get(crate::config::DEFAULT_ENGINE)
            .cloned()
            .expect("the default engine is always built");
        Ok(Arc::new(Gateway {
            catalog: default.catalog.clone(),
            engine: default.client.clone(),
            engines,
            limits: crate::limits::Limits::new(&config.limits, metrics.clone()),
            metrics,
            auth: Authenticator::new(&config.auth),
            verdicts: VerdictCache::new(config.cache.verdict_bytes),
            input_schemas: crate::execute::input_schemas::InputSchemas::new(INPUT_SCHEMA_BYTES),
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
        self.reload_api_keys();
    }

    /// Reads `auth.keys_file` again and puts its keys (beside those of
    /// `gateway.toml`) in force, or keeps the current ones when the file is
    /// unreadable or a key in it is wrong.
    pub fn reload_api_keys(&self) {
        if self.config.auth.keys_file.is_empty() {
            return;
        }
        match self.config.reloaded_api_keys() {
            Ok(keys) => {
                let before = self.auth.key_count();
                self.auth.replace_keys(&keys);
                tracing::info!(keys = keys.len(), before, "API keys reloaded");
            }
            Err(problems) => {
                for p in problems {
                    tracing::warn!(file = %p.file, key = %p.key, problem = %p.problem,
                        fix = %p.fix, "API keys file not reloaded; keeping the keys in force");
                }
            }
        }
    }
}
