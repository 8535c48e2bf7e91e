//! Validation errors.
//!
//! Every invalid configuration is refused with a [`ConfigError`] that names the parameter and
//! says what is allowed. Nothing in this crate panics on a user's parameters.
//!
//! This module is a leaf: it knows no policy, preset or budget. An unknown name carries the
//! valid names from the registry that looked it up and refused it, so the message can list
//! them without the error depending on every registry.

use std::fmt;
use std::time::Duration;

use crate::timeline::Timeline;

/// A configuration that cannot be built, and why.
///
/// The message names the parameter and the allowed range, so that it can be shown to a user as
/// it is. [`ConfigError::param`] gives the parameter's name on its own, for a caller (such as
/// the CLI) that maps it back to the flag or field the user typed.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ConfigError {
    /// A number is NaN or infinite.
    NotFinite {
        /// The parameter's name.
        param: &'static str,
        /// The value given.
        value: f64,
    },
    /// A number is outside its allowed range.
    OutOfRange {
        /// The parameter's name.
        param: &'static str,
        /// The value given.
        value: f64,
        /// The allowed range, in words.
        allowed: &'static str,
    },
    /// `max_attempts` is zero. It counts the first attempt, so it is at least 1.
    ZeroAttempts,
    /// The cap is below the base delay.
    CapBelowBase {
        /// The base delay given.
        base: Duration,
        /// The cap given.
        cap: Duration,
    },
    /// The parameter does not exist for this policy (a factor for `constant`, say).
    NotApplicable {
        /// The parameter's name.
        param: &'static str,
        /// The policy's catalog name.
        policy: &'static str,
    },
    /// No policy in the catalog has this name.
    UnknownPolicy {
        /// The name given.
        name: String,
        /// The catalog's names, in catalog order.
        valid: &'static [&'static str],
    },
    /// No preset has this name.
    UnknownPreset {
        /// The name given.
        name: String,
        /// The presets' names.
        valid: &'static [&'static str],
    },
    /// No budget has this name.
    UnknownBudget {
        /// The name given.
        name: String,
        /// The budgets' names.
        valid: &'static [&'static str],
    },
    /// A schedule would list more retries than the limit. Lower `max_attempts`.
    ScheduleTooLong {
        /// The number of retries asked for.
        retries: u32,
        /// The most a schedule lists.
        limit: u32,
    },
    /// The parameter cannot be used as asked: with the others given, or in this place.
    Unusable {
        /// The parameter's name.
        param: &'static str,
        /// Why, and what to do instead.
        reason: &'static str,
    },
    /// A budget or gate that keeps time, shared by several runs, was first used by a run on
    /// one clock's timeline and then by a run whose clock is on another: their times cannot
    /// be compared. Give every run that shares it clocks of one timeline (the default clocks
    /// all share the process timeline; a `ManualClock` and its clones share one of their own).
    TimelineMismatch {
        /// The timeline the shared object keeps its times on.
        bound: Timeline,
        /// The timeline of the run's clock.
        given: Timeline,
    },
}

