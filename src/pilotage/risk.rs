//! Risk hints (Part II §5.3) and their aggregation: AND of readOnly, OR of
//! destructive and openWorld, always over hints, never over risk strings.

use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RiskHints {
    pub read_only: bool,
    pub destructive: bool,
    pub open_world: bool,
}

impl RiskHints {
    /// The identity of aggregation: an empty program changes nothing.
    pub const SAFE: RiskHints = RiskHints {
        read_only: true,
        destructive: false,
        open_world: false,
    };

    pub fn combine(self, other: RiskHints) -> RiskHints {
        RiskHints {
            read_only: self.read_only && other.read_only,
            destructive: self.destructive || other.destructive,
            open_world: self.open_world || other.open_world,
        }
    }

    /// The engine-defined level consistent with these hints, most severe
    /// first: destructive > external > write > safe.
    pub fn level(self) -> &'static str {
        if self.destructive {
            "destructive"
        } else if self.open_world {
            "external"
        } else if !self.read_only {
            "write"
        } else {
            "safe"
        }
    }

    pub fn to_json(self) -> Value {
        json!({"readOnly": self.read_only, "destructive": self.destructive, "openWorld": self.open_world})
    }

    pub fn from_json(v: &Value) -> Option<RiskHints> {
        Some(RiskHints {
            read_only: v.get("readOnly")?.as_bool()?,
            destructive: v.get("destructive")?.as_bool()?,
            open_world: v.get("openWorld")?.as_bool()?,
        })
    }
}
