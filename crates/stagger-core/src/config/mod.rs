//! Loading policies, budgets and executor settings from configuration files (TOML, JSON, YAML
//! or any serde format), and importing a gRPC service config's retry and hedging settings.
//!
//! - [`PolicySpec`]: a catalog policy or a preset, with overrides. [`AnyConfig`](crate::AnyConfig) reads and
//!   writes itself in the same shape.
//! - [`BudgetSpec`]: a retry budget by name, with the overrides that budget has.
//! - [`RetrySpec`]: a policy, an optional budget and the run's options, for an executor,
//!   and how its calls are hedged, if they are.
//! - [`grpc::ServiceConfig`]: a gRPC service config's `retryPolicy`, `hedgingPolicy` and
//!   `retryThrottling` (gRFC A6), with A6's validation rules.
//!
//! Names are the catalog's ([`PolicyKind::names`](crate::PolicyKind::names),
//! [`Preset::names`](crate::Preset::names), [`BudgetKind::names`](crate::budget::BudgetKind::names)).
//! Durations are text such as `"100ms"`, `"1.5s"` or `"1h30m"`, or a number of milliseconds.
//!
//! Errors name the offending field. Unknown fields, unknown names and malformed durations are
//! refused as the file is read, with serde's message (which lists the expected fields or
//! names). Values out of range are refused by `to_config`, `to_budget`, `to_settings` or
//! `to_hedging` with a [`ConfigError`](crate::ConfigError) whose message starts with the
//! field's name ([`ConfigError::param`](crate::ConfigError::param) gives it alone).
//!
//! # Load the policy from a config file
//!
//! ```
//! use std::time::Duration;
//! use stagger_core::config::RetrySpec;
//! use stagger_core::{Failure, Policy, PolicyConfig, SeededRng};
//!
//! let spec: RetrySpec = toml::from_str(r#"
//!     preset = "delivery"
//!     max_attempts = 5
//!     timeout = "1h"
//!     budget = "brooker"
//! "#)?;
//!
//! let mut policy = spec.to_config()?.build(SeededRng::from_key("delivery-42"))?;
//! let settings = spec.to_settings()?;
//! let budget = spec.to_budget(SeededRng::new(0))?;
//! assert!(budget.is_some());
//! assert_eq!(settings.timeout(), Some(Duration::from_secs(3600)));
//!
//! // The delivery preset's schedule, cut to five attempts: 1, 2, 4 and 8 seconds.
//! let delays: Vec<Duration> = (1..=5).map_while(|n| policy.next_delay(n, &Failure::Retryable)).collect();
//! assert_eq!(delays, [1, 2, 4, 8].map(Duration::from_secs));
//!
//! // A mistake names the field.
//! let typo = toml::from_str::<RetrySpec>("preset = \"delivery\"\nmax_attempt = 5").unwrap_err();
//! assert!(typo.to_string().contains("unknown field `max_attempt`"));
//! let range: RetrySpec = toml::from_str("preset = \"delivery\"\njitter = 1.5")?;
//! assert_eq!(
//!     range.to_settings().unwrap_err().to_string(),
//!     "jitter must be in [0, 1] (0 turns jitter off), got 1.5"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod budget;
pub mod grpc;
mod policy;
mod retry;
mod wire;

pub use budget::{
    BreakerSpec, BudgetSpec, GrpcThrottleSpec, RatioSpec, SreAdaptiveSpec, TokenBucketSpec,
};
pub use policy::{PolicySource, PolicySpec};
pub use retry::{RetrySpec, SpecBudget, SpecPerDestination};