impl ConfigError {
    /// The name of the offending parameter, where there is one.
    ///
    /// ```
    /// use stagger_core::PolicyConfig;
    /// use stagger_core::policy::ExponentialSubtractiveJitter;
    ///
    /// let err = ExponentialSubtractiveJitter::new().with_jitter(1.5).validate().unwrap_err();
    /// assert_eq!(err.param(), Some("jitter"));
    /// assert_eq!(err.to_string(), "jitter must be in [0, 1] (0 turns jitter off), got 1.5");
    /// ```
    #[must_use]
    pub fn param(&self) -> Option<&'static str> {
        match self {
            Self::NotFinite { param, .. }
            | Self::OutOfRange { param, .. }
            | Self::NotApplicable { param, .. }
            | Self::Unusable { param, .. } => Some(param),
            Self::ZeroAttempts | Self::ScheduleTooLong { .. } => Some("max_attempts"),
            Self::CapBelowBase { .. } => Some("cap"),
            Self::UnknownPolicy { .. } => Some("policy"),
            Self::UnknownPreset { .. } => Some("preset"),
            Self::UnknownBudget { .. } => Some("budget"),
            Self::TimelineMismatch { .. } => Some("clock"),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFinite { param, value } => {
                write!(f, "{param} must be a finite number, got {value}")
            }
            Self::OutOfRange {
                param,
                value,
                allowed,
            } => write!(f, "{param} must be {allowed}, got {value}"),
            Self::ZeroAttempts => write!(
                f,
                "max_attempts must be at least 1 (it counts the first attempt), got 0"
            ),
            Self::CapBelowBase { base, cap } => write!(
                f,
                "cap ({}) must be at least base ({})",
                crate::duration::human(*cap),
                crate::duration::human(*base)
            ),
            Self::NotApplicable { param, policy } => {
                write!(f, "{param} does not apply to the {policy} policy")
            }
            Self::UnknownPolicy { name, valid } => write!(
                f,
                "unknown policy `{name}`; the catalog has: {}",
                valid.join(", ")
            ),
            Self::UnknownPreset { name, valid } => write!(
                f,
                "unknown preset `{name}`; the presets are: {}",
                valid.join(", ")
            ),
            Self::UnknownBudget { name, valid } => write!(
                f,
                "unknown budget `{name}`; the budgets are: {}",
                valid.join(", ")
            ),
            Self::ScheduleTooLong { retries, limit } => write!(
                f,
                "max_attempts asks for {retries} retries; a schedule lists at most {limit}"
            ),
            Self::Unusable { param, reason } => write!(f, "{param} {reason}"),
            Self::TimelineMismatch { bound, given } => write!(
                f,
                "a shared budget or gate keeps its times on {bound}, and this run's clock is on \
                 {given}: runs that share one must read clocks of one timeline"
            ),
        }
    }
}

impl std::error::Error for ConfigError {}

/// Checks that `param`, a number of destinations, is between 1 and
/// [`MAX_DESTINATIONS`](crate::limits::MAX_DESTINATIONS).
pub(crate) fn check_destinations(param: &'static str, capacity: usize) -> Result<(), ConfigError> {
    if (1..=crate::limits::MAX_DESTINATIONS).contains(&capacity) {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            param,
            value: capacity as f64,
            allowed: crate::limits::MAX_DESTINATIONS_ALLOWED,
        })
    }
}

/// Checks that a multiplier is finite and positive.
#[inline(always)]
pub(crate) fn check_factor(param: &'static str, value: f64) -> Result<(), ConfigError> {
    check_finite(param, value)?;
    if value > 0.0 {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            param,
            value,
            allowed: "greater than 0",
        })
    }
}

/// Checks that a jitter fraction is finite and in `[0, 1]`, 0 meaning off.
#[inline(always)]
pub(crate) fn check_jitter(param: &'static str, value: f64) -> Result<(), ConfigError> {
    check_finite(param, value)?;
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(ConfigError::OutOfRange {
            param,
            value,
            allowed: "in [0, 1] (0 turns jitter off)",
        })
    }
}

/// Checks that `max_attempts` counts at least the first attempt.
#[inline(always)]
pub(crate) fn check_attempts(max_attempts: u32) -> Result<(), ConfigError> {
    if max_attempts == 0 {
        Err(ConfigError::ZeroAttempts)
    } else {
        Ok(())
    }
}

/// Checks that `cap >= base`.
#[inline(always)]
pub(crate) fn check_cap(base: Duration, cap: Duration) -> Result<(), ConfigError> {
    if cap < base {
        Err(ConfigError::CapBelowBase { base, cap })
    } else {
        Ok(())
    }
}

#[inline(always)]
fn check_finite(param: &'static str, value: f64) -> Result<(), ConfigError> {
    if value.is_finite() {
        Ok(())
    } else {
        Err(ConfigError::NotFinite { param, value })
    }
}
