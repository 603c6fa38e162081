//! What a principal may do: its permissions (which Pilotage stages it is
//! offered) and its risk ceiling (which programs are valid for it).
//!
//! Permissions shape the principal's surface: a stage it may not use is not in
//! its `tools/list` nor in its manifest, exactly as if the language did not
//! declare it (Part II §4.3 rule 7). `learn` and `validate` are the floor every
//! Pilotage surface has (Part II §4.3 rule 1, Part III §3.1): a principal
//! without them cannot be served at all.
//!
//! The ceiling is a gateway-native validation check: a program whose step
//! exceeds it gets a `risk_ceiling` diagnostic, so execute refuses it with
//! `validation_error` before anything runs, whatever the Host's own gate does.

use crate::config::LanguageConfig;
use crate::pilotage::RiskHints;

/// One permission of a principal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Permission {
    /// The manifest, the guides and the catalog.
    Learn,
    Validate,
    /// Run programs now (execution `immediate`), inline or promoted.
    Execute,
    /// Promote programs (execution `deploy`).
    Deploy,
    /// Fetch stored traces by `run_id`.
    Trace,
    /// Approve or decline other callers' held runs (never implied: a key
    /// without `permissions` has every permission but this one).
    Approve,
}

impl Permission {
    pub const ALL: [Permission; 6] = [
        Permission::Learn,
        Permission::Validate,
        Permission::Execute,
        Permission::Deploy,
        Permission::Trace,
        Permission::Approve,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Permission::Learn => "learn",
            Permission::Validate => "validate",
            Permission::Execute => "execute",
            Permission::Deploy => "deploy",
            Permission::Trace => "trace",
            Permission::Approve => "approve",
        }
    }

    pub fn parse(name: &str) -> Option<Permission> {
        Permission::ALL.into_iter().find(|p| p.as_str() == name)
    }

    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// A set of permissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Permissions(u8);

impl Permissions {
    pub const ALL: Permissions = Permissions(0b1_1111);
    /// The floor without which no Pilotage surface exists.
    pub const FLOOR: [Permission; 2] = [Permission::Learn, Permission::Validate];

    /// Parses configured names; `Err` carries the first unknown name.
    pub fn parse<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<Permissions, String> {
        let mut out = Vec::new();
        for n in names {
            out.push(Permission::parse(n).ok_or_else(|| n.to_string())?);
        }
        Ok(Permissions::from_iter(out))
    }

    pub fn has(self, p: Permission) -> bool {
        self.0 & p.bit() != 0
    }

    /// Whether the floor (`learn` and `validate`) is present.
    pub fn has_floor(self) -> bool {
        Permissions::FLOOR.iter().all(|p| self.has(*p))
    }

