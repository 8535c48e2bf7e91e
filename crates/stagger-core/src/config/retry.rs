//! [`RetrySpec`]: an executor's settings as a configuration file describes them, and
//! [`SpecPerDestination`], the budgets by destination it builds for a layer.
//!
//! A file names a policy, a budget and the run's options in one table, so that one file
//! configures every front end alike. A layer serving many destinations takes the file's
//! budgets as a [`SpecPerDestination`] (one of the [`PerDestination`] family), which hands each
//! request its [`SpecBudget`].

use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, IntoDeserializer, Visitor};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use super::budget::name_or_table;
use super::policy::PolicySpecRepr;
use super::{BudgetSpec, PolicySpec, wire};
use std::sync::Arc;

use crate::budget::{AnyBudget, Budget, BudgetPerDestination, PerDestination, Slot, Spent};
use crate::clock::{Timeline, Timestamp};
use crate::engine::{Dispersal, HedgeDelay, Hedging, Nested, Settings};
use crate::error::ConfigError;
use crate::failure::Failure;
use crate::gate::{Gate, GatedBudget};
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
/// | `attempt_timeout` | a timeout for each attempt, within the deadline; more than zero ([`Settings::with_attempt_timeout`]) | none |
/// | `idempotent` | `true` or `false` | `true` |
/// | `max_server_wait` | the longest server-directed wait honoured | 5 minutes |
/// | `nested` | `"single-attempt"` or `"retry"` ([`Nested`]) | `"single-attempt"` |
/// | `server_wait_dispersal` | `"floor"`, `"policy-above"` or `"uniform-asked"` ([`Dispersal`]) | `"uniform-asked"` |
/// | `hedging` | hedge the calls ([`Hedging`]; [`to_hedging`](RetrySpec::to_hedging)): a table of `max_attempts` (1 to 10, the first attempt included) and `delay`, a duration of at most a day or a latency percentile (`"p95"`, `"p99.9"`), both required | no hedging |
/// | `budget_per_destination` | keep one `budget` per destination, for up to this many (1 to 65536; [`BudgetPerDestination`]) | one budget for all |
/// | `gate` | pace the calls to each destination through a [`Gate`] of this many destinations (1 to 65536) | no gate |
///
/// The last two need to know where each call goes: the tower layer and the reqwest middleware
/// key them by host and port ([`to_budgets`](RetrySpec::to_budgets)); an executor takes
/// `spec.to_budgets(rng)?.for_destination(|| key.into())` as its budget.
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
    /// A timeout for each attempt, within the deadline (default: none).
    pub attempt_timeout: Option<Duration>,
    /// Whether the operation may be repeated safely (default `true`).
    pub idempotent: Option<bool>,
    /// The longest server-directed wait honoured (default 5 minutes).
    pub max_server_wait: Option<Duration>,
    /// What to do inside another executor's attempt (default [`Nested::SingleAttempt`]).
    pub nested: Option<Nested>,
    /// How a retry is dispersed above a server-directed wait (default
    /// [`Dispersal::UniformAsked`]).
    pub server_wait_dispersal: Option<Dispersal>,
    /// One budget per destination, for up to this many destinations (default: one budget for
    /// every destination).
    pub budget_per_destination: Option<u32>,
    /// A gate per destination, remembering up to this many destinations (default: none).
    pub gate: Option<u32>,
    /// How the calls are hedged, if they are (default: not hedged). A file's `[hedging]`
    /// table: `max_attempts` and `delay`, a duration (`"10ms"`) or a latency percentile
    /// (`"p95"`, `"p99.9"`, with up to two decimals; [`HedgeDelay::Quantile`]).
    pub hedging: Option<Hedging>,
}

