//! [`BudgetSpec`]: a retry budget as a configuration file describes it.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::wire;
use crate::budget::{
    AnyBudget, AnyBudgetConfig, Breaker, BudgetKind, GrpcThrottle, Ratio, SreAdaptive, TokenBucket,
};
use crate::error::ConfigError;
use crate::rng::SeededRng;

/// `$base` with each field of `$spec` that the spec sets passed to its setter (wrapped, for a
/// setter that takes an option, as `window => with_window(Some)`), in the order listed: the
/// overrides of a budget spec, written once for every budget.
macro_rules! overridden {
    ($base:expr, $spec:expr, { $($field:ident => $setter:ident $(($wrap:path))?),* $(,)? }) => {{
        let mut c = $base;
        $(
            if let Some(value) = $spec.$field {
                c = c.$setter($($wrap)?(value));
            }
        )*
        c
    }};
}

/// Overrides of a token bucket (`aws-standard`, `aws-2026`, `brooker`), in tokens.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenBucketSpec {
    /// The capacity; the bucket starts full.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<f64>,
    /// The cost of a retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_cost: Option<f64>,
    /// The cost of a retry after a timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_cost: Option<f64>,
    /// The cost of a retry after a throttled attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle_cost: Option<f64>,
    /// The tokens a success without retry adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_reward: Option<f64>,
    /// The tokens every first attempt adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub call_deposit: Option<f64>,
    /// The balance a retry must exceed, besides affording its cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserve: Option<f64>,
    /// Whether a retried success refunds what its last retry cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refund: Option<bool>,
}

/// Overrides of Finagle's ratio budget (`finagle`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RatioSpec {
    /// How long deposits and withdrawals count, 1 s to 60 s.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "wire::serialize",
        deserialize_with = "wire::ttl"
    )]
    pub ttl: Option<Duration>,
    /// The floor of retries per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_per_sec: Option<u32>,
    /// The fraction of requests that may be retried (0.2 is 20 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<f64>,
}

/// Overrides of gRPC's retry throttle (`grpc-throttle`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrpcThrottleSpec {
    /// `maxTokens`, in (0, 1000].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<f64>,
    /// `tokenRatio`, above 0; decimals beyond the third are ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_ratio: Option<f64>,
}

/// Overrides of Google SRE's client-side adaptive throttling (`sre-adaptive`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SreAdaptiveSpec {
    /// The multiplier on accepts, at least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<f64>,
    /// The span over which requests and accepts are counted.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "wire::serialize",
        deserialize_with = "wire::window"
    )]
    pub window: Option<Duration>,
}

/// Overrides of Brooker's retry circuit breaker (`breaker`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BreakerSpec {
    /// The failure ratio above which there are no retries, in `[0, 1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// The span over which outcomes are counted; absent, since creation.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "wire::serialize",
        deserialize_with = "wire::window"
    )]
    pub window: Option<Duration>,
}

