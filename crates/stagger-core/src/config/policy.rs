//! [`PolicySpec`]: a policy as a configuration file describes it.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::wire;
use crate::error::ConfigError;
use crate::policy::{AnyConfig, Param, PolicyConfig, PolicyKind};
use crate::preset::Preset;

/// Where a [`PolicySpec`] starts from: a catalog policy at its defaults, or a preset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PolicySource {
    /// A policy of the catalog, by name (`policy = "exponential-full-jitter"`).
    Policy(PolicyKind),
    /// A named preset (`preset = "delivery"`).
    Preset(Preset),
}

impl PolicySource {
    /// The configuration the overrides apply to.
    #[must_use]
    pub fn config(&self) -> AnyConfig {
        match self {
            Self::Policy(kind) => AnyConfig::from(*kind),
            Self::Preset(preset) => preset.config(),
        }
    }
}

/// A retry policy as a configuration file describes it: a catalog policy or a preset, and
/// optional overrides of its parameters.
///
/// It has exactly one of `policy` (a [catalog name](PolicyKind::name)) or `preset` (a
/// [preset name](Preset::names)), plus any of `base`, `cap`, `factor`, `jitter` and
/// `max_attempts`. Durations are written as text (`"100ms"`, `"1.5s"`, `"1h30m"`) or as a
/// number of milliseconds. An unknown field, an unknown name or a malformed duration is refused
/// when the file is read; a value out of range, or a parameter the policy does not have, by
/// [`to_config`](PolicySpec::to_config), with a [`ConfigError`] that names the parameter.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::config::PolicySpec;
/// use stagger_core::{PolicyConfig, PolicyKind};
///
/// let spec: PolicySpec = toml::from_str(r#"
///     policy = "exponential-full-jitter"
///     base = "50ms"
///     cap = "2s"
///     max_attempts = 5
/// "#)?;
/// let config = spec.to_config()?;
/// assert_eq!(config.kind(), PolicyKind::ExponentialFullJitter);
/// assert_eq!(config.max_attempts(), 5);
/// assert_eq!(config.bounds(1).max, Duration::from_millis(50));
/// assert_eq!(config.bounds(10).max, Duration::from_secs(2));
///
/// // The same policy as JSON, with the base in milliseconds.
/// let json: PolicySpec = serde_json::from_str(
///     r#"{ "policy": "exponential-full-jitter", "base": 50, "cap": "2s", "max_attempts": 5 }"#,
/// )?;
/// assert_eq!(json.to_config()?, config);
///
/// // A preset with one override.
/// let grpc: PolicySpec = toml::from_str(r#"preset = "grpc"
/// max_attempts = 3"#)?;
/// assert_eq!(grpc.to_config()?.max_attempts(), 3);
///
/// // Values out of range name the parameter.
/// let bad: PolicySpec = toml::from_str(r#"policy = "exponential"
/// factor = -1"#)?;
/// assert_eq!(bad.to_config().unwrap_err().to_string(), "factor must be greater than 0, got -1");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PolicySpecRepr", into = "PolicySpecRepr")]
pub struct PolicySpec {
    /// The policy or preset the overrides apply to.
    pub source: PolicySource,
    /// The delay before the first retry (`base`).
    pub base: Option<Duration>,
    /// The ceiling on a delay (`cap`).
    pub cap: Option<Duration>,
    /// The growth factor of an exponential curve (`factor`).
    pub factor: Option<f64>,
    /// The jitter fraction of subtractive or proportional jitter (`jitter`).
    pub jitter: Option<f64>,
    /// The most attempts, counting the first (`max_attempts`).
    pub max_attempts: Option<u32>,
}

impl PolicySpec {
    /// The catalog policy `kind` at its defaults, with no overrides.
    #[must_use]
    pub const fn policy(kind: PolicyKind) -> Self {
        Self::from_source(PolicySource::Policy(kind))
    }

    /// The preset, with no overrides.
    #[must_use]
    pub const fn preset(preset: Preset) -> Self {
        Self::from_source(PolicySource::Preset(preset))
    }

    const fn from_source(source: PolicySource) -> Self {
        Self {
            source,
            base: None,
            cap: None,
            factor: None,
            jitter: None,
            max_attempts: None,
        }
    }

    /// The overrides, as parameters, in the order they are applied.
    #[must_use]
    pub fn params(&self) -> Vec<Param> {
        [
            self.base.map(Param::Base),
            self.cap.map(Param::Cap),
            self.factor.map(Param::Factor),
            self.jitter.map(Param::Jitter),
            self.max_attempts.map(Param::MaxAttempts),
        ]
        .into_iter()
        .flatten()
        .collect()
    }