impl RetrySpec {
    /// `policy`, with no budget and the default options.
    #[must_use]
    pub const fn new(policy: PolicySpec) -> Self {
        Self {
            policy,
            budget: None,
            timeout: None,
            attempt_timeout: None,
            idempotent: None,
            max_server_wait: None,
            nested: None,
            server_wait_dispersal: None,
            budget_per_destination: None,
            gate: None,
            hedging: None,
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
        self.validate()?;
        if self.budget_per_destination.is_some() {
            return Err(ConfigError::Unusable {
                param: "budget_per_destination",
                reason: "keeps a budget per destination, not one: use to_budgets",
            });
        }
        if self.gate.is_some() {
            return Err(ConfigError::Unusable {
                param: "gate",
                reason: "paces each destination: use to_budgets",
            });
        }
        self.budget.map(|b| b.to_budget(rng)).transpose()
    }

    /// The budgets by destination the file describes: its budget, shared or one per
    /// destination (`budget_per_destination`), behind a gate if it asks for one (`gate`).
    /// What a layer serving many destinations holds; see [`SpecPerDestination`].
    ///
    /// ```
    /// use stagger_core::budget::PerDestination;
    /// use stagger_core::config::RetrySpec;
    /// use stagger_core::budget::Budget;
    /// use stagger_core::SeededRng;
    ///
    /// let spec: RetrySpec = serde_json::from_str(
    ///     r#"{"preset": "aws-standard", "budget": "aws-standard", "budget_per_destination": 256, "gate": 256}"#,
    /// )?;
    /// let budgets = spec.to_budgets(SeededRng::new(1))?;
    /// let api = budgets.for_destination(|| "api.example:443".into());
    /// assert!(api.paces());
    /// // An executor cannot take them as one budget.
    /// assert!(spec.to_budget(SeededRng::new(1)).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the field.
    pub fn to_budgets(&self, rng: SeededRng) -> Result<SpecPerDestination, ConfigError> {
        self.validate()?;
        let gate = self
            .gate
            .map(|capacity| Gate::new(capacity as usize).map(Arc::new))
            .transpose()?;
        let budgets = match (self.budget, self.budget_per_destination) {
            (None, _) => Sharing::Shared(None),
            (Some(budget), None) => Sharing::Shared(Some(Arc::new(budget.to_budget(rng)?))),
            (Some(budget), Some(capacity)) => Sharing::PerDestination(Arc::new(
                BudgetPerDestination::with(capacity as usize, rng, move |rng| {
                    budget.to_budget(rng)
                })?,
            )),
        };
        Ok(SpecPerDestination { budgets, gate })
    }

    /// How the calls are hedged, if the file says they are (its `[hedging]` table).
    ///
    /// The whole spec is checked first, as [`to_settings`](RetrySpec::to_settings) checks it.
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::config::RetrySpec;
    /// use stagger_core::engine::{HedgeDelay, Hedging};
    ///
    /// let spec: RetrySpec = toml::from_str(r#"
    ///     preset = "grpc"
    ///     [hedging]
    ///     max_attempts = 3
    ///     delay = "p95"
    /// "#)?;
    /// assert_eq!(spec.to_hedging()?, Some(Hedging::quantile(9500, 3)));
    /// assert_eq!(spec.to_hedging()?.map(|h| h.delay()), Some(HedgeDelay::Quantile(9500)));
    ///
    /// let fixed: RetrySpec = toml::from_str(
    ///     "preset = \"grpc\"\n[hedging]\nmax_attempts = 2\ndelay = \"10ms\"",
    /// )?;
    /// assert_eq!(fixed.to_hedging()?, Some(Hedging::fixed(Duration::from_millis(10), 2)));
    ///
    /// let many: RetrySpec = toml::from_str(
    ///     "preset = \"grpc\"\n[hedging]\nmax_attempts = 11\ndelay = \"10ms\"",
    /// )?;
    /// assert_eq!(
    ///     many.to_hedging().unwrap_err().to_string(),
    ///     "hedging.max_attempts must be from 1 to 10, got 11"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] of [`validate`](RetrySpec::validate): a hedging parameter out of
    /// range is named `hedging.max_attempts` or `hedging.delay`.
    pub fn to_hedging(&self) -> Result<Option<Hedging>, ConfigError> {
        self.validate()?;
        Ok(self.hedging)
    }

    /// Refuses a `hedging` table, for a driver that retries and cannot hedge: a file that asks
    /// for hedging is not run as if it retried. `instead` says what to use for such a file.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Unusable`] naming `hedging`, with `instead` as the reason.
    pub fn refuse_hedging(&self, instead: &'static str) -> Result<(), ConfigError> {
        match self.hedging {
            Some(_) => Err(ConfigError::Unusable {
                param: "hedging",
                reason: instead,
            }),
            None => Ok(()),
        }
    }

    /// The deadline the run gets: `timeout`, or else the preset's own deadline.
    #[must_use]
    pub fn effective_timeout(&self) -> Option<Duration> {
        self.timeout.or_else(|| self.policy.deadline())
    }

    /// Checks the policy, the budget and the run's options, hedging included.
    ///
    /// # Errors
    ///
    /// The first [`ConfigError`], naming the parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.policy.to_config()?;
        self.budget.as_ref().map_or(Ok(()), BudgetSpec::validate)?;
        for (param, capacity) in [
            ("budget_per_destination", self.budget_per_destination),
            ("gate", self.gate),
        ] {
            if let Some(capacity) = capacity {
                crate::error::check_destinations(param, capacity as usize)?;
            }
        }
        if self.attempt_timeout == Some(Duration::ZERO) {
            return Err(ConfigError::OutOfRange {
                param: "attempt_timeout",
                value: 0.0,
                allowed: "more than zero (an attempt with no time cannot be made)",
            });
        }
        if let Some(hedging) = self.hedging {
            hedging.validate().map_err(hedging_param)?;
        }
        if self.budget_per_destination.is_some() && self.budget.is_none() {
            return Err(ConfigError::Unusable {
                param: "budget_per_destination",
                reason: "needs a `budget` to keep per destination",
            });
        }
        Ok(())
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
        let spec = self;
        let settings = crate::each_setting!([settings_of] { spec });
        // Without a timeout of its own, a preset's deadline applies.
        Ok(match self.effective_timeout() {
            Some(timeout) => settings.with_timeout(timeout),
            None => settings,
        })
    }
}

