//! [`RetrySpec`]: an executor's settings as a configuration file describes them.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::budget::name_or_table;
use super::policy::PolicySpecRepr;
use super::{BudgetSpec, PolicySpec, wire};
use crate::budget::AnyBudget;
use crate::engine::{Dispersal, Nested, Settings};
use crate::error::ConfigError;
use crate::policy::AnyConfig;
use crate::rng::SeededRng;

/// An executor's settings as a configuration file describes them: the policy, an optional
/// shared budget, and the run's [`Settings`].
///
/// The policy's fields sit at the top level, as in [`PolicySpec`]: `policy` or `preset`, then
/// `base`, `cap`, `factor`, `jitter`, `max_attempts`. Beside them:
///
/// | field | value | default |
/// |---|---|---|
/// | `budget` | a budget name, or a table as in [`BudgetSpec`] | none |
/// | `timeout` | one end-to-end deadline, as a duration | none, or the preset's deadline |
/// | `idempotent` | `true` or `false` | `true` |
/// | `max_server_wait` | the longest server-directed wait honoured | 5 minutes |
/// | `nested` | `"single-attempt"` or `"retry"` ([`Nested`]) | `"single-attempt"` |
/// | `server_wait_dispersal` | `"floor"`, `"policy-above"` or `"uniform-asked"` ([`Dispersal`]) | `"uniform-asked"` |
///
/// ```
/// use std::time::Duration;
/// use stagger_core::config::RetrySpec;
/// use stagger_core::engine::{Nested, Settings};
/// use stagger_core::budget::BudgetKind;
/// use stagger_core::{PolicyConfig, PolicyKind};
///
/// let spec: RetrySpec = toml::from_str(r#"
///     policy = "exponential-full-jitter"
///     base = "100ms"
///     max_attempts = 4
///     timeout = "10s"
///     idempotent = false
///     nested = "retry"
///
///     [budget]
///     budget = "aws-standard"
///     capacity = 100
/// "#)?;
/// assert_eq!(spec.to_config()?.kind(), PolicyKind::ExponentialFullJitter);
/// assert_eq!(spec.to_config()?.max_attempts(), 4);
/// assert_eq!(
///     spec.to_settings()?,
///     Settings::new()
///         .with_timeout(Duration::from_secs(10))
///         .with_idempotent(false)
///         .with_nested(Nested::Retry)
/// );
/// assert_eq!(spec.budget.map(|b| b.kind()), Some(BudgetKind::AwsStandard));
///
/// // A budget may also be named alone.
/// let short: RetrySpec = toml::from_str("preset = \"grpc\"\nbudget = \"grpc-throttle\"")?;
/// assert_eq!(short.budget.map(|b| b.kind()), Some(BudgetKind::GrpcThrottle));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RetrySpecRepr", into = "RetrySpecRepr")]
pub struct RetrySpec {
    /// The policy and its overrides.
    pub policy: PolicySpec,
    /// The shared retry budget, if any.
    pub budget: Option<BudgetSpec>,
    /// One end-to-end deadline after the run starts. Without one, a preset's own deadline
    /// ([`PolicySpec::deadline`]) applies.
    pub timeout: Option<Duration>,
    /// Whether the operation may be repeated safely (default `true`).
    pub idempotent: Option<bool>,
    /// The longest server-directed wait honoured (default 5 minutes).
    pub max_server_wait: Option<Duration>,
    /// What to do inside another executor's attempt (default [`Nested::SingleAttempt`]).
    pub nested: Option<Nested>,
    /// How a retry is spread above a server-directed wait (default
    /// [`Dispersal::UniformAsked`]).
    pub server_wait_dispersal: Option<Dispersal>,
}

impl RetrySpec {
    /// `policy`, with no budget and the default options.
    #[must_use]
    pub const fn new(policy: PolicySpec) -> Self {
        Self {
            policy,
            budget: None,
            timeout: None,
            idempotent: None,
            max_server_wait: None,
            nested: None,
            server_wait_dispersal: None,
        }
    }

    /// The policy's configuration; see [`PolicySpec::to_config`].
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the parameter.
    pub fn to_config(&self) -> Result<AnyConfig, ConfigError> {
        self.policy.to_config()
    }

