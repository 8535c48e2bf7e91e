//! [`ServiceConfig`]: the document as read, and the imports users call on it.
//!
//! Reading keeps the document as [`Json`] and checks only that it is an object, so that every
//! rule can be checked later with the offending field's path. Each import reads every method
//! config ([`method_config`]), so that a file is accepted or refused as a whole, whichever
//! import is asked for.

use std::time::Duration;

use serde::de::{self, Deserialize, Deserializer};

use super::error::{GrpcConfigError, Path};
use super::json::Json;
use super::keys::{Fields, SERVICE_CONFIG};
use super::method::{
    MethodConfig, MethodHedgingPolicy, MethodName, MethodPolicy, MethodRetryPolicy, method_config,
};
use super::policy::MAX_ATTEMPTS_LIMIT;
use super::throttling::throttling;
use crate::budget::GrpcThrottle;

/// A gRPC service config, as far as retries go: its `methodConfig` list and its
/// `retryThrottling`. See the [module page](super).
///
/// Reading it checks only that it is an object; [`retry_policies`](ServiceConfig::retry_policies)
/// and [`throttling`](ServiceConfig::throttling) check its keys (see
/// [Spellings](super#spellings)), apply A6's rules and name the offending field.
#[derive(Clone, Debug, PartialEq)]
pub struct ServiceConfig {
    fields: Vec<(String, Json)>,
}

impl<'de> Deserialize<'de> for ServiceConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Json::deserialize(d)? {
            Json::Object(fields) => Ok(Self { fields }),
            other => Err(de::Error::custom(format!(
                "a service config is a JSON object, got {}",
                other.describe()
            ))),
        }
    }
}

impl ServiceConfig {
    /// Every method config's retry policy, in order, with A6's default limit of 5 attempts.
    /// Method configs without a `retryPolicy` are left out.
    ///
    /// # Errors
    ///
    /// A [`GrpcConfigError`] naming the first field that breaks one of A6's rules.
    pub fn retry_policies(&self) -> Result<Vec<MethodRetryPolicy>, GrpcConfigError> {
        self.retry_policies_with_limit(MAX_ATTEMPTS_LIMIT)
    }

    /// [`retry_policies`](ServiceConfig::retry_policies) with a client-side limit on
    /// `maxAttempts` other than A6's default of 5 (gRPC's channel argument): higher values are
    /// treated as `limit`.
    ///
    /// # Errors
    ///
    /// A [`GrpcConfigError`] naming the first field that breaks one of A6's rules.
    pub fn retry_policies_with_limit(
        &self,
        limit: u32,
    ) -> Result<Vec<MethodRetryPolicy>, GrpcConfigError> {
        Ok(self
            .method_configs(limit)?
            .into_iter()
            .filter_map(|config| match config.policy {
                MethodPolicy::Retry(policy) => Some(policy),
                _ => None,
            })
            .collect())
    }

    /// Every method config's hedging policy, in order, with A6's default limit of 5 attempts.
    /// Method configs without a `hedgingPolicy` are left out.
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::config::grpc::{MethodHedgingPolicy, ServiceConfig, StatusCode};
    /// use stagger_core::engine::{HedgeDelay, Hedging};
    ///
    /// let config: ServiceConfig = serde_json::from_str(r#"{
    ///   "methodConfig": [{
    ///     "name": [{ "service": "search.Index", "method": "Query" }],
    ///     "hedgingPolicy": {
    ///       "maxAttempts": 3,
    ///       "hedgingDelay": "0.02s",
    ///       "nonFatalStatusCodes": ["UNAVAILABLE", 10]
    ///     }
    ///   }]
    /// }"#)?;
    ///
    /// let policies = config.hedging_policies()?;
    /// let MethodHedgingPolicy { methods, hedging, non_fatal_codes } = &policies[0];
    /// assert_eq!(methods[0].to_string(), "search.Index/Query");
    /// assert_eq!(*hedging, Hedging::fixed(Duration::from_millis(20), 3));
    /// assert_eq!(hedging.delay(), HedgeDelay::Fixed(Duration::from_millis(20)));
    /// assert!(non_fatal_codes.contains(StatusCode::Unavailable));
    /// assert!(non_fatal_codes.contains(StatusCode::Aborted));
    /// // A hedged method config is not retried.
    /// assert!(config.retry_policies()?.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`GrpcConfigError`] naming the first field that breaks one of A6's rules.
    pub fn hedging_policies(&self) -> Result<Vec<MethodHedgingPolicy>, GrpcConfigError> {
        self.hedging_policies_with_limit(MAX_ATTEMPTS_LIMIT)
    }