/// The [`Settings`] a spec's fields give, by the table of settings (`each_setting!`): each field
/// the file sets, set by its method.
macro_rules! settings_of {
    ({ $spec:ident } $($(#[$doc:meta])* $setter:ident($field:ident: $ty:ty) $with:ident,)*) => {{
        let mut settings = Settings::new();
        $(
            if let Some(value) = $spec.$field {
                settings = settings.$with(value);
            }
        )*
        settings
    }};
}
use settings_of;

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
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "wire::serialize",
        deserialize_with = "wire::attempt_timeout"
    )]
    attempt_timeout: Option<Duration>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    budget_per_destination: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    gate: Option<u32>,
    // The tables last, so that TOML writes them after the plain values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hedging: Option<HedgingRepr>,
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
            attempt_timeout: repr.attempt_timeout,
            idempotent: repr.idempotent,
            max_server_wait: repr.max_server_wait,
            nested: repr.nested,
            server_wait_dispersal: repr.server_wait_dispersal,
            budget_per_destination: repr.budget_per_destination,
            gate: repr.gate,
            hedging: repr.hedging.map(Hedging::from),
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
            attempt_timeout: spec.attempt_timeout,
            idempotent: spec.idempotent,
            max_server_wait: spec.max_server_wait,
            nested: spec.nested,
            server_wait_dispersal: spec.server_wait_dispersal,
            budget_per_destination: spec.budget_per_destination,
            gate: spec.gate,
            hedging: spec.hedging.map(HedgingRepr::from),
            budget: spec.budget,
        }
    }
}

/// [`Hedging::validate`]'s error, naming the parameter as a file spells it.
fn hedging_param(e: ConfigError) -> ConfigError {
    match e {
        ConfigError::OutOfRange {
            param,
            value,
            allowed,
        } => ConfigError::OutOfRange {
            param: match param {
                "hedge_max_attempts" => "hedging.max_attempts",
                "hedge_quantile" | "hedge_delay" => "hedging.delay",
                other => other,
            },
            value,
            allowed,
        },
        other => other,
    }
}

