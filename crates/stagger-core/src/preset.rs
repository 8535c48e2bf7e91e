//! Named presets: the schedules other systems publish, as catalog configurations.
//!
//! Each preset says where its numbers come from. Where the source defines its jitter slightly
//! differently from the catalog's policy, the preset's notes say how. An unknown name is
//! refused with the presets' names ([`ConfigError::UnknownPreset`]), handed to the error from
//! here.

use std::time::Duration;

use crate::error::ConfigError;
use crate::policy::{
    AnyConfig, Constant, ExponentialFullJitter, ExponentialProportionalJitter,
    ExponentialSubtractiveJitter,
};

/// A named configuration with its source.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::{PolicyConfig, Preset, PolicyKind};
///
/// let delivery = Preset::named("delivery")?;
/// assert_eq!(delivery.config().kind(), PolicyKind::ExponentialSubtractiveJitter);
/// assert_eq!(delivery.config().max_attempts(), 8);
/// assert_eq!(delivery.config().bounds(7).max, Duration::from_secs(64));
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preset {
    name: &'static str,
    config: AnyConfig,
    deadline: Option<Duration>,
    source: &'static str,
    notes: &'static str,
}

impl std::fmt::Display for Preset {
    /// The preset's name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl Preset {
    /// A webhook delivery system's published schedule: 1 s doubling to a 1 h cap, 8 attempts, jitter off.
    /// Retries wait 1, 2, 4, 8, 16, 32 and 64 s: 127 s in all.
    pub const DELIVERY: Self = Self {
        name: "delivery",
        config: AnyConfig::ExponentialSubtractiveJitter(
            ExponentialSubtractiveJitter::new()
                .with_base(Duration::from_secs(1))
                .with_cap(Duration::from_secs(3600))
                .with_max_attempts(8)
                .with_jitter(0.0),
        ),
        deadline: None,
        source: "a webhook delivery system's published retry policy: BASE_DELAY_MS 1000, MAX_DELAY_MS 3600000, MAX_ATTEMPTS 8, jitter 0 (off)",
        notes: "Set jitter (0, 1] to spread deliveries; it only subtracts, so the published give-up time holds.",
    };

    /// The AWS SDKs' standard retry mode: 3 attempts, full jitter under a ceiling of 1 s
    /// doubling to 20 s.
    pub const AWS_STANDARD: Self = Self {
        name: "aws-standard",
        config: AnyConfig::ExponentialFullJitter(
            ExponentialFullJitter::new()
                .with_base(Duration::from_secs(1))
                .with_cap(Duration::from_secs(20))
                .with_max_attempts(3),
        ),
        deadline: None,
        source: "AWS SDKs and Tools reference, standard retry mode; botocore retries/standard.py: rand() * min(2^(attempt-1), 20) s",
        notes: "The cap applies to the ceiling before the draw. The retry quota (token bucket) is a budget, not part of the policy.",
    };

    /// gRPC's retry backoff per gRFC A6 as revised in 2024 (±20 % around the capped ceiling),
    /// with the example values of A6's service config: 4 attempts, 0.1 s doubling to 1 s.
    pub const GRPC: Self = Self {
        name: "grpc",
        config: AnyConfig::ExponentialProportionalJitter(
            ExponentialProportionalJitter::new()
                .with_base(Duration::from_millis(100))
                .with_cap(Duration::from_secs(1))
                .with_factor(2.0)
                .with_jitter(0.2)
                .with_max_attempts(4),
        ),
        deadline: None,
        source: "gRFC A6 client retries, 2024 revision (grpc/proposal PR 452): min(initialBackoff * multiplier^(n-1), maxBackoff) * U(0.8, 1.2); values from A6's example retryPolicy",
        notes: "A6 treats maxAttempts above 5 as 5. The jitter applies after the cap, so a delay may reach 1.2 s. Before 2024, A6 specified full jitter.",
    };