/// A retry budget as a configuration file describes it: `budget = "<name>"` and the overrides
/// that budget has.
///
/// The name is one of [`BudgetKind::names`]; the other fields depend on it:
///
/// | budget | fields |
/// |---|---|
/// | `aws-standard`, `aws-2026`, `brooker` | [`TokenBucketSpec`]: `capacity`, `retry_cost`, `timeout_cost`, `throttle_cost`, `success_reward`, `call_deposit`, `reserve`, `refund` |
/// | `finagle` | [`RatioSpec`]: `ttl`, `min_per_sec`, `percent` |
/// | `grpc-throttle` | [`GrpcThrottleSpec`]: `max_tokens`, `token_ratio` |
/// | `sre-adaptive` | [`SreAdaptiveSpec`]: `k`, `window` |
/// | `breaker` | [`BreakerSpec`]: `threshold`, `window` |
///
/// A field the budget does not have is refused when the file is read, with the list of the
/// ones it has; an unknown name, with the list of budgets. A value out of range is refused by
/// [`to_budget`](BudgetSpec::to_budget) with a [`ConfigError`] naming the field.
///
/// ```
/// use stagger_core::config::{BudgetSpec, RatioSpec};
/// use stagger_core::budget::{AnyBudget, Ratio};
/// use stagger_core::SeededRng;
/// use std::time::Duration;
///
/// let spec: BudgetSpec = toml::from_str(r#"
///     budget = "finagle"
///     ttl = "30s"
///     percent = 0.1
/// "#)?;
/// assert_eq!(spec, BudgetSpec::Finagle(RatioSpec {
///     ttl: Some(Duration::from_secs(30)),
///     percent: Some(0.1),
///     ..RatioSpec::default()
/// }));
/// let AnyBudget::Ratio(ratio) = spec.to_budget(SeededRng::new(0))? else { unreachable!() };
/// assert_eq!(ratio.config(), Ratio::FINAGLE.with_ttl(Duration::from_secs(30)).with_percent(0.1));
///
/// let wrong = toml::from_str::<BudgetSpec>("budget = \"finagle\"\ncapacity = 10").unwrap_err();
/// assert!(wrong.to_string().contains("unknown field `capacity`, expected one of `ttl`, `min_per_sec`, `percent`"));
///
/// let out_of_range: BudgetSpec = toml::from_str("budget = \"finagle\"\nttl = \"5m\"")?;
/// assert_eq!(out_of_range.to_budget(SeededRng::new(0)).unwrap_err().param(), Some("ttl"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "budget")]
#[non_exhaustive]
pub enum BudgetSpec {
    /// `aws-standard`: the AWS SDKs' retry quota.
    #[serde(rename = "aws-standard")]
    AwsStandard(TokenBucketSpec),
    /// `aws-2026`: its 2026 revision.
    #[serde(rename = "aws-2026")]
    Aws2026(TokenBucketSpec),
    /// `brooker`: Brooker's per-client token bucket.
    #[serde(rename = "brooker")]
    Brooker(TokenBucketSpec),
    /// `finagle`: Finagle's ratio budget.
    #[serde(rename = "finagle")]
    Finagle(RatioSpec),
    /// `grpc-throttle`: gRFC A6 retry throttling.
    #[serde(rename = "grpc-throttle")]
    GrpcThrottle(GrpcThrottleSpec),
    /// `sre-adaptive`: Google SRE client-side adaptive throttling.
    #[serde(rename = "sre-adaptive")]
    SreAdaptive(SreAdaptiveSpec),
    /// `breaker`: Brooker's retry circuit breaker.
    #[serde(rename = "breaker")]
    Breaker(BreakerSpec),
}

/// The costs of a retry, a timeout retry and a throttled retry in each published bucket.
/// [`TokenBucket`] sets the three together and does not expose them, so overriding one
/// starts from these; a test pins them to the presets.
const fn published_costs(kind: BudgetKind) -> (f64, f64, f64) {
    match kind {
        BudgetKind::Aws2026 => (14.0, 14.0, 5.0),
        BudgetKind::Brooker => (1.0, 1.0, 1.0),
        _ => (5.0, 10.0, 5.0),
    }
}

impl BudgetSpec {
    /// The budget `kind` at its published defaults, with no overrides.
    #[must_use]
    pub const fn named(kind: BudgetKind) -> Self {
        match kind {
            BudgetKind::AwsStandard => Self::AwsStandard(TokenBucketSpec::EMPTY),
            BudgetKind::Aws2026 => Self::Aws2026(TokenBucketSpec::EMPTY),
            BudgetKind::Brooker => Self::Brooker(TokenBucketSpec::EMPTY),
            BudgetKind::Finagle => Self::Finagle(RatioSpec {
                ttl: None,
                min_per_sec: None,
                percent: None,
            }),
            BudgetKind::GrpcThrottle => Self::GrpcThrottle(GrpcThrottleSpec {
                max_tokens: None,
                token_ratio: None,
            }),
            BudgetKind::SreAdaptive => Self::SreAdaptive(SreAdaptiveSpec {
                k: None,
                window: None,
            }),
            BudgetKind::Breaker => Self::Breaker(BreakerSpec {
                threshold: None,
                window: None,
            }),
        }
    }

    /// The budget's name.
    #[must_use]
    pub const fn kind(&self) -> BudgetKind {
        match self {
            Self::AwsStandard(_) => BudgetKind::AwsStandard,
            Self::Aws2026(_) => BudgetKind::Aws2026,
            Self::Brooker(_) => BudgetKind::Brooker,
            Self::Finagle(_) => BudgetKind::Finagle,
            Self::GrpcThrottle(_) => BudgetKind::GrpcThrottle,
            Self::SreAdaptive(_) => BudgetKind::SreAdaptive,
            Self::Breaker(_) => BudgetKind::Breaker,
        }
    }