    /// [`hedging_policies`](ServiceConfig::hedging_policies) with a client-side limit on
    /// `maxAttempts` other than A6's default of 5 (gRPC's channel argument): higher values are
    /// treated as `limit`, and a `limit` above [`MAX_HEDGED_ATTEMPTS`] as that.
    ///
    /// [`MAX_HEDGED_ATTEMPTS`]: crate::limits::MAX_HEDGED_ATTEMPTS
    ///
    /// # Errors
    ///
    /// A [`GrpcConfigError`] naming the first field that breaks one of A6's rules.
    pub fn hedging_policies_with_limit(
        &self,
        limit: u32,
    ) -> Result<Vec<MethodHedgingPolicy>, GrpcConfigError> {
        Ok(self
            .method_configs(limit)?
            .into_iter()
            .filter_map(|config| match config.policy {
                MethodPolicy::Hedging(policy) => Some(policy),
                _ => None,
            })
            .collect())
    }

    /// Every method config, in order, with its policy read: both imports read them all, so
    /// that a file is accepted or refused as a whole.
    fn method_configs(&self, limit: u32) -> Result<Vec<MethodConfig>, GrpcConfigError> {
        let top = Fields::of(&Path::top(), &self.fields, &SERVICE_CONFIG)?;
        let Some((path, list)) = top.get("methodConfig") else {
            return Ok(Vec::new());
        };
        let Json::Array(items) = list else {
            return Err(path.error(format!("must be an array, got {}", list.describe())));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| method_config(&path.index(i), item, limit.max(1)))
            .collect()
    }

    /// Every method config's `timeout`, with the methods it names, in order; method configs
    /// without one are left out. gRPC applies it to the whole call, retries and hedges
    /// included (A6), so it is the call's deadline
    /// ([`Settings::with_timeout`](crate::engine::Settings::with_timeout)).
    ///
    /// ```
    /// use std::time::Duration;
    /// use stagger_core::config::grpc::ServiceConfig;
    ///
    /// let config: ServiceConfig = serde_json::from_str(r#"{"methodConfig": [{
    ///     "name": [{"service": "shop.Cart"}],
    ///     "timeout": "2.5s",
    ///     "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s",
    ///                     "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}
    /// }]}"#)?;
    /// let timeouts = config.method_timeouts()?;
    /// assert_eq!(timeouts[0].0[0].service, "shop.Cart");
    /// assert_eq!(timeouts[0].1, Duration::from_millis(2_500));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// A [`GrpcConfigError`] naming the first field that breaks one of A6's rules, in any
    /// method config (as [`retry_policies`](ServiceConfig::retry_policies) does).
    pub fn method_timeouts(&self) -> Result<Vec<(Vec<MethodName>, Duration)>, GrpcConfigError> {
        Ok(self
            .method_configs(MAX_ATTEMPTS_LIMIT)?
            .into_iter()
            .filter_map(|config| config.timeout.map(|t| (config.names, t)))
            .collect())
    }

    /// The `retryThrottling` settings, if the service config has them, as the
    /// `grpc-throttle` budget's configuration. `tokenRatio`'s decimals beyond the third are
    /// dropped: 0.1234 becomes 0.123.
    ///
    /// # Errors
    ///
    /// A [`GrpcConfigError`] naming the first field that breaks one of A6's rules.
    pub fn throttling(&self) -> Result<Option<GrpcThrottle>, GrpcConfigError> {
        let top = Fields::of(&Path::top(), &self.fields, &SERVICE_CONFIG)?;
        top.get("retryThrottling")
            .map(|(path, json)| throttling(&path, json))
            .transpose()
    }

    /// Checks every retry policy, every hedging policy and the throttling settings.
    ///
    /// # Errors
    ///
    /// The first [`GrpcConfigError`].
    pub fn validate(&self) -> Result<(), GrpcConfigError> {
        self.method_configs(MAX_ATTEMPTS_LIMIT)?;
        self.throttling()?;
        Ok(())
    }
}