    /// The execution mode a language declaring `declared` has for this
    /// principal; `None` when it may not execute there at all.
    pub fn execution(self, declared: &str) -> Option<&'static str> {
        let (run, deploy) = (self.has(Permission::Execute), self.has(Permission::Deploy));
        match (declared, run, deploy) {
            ("immediate", true, _) => Some("immediate"),
            ("deploy", _, true) => Some("deploy"),
            ("both", true, true) => Some("both"),
            ("both", true, false) => Some("immediate"),
            ("both", false, true) => Some("deploy"),
            _ => None,
        }
    }

    /// The execution mode `lang` has for this principal; `None` when its
    /// execute tool does not exist for it.
    pub fn execution_of(self, lang: &LanguageConfig) -> Option<&'static str> {
        if lang.has_execute() {
            self.execution(&lang.execution)
        } else {
            None
        }
    }

    /// Whether `lang`'s trace tool exists for this principal (trace_fetch
    /// depends on execute, Part II §4.3 rule 3).
    pub fn trace_fetch_of(self, lang: &LanguageConfig) -> bool {
        self.has(Permission::Trace) && self.execution_of(lang).is_some() && lang.has_trace_fetch()
    }

    /// What a caller no later request can be keeps of these: nothing that
    /// only a later request could reach (a promoted program, a stored
    /// trace, a held run to decide).
    pub fn for_a_passing_caller(self) -> Permissions {
        Permissions(
            self.0
                & !(Permission::Deploy.bit() | Permission::Trace.bit() | Permission::Approve.bit()),
        )
    }

    /// How many distinct surfaces [`Self::surface_index`] names.
    pub const SURFACES: usize = 16;

    /// The permissions that shape the surface beyond the floor, as a small
    /// index (0..16) so every distinct surface is built once.
    pub fn surface_index(self) -> usize {
        Self::SHAPING
            .iter()
            .enumerate()
            .filter(|(_, p)| self.has(**p))
            .map(|(i, _)| 1 << i)
            .sum()
    }

    /// The permissions of a surface index (the floor plus its bits).
    pub fn from_surface_index(i: usize) -> Permissions {
        let mut perms = Permissions::FLOOR.to_vec();
        for (bit, p) in Self::SHAPING.into_iter().enumerate() {
            if i & (1 << bit) != 0 {
                perms.push(p);
            }
        }
        Permissions::from_iter(perms)
    }

    /// The permissions beyond the floor that change a surface.
    const SHAPING: [Permission; 4] = [
        Permission::Execute,
        Permission::Deploy,
        Permission::Trace,
        Permission::Approve,
    ];

    pub fn names(self) -> Vec<&'static str> {
        Permission::ALL
            .into_iter()
            .filter(|p| self.has(*p))
            .map(Permission::as_str)
            .collect()
    }
}

impl FromIterator<Permission> for Permissions {
    fn from_iter<I: IntoIterator<Item = Permission>>(perms: I) -> Permissions {
        Permissions(perms.into_iter().fold(0, |acc, p| acc | p.bit()))
    }
}

/// The risk levels of `max_risk`, least severe first; the same ordering as
/// the closed-sets guide's (`safe` < `write` < `external` < `destructive`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RiskLevel {
    Safe,
    Write,
    External,
    Destructive,
}

impl RiskLevel {
    pub const NAMES: [&'static str; 4] = ["safe", "write", "external", "destructive"];

    pub fn parse(s: &str) -> Option<RiskLevel> {
        match s {
            "safe" => Some(RiskLevel::Safe),
            "write" => Some(RiskLevel::Write),
            "external" => Some(RiskLevel::External),
            "destructive" => Some(RiskLevel::Destructive),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        RiskLevel::NAMES[self as usize]
    }

    /// The level of a step, computed from its hints (never from the engine's
    /// risk string, Part II §5.3).
    pub fn of(hints: RiskHints) -> RiskLevel {
        if hints.destructive {
            RiskLevel::Destructive
        } else if hints.open_world {
            RiskLevel::External
        } else if !hints.read_only {
            RiskLevel::Write
        } else {
            RiskLevel::Safe
        }
    }
}

/// The risk hints a ceiling may forbid (`readOnly` is the safe side, so it
/// cannot be forbidden).
pub const FORBIDDABLE_HINTS: [&str; 2] = ["destructive", "openWorld"];

/// The most a principal's programs may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RiskCeiling {
    pub max_risk: Option<RiskLevel>,
    pub forbid_destructive: bool,
    pub forbid_open_world: bool,
}

impl RiskCeiling {
    /// No ceiling.
    pub const NONE: RiskCeiling = RiskCeiling {
        max_risk: None,
        forbid_destructive: false,
        forbid_open_world: false,
    };

    /// From configured values; `Err` names the value that is not one.
    pub fn parse(max_risk: Option<&str>, forbid: &[String]) -> Result<RiskCeiling, String> {
        let max_risk = match max_risk {
            None => None,
            Some(m) => Some(RiskLevel::parse(m).ok_or_else(|| m.to_string())?),
        };
        let mut out = RiskCeiling {
            max_risk,
            ..RiskCeiling::NONE
        };
        for hint in forbid {
            match hint.as_str() {
                "destructive" => out.forbid_destructive = true,
                "openWorld" => out.forbid_open_world = true,
                other => return Err(other.to_string()),
            }
        }
        Ok(out)
    }

