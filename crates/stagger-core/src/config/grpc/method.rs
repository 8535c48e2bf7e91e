//! A method config: the methods it names ([`MethodName`]), its retry or hedging policy, and
//! its timeout.
//!
//! [`method_config`] reads one and hands its policy to [`policy`](super::policy); the two
//! public structs, [`MethodRetryPolicy`] and [`MethodHedgingPolicy`], are what the imports
//! return for each method config.

use std::fmt;
use std::time::Duration;

use super::duration::positive_duration;
use super::error::{GrpcConfigError, Path};
use super::json::Json;
use super::keys::{Fields, METHOD_CONFIG, NAME};
use super::policy::{hedging_policy, retry_policy};
use super::status::RetryableCodes;
use crate::engine::Hedging;
use crate::policy::AnyConfig;

/// A method config's retry policy, as
/// [`ServiceConfig::retry_policies`](super::ServiceConfig::retry_policies) returns it: the
/// methods it names, the catalog configuration, and the status codes that are retried.
///
/// ```
/// use stagger_core::PolicyConfig;
/// use stagger_core::config::grpc::{MethodRetryPolicy, ServiceConfig, StatusCode};
///
/// let config: ServiceConfig = serde_json::from_str(r#"{"methodConfig": [{
///     "name": [{"service": "shop.Cart"}],
///     "retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s",
///                     "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}
/// }]}"#)?;
/// let MethodRetryPolicy { methods, policy, retryable_codes } = &config.retry_policies()?[0];
/// assert_eq!(methods[0].to_string(), "shop.Cart/*");
/// assert_eq!(policy.max_attempts(), 3);
/// assert!(retryable_codes.contains(StatusCode::Unavailable));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MethodRetryPolicy {
    /// The methods the method config names (its `name` list); empty when it has none.
    pub methods: Vec<MethodName>,
    /// The catalog configuration equivalent to the `retryPolicy`'s backoff and `maxAttempts`
    /// (clamped to the client-side limit): `exponential-proportional-jitter` with jitter
    /// [`JITTER`](super::JITTER).
    pub policy: AnyConfig,
    /// The status codes that are retried (`retryableStatusCodes`); never empty. A failure with
    /// any other code ends the call.
    pub retryable_codes: RetryableCodes,
}

/// A method config's hedging policy, as
/// [`ServiceConfig::hedging_policies`](super::ServiceConfig::hedging_policies) returns it: the
/// methods it names, how they are hedged (a fixed [`HedgeDelay`](crate::engine::HedgeDelay)),
/// and the non-fatal status codes, after which the next hedge goes at once; every other code
/// is fatal and ends the call.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MethodHedgingPolicy {
    /// The methods the method config names (its `name` list); empty when it has none.
    pub methods: Vec<MethodName>,
    /// The `hedgingPolicy` as a [`Hedging`]: `maxAttempts` (clamped to the client-side limit)
    /// attempts, `hedgingDelay` apart.
    pub hedging: Hedging,
    /// The non-fatal status codes (`nonFatalStatusCodes`), after which the next hedge goes at
    /// once; may be empty, when every failure is fatal.
    pub non_fatal_codes: RetryableCodes,
}

/// One entry of a method config's `name` list. An empty `service` names every service (the
/// default method config); an empty `method` names every method of the service.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct MethodName {
    /// The fully qualified service, such as `helloworld.Greeter`; empty for every service.
    pub service: String,
    /// The method, such as `SayHello`; empty for every method of the service.
    pub method: String,
}

impl MethodName {
    /// Whether this name applies to `method` of `service`.
    ///
    /// ```
    /// use stagger_core::config::grpc::MethodName;
    ///
    /// let service = MethodName { service: "a.B".into(), method: String::new() };
    /// assert!(service.applies_to("a.B", "Get"));
    /// assert!(!service.applies_to("a.C", "Get"));
    /// assert!(MethodName::default().applies_to("a.C", "Get"));
    /// ```
    #[must_use]
    pub fn applies_to(&self, service: &str, method: &str) -> bool {
        (self.service.is_empty() || self.service == service)
            && (self.method.is_empty() || self.method == method)
    }
}

impl fmt::Display for MethodName {
    /// `service/method`, with `*` for an empty part.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let or_any = |s: &str| if s.is_empty() { "*" } else { s }.to_owned();
        write!(f, "{}/{}", or_any(&self.service), or_any(&self.method))
    }
}

/// What a method config asks for: retries, hedging, or neither.
pub(super) enum MethodPolicy {
    Neither,
    Retry(MethodRetryPolicy),
    Hedging(MethodHedgingPolicy),
}

/// One method config as read.
pub(super) struct MethodConfig {
    /// The methods it names.
    pub(super) names: Vec<MethodName>,
    /// Its retry or hedging policy, if it has one.
    pub(super) policy: MethodPolicy,
    /// Its `timeout`, the deadline of the whole call, if it has one.
    pub(super) timeout: Option<Duration>,
}

/// One method config: its names, its retry or hedging policy if it has one, and its timeout.
pub(super) fn method_config(
    path: &Path,
    json: &Json,
    limit: u32,
) -> Result<MethodConfig, GrpcConfigError> {
    let fields = Fields::of(path, json.object(path)?, &METHOD_CONFIG)?;
    let names = match fields.get("name") {
        None => Vec::new(),
        Some((at, list)) => method_names(&at, list)?,
    };
    let timeout = fields
        .get("timeout")
        .map(|(at, value)| positive_duration(&at, value))
        .transpose()?;
    let policy = match (fields.get("retryPolicy"), fields.get("hedgingPolicy")) {
        (Some(_), Some(_)) => {
            return Err(path.error(format!(
                "only one of {} or {} may be set",
                fields.spelling("retryPolicy"),
                fields.spelling("hedgingPolicy")
            )));
        }
        (Some((at, retry)), None) => {
            let (config, codes) = retry_policy(&at, retry, limit)?;
            MethodPolicy::Retry(MethodRetryPolicy {
                methods: names.clone(),
                policy: config,
                retryable_codes: codes,
            })
        }
        (None, Some((at, hedging))) => {
            let (hedging, codes) = hedging_policy(&at, hedging, limit)?;
            MethodPolicy::Hedging(MethodHedgingPolicy {
                methods: names.clone(),
                hedging,
                non_fatal_codes: codes,
            })
        }
        (None, None) => MethodPolicy::Neither,
    };
    Ok(MethodConfig {
        names,
        policy,
        timeout,
    })
}

/// A method config's `name` list.
fn method_names(path: &Path, json: &Json) -> Result<Vec<MethodName>, GrpcConfigError> {
    let Json::Array(items) = json else {
        return Err(path.error(format!("must be an array, got {}", json.describe())));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let path = path.index(i);
            let fields = Fields::of(&path, item.object(&path)?, &NAME)?;
            let text = |key: &str| match fields.get(key) {
                None => Ok(String::new()),
                Some((_, Json::String(s))) => Ok(s.clone()),
                Some((at, other)) => {
                    Err(at.error(format!("must be a string, got {}", other.describe())))
                }
            };
            let name = MethodName {
                service: text("service")?,
                method: text("method")?,
            };
            if name.service.is_empty() && !name.method.is_empty() {
                return Err(path.field(fields.spelling("method")).error(format!(
                    "a method needs its service: `{}` is empty",
                    fields.spelling("service")
                )));
            }
            Ok(name)
        })
        .collect()
}
