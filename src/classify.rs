//! Placeholder until the classifier lands.
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity { Error, Warning }
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnostic { pub severity: Severity, pub code: String, pub path: String, pub message: String, #[serde(skip_serializing_if = "Option::is_none")] pub hint: Option<String> }
pub struct EngineProblem { pub level: Severity, pub text: String, pub location: Option<String> }
pub struct ClassifyContext<'a> { pub step_pointers: &'a HashMap<String, String>, pub visible_names: &'a [String] }
pub struct Classified { pub diagnostic: Diagnostic, pub rule: Option<String> }
pub struct RuleTable;
#[derive(Debug, thiserror::Error)] #[error("x")] pub struct RuleFileError;
impl RuleTable {
    pub fn load(_path: &Path, _allowed: &BTreeSet<String>) -> Result<RuleTable, RuleFileError> { Ok(RuleTable) }
    pub fn classify(&self, p: &EngineProblem, _ctx: &ClassifyContext) -> Classified { Classified { diagnostic: Diagnostic { severity: p.level, code: "constraint".into(), path: String::new(), message: p.text.clone(), hint: None }, rule: None } }
}
pub struct Classifiers { table: std::sync::RwLock<Arc<RuleTable>> }
impl Classifiers {
    pub fn new(t: RuleTable) -> Self { Self { table: std::sync::RwLock::new(Arc::new(t)) } }
    pub fn current(&self) -> Arc<RuleTable> { self.table.read().unwrap().clone() }
}
impl Classifiers {
    pub fn reload(&self, _p: &Path, _c: &BTreeSet<String>) {}
    pub fn counts(&self) -> std::collections::BTreeMap<String, u64> { Default::default() }
}