    /// Checks every override without building the budget.
    ///
    /// # Errors
    ///
    /// The budget configuration's [`ConfigError`], naming the field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.to_config().validate()
    }

    /// Builds the budget: its published defaults with every override applied. `rng` feeds the
    /// one budget that draws (`sre-adaptive`).
    ///
    /// # Errors
    ///
    /// The budget configuration's [`ConfigError`], naming the field.
    pub fn to_budget(&self, rng: SeededRng) -> Result<AnyBudget, ConfigError> {
        self.to_config().build(rng)
    }

    /// The budget's configuration: its kind's published defaults with the fields the spec
    /// sets. Not checked; [`AnyBudgetConfig::validate`] checks it.
    #[must_use]
    pub fn to_config(&self) -> AnyBudgetConfig {
        match self {
            Self::AwsStandard(spec) => {
                AnyBudgetConfig::TokenBucket(spec.apply(BudgetKind::AwsStandard))
            }
            Self::Aws2026(spec) => AnyBudgetConfig::TokenBucket(spec.apply(BudgetKind::Aws2026)),
            Self::Brooker(spec) => AnyBudgetConfig::TokenBucket(spec.apply(BudgetKind::Brooker)),
            Self::Finagle(spec) => AnyBudgetConfig::Ratio(overridden!(Ratio::FINAGLE, spec, {
                ttl => with_ttl,
                min_per_sec => with_min_per_sec,
                percent => with_percent,
            })),
            Self::GrpcThrottle(spec) => {
                AnyBudgetConfig::GrpcThrottle(overridden!(GrpcThrottle::DEFAULT, spec, {
                    max_tokens => with_max_tokens,
                    token_ratio => with_token_ratio,
                }))
            }
            Self::SreAdaptive(spec) => {
                AnyBudgetConfig::SreAdaptive(overridden!(SreAdaptive::DEFAULT, spec, {
                    k => with_k,
                    window => with_window,
                }))
            }
            Self::Breaker(spec) => AnyBudgetConfig::Breaker(overridden!(Breaker::DEFAULT, spec, {
                threshold => with_threshold,
                // The breaker's window is itself optional: a set one is `Some`.
                window => with_window(Some),
            })),
        }
    }
}

impl TokenBucketSpec {
    const EMPTY: Self = Self {
        capacity: None,
        retry_cost: None,
        timeout_cost: None,
        throttle_cost: None,
        success_reward: None,
        call_deposit: None,
        reserve: None,
        refund: None,
    };

    /// The published bucket `kind` with these overrides.
    fn apply(&self, kind: BudgetKind) -> TokenBucket {
        let mut c = match kind {
            BudgetKind::Aws2026 => TokenBucket::AWS_2026,
            BudgetKind::Brooker => TokenBucket::BROOKER,
            _ => TokenBucket::AWS_STANDARD,
        };
        if self.retry_cost.is_some() || self.timeout_cost.is_some() || self.throttle_cost.is_some()
        {
            let (retry, timeout, throttle) = published_costs(kind);
            c = c.with_costs(
                self.retry_cost.unwrap_or(retry),
                self.timeout_cost.unwrap_or(timeout),
                self.throttle_cost.unwrap_or(throttle),
            );
        }
        overridden!(c, self, {
            capacity => with_capacity,
            success_reward => with_success_reward,
            call_deposit => with_call_deposit,
            reserve => with_reserve,
            refund => with_refund,
        })
    }
}

impl From<BudgetKind> for BudgetSpec {
    fn from(kind: BudgetKind) -> Self {
        Self::named(kind)
    }
}

impl fmt::Display for BudgetSpec {
    /// The budget's name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind().name())
    }
}

/// Reads a budget as its name alone (`budget = "aws-standard"`) or as a table with its
/// overrides (`[budget]` with `budget = "aws-standard"` and `capacity = 100`).
pub(crate) fn name_or_table<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<BudgetSpec>, D::Error> {
    struct NameOrTable;

    impl<'de> serde::de::Visitor<'de> for NameOrTable {
        type Value = Option<BudgetSpec>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(
                f,
                "budget: a budget name ({}) or a table with `budget = \"<name>\"` and its overrides",
                BudgetKind::names().join(", ")
            )
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }

        fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Self::Value, E> {
            name.parse::<BudgetKind>()
                .map(|kind| Some(BudgetSpec::named(kind)))
                .map_err(E::custom)
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            BudgetSpec::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Some)
        }
    }

    d.deserialize_option(NameOrTable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_published_costs_are_the_presets() {
        for (kind, preset) in [
            (BudgetKind::AwsStandard, TokenBucket::AWS_STANDARD),
            (BudgetKind::Aws2026, TokenBucket::AWS_2026),
            (BudgetKind::Brooker, TokenBucket::BROOKER),
        ] {
            let (retry, timeout, throttle) = published_costs(kind);
            assert_eq!(
                preset.with_costs(retry, timeout, throttle),
                preset,
                "{kind}"
            );
            assert_eq!(TokenBucketSpec::EMPTY.apply(kind), preset, "{kind}");
        }
    }
}
