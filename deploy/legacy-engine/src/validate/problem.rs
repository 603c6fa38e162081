//! Problems the validator reports, independent of wording: what is wrong, with
//! which names, and (for most shapes) where. Each dialect turns a `Kind` into its
//! own sentence; `README.md` lists every sentence.

use crate::language::path::Where;
use crate::language::schema::{Allowed, Issue, IssueKind};

/// ERROR problems make a workflow invalid; WARN problems do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Error,
    Warn,
}

/// Every problem shape the engine can emit (numbered as in the README).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// 1. A capability no registry knows; the suggestion comes from the global registry.
    UnknownCapability {
        name: String,
        suggestion: Option<String>,
    },
    /// 2. A capability that exists but that the tenant may not use.
    NotEnabled { name: String, tenant: String },
    /// 3.
    MissingParam { param: String, capability: String },
    /// 4.
    TypeMismatch {
        param: String,
        capability: String,
        expected: String,
        got: String,
    },
    /// 5. An enum or range violation.
    InvalidValue {
        param: String,
        capability: String,
        value: String,
        allowed: Allowed,
    },
    /// 6.
    UnexpectedParam { param: String, capability: String },
    /// 7.
    DuplicateId { id: String },
    /// 8. `position` is 1-based within the step's own block.
    MissingId { position: usize },
    /// 9.
    UnsupportedStep { kind: String },
    /// 10.
    BadExpression { step: String, expr: String },
    /// 11.
    NotRunYet { step: String, other: String },
    /// 12.
    OnlyInLoop {
        step: String,
        other: String,
        loop_id: String,
    },
    /// 13.
    BranchShape { step: String },
    /// 14.
    ForEachShape { step: String },
    /// 15.
    SetShape { step: String },
    /// 16.
    UnknownOperator { op: String },
    /// 17. `expr` is `$.item` or `$.vars.<name>`.
    LoopValueOutsideLoop { step: String, expr: String },
    /// 18.
    UndeclaredInput { field: String },
    /// 19. WARN.
    Deprecated {
        name: String,
        replacement: Option<String>,
    },
    /// 20. WARN.
    UnusedOutput { step: String },
    /// 21.
    StepBudget { count: usize, limit: usize },
    /// 22.
    ContextMissing { step: String, key: String },
    /// 23. `steps` missing or not a list.
    NoSteps,
    /// 24. Steps nested deeper than the engine allows.
    NestingDepth { depth: usize, limit: usize },
    /// 25. `input` is present but not a schema object.
    BadInputSchema,
    /// 26. `output` is present but not an object.
    BadOutputMapping,
    /// 27. Run time only: the run input does not satisfy the workflow's input schema.
    RunInput(Issue),
}

impl Kind {
    pub fn level(&self) -> Level {
        match self {
            Kind::Deprecated { .. } | Kind::UnusedOutput { .. } => Level::Warn,
            _ => Level::Error,
        }
    }

    /// The problem a parameter issue of `capability` becomes.
    pub fn from_param_issue(capability: &str, issue: &Issue) -> Kind {
        let param = issue.name.clone();
        let capability = capability.to_owned();
        match &issue.kind {
            IssueKind::Missing => Kind::MissingParam { param, capability },
            IssueKind::Unexpected => Kind::UnexpectedParam { param, capability },
            IssueKind::Type { expected, got } => Kind::TypeMismatch {
                param,
                capability,
                expected: expected.clone(),
                got: (*got).to_owned(),
            },
            IssueKind::Value { value, allowed } => Kind::InvalidValue {
                param,
                capability,
                value: value.clone(),
                allowed: allowed.clone(),
            },
        }
    }
}

/// A problem and its location (absent for the shapes that name the step instead).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub kind: Kind,
    pub at: Option<Where>,
}

impl Problem {
    pub fn at(kind: Kind, at: Where) -> Self {
        Problem { kind, at: Some(at) }
    }

    pub fn bare(kind: Kind) -> Self {
        Problem { kind, at: None }
    }

    pub fn level(&self) -> Level {
        self.kind.level()
    }
}

/// True when any problem is an ERROR.
pub fn has_errors(problems: &[Problem]) -> bool {
    problems.iter().any(|p| p.level() == Level::Error)
}