/// A `[hedging]` table as a file writes it. Both fields are required.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
#[serde(try_from = "HedgingFields")]
struct HedgingRepr {
    max_attempts: u32,
    #[serde(serialize_with = "serialize_delay")]
    delay: HedgeDelay,
}

/// A `[hedging]` table as read, before its required fields are checked (so that a missing one
/// is named with the table).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HedgingFields {
    #[serde(default)]
    max_attempts: Option<u32>,
    #[serde(default, deserialize_with = "deserialize_delay")]
    delay: Option<HedgeDelay>,
}

impl TryFrom<HedgingFields> for HedgingRepr {
    type Error = String;

    fn try_from(fields: HedgingFields) -> Result<Self, String> {
        let missing = |field: &str, what: &str| format!("hedging.{field} is required: {what}");
        Ok(Self {
            max_attempts: fields.max_attempts.ok_or_else(|| {
                missing(
                    "max_attempts",
                    &format!(
                        "the attempts in all, the first included, {}",
                        crate::limits::MAX_HEDGED_ATTEMPTS_ALLOWED
                    ),
                )
            })?,
            delay: fields.delay.ok_or_else(|| {
                missing(
                    "delay",
                    "a duration such as \"10ms\", or a latency percentile such as \"p95\"",
                )
            })?,
        })
    }
}

impl From<HedgingRepr> for Hedging {
    fn from(repr: HedgingRepr) -> Self {
        match repr.delay {
            HedgeDelay::Fixed(delay) => Self::fixed(delay, repr.max_attempts),
            HedgeDelay::Quantile(q) => Self::quantile(q, repr.max_attempts),
        }
    }
}

impl From<Hedging> for HedgingRepr {
    fn from(hedging: Hedging) -> Self {
        Self {
            max_attempts: hedging.max_attempts(),
            delay: hedging.delay(),
        }
    }
}

/// What errors call the hedge delay.
const DELAY: &str = "hedging.delay";

/// Writes a hedge delay as a file reads it: a duration as [`wire::format`]'s text, a quantile
/// as a percentile (`"p95"`, `"p99.9"`, `"p99.99"`).
fn serialize_delay<S: Serializer>(delay: &HedgeDelay, s: S) -> Result<S::Ok, S::Error> {
    match delay {
        HedgeDelay::Fixed(d) => s.serialize_str(&wire::format(*d)),
        HedgeDelay::Quantile(_) => s.serialize_str(&delay.to_string()),
    }
}

/// Reads a hedge delay; `None` for an explicit null.
fn deserialize_delay<'de, D: Deserializer<'de>>(d: D) -> Result<Option<HedgeDelay>, D::Error> {
    Option::<Delay>::deserialize(d).map(|delay| delay.map(|Delay(delay)| delay))
}

/// A hedge delay as a file writes it.
struct Delay(HedgeDelay);

impl<'de> Deserialize<'de> for Delay {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DelayVisitor).map(Delay)
    }
}

/// A hedge delay: a duration as [`wire`] reads one (text or milliseconds), or a percentile.
struct DelayVisitor;

impl<'de> Visitor<'de> for DelayVisitor {
    type Value = HedgeDelay;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{DELAY}: a duration such as \"10ms\" or a number of milliseconds, or a latency \
             percentile such as \"p95\" or \"p99.9\""
        )
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<HedgeDelay, E> {
        if let Some(number) = text.trim().strip_prefix('p') {
            return match crate::engine::hedge_percentile(number) {
                Some(q) => Ok(HedgeDelay::Quantile(q)),
                None => Err(E::custom(format!(
                    "{DELAY}: a latency percentile is `p` and a number from 0 to 100 with up \
                     to two decimals, such as \"p95\" or \"p99.9\" (got \"{text}\")"
                ))),
            };
        }
        fixed(text.into_deserializer())
    }

    fn visit_u64<E: de::Error>(self, ms: u64) -> Result<HedgeDelay, E> {
        fixed(ms.into_deserializer())
    }

    fn visit_i64<E: de::Error>(self, ms: i64) -> Result<HedgeDelay, E> {
        fixed(ms.into_deserializer())
    }

    fn visit_f64<E: de::Error>(self, ms: f64) -> Result<HedgeDelay, E> {
        fixed(ms.into_deserializer())
    }
}

