//! Compiled input schemas, kept by their canonical text: compiling a JSON
//! Schema costs more than checking an input against it, and the programs an
//! agent runs share a few input schemas even when every program is new.
//! Bounded by the schemas' bytes; a schema that does not compile is kept
//! too, with its error, so a broken one is not compiled again per call.

use crate::catalog::canonical_json;
use serde_json::Value;
use std::sync::Arc;

/// A compiled schema, or why it does not compile.
pub type Compiled = Arc<Result<jsonschema::Validator, String>>;

/// Compiled schemas shared by every run of the gateway.
pub struct InputSchemas {
    compiled: moka::sync::Cache<String, Compiled>,
}

/// The bytes a compiled schema is counted at, per byte of its text: a
/// compiled validator holds a node per keyword, each several times the
/// keyword's text.
const COMPILED_PER_TEXT_BYTE: u64 = 16;

impl InputSchemas {
    pub fn new(max_bytes: u64) -> Self {
        Self {
            compiled: moka::sync::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|text: &String, _: &Compiled| {
                    crate::weigh::as_weight(crate::weigh::text(text) * (1 + COMPILED_PER_TEXT_BYTE))
                })
                .build(),
        }
    }

    /// `schema` compiled, from the cache when it was compiled before.
    pub fn compiled(&self, schema: &Value) -> Compiled {
        self.compiled.get_with(canonical_json(schema), || {
            Arc::new(jsonschema::validator_for(schema).map_err(|e| e.to_string()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn one_compilation_serves_equal_schemas_and_errors_are_kept() {
        let schemas = InputSchemas::new(1 << 20);
        let a = schemas.compiled(&json!({"type": "object", "required": ["q"]}));
        let b = schemas.compiled(&json!({"required": ["q"], "type": "object"}));
        assert!(Arc::ptr_eq(&a, &b), "key order does not make a new schema");
        let v = a.as_ref().as_ref().expect("compiles");
        assert!(v.is_valid(&json!({"q": 1})));
        assert!(!v.is_valid(&json!({})));
        let broken = schemas.compiled(&json!({"type": 12}));
        assert!(broken.is_err());
    }
}