    pub fn is_none(&self) -> bool {
        *self == RiskCeiling::NONE
    }

    /// The stricter of two ceilings (both apply).
    pub fn and(self, other: RiskCeiling) -> RiskCeiling {
        let max_risk = match (self.max_risk, other.max_risk) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        RiskCeiling {
            max_risk,
            forbid_destructive: self.forbid_destructive || other.forbid_destructive,
            forbid_open_world: self.forbid_open_world || other.forbid_open_world,
        }
    }

    /// Why `hints` are above this ceiling, naming the ceiling; `None` when
    /// they are within it.
    pub fn breach(&self, hints: RiskHints) -> Option<String> {
        let level = RiskLevel::of(hints);
        if let Some(max) = self.max_risk
            && level > max
        {
            return Some(format!(
                "risk {} is above this caller's risk ceiling max_risk \"{}\"",
                level.as_str(),
                max.as_str()
            ));
        }
        if self.forbid_destructive && hints.destructive {
            return Some(
                "risk hint destructive is forbidden by this caller's risk ceiling (forbid_risk_hints)".into(),
            );
        }
        if self.forbid_open_world && hints.open_world {
            return Some(
                "risk hint openWorld is forbidden by this caller's risk ceiling (forbid_risk_hints)".into(),
            );
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DESTRUCTIVE: RiskHints = RiskHints {
        read_only: false,
        destructive: true,
        open_world: false,
    };
    const WRITE: RiskHints = RiskHints {
        read_only: false,
        destructive: false,
        open_world: false,
    };
    const MAIL: RiskHints = RiskHints {
        read_only: false,
        destructive: false,
        open_world: true,
    };

    #[test]
    fn ceilings_name_themselves_and_compose() {
        let write = RiskCeiling::parse(Some("write"), &[]).unwrap();
        assert!(write.breach(WRITE).is_none());
        assert!(write.breach(RiskHints::SAFE).is_none());
        let why = write.breach(DESTRUCTIVE).unwrap();
        assert!(why.contains("max_risk \"write\""), "{why}");
        assert!(write.breach(MAIL).is_some(), "external is above write");
        let no_mail = RiskCeiling::parse(None, &["openWorld".into()]).unwrap();
        assert!(no_mail.breach(DESTRUCTIVE).is_none());
        assert!(no_mail.breach(MAIL).unwrap().contains("openWorld"));
        let both = no_mail.and(RiskCeiling::parse(Some("destructive"), &[]).unwrap());
        assert!(both.breach(MAIL).is_some() && both.breach(DESTRUCTIVE).is_none());
        assert_eq!(RiskCeiling::parse(Some("huge"), &[]), Err("huge".into()));
        assert_eq!(
            RiskCeiling::parse(None, &["readOnly".into()]),
            Err("readOnly".into())
        );
        assert!(RiskCeiling::parse(None, &[]).unwrap().is_none());
    }

    #[test]
    fn permissions_shape_the_execution_mode() {
        let all = Permissions::ALL;
        assert_eq!(all.execution("both"), Some("both"));
        let run = Permissions::parse(["learn", "validate", "execute"]).unwrap();
        assert_eq!(run.execution("both"), Some("immediate"));
        assert_eq!(run.execution("deploy"), None);
        let promote = Permissions::parse(["learn", "validate", "deploy"]).unwrap();
        assert_eq!(promote.execution("both"), Some("deploy"));
        let read = Permissions::parse(["learn", "validate"]).unwrap();
        assert_eq!(read.execution("immediate"), None);
        assert!(read.has_floor() && !Permissions::parse(["learn"]).unwrap().has_floor());
        assert_eq!(Permissions::parse(["learn", "fly"]), Err("fly".into()));
        for i in 0..8 {
            assert_eq!(Permissions::from_surface_index(i).surface_index(), i);
        }
        assert_eq!(all.surface_index(), 7);
        assert_eq!(read.names(), vec!["learn", "validate"]);
    }
}