/// A fixed hedge delay, read by [`wire`] as every other duration of the file is.
fn fixed<'de, D: Deserializer<'de>>(d: D) -> Result<HedgeDelay, D::Error> {
    match wire::deserialize(d, DELAY)? {
        Some(delay) => Ok(HedgeDelay::Fixed(delay)),
        None => Err(de::Error::custom(format!("{DELAY}: a delay is required"))),
    }
}

/// The budgets a configuration file describes, by destination
/// ([`RetrySpec::to_budgets`]): one budget shared by every destination, or one per destination,
/// and a gate in front if the file asks for one. What the tower layer and the reqwest
/// middleware hold when built from a file.
#[derive(Clone, Debug)]
pub struct SpecPerDestination {
    budgets: Sharing,
    gate: Option<Arc<Gate>>,
}

/// How the file's budget is kept: one shared by every destination, or one per destination.
#[derive(Clone, Debug)]
enum Sharing {
    Shared(Option<Arc<AnyBudget>>),
    PerDestination(Arc<BudgetPerDestination<AnyBudget>>),
}

impl PerDestination for SpecPerDestination {
    type Budget = SpecBudget;

    fn for_destination(&self, key: impl FnOnce() -> Arc<str>) -> SpecBudget {
        let (budget, key) = match (&self.budgets, &self.gate) {
            (Sharing::Shared(shared), None) => return SpecBudget::Plain(shared.clone()),
            (Sharing::Shared(shared), Some(_)) => (shared.clone(), key()),
            (Sharing::PerDestination(parts), _) => {
                let key = key();
                (Some(parts.for_key(&key)), key)
            }
        };
        match &self.gate {
            Some(gate) => SpecBudget::Gated(GatedBudget::new(budget, Arc::clone(gate), key)),
            None => SpecBudget::Plain(budget),
        }
    }
}

/// One request's budget from a configuration file's [`SpecPerDestination`]: its destination's
/// budget (or none), behind the gate if the file has one.
#[derive(Debug)]
pub enum SpecBudget {
    /// No gate.
    Plain(Option<Arc<AnyBudget>>),
    /// Behind the file's gate.
    Gated(GatedBudget<Option<Arc<AnyBudget>>>),
}

/// Calls `$method` on whichever budget `$self` holds.
macro_rules! either {
    ($self:ident.$method:ident($($arg:expr),*)) => {
        match $self {
            SpecBudget::Plain(b) => b.$method($($arg),*),
            SpecBudget::Gated(b) => b.$method($($arg),*),
        }
    };
}

impl Budget for SpecBudget {
    fn bind(&self, timeline: Timeline) -> Result<(), ConfigError> {
        either!(self.bind(timeline))
    }
    fn admit(&self, now: Timestamp) -> bool {
        either!(self.admit(now))
    }
    fn try_retry(&self, now: Timestamp, failure: &Failure) -> Option<Spent> {
        either!(self.try_retry(now, failure))
    }
    fn retry_abandoned(&self, granted: Timestamp, spent: Spent) {
        either!(self.retry_abandoned(granted, spent));
    }
    fn on_success(&self, now: Timestamp, last_retry: Option<Spent>) {
        either!(self.on_success(now, last_retry));
    }
    fn on_failure(&self, now: Timestamp, failure: &Failure) {
        either!(self.on_failure(now, failure));
    }
    fn server_wait(&self, now: Timestamp, wait: Duration) {
        either!(self.server_wait(now, wait));
    }
    fn paces(&self) -> bool {
        either!(self.paces())
    }
    fn slot(&self, now: Timestamp, limit: Option<Timestamp>) -> Slot {
        either!(self.slot(now, limit))
    }
    fn slot_taken(&self) {
        either!(self.slot_taken());
    }
    fn slot_unused(&self) {
        either!(self.slot_unused());
    }
}
