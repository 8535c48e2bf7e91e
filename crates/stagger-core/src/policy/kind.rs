//! The catalog's names, formulas and pages.
//!
//! The catalog is the registry of policy names: an unknown name is refused here, and the
//! error ([`ConfigError::UnknownPolicy`]) is handed the catalog's names to list, so that the
//! error module need not know the catalog.

use std::fmt;
use std::str::FromStr;

use crate::error::ConfigError;

/// A policy in the catalog, by name.
///
/// The name is the identifier the CLI and configuration files use; [`PolicyKind::page`] is the
/// policy's documentation page, the same text as its module's docs.
///
/// ```
/// use stagger_core::PolicyKind;
///
/// let kind: PolicyKind = "exponential-full-jitter".parse()?;
/// assert_eq!(kind, PolicyKind::ExponentialFullJitter);
/// assert_eq!(kind.to_string(), "exponential-full-jitter");
/// assert!(kind.page().contains("## When to use it"));
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum PolicyKind {
    /// `constant`: the same delay every time.
    Constant,
    /// `linear`: `min(cap, base * n)`.
    Linear,
    /// `exponential`: `min(cap, base * factor^(n-1))`.
    Exponential,
    /// `exponential-full-jitter`: `U(0, min(cap, base * factor^(n-1)))`.
    ExponentialFullJitter,
    /// `exponential-equal-jitter`: `v/2 + U(0, v/2)`.
    ExponentialEqualJitter,
    /// `decorrelated-jitter`: `U(base, min(cap, 3 * prev))`.
    DecorrelatedJitter,
    /// `decorrelated-jitter-v2`: Polly's `2^t * tanh(sqrt(4t))` formula.
    DecorrelatedJitterV2,
    /// `exponential-subtractive-jitter`: `v * (1 - jitter * U(0, 1))`.
    ExponentialSubtractiveJitter,
    /// `exponential-proportional-jitter`: `v * U(1 - r, 1 + r)`.
    ExponentialProportionalJitter,
    /// `immediate`: retry with no delay.
    Immediate,
    /// `no-retry`: a single attempt.
    NoRetry,
}

impl PolicyKind {
    /// The whole catalog, in the order it is presented.
    pub const ALL: [Self; 11] = [
        Self::Constant,
        Self::Linear,
        Self::Exponential,
        Self::ExponentialFullJitter,
        Self::ExponentialEqualJitter,
        Self::DecorrelatedJitter,
        Self::DecorrelatedJitterV2,
        Self::ExponentialSubtractiveJitter,
        Self::ExponentialProportionalJitter,
        Self::Immediate,
        Self::NoRetry,
    ];

    /// The catalog name.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Constant => "constant",
            Self::Linear => "linear",
            Self::Exponential => "exponential",
            Self::ExponentialFullJitter => "exponential-full-jitter",
            Self::ExponentialEqualJitter => "exponential-equal-jitter",
            Self::DecorrelatedJitter => "decorrelated-jitter",
            Self::DecorrelatedJitterV2 => "decorrelated-jitter-v2",
            Self::ExponentialSubtractiveJitter => "exponential-subtractive-jitter",
            Self::ExponentialProportionalJitter => "exponential-proportional-jitter",
            Self::Immediate => "immediate",
            Self::NoRetry => "no-retry",
        }
    }

    /// Every catalog name, in catalog order.
    #[must_use]
    pub fn names() -> Vec<&'static str> {
        Self::NAMES.to_vec()
    }

    /// Every catalog name, in catalog order, as an unknown name's error lists them.
    const NAMES: [&'static str; Self::ALL.len()] = names_of!(Self::ALL);

    /// The delay before retry `n`, as a formula. `v = min(cap, base * factor^(n-1))`.
    #[must_use]
    pub const fn formula(self) -> &'static str {
        match self {
            Self::Constant => "base",
            Self::Linear => "min(cap, base * n)",
            Self::Exponential => "min(cap, base * factor^(n-1))",
            Self::ExponentialFullJitter => "U(0, v)",
            Self::ExponentialEqualJitter => "v/2 + U(0, v/2)",
            Self::DecorrelatedJitter => "U(base, min(cap, 3 * prev)), prev = base at first",
            Self::DecorrelatedJitterV2 => {
                "(f(t) - f(t_prev)) * base / 1.4, f(t) = 2^t tanh(sqrt(4t)), t = n - 1 + U(0, 1)"
            }
            Self::ExponentialSubtractiveJitter => "v * (1 - jitter * U(0, 1))",
            Self::ExponentialProportionalJitter => "v * U(1 - r, 1 + r)",
            Self::Immediate => "0",
            Self::NoRetry => "never retries",
        }
    }

    /// When to use it, in one line.
    #[must_use]
    pub const fn summary(self) -> &'static str {
        match self {
            Self::Constant => "a few callers, short blips; the baseline to measure, not to ship",
            Self::Linear => "a gentle ramp for a handful of callers; still synchronised",
            Self::Exponential => "long outages with one caller; a fleet retries in lockstep",
            Self::ExponentialFullJitter => "the default for a fleet: least work under contention",
            Self::ExponentialEqualJitter => "a guaranteed minimum wait, with half the spread",
            Self::DecorrelatedJitter => "growth that follows the last draw; finishes fast",
            Self::DecorrelatedJitterV2 => "smooth spread around 1, 2, 4, 8 x base (Polly v8)",
            Self::ExponentialSubtractiveJitter => {
                "a published schedule that jitter may only shorten"
            }
            Self::ExponentialProportionalJitter => "+/- r around the curve, as gRPC and cenkalti",
            Self::Immediate => "simulator baseline: retry at once, no delay",
            Self::NoRetry => "simulator baseline, or when another layer owns recovery",
        }
    }

    /// Whether the policy draws from its generator. A policy that does not gives the same
    /// schedule for every seed.
    #[must_use]
    pub const fn is_jittered(self) -> bool {
        matches!(
            self,
            Self::ExponentialFullJitter
                | Self::ExponentialEqualJitter
                | Self::DecorrelatedJitter
                | Self::DecorrelatedJitterV2
                | Self::ExponentialSubtractiveJitter
                | Self::ExponentialProportionalJitter
        )
    }

    /// The policy's page: when to use it, when not to, how it works, tie-breaking,
    /// parameters, complexity, source and notes, in Markdown.
    #[must_use]
    pub const fn page(self) -> &'static str {
        match self {
            Self::Constant => include_str!("constant.md"),
            Self::Linear => include_str!("linear.md"),
            Self::Exponential => include_str!("exponential.md"),
            Self::ExponentialFullJitter => include_str!("exponential_full_jitter.md"),
            Self::ExponentialEqualJitter => include_str!("exponential_equal_jitter.md"),
            Self::DecorrelatedJitter => include_str!("decorrelated_jitter.md"),
            Self::DecorrelatedJitterV2 => include_str!("decorrelated_jitter_v2.md"),
            Self::ExponentialSubtractiveJitter => {
                include_str!("exponential_subtractive_jitter.md")
            }
            Self::ExponentialProportionalJitter => {
                include_str!("exponential_proportional_jitter.md")
            }
            Self::Immediate => include_str!("immediate.md"),
            Self::NoRetry => include_str!("no_retry.md"),
        }
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PolicyKind {
    type Err = ConfigError;

    fn from_str(name: &str) -> Result<Self, ConfigError> {
        Self::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| ConfigError::UnknownPolicy {
                name: name.to_owned(),
                valid: &Self::NAMES,
            })
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for PolicyKind {
    /// The catalog name, as a string.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for PolicyKind {
    /// A catalog name; an unknown one is an error that lists the catalog.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}