    /// The budget, built, if there is one; see [`BudgetSpec::to_budget`].
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the field.
    pub fn to_budget(&self, rng: SeededRng) -> Result<Option<AnyBudget>, ConfigError> {
        self.budget.map(|b| b.to_budget(rng)).transpose()
    }

    /// The deadline the run gets: `timeout`, or else the preset's own deadline.
    #[must_use]
    pub fn effective_timeout(&self) -> Option<Duration> {
        self.timeout.or_else(|| self.policy.deadline())
    }

    /// Checks the policy and the budget.
    ///
    /// # Errors
    ///
    /// The first [`ConfigError`], naming the parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.policy.to_config()?;
        self.budget.as_ref().map_or(Ok(()), BudgetSpec::validate)
    }

    /// The run's [`Settings`]: the [effective timeout](RetrySpec::effective_timeout),
    /// `idempotent`, `max_server_wait` and `nested`, over [`Settings::new`]'s defaults. Every
    /// executor and integration accepts them as they are.
    ///
    /// The whole spec is checked first, so that a file is accepted or refused as a whole.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] of [`validate`](RetrySpec::validate).
    pub fn to_settings(&self) -> Result<Settings, ConfigError> {
        self.validate()?;
        let mut settings = Settings::new();
        if let Some(timeout) = self.effective_timeout() {
            settings = settings.with_timeout(timeout);
        }
        if let Some(idempotent) = self.idempotent {
            settings = settings.with_idempotent(idempotent);
        }
        if let Some(limit) = self.max_server_wait {
            settings = settings.with_max_server_wait(limit);
        }
        if let Some(dispersal) = self.server_wait_dispersal {
            settings = settings.with_dispersal(dispersal);
        }
        if let Some(nested) = self.nested {
            settings = settings.with_nested(nested);
        }
        Ok(settings)
    }
}

impl From<PolicySpec> for RetrySpec {
    fn from(policy: PolicySpec) -> Self {
        Self::new(policy)
    }
}

/// The fields of a retry spec as a file writes them: a policy spec's, flattened, and the run's.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RetrySpecRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    policy: Option<crate::policy::PolicyKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    preset: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "wire::serialize",
        deserialize_with = "wire::base"
    )]
    base: Option<Duration>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "wire::serialize",
        deserialize_with = "wire::cap"
    )]
    cap: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    jitter: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_attempts: Option<u32>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "wire::serialize",
        deserialize_with = "wire::timeout"
    )]
    timeout: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    idempotent: Option<bool>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "wire::serialize",
        deserialize_with = "wire::max_server_wait"
    )]
    max_server_wait: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    nested: Option<Nested>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server_wait_dispersal: Option<Dispersal>,
    // Last, so that TOML writes it as a table after the plain values.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "name_or_table"
    )]
    budget: Option<BudgetSpec>,
}

impl TryFrom<RetrySpecRepr> for RetrySpec {
    type Error = String;

    fn try_from(repr: RetrySpecRepr) -> Result<Self, String> {
        let policy = PolicySpec::try_from(PolicySpecRepr {
            policy: repr.policy,
            preset: repr.preset,
            base: repr.base,
            cap: repr.cap,
            factor: repr.factor,
            jitter: repr.jitter,
            max_attempts: repr.max_attempts,
        })?;
        Ok(Self {
            policy,
            budget: repr.budget,
            timeout: repr.timeout,
            idempotent: repr.idempotent,
            max_server_wait: repr.max_server_wait,
            nested: repr.nested,
            server_wait_dispersal: repr.server_wait_dispersal,
        })
    }
}

impl From<RetrySpec> for RetrySpecRepr {
    fn from(spec: RetrySpec) -> Self {
        let policy = PolicySpecRepr::from(spec.policy);
        Self {
            policy: policy.policy,
            preset: policy.preset,
            base: policy.base,
            cap: policy.cap,
            factor: policy.factor,
            jitter: policy.jitter,
            max_attempts: policy.max_attempts,
            timeout: spec.timeout,
            idempotent: spec.idempotent,
            max_server_wait: spec.max_server_wait,
            nested: spec.nested,
            server_wait_dispersal: spec.server_wait_dispersal,
            budget: spec.budget,
        }
    }
}