    /// The policy's configuration: the source's, with every override applied by
    /// [`AnyConfig::set`], then [validated](AnyConfig::validate).
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] that names the parameter: [`ConfigError::NotApplicable`] for a
    /// parameter the policy does not have (a `factor` for `constant`), or the error of
    /// [`AnyConfig::validate`] for a value out of range.
    pub fn to_config(&self) -> Result<AnyConfig, ConfigError> {
        let config = self
            .params()
            .into_iter()
            .try_fold(self.source.config(), AnyConfig::set)?;
        config.validate()?;
        Ok(config)
    }

    /// A spec that gives back `config` exactly: its catalog name and every parameter it has,
    /// so that `PolicySpec::from_config(&c).to_config() == Ok(c)` for a valid `c`.
    ///
    /// ```
    /// use stagger_core::config::PolicySpec;
    /// use stagger_core::Preset;
    ///
    /// let delivery = Preset::DELIVERY.config();
    /// let spec = PolicySpec::from_config(&delivery);
    /// assert_eq!(spec.to_config()?, delivery);
    /// assert_eq!(
    ///     toml::to_string(&spec)?,
    ///     "policy = \"exponential-subtractive-jitter\"\nbase = \"1s\"\ncap = \"1h\"\nfactor = 2.0\njitter = 0.0\nmax_attempts = 8\n"
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn from_config(config: &AnyConfig) -> Self {
        let mut spec = Self::policy(config.kind());
        let (base, cap, factor, jitter) = match config {
            AnyConfig::Constant(c) => (Some(c.base()), None, None, None),
            AnyConfig::Linear(c) => (Some(c.base()), Some(c.cap()), None, None),
            AnyConfig::Exponential(c) => (Some(c.base()), Some(c.cap()), Some(c.factor()), None),
            AnyConfig::ExponentialFullJitter(c) => {
                (Some(c.base()), Some(c.cap()), Some(c.factor()), None)
            }
            AnyConfig::ExponentialEqualJitter(c) => {
                (Some(c.base()), Some(c.cap()), Some(c.factor()), None)
            }
            AnyConfig::ExponentialSubtractiveJitter(c) => (
                Some(c.base()),
                Some(c.cap()),
                Some(c.factor()),
                Some(c.jitter()),
            ),
            AnyConfig::ExponentialProportionalJitter(c) => (
                Some(c.base()),
                Some(c.cap()),
                Some(c.factor()),
                Some(c.jitter()),
            ),
            AnyConfig::DecorrelatedJitter(c) => (Some(c.base()), Some(c.cap()), None, None),
            AnyConfig::DecorrelatedJitterV2(c) => (Some(c.base()), Some(c.cap()), None, None),
            AnyConfig::Immediate(_) | AnyConfig::NoRetry(_) => (None, None, None, None),
        };
        (spec.base, spec.cap, spec.factor, spec.jitter) = (base, cap, factor, jitter);
        // `no-retry` has no parameters: its single attempt is not a setting.
        if config.kind() != PolicyKind::NoRetry {
            spec.max_attempts = Some(config.max_attempts());
        }
        spec
    }

    /// The end-to-end time limit the preset's source applies, if the spec is a preset that has
    /// one ([`Preset::deadline`]). [`RetrySpec`](super::RetrySpec) uses it as the timeout when
    /// none is given.
    #[must_use]
    pub fn deadline(&self) -> Option<Duration> {
        match self.source {
            PolicySource::Preset(preset) => preset.deadline(),
            PolicySource::Policy(_) => None,
        }
    }
}

impl From<PolicyKind> for PolicySpec {
    fn from(kind: PolicyKind) -> Self {
        Self::policy(kind)
    }
}

impl From<Preset> for PolicySpec {
    fn from(preset: Preset) -> Self {
        Self::preset(preset)
    }
}

impl From<&AnyConfig> for PolicySpec {
    fn from(config: &AnyConfig) -> Self {
        Self::from_config(config)
    }
}

/// A policy's configuration as [`PolicySpec::from_config`] writes it: its catalog name and every
/// parameter it has.
impl Serialize for AnyConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        PolicySpec::from_config(self).serialize(s)
    }
}

/// A [`PolicySpec`], checked and applied by [`PolicySpec::to_config`].
impl<'de> Deserialize<'de> for AnyConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        PolicySpec::deserialize(d)?
            .to_config()
            .map_err(serde::de::Error::custom)
    }
}

/// The fields of a policy spec as a file writes them. [`super::RetrySpec`] has the same fields
/// at its top level.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicySpecRepr {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) policy: Option<PolicyKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) preset: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "wire::serialize",
        deserialize_with = "wire::base"
    )]
    pub(crate) base: Option<Duration>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "wire::serialize",
        deserialize_with = "wire::cap"
    )]
    pub(crate) cap: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) jitter: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_attempts: Option<u32>,
}

impl TryFrom<PolicySpecRepr> for PolicySpec {
    type Error = String;

    fn try_from(repr: PolicySpecRepr) -> Result<Self, String> {
        let source = match (repr.policy, repr.preset) {
            (Some(kind), None) => PolicySource::Policy(kind),
            (None, Some(name)) => {
                PolicySource::Preset(Preset::named(&name).map_err(|e| e.to_string())?)
            }
            (Some(_), Some(_)) => {
                return Err("give either `policy` or `preset`, not both".to_owned());
            }
            (None, None) => {
                return Err(format!(
                    "missing `policy` or `preset`: a policy is one of {}; a preset is one of {}",
                    PolicyKind::names().join(", "),
                    Preset::names().join(", ")
                ));
            }
        };
        Ok(Self {
            source,
            base: repr.base,
            cap: repr.cap,
            factor: repr.factor,
            jitter: repr.jitter,
            max_attempts: repr.max_attempts,
        })
    }
}

impl From<PolicySpec> for PolicySpecRepr {
    fn from(spec: PolicySpec) -> Self {
        let (policy, preset) = match spec.source {
            PolicySource::Policy(kind) => (Some(kind), None),
            PolicySource::Preset(preset) => (None, Some(preset.name().to_owned())),
        };
        Self {
            policy,
            preset,
            base: spec.base,
            cap: spec.cap,
            factor: spec.factor,
            jitter: spec.jitter,
            max_attempts: spec.max_attempts,
        }
    }
}
