//! Simulations that cannot run.

use std::fmt;

/// Why a simulation was refused before it started.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum SimError {
    /// A parameter is outside its range.
    Invalid {
        /// The parameter's name.
        param: &'static str,
        /// What is allowed.
        allowed: &'static str,
    },
    /// The run would need more events or memory than allowed.
    TooLarge {
        /// What is too large.
        what: &'static str,
        /// The limit.
        limit: String,
    },
    /// The run was stopped once it had processed more than this many events (see
    /// [`Workload::run_within`](crate::Workload::run_within)).
    EventLimit {
        /// The limit.
        limit: u64,
    },
    /// No workload has this name.
    UnknownWorkload {
        /// The name given.
        name: String,
        /// Every workload's name, for the message.
        workloads: &'static [&'static str],
    },
    /// The workload does not use this parameter.
    NotApplicable {
        /// The parameter's name.
        param: &'static str,
        /// The workload's name.
        workload: &'static str,
    },
    /// The policy's configuration is invalid.
    Config(stagger_core::ConfigError),
}

impl SimError {
    /// The name of the offending parameter, where there is one.
    #[must_use]
    pub fn param(&self) -> Option<&'static str> {
        match self {
            Self::Invalid { param, .. } => Some(param),
            Self::TooLarge { .. } | Self::EventLimit { .. } => None,
            Self::UnknownWorkload { .. } => Some("workload"),
            Self::NotApplicable { param, .. } => Some(param),
            Self::Config(e) => e.param(),
        }
    }
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Invalid { param, allowed } => write!(f, "{param} must be {allowed}"),
            Self::TooLarge { what, limit } => write!(f, "{what} exceeds the limit of {limit}"),
            Self::EventLimit { limit } => {
                write!(f, "the run was stopped after {limit} events")
            }
            Self::UnknownWorkload { name, workloads } => write!(
                f,
                "unknown workload `{name}`; the workloads are: {}",
                workloads.join(", ")
            ),
            Self::NotApplicable { param, workload } => {
                write!(f, "{param} does not apply to the {workload} workload")
            }
            Self::Config(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for SimError {}

impl From<stagger_core::ConfigError> for SimError {
    fn from(e: stagger_core::ConfigError) -> Self {
        Self::Config(e)
    }
}
