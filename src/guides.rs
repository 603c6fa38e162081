//! Placeholder until the guides loader lands.
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
#[derive(Debug, thiserror::Error)] #[error("x")] pub struct GuideError;
#[derive(Debug)] pub enum TopicError { UnknownGuide, UnknownTopic { topics: Vec<String> } }
pub struct GuideExample { pub guide_id: String, pub index: usize, pub workflow: Value, pub input: Option<Value> }
pub struct GuideSet;
impl GuideSet {
    pub fn load(_dir: &Path, _language: &str, _id_prefix: &str) -> Result<GuideSet, GuideError> { Ok(GuideSet) }
    pub fn index(&self) -> Vec<Value> { vec![] }
    pub fn fetch(&self, _id: &str) -> Option<Value> { None }
    pub fn fetch_topic(&self, _id: &str, _topic: &str) -> Result<Value, TopicError> { Err(TopicError::UnknownGuide) }
    pub fn ids(&self) -> Vec<String> { vec![] }
    pub fn diagnostic_codes(&self) -> BTreeSet<String> { BTreeSet::new() }
    pub fn examples(&self) -> Vec<GuideExample> { vec![] }
}