    /// Envoy's router retries: full jitter under 25 ms doubling to 250 ms, one retry.
    pub const ENVOY: Self = Self {
        name: "envoy",
        config: AnyConfig::ExponentialFullJitter(
            ExponentialFullJitter::new()
                .with_base(Duration::from_millis(25))
                .with_cap(Duration::from_millis(250))
                .with_max_attempts(2),
        ),
        deadline: None,
        source: "Envoy router filter: base_interval 25 ms, max_interval 10 x base, num_retries 1; source/common/common/backoff_strategy.cc",
        notes: "Envoy draws whole milliseconds (random % ceiling). Its docs still give the pre-2018 ceiling (2^n - 1) * base; the code uses base * 2^(n-1).",
    };

    /// Polly v8's retry strategy defaults: 3 retries, a constant 2 s, no jitter.
    pub const POLLY: Self = Self {
        name: "polly",
        config: AnyConfig::Constant(
            Constant::new()
                .with_base(Duration::from_secs(2))
                .with_max_attempts(4),
        ),
        deadline: None,
        source: "Polly v8 RetryStrategyOptions: MaxRetryAttempts 3, Delay 2 s, BackoffType Constant, UseJitter false",
        notes: "Polly's own decorrelated jitter is the catalog's decorrelated-jitter-v2.",
    };

    /// cenkalti/backoff's `ExponentialBackOff` defaults: 500 ms growing ×1.5 to a 60 s cap,
    /// ±50 %, within 15 minutes.
    pub const CENKALTI: Self = Self {
        name: "cenkalti",
        config: AnyConfig::ExponentialProportionalJitter(
            ExponentialProportionalJitter::new()
                .with_base(Duration::from_millis(500))
                .with_cap(Duration::from_secs(60))
                .with_factor(1.5)
                .with_jitter(0.5)
                .with_max_attempts(25),
        ),
        deadline: Some(Duration::from_secs(15 * 60)),
        source: "cenkalti/backoff v4 and v5: DefaultInitialInterval 500 ms, DefaultMultiplier 1.5, DefaultRandomizationFactor 0.5, DefaultMaxInterval 60 s, DefaultMaxElapsedTime 15 min",
        notes: "cenkalti has no attempt limit, only the 15-minute elapsed limit, which the preset keeps as its deadline. Its un-jittered schedule fits 24 retries in 15 minutes, hence 25 attempts. The cap applies before the jitter, so a delay may reach 90 s.",
    };

    /// Every preset.
    pub const ALL: [Self; 6] = [
        Self::DELIVERY,
        Self::AWS_STANDARD,
        Self::GRPC,
        Self::ENVOY,
        Self::POLLY,
        Self::CENKALTI,
    ];

    /// The preset with this name.
    ///
    /// # Errors
    ///
    /// [`ConfigError::UnknownPreset`] if there is none.
    pub fn named(name: &str) -> Result<Self, ConfigError> {
        Self::ALL
            .into_iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ConfigError::UnknownPreset {
                name: name.to_owned(),
                valid: &Self::NAMES,
            })
    }

    /// Every preset's name.
    #[must_use]
    pub fn names() -> Vec<&'static str> {
        Self::NAMES.to_vec()
    }

    /// Every preset's name, as an unknown name's error lists them.
    const NAMES: [&'static str; Self::ALL.len()] = names_of!(Self::ALL);

    /// The preset's name.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        self.name
    }

    /// The policy configuration.
    #[must_use]
    pub const fn config(&self) -> AnyConfig {
        self.config
    }

    /// The end-to-end time limit the source applies on top of the policy, if any.
    #[must_use]
    pub const fn deadline(&self) -> Option<Duration> {
        self.deadline
    }

    /// Where the numbers come from.
    #[must_use]
    pub const fn source(&self) -> &'static str {
        self.source
    }

    /// How the source differs from the catalog's policy, or what to know when using it.
    #[must_use]
    pub const fn notes(&self) -> &'static str {
        self.notes
    }
}
