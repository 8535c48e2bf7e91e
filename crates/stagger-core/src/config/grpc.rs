//! Importing a gRPC service config's retry and hedging settings (gRFC A6).
//!
//! A gRPC service config carries a `retryPolicy` or a `hedgingPolicy` per method and one
//! `retryThrottling` per server. [`ServiceConfig`] reads the JSON document (any serde format
//! works) and turns them into the catalog's terms, applying A6's validation rules:
//!
//! | object | field (proto name) | rule | result |
//! |---|---|---|---|
//! | `retryPolicy` | `maxAttempts` (`max_attempts`) | required, a JSON integer greater than 1; above 5 is treated as 5 | `max_attempts` |
//! | `retryPolicy` | `initialBackoff` (`initial_backoff`) | required, a proto3 JSON duration (`"0.1s"`) greater than 0 | `base` |
//! | `retryPolicy` | `maxBackoff` (`max_backoff`) | required, a proto3 JSON duration greater than 0 | `cap` |
//! | `retryPolicy` | `backoffMultiplier` (`backoff_multiplier`) | required, a JSON number greater than 0 | `factor` |
//! | `retryPolicy` | `retryableStatusCodes` (`retryable_status_codes`) | required, non-empty; codes as integers or case-insensitive names | [`RetryableCodes`] |
//! | `hedgingPolicy` | `maxAttempts` (`max_attempts`) | required, a JSON integer greater than 1; above 5 is treated as 5 | [`Hedging::max_attempts`] |
//! | `hedgingPolicy` | `hedgingDelay` (`hedging_delay`) | optional, a proto3 JSON duration, not negative; absent is `"0s"`, every attempt at once | a fixed [`Hedging::delay`] |
//! | `hedgingPolicy` | `nonFatalStatusCodes` (`non_fatal_status_codes`) | optional, may be empty (absent is empty: every failure is fatal); codes as integers or case-insensitive names, but not `OK` | [`RetryableCodes`] |
//! | method config | `timeout` | optional, a proto3 JSON duration greater than 0 | the deadline of the whole call, retries included, as A6 has it ([`method_timeouts`](ServiceConfig::method_timeouts)) |
//! | `retryThrottling` | `maxTokens` (`max_tokens`) | required, a JSON integer in (0, 1000] | [`GrpcThrottle::max_tokens`] |
//! | `retryThrottling` | `tokenRatio` (`token_ratio`) | required, a JSON number greater than 0; decimals beyond the third ignored | [`GrpcThrottle::token_ratio`] |
//!
//! The retry policy is `exponential-proportional-jitter` with jitter 0.2: A6 as revised in 2024
//! draws each delay from `min(initialBackoff * backoffMultiplier^(n-1), maxBackoff) *
//! U(0.8, 1.2)` (the [`grpc`](crate::Preset::GRPC) preset). The hedging policy is a
//! [`Hedging`] with a fixed delay, and the non-fatal codes beside it: a failure with one of them
//! sends the next hedge at once, any other ends the call. The limit of 5 attempts is the
//! client's, and the same for both policies
//! ([`retry_policies_with_limit`](ServiceConfig::retry_policies_with_limit),
//! [`hedging_policies_with_limit`](ServiceConfig::hedging_policies_with_limit)); a hedged
//! call never makes more than [`MAX_HEDGED_ATTEMPTS`]. Every error is a [`GrpcConfigError`]
//! that names the offending field by its JSON path, such as
//! `methodConfig[0].retryPolicy.maxAttempts`.
//!
//! Where A6 leaves a hedging rule open, or the clients part from it, the import follows A6
//! and grpc-java (grpc-go does not hedge: its method config has no `hedgingPolicy`, which Go's
//! `encoding/json` then skips). `nonFatalStatusCodes` is optional and may be empty, as A6,
//! `service_config.proto` and grpc-java have it (unlike `retryableStatusCodes`); `OK` among
//! them is refused, as grpc-java refuses it. `hedgingDelay` is optional, as A6 and
//! `service_config.proto` have it (grpc-java requires it), and a negative one is refused, as
//! grpc-java refuses it.
//!
//! # Spellings
//!
//! The proto3 JSON mapping lets a parser take a field's lowerCamel JSON name or its original
//! proto name, and grpc-go reads service configs with Go's `encoding/json`, whose key
//! matching ignores case. The import takes what either of them takes:
//!
//! - **lowerCamel names, in any case**: `maxAttempts`, `MaxAttempts` (as grpc-go's own retry
//!   example spells it), `maxattempts`, `MAXATTEMPTS`. Case is folded as Go folds it: ASCII
//!   letters, and the two non-ASCII letters whose fold is an ASCII one, the Kelvin sign
//!   `U+212A` (as `k`) and the long s `U+017F` (as `s`).
//! - **proto names, exactly**: `method_config`, `retry_policy`, `max_attempts`. No parser
//!   folds their case, so `MAX_ATTEMPTS` or `Max_Attempts` is an unknown key.
//! - **An unknown key is an error**, in every object the import reads (the service config, a
//!   method config, a `name` entry, a `retryPolicy`, a `hedgingPolicy`, `retryThrottling`),
//!   naming the key as the file spells it:
//!   `methodConfig[0].retryPolicy.maxAttemps: unknown key "maxAttemps"; ...`. gRPC clients
//!   skip keys they do not know, but a misspelt key would silently drop a setting (a misspelt
//!   `methodConfig` would import no policy at all).
//! - **Spellings may be mixed**, within a file and within an object.
//! - **Two spellings of one field** in the same object (`maxAttempts` and `max_attempts`, or
//!   `maxAttempts` and `MaxAttempts`) are an error naming both, even when one of them is
//!   `null`: grpc-go would keep the later one and protobuf-java's `JsonFormat` refuses the
//!   object ("has already been set"), so such a file has no one meaning. The very same key
//!   twice is refused as the document is read.
//! - **Errors name keys as the file spells them**: a file in proto names gets
//!   `method_config[0].retry_policy.max_attempts: must be an integer greater than 1, got 1`.
//!   A required field that is missing is named by its lowerCamel name.
//!
//! Keys that gRPC defines (every field of `ServiceConfig` and `MethodConfig` in grpc-proto's
//! `service_config.proto`, and the `perAttemptRecvTimeout` that grpc-java reads in a retry
//! policy) but the import does not use are accepted under either spelling and ignored, their
//! values unchecked:
//!
//! | object | ignored keys (proto names) |
//! |---|---|
//! | service config | `loadBalancingConfig` (`load_balancing_config`), `loadBalancingPolicy` (`load_balancing_policy`), `healthCheckConfig` (`health_check_config`), `connectionScaling` (`connection_scaling`) |
//! | method config | `waitForReady` (`wait_for_ready`), `maxRequestMessageBytes` (`max_request_message_bytes`), `maxResponseMessageBytes` (`max_response_message_bytes`) |
//! | `retryPolicy` | `perAttemptRecvTimeout` (`per_attempt_recv_timeout`) |
//!
//! A method config's `name` entries are read (`service`, `method`), and its `retryPolicy`
//! (`retry_policy`) or `hedgingPolicy` (`hedging_policy`): one with both is an error, as A6
//! allows one. [`retry_policies`](ServiceConfig::retry_policies) lists the retried method
//! configs and [`hedging_policies`](ServiceConfig::hedging_policies) the hedged ones; each
//! reads every method config, so a file is accepted or refused as a whole, whichever is asked
//! for. A `null` value is the same as an absent key.
//!
//! Durations are proto3 JSON durations as grpc-go reads them: an optional sign, seconds with
//! up to nine decimals where either the whole or the decimal part may be left out, and `s`:
//! `"1s"`, `"0.1s"`, `".01s"`, `"1.s"`, `"-2s"`, and `"+1s"` (grpc-go reads the seconds with
//! `strconv.ParseInt`, which takes a `+`; `"+.5s"` it refuses, and so does the import).
//! grpc-go also reads `"--1s"` as 1 s and `"1.-5s"` as 0.95 s, an artefact of reading each
//! part as a signed integer; those are refused. Status codes are integers from 0 to 16, or
//! names, which grpc-go takes in capitals only (`"UNAVAILABLE"`) and the import in any case;
//! a `null` code, which grpc-go reads as `OK`, is refused.
//!
//! ```
//! use std::time::Duration;
//! use stagger_core::config::grpc::{ServiceConfig, StatusCode};
//! use stagger_core::{PolicyConfig, PolicyKind};
//!
//! let config: ServiceConfig = serde_json::from_str(r#"{
//!   "methodConfig": [{
//!     "name": [{ "service": "helloworld.Greeter" }],
//!     "retryPolicy": {
//!       "maxAttempts": 4,
//!       "initialBackoff": "0.1s",
//!       "maxBackoff": "1s",
//!       "backoffMultiplier": 2,
//!       "retryableStatusCodes": ["UNAVAILABLE"]
//!     }
//!   }],
//!   "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }
//! }"#)?;
//!
//! let policies = config.retry_policies()?;
//! let (names, policy, codes) = &policies[0];
//! assert_eq!(names[0].service, "helloworld.Greeter");
//! assert_eq!(policy.kind(), PolicyKind::ExponentialProportionalJitter);
//! assert_eq!(policy.max_attempts(), 4);
//! assert_eq!(policy.bounds(1).max, Duration::from_millis(120)); // 100 ms * 1.2
//! assert!(codes.contains(StatusCode::Unavailable));
//! assert!(!codes.contains(StatusCode::Internal));
//!
//! let throttling = config.throttling()?.expect("retryThrottling is set");
//! assert_eq!((throttling.max_tokens(), throttling.token_ratio()), (10.0, 0.1));
//!
//! let bad: ServiceConfig = serde_json::from_str(
//!     r#"{ "methodConfig": [{ "retryPolicy": { "maxAttempts": 1 } }] }"#,
//! )?;
//! assert_eq!(
//!     bad.retry_policies().unwrap_err().to_string(),
//!     "methodConfig[0].retryPolicy.maxAttempts: must be an integer greater than 1, got 1"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::budget::GrpcThrottle;
use crate::engine::{Hedging, MAX_HEDGED_ATTEMPTS};
use crate::error::ConfigError;
use crate::policy::{AnyConfig, ExponentialProportionalJitter, PolicyConfig};

/// The client-side limit on `maxAttempts` that A6 sets by default: higher values are treated
/// as 5. An alias of [`limits::GRPC_MAX_ATTEMPTS`](crate::limits::GRPC_MAX_ATTEMPTS).
pub const MAX_ATTEMPTS_LIMIT: u32 = crate::limits::GRPC_MAX_ATTEMPTS;

/// The jitter of A6's 2024 revision: each delay is scaled by `U(0.8, 1.2)`.
pub const JITTER: f64 = 0.2;

/// The largest proto3 duration, in seconds (10 000 years).
const MAX_PROTO_SECONDS: u64 = 315_576_000_000;

/// A method config's retry policy: the methods it names, the catalog configuration, and the
/// status codes that are retried.
pub type MethodRetryPolicy = (Vec<MethodName>, AnyConfig, RetryableCodes);

/// A method config's hedging policy: the methods it names, how they are hedged (a fixed
/// [`HedgeDelay`](crate::engine::HedgeDelay)), and the non-fatal status codes, after which the
/// next hedge goes at once; every other code is fatal and ends the call.
pub type MethodHedgingPolicy = (Vec<MethodName>, Hedging, RetryableCodes);

/// A gRPC service config, as far as retries go: its `methodConfig` list and its
/// `retryThrottling`. See the [module page](self).
///
/// Reading it checks only that it is an object; [`retry_policies`](ServiceConfig::retry_policies)
/// and [`throttling`](ServiceConfig::throttling) check its keys (see
/// [Spellings](self#spellings)), apply A6's rules and name the offending field.
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
            .filter_map(|(_, policy, _)| match policy {
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
    /// use stagger_core::config::grpc::{ServiceConfig, StatusCode};
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
    /// let (names, hedging, non_fatal) = &policies[0];
    /// assert_eq!(names[0].to_string(), "search.Index/Query");
    /// assert_eq!(*hedging, Hedging::fixed(Duration::from_millis(20), 3));
    /// assert_eq!(hedging.delay(), HedgeDelay::Fixed(Duration::from_millis(20)));
    /// assert!(non_fatal.contains(StatusCode::Unavailable));
    /// assert!(non_fatal.contains(StatusCode::Aborted));
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
            .filter_map(|(_, policy, _)| match policy {
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
            .filter_map(|(names, _, timeout)| timeout.map(|t| (names, t)))
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

/// A service config field that breaks one of A6's rules: its JSON path and what is wrong.
///
/// ```
/// use stagger_core::config::grpc::ServiceConfig;
///
/// let config: ServiceConfig =
///     serde_json::from_str(r#"{ "retryThrottling": { "maxTokens": 0, "tokenRatio": 0.1 } }"#)?;
/// let err = config.throttling().unwrap_err();
/// assert_eq!(err.path(), "retryThrottling.maxTokens");
/// assert_eq!(err.message(), "must be an integer in (0, 1000], got 0");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrpcConfigError {
    path: String,
    message: String,
}

impl GrpcConfigError {
    /// The offending field's JSON path, such as `methodConfig[0].retryPolicy.maxAttempts`.
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong with it.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for GrpcConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for GrpcConfigError {}

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

macro_rules! status_codes {
    ($($variant:ident = $code:literal, $name:literal;)*) => {
        /// A gRPC status code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        #[allow(missing_docs)] // Each variant is the status of the same name.
        pub enum StatusCode {
            $($variant = $code,)*
        }

        impl StatusCode {
            /// Every status code, in numeric order.
            pub const ALL: [Self; 17] = [$(Self::$variant,)*];

            /// The code's canonical name, such as `UNAVAILABLE`.
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }
        }
    };
}

status_codes! {
    Ok = 0, "OK";
    Cancelled = 1, "CANCELLED";
    Unknown = 2, "UNKNOWN";
    InvalidArgument = 3, "INVALID_ARGUMENT";
    DeadlineExceeded = 4, "DEADLINE_EXCEEDED";
    NotFound = 5, "NOT_FOUND";
    AlreadyExists = 6, "ALREADY_EXISTS";
    PermissionDenied = 7, "PERMISSION_DENIED";
    ResourceExhausted = 8, "RESOURCE_EXHAUSTED";
    FailedPrecondition = 9, "FAILED_PRECONDITION";
    Aborted = 10, "ABORTED";
    OutOfRange = 11, "OUT_OF_RANGE";
    Unimplemented = 12, "UNIMPLEMENTED";
    Internal = 13, "INTERNAL";
    Unavailable = 14, "UNAVAILABLE";
    DataLoss = 15, "DATA_LOSS";
    Unauthenticated = 16, "UNAUTHENTICATED";
}

impl StatusCode {
    /// The code with this number, if it is one (0 to 16).
    #[must_use]
    pub fn from_code(code: i32) -> Option<Self> {
        usize::try_from(code)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// The code's number.
    #[must_use]
    pub const fn code(self) -> i32 {
        self as i32
    }
}

impl fmt::Display for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for StatusCode {
    type Err = String;

    /// A code's name, in any case (`"UNAVAILABLE"`, `"unavailable"`).
    fn from_str(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| format!("unknown status code `{name}`"))
    }
}

/// A set of gRPC status codes: a retry policy's `retryableStatusCodes`.
///
/// ```
/// use stagger_core::config::grpc::{RetryableCodes, StatusCode};
///
/// let codes: RetryableCodes = [StatusCode::Unavailable, StatusCode::Aborted].into_iter().collect();
/// assert!(codes.contains(StatusCode::Aborted));
/// assert!(codes.contains_code(14));
/// assert!(!codes.contains_code(99));
/// assert_eq!(codes.iter().collect::<Vec<_>>(), [StatusCode::Aborted, StatusCode::Unavailable]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RetryableCodes(u32);

impl RetryableCodes {
    /// No codes.
    pub const EMPTY: Self = Self(0);

    /// Whether `code` is in the set.
    #[must_use]
    pub const fn contains(self, code: StatusCode) -> bool {
        self.0 & (1 << code as u32) != 0
    }

    /// Whether the status code numbered `code` is in the set; `false` for a number that is no
    /// status code.
    #[must_use]
    pub fn contains_code(self, code: i32) -> bool {
        StatusCode::from_code(code).is_some_and(|c| self.contains(c))
    }

    /// The set with `code` added.
    #[must_use]
    pub const fn with(self, code: StatusCode) -> Self {
        Self(self.0 | (1 << code as u32))
    }

    /// How many codes the set holds.
    #[must_use]
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// What a failed call that ended with `code` is to the engine, as gRFC A6 reads the set:
    /// [`Failure::Retryable`](crate::Failure::Retryable) for a code in it (a retryable code of
    /// a retry policy, a non-fatal code of a hedging policy: the call may have taken effect),
    /// [`Failure::Permanent`](crate::Failure::Permanent) for any other (which stops a retried
    /// run, and a hedged run with the attempts it has in flight). The classifier of a gRPC
    /// client calls it for every status but `OK`.
    ///
    /// ```
    /// use stagger_core::Failure;
    /// use stagger_core::config::grpc::{RetryableCodes, StatusCode};
    ///
    /// let non_fatal: RetryableCodes = [StatusCode::Unavailable].into_iter().collect();
    /// assert_eq!(non_fatal.failure(StatusCode::Unavailable), Failure::Retryable);
    /// assert_eq!(non_fatal.failure(StatusCode::InvalidArgument), Failure::Permanent);
    /// ```
    #[must_use]
    pub const fn failure(self, code: StatusCode) -> crate::Failure {
        if self.contains(code) {
            crate::Failure::Retryable
        } else {
            crate::Failure::Permanent
        }
    }

    /// The codes, in numeric order.
    pub fn iter(self) -> impl Iterator<Item = StatusCode> {
        StatusCode::ALL
            .into_iter()
            .filter(move |c| self.contains(*c))
    }
}

impl FromIterator<StatusCode> for RetryableCodes {
    fn from_iter<I: IntoIterator<Item = StatusCode>>(codes: I) -> Self {
        codes.into_iter().fold(Self::EMPTY, Self::with)
    }
}

/// A JSON path, built as the validation descends.
#[derive(Clone, Debug)]
struct Path(String);

impl Path {
    /// The service config itself, whose fields' paths are their bare keys.
    fn top() -> Self {
        Self(String::new())
    }

    fn field(&self, name: &str) -> Self {
        if self.0.is_empty() {
            Self(name.to_owned())
        } else {
            Self(format!("{}.{name}", self.0))
        }
    }

    fn index(&self, i: usize) -> Self {
        Self(format!("{}[{i}]", self.0))
    }

    fn error(&self, message: impl Into<String>) -> GrpcConfigError {
        GrpcConfigError {
            path: self.0.clone(),
            message: message.into(),
        }
    }
}

/// A key that gRPC defines for one kind of object.
#[derive(Clone, Copy, Debug)]
struct Key {
    /// The proto3 JSON (lowerCamel) name, matched in any case as grpc-go matches it.
    json: &'static str,
    /// The original proto field name, matched exactly.
    proto: &'static str,
}

impl Key {
    /// Whether `spelled`, a key of the file, names this field. See [Spellings](self#spellings).
    fn is_spelled(&self, spelled: &str) -> bool {
        spelled == self.proto || go_fold_eq(spelled, self.json)
    }
}

const fn key(json: &'static str, proto: &'static str) -> Key {
    Key { json, proto }
}

/// The keys of one kind of object, and what an error calls that kind of object.
#[derive(Debug)]
struct Schema {
    what: &'static str,
    keys: &'static [Key],
}

impl Schema {
    /// The keys, for an error: their JSON names, and how else they may be spelled.
    fn describe(&self) -> String {
        let names: Vec<&str> = self.keys.iter().map(|k| k.json).collect();
        let list = match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
            _ => names.join(""),
        };
        match self.keys.iter().find(|k| k.json != k.proto) {
            Some(k) => format!(
                "{list} (in any case, or as proto names such as {})",
                k.proto
            ),
            None => format!("{list} (in any case)"),
        }
    }
}

/// `service_config.proto`'s `ServiceConfig`. Only `methodConfig` and `retryThrottling` are read.
const SERVICE_CONFIG: Schema = Schema {
    what: "a service config",
    keys: &[
        key("methodConfig", "method_config"),
        key("retryThrottling", "retry_throttling"),
        key("loadBalancingConfig", "load_balancing_config"),
        key("loadBalancingPolicy", "load_balancing_policy"),
        key("healthCheckConfig", "health_check_config"),
        key("connectionScaling", "connection_scaling"),
    ],
};

/// `MethodConfig`. `name`, `retryPolicy` and `hedgingPolicy` are read.
const METHOD_CONFIG: Schema = Schema {
    what: "a method config",
    keys: &[
        key("name", "name"),
        key("retryPolicy", "retry_policy"),
        key("hedgingPolicy", "hedging_policy"),
        key("waitForReady", "wait_for_ready"),
        key("timeout", "timeout"),
        key("maxRequestMessageBytes", "max_request_message_bytes"),
        key("maxResponseMessageBytes", "max_response_message_bytes"),
    ],
};

/// `MethodConfig.Name`.
const NAME: Schema = Schema {
    what: "a name entry",
    keys: &[key("service", "service"), key("method", "method")],
};

/// `MethodConfig.RetryPolicy`, and `perAttemptRecvTimeout` of A6's revision (not read).
const RETRY_POLICY: Schema = Schema {
    what: "a retryPolicy",
    keys: &[
        key("maxAttempts", "max_attempts"),
        key("initialBackoff", "initial_backoff"),
        key("maxBackoff", "max_backoff"),
        key("backoffMultiplier", "backoff_multiplier"),
        key("retryableStatusCodes", "retryable_status_codes"),
        key("perAttemptRecvTimeout", "per_attempt_recv_timeout"),
    ],
};

/// `MethodConfig.HedgingPolicy`.
const HEDGING_POLICY: Schema = Schema {
    what: "a hedgingPolicy",
    keys: &[
        key("maxAttempts", "max_attempts"),
        key("hedgingDelay", "hedging_delay"),
        key("nonFatalStatusCodes", "non_fatal_status_codes"),
    ],
};

/// `ServiceConfig.RetryThrottlingPolicy`.
const RETRY_THROTTLING: Schema = Schema {
    what: "retryThrottling",
    keys: &[
        key("maxTokens", "max_tokens"),
        key("tokenRatio", "token_ratio"),
    ],
};

/// Whether `spelled` is `name` as Go's `encoding/json` (which grpc-go reads service configs
/// with) matches a key to a field: ignoring case, where case is folded as Go folds it. For an
/// ASCII `name`, that is ASCII case plus the two non-ASCII letters that fold to ASCII ones:
/// the Kelvin sign (`k`) and the long s (`s`).
fn go_fold_eq(spelled: &str, name: &str) -> bool {
    let fold = |c: char| match c {
        '\u{212A}' => 'k',
        '\u{17F}' => 's',
        c => c.to_ascii_lowercase(),
    };
    spelled.chars().map(fold).eq(name.chars().map(fold))
}

/// An object's fields, each matched to the key it spells.
#[derive(Debug)]
struct Fields<'a> {
    path: Path,
    /// Each field's JSON name, its key as the file spells it, and its value, in file order.
    found: Vec<(&'static str, &'a str, &'a Json)>,
}

impl<'a> Fields<'a> {
    /// Matches every field of the object at `path` to one of `schema`'s keys.
    ///
    /// # Errors
    ///
    /// A key that names none of them, or a second key naming the same field, named as the
    /// file spells it.
    fn of(
        path: &Path,
        fields: &'a [(String, Json)],
        schema: &Schema,
    ) -> Result<Self, GrpcConfigError> {
        let mut found: Vec<(&'static str, &'a str, &'a Json)> = Vec::new();
        for (spelled, value) in fields {
            let Some(key) = schema.keys.iter().find(|k| k.is_spelled(spelled)) else {
                return Err(path.field(spelled).error(format!(
                    "unknown key {spelled:?}; {}'s keys are {}",
                    schema.what,
                    schema.describe()
                )));
            };
            if let Some((_, first, _)) = found.iter().find(|(json, ..)| *json == key.json) {
                return Err(path.field(spelled).error(format!(
                    "{first:?} and {spelled:?} both set {}; give it once",
                    key.json
                )));
            }
            found.push((key.json, spelled, value));
        }
        Ok(Self {
            path: path.clone(),
            found,
        })
    }

    /// The field's path, with its key as the file spells it, and its value; `None` if it is
    /// absent or `null`.
    fn get(&self, json: &str) -> Option<(Path, &'a Json)> {
        self.found
            .iter()
            .find(|(name, _, value)| *name == json && **value != Json::Null)
            .map(|(_, spelled, value)| (self.path.field(spelled), *value))
    }

    /// [`get`](Fields::get), or an error naming the field by its JSON name.
    fn required(&self, json: &str) -> Result<(Path, &'a Json), GrpcConfigError> {
        self.get(json)
            .ok_or_else(|| self.path.field(json).error("is required"))
    }

    /// The field's key as the file spells it, or its JSON name if it is absent.
    fn spelling(&self, json: &'static str) -> &'a str {
        self.found
            .iter()
            .find(|(name, ..)| *name == json)
            .map_or(json, |(_, spelled, _)| spelled)
    }
}

/// What a method config asks for: retries, hedging, or neither.
enum MethodPolicy {
    Neither,
    Retry(MethodRetryPolicy),
    Hedging(MethodHedgingPolicy),
}

/// One method config as read: its names, its policy and its timeout.
type MethodConfig = (Vec<MethodName>, MethodPolicy, Option<Duration>);

/// One method config: its names, its retry or hedging policy if it has one, and its timeout.
fn method_config(path: &Path, json: &Json, limit: u32) -> Result<MethodConfig, GrpcConfigError> {
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
            MethodPolicy::Retry((names.clone(), config, codes))
        }
        (None, Some((at, hedging))) => {
            let (hedging, codes) = hedging_policy(&at, hedging, limit)?;
            MethodPolicy::Hedging((names.clone(), hedging, codes))
        }
        (None, None) => MethodPolicy::Neither,
    };
    Ok((names, policy, timeout))
}

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

fn retry_policy(
    path: &Path,
    json: &Json,
    limit: u32,
) -> Result<(AnyConfig, RetryableCodes), GrpcConfigError> {
    let fields = Fields::of(path, json.object(path)?, &RETRY_POLICY)?;
    let required = |key: &str| fields.required(key);

    let (at, value) = required("maxAttempts")?;
    let max_attempts = max_attempts(&at, value, limit)?;

    let (initial_at, value) = required("initialBackoff")?;
    let initial = positive_duration(&initial_at, value)?;
    let (max_at, value) = required("maxBackoff")?;
    let max = positive_duration(&max_at, value)?;

    let (factor_at, value) = required("backoffMultiplier")?;
    let factor = match value {
        Json::Int(n) => *n as f64,
        Json::Float(x) => *x,
        other => {
            return Err(factor_at.error(format!(
                "must be a number greater than 0, got {}",
                other.describe()
            )));
        }
    };
    if !(factor > 0.0 && factor.is_finite()) {
        return Err(factor_at.error(format!(
            "must be a finite number greater than 0, got {factor}"
        )));
    }

    let (codes_at, value) = required("retryableStatusCodes")?;
    let Json::Array(items) = value else {
        return Err(codes_at.error(format!(
            "must be a non-empty array of status codes, got {}",
            value.describe()
        )));
    };
    if items.is_empty() {
        return Err(codes_at.error("must be a non-empty array of status codes"));
    }
    let codes = status_codes(&codes_at, items)?;

    // A6's ceiling is min(initialBackoff * multiplier^(n-1), maxBackoff). A maxBackoff below
    // initialBackoff is allowed; with a multiplier of at least 1 every ceiling is then
    // maxBackoff, which the catalog writes as base = cap = maxBackoff.
    let base = if max < initial {
        if factor < 1.0 {
            return Err(max_at.error(format!(
                "below {} with {} below 1: the ceiling would rise and fall, which the \
                 catalog's capped curve cannot follow",
                fields.spelling("initialBackoff"),
                fields.spelling("backoffMultiplier")
            )));
        }
        max
    } else {
        initial
    };
    let config = AnyConfig::ExponentialProportionalJitter(
        ExponentialProportionalJitter::new()
            .with_base(base)
            .with_cap(max)
            .with_factor(factor)
            .with_jitter(JITTER)
            .with_max_attempts(max_attempts),
    );
    config.validate().map_err(|e| {
        let at = match e.param() {
            Some("base") => &initial_at,
            Some("cap") => &max_at,
            Some("factor") => &factor_at,
            _ => &at,
        };
        at.error(e.to_string())
    })?;
    Ok((config, codes))
}

/// A policy's `maxAttempts`: an integer greater than 1, above `limit` treated as `limit`.
fn max_attempts(at: &Path, value: &Json, limit: u32) -> Result<u32, GrpcConfigError> {
    match value {
        Json::Int(n) if *n > 1 => Ok(u32::try_from(*n).unwrap_or(u32::MAX).min(limit)),
        Json::Int(n) => Err(at.error(format!("must be an integer greater than 1, got {n}"))),
        other => Err(at.error(format!(
            "must be an integer greater than 1, got {}",
            other.describe()
        ))),
    }
}

/// A hedging policy: A6's rules, and grpc-java's where A6 leaves a case open.
fn hedging_policy(
    path: &Path,
    json: &Json,
    limit: u32,
) -> Result<(Hedging, RetryableCodes), GrpcConfigError> {
    let fields = Fields::of(path, json.object(path)?, &HEDGING_POLICY)?;

    let (at, value) = fields.required("maxAttempts")?;
    let max_attempts = max_attempts(&at, value, limit.min(MAX_HEDGED_ATTEMPTS))?;

    // Optional (A6: "Set this to \"0s\", or leave unset, to immediately send all
    // maxAttempts RPCs"); grpc-java requires it, grpc-go does not hedge.
    let delay = match fields.get("hedgingDelay") {
        None => Duration::ZERO,
        Some((delay_at, value)) => {
            let Json::String(text) = value else {
                return Err(delay_at.error(format!(
                    "must be a proto3 JSON duration such as \"0.5s\", got {}",
                    value.describe()
                )));
            };
            match parse_proto_duration(text) {
                Ok((negative, d)) if negative && !d.is_zero() => {
                    return Err(delay_at.error(format!("must not be negative, got \"{text}\"")));
                }
                Ok((_, d)) if d > crate::limits::MAX_HEDGE_DELAY => {
                    return Err(delay_at.error(format!(
                        "must be {}, got \"{text}\"",
                        crate::limits::MAX_HEDGE_DELAY_ALLOWED
                    )));
                }
                Ok((_, d)) => d,
                Err(why) => {
                    return Err(delay_at.error(format!(
                        "must be a proto3 JSON duration such as \"0.5s\" ({why}), got \"{text}\""
                    )));
                }
            }
        }
    };

    // Optional and possibly empty (A6, and grpc-java: absent is empty), so that every failure
    // is fatal; `OK`, which is no failure, is refused as grpc-java refuses it.
    let codes = match fields.get("nonFatalStatusCodes") {
        None => RetryableCodes::EMPTY,
        Some((codes_at, Json::Array(items))) => {
            let mut codes = RetryableCodes::EMPTY;
            for (i, item) in items.iter().enumerate() {
                let path = codes_at.index(i);
                let code = status_code(&path, item)?;
                if code == StatusCode::Ok {
                    return Err(path.error("must not be OK, which is a success"));
                }
                codes = codes.with(code);
            }
            codes
        }
        Some((codes_at, other)) => {
            return Err(codes_at.error(format!(
                "must be an array of status codes, got {}",
                other.describe()
            )));
        }
    };

    let hedging = Hedging::fixed(delay, max_attempts);
    hedging.validate().map_err(|e| at.error(e.to_string()))?;
    Ok((hedging, codes))
}

/// The status codes of `items`, each an integer or a name, at `path`.
fn status_codes(path: &Path, items: &[Json]) -> Result<RetryableCodes, GrpcConfigError> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| status_code(&path.index(i), item))
        .collect()
}

/// One status code, an integer or a name, at `path`.
fn status_code(path: &Path, item: &Json) -> Result<StatusCode, GrpcConfigError> {
    match item {
        Json::Int(n) => i32::try_from(*n)
            .ok()
            .and_then(StatusCode::from_code)
            .ok_or_else(|| path.error(format!("must be a status code from 0 to 16, got {n}"))),
        Json::String(name) => name.parse::<StatusCode>().map_err(|_| {
            path.error(format!(
                "unknown status code \"{name}\"; the codes are {}",
                StatusCode::ALL.map(StatusCode::name).join(", ")
            ))
        }),
        other => Err(path.error(format!(
            "must be a status code, as an integer or a name, got {}",
            other.describe()
        ))),
    }
}

fn throttling(path: &Path, json: &Json) -> Result<GrpcThrottle, GrpcConfigError> {
    let fields = Fields::of(path, json.object(path)?, &RETRY_THROTTLING)?;
    let required = |key: &str| fields.required(key);

    let (tokens_at, value) = required("maxTokens")?;
    let max_tokens = match value {
        Json::Int(n) if (1..=1000).contains(n) => *n as f64,
        Json::Int(n) => {
            return Err(tokens_at.error(format!("must be an integer in (0, 1000], got {n}")));
        }
        other => {
            return Err(tokens_at.error(format!(
                "must be an integer in (0, 1000], got {}",
                other.describe()
            )));
        }
    };

    let (ratio_at, value) = required("tokenRatio")?;
    let given = match value {
        Json::Int(n) => *n as f64,
        Json::Float(x) => *x,
        other => {
            return Err(ratio_at.error(format!(
                "must be a number greater than 0, got {}",
                other.describe()
            )));
        }
    };
    let token_ratio = three_decimals(given);
    if !(token_ratio > 0.0 && token_ratio.is_finite()) {
        return Err(ratio_at.error(format!(
            "must be a number greater than 0 once decimals beyond the third are dropped, got {given}"
        )));
    }

    let config = GrpcThrottle::DEFAULT
        .with_max_tokens(max_tokens)
        .with_token_ratio(token_ratio);
    config.validate().map_err(|e: ConfigError| {
        let at = if e.param() == Some("max_tokens") {
            &tokens_at
        } else {
            &ratio_at
        };
        at.error(e.to_string())
    })?;
    Ok(config)
}

/// `x` with its decimals beyond the third dropped, as written: 0.1234 gives 0.123, 0.5466
/// gives 0.546. Works on the shortest decimal form of `x`, so a value like 0.0009999 is not
/// rounded up to 0.001 on the way.
fn three_decimals(x: f64) -> f64 {
    if !x.is_finite() || x.abs() >= 1e12 {
        return x;
    }
    let text = format!("{x}");
    let (negative, text) = text
        .strip_prefix('-')
        .map_or((false, text.as_str()), |t| (true, t));
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits: String = fraction.chars().chain("000".chars()).take(3).collect();
    let (Ok(whole), Ok(fraction)) = (whole.parse::<u64>(), digits.parse::<u64>()) else {
        return x;
    };
    let value = (whole * 1000 + fraction) as f64 / 1000.0;
    if negative { -value } else { value }
}

/// A proto3 JSON duration that is greater than 0.
fn positive_duration(path: &Path, json: &Json) -> Result<Duration, GrpcConfigError> {
    let Json::String(text) = json else {
        return Err(path.error(format!(
            "must be a proto3 JSON duration such as \"0.1s\", got {}",
            json.describe()
        )));
    };
    match parse_proto_duration(text) {
        Ok((false, d)) if !d.is_zero() => Ok(d),
        Ok(_) => Err(path.error(format!("must be greater than 0, got \"{text}\""))),
        Err(why) => Err(path.error(format!(
            "must be a proto3 JSON duration such as \"0.1s\" ({why}), got \"{text}\""
        ))),
    }
}

/// Parses a proto3 JSON duration as grpc-go does: an optional `-`, seconds with up to nine
/// decimals, and `s` (`"1s"`, `"0.1s"`, `".5s"`, `"1.s"`, `"-2.000000001s"`), where the whole
/// seconds may also carry a `+` (`"+1s"`, `"-+1s"`), which grpc-go's `strconv.ParseInt` of
/// them takes. Returns whether it is negative and its size.
fn parse_proto_duration(text: &str) -> Result<(bool, Duration), &'static str> {
    let body = text.strip_suffix('s').ok_or("no `s` suffix")?;
    let (negative, body) = body.strip_prefix('-').map_or((false, body), |b| (true, b));
    let body = match body.strip_prefix('+') {
        Some(digits) if digits.starts_with(|c: char| c.is_ascii_digit()) => digits,
        _ => body,
    };
    let (whole, fraction) = body.split_once('.').unwrap_or((body, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (whole.is_empty() && fraction.is_empty()) || !all_digits(whole) || !all_digits(fraction) {
        return Err("not a decimal number of seconds");
    }
    if fraction.len() > 9 {
        return Err("more than nine decimals");
    }
    let seconds = if whole.is_empty() {
        0
    } else {
        whole.parse::<u64>().map_err(|_| "too many seconds")?
    };
    if seconds > MAX_PROTO_SECONDS {
        return Err("more than 315576000000 seconds");
    }
    let nanos = if fraction.is_empty() {
        0
    } else {
        let padded = format!("{fraction:0<9}");
        padded
            .parse::<u32>()
            .map_err(|_| "not a decimal number of seconds")?
    };
    Ok((negative, Duration::new(seconds, nanos)))
}

/// A JSON value as read, so that A6's rules can be checked with the offending field's path
/// (and integers told from other numbers) rather than failing inside the deserializer.
#[derive(Clone, Debug, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl Json {
    fn describe(&self) -> String {
        match self {
            Self::Null => "null".to_owned(),
            Self::Bool(b) => b.to_string(),
            Self::Int(n) => n.to_string(),
            Self::Float(x) => format!("{x:?}"),
            Self::String(s) => format!("the string \"{s}\""),
            Self::Array(_) => "an array".to_owned(),
            Self::Object(_) => "an object".to_owned(),
        }
    }

    fn object(&self, path: &Path) -> Result<&[(String, Json)], GrpcConfigError> {
        match self {
            Self::Object(fields) => Ok(fields),
            other => Err(path.error(format!("must be an object, got {}", other.describe()))),
        }
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(JsonVisitor)
    }
}

struct JsonVisitor;

impl<'de> Visitor<'de> for JsonVisitor {
    type Value = Json;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Json, E> {
        Ok(Json::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Json, D::Error> {
        Json::deserialize(d)
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Json, E> {
        Ok(Json::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, n: i64) -> Result<Json, E> {
        Ok(Json::Int(i128::from(n)))
    }

    fn visit_u64<E: de::Error>(self, n: u64) -> Result<Json, E> {
        Ok(Json::Int(i128::from(n)))
    }

    fn visit_i128<E: de::Error>(self, n: i128) -> Result<Json, E> {
        Ok(Json::Int(n))
    }

    fn visit_u128<E: de::Error>(self, n: u128) -> Result<Json, E> {
        Ok(i128::try_from(n).map_or(Json::Float(n as f64), Json::Int))
    }

    fn visit_f64<E: de::Error>(self, x: f64) -> Result<Json, E> {
        Ok(Json::Float(x))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Json, E> {
        Ok(Json::String(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Json, E> {
        Ok(Json::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Json::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
        let mut fields: Vec<(String, Json)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Json>()? {
            if fields.iter().any(|(k, _)| *k == key) {
                return Err(de::Error::custom(format!("duplicate field `{key}`")));
            }
            fields.push((key, value));
        }
        Ok(Json::Object(fields))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proto_durations() {
        let ok = |s: &str| parse_proto_duration(s).unwrap();
        assert_eq!(ok("1s"), (false, Duration::from_secs(1)));
        assert_eq!(ok("0.1s"), (false, Duration::from_millis(100)));
        assert_eq!(ok(".1s"), (false, Duration::from_millis(100)));
        assert_eq!(ok("1.s"), (false, Duration::from_secs(1)));
        assert_eq!(ok("0.000000001s"), (false, Duration::from_nanos(1)));
        assert_eq!(ok("-2s"), (true, Duration::from_secs(2)));
        assert_eq!(ok("0s"), (false, Duration::ZERO));
        // grpc-go reads the whole seconds with strconv.ParseInt, which takes a `+`.
        assert_eq!(ok("+1s"), (false, Duration::from_secs(1)));
        assert_eq!(ok("+1.5s"), (false, Duration::from_millis(1500)));
        assert_eq!(ok("-+1s"), (true, Duration::from_secs(1)));
        for bad in [
            "1",
            "s",
            ".s",
            "1ms",
            "0.1 s",
            "1.2.3s",
            "0.0000000001s",
            "1e3s",
            "",
            // ParseInt("+") fails in grpc-go too.
            "+.5s",
            "+s",
            "+-1s",
            // grpc-go reads these as 1 s, 0.95 s and 1.05 s: artefacts, refused.
            "--1s",
            "1.-5s",
            "1.+5s",
            " 1s",
        ] {
            assert!(parse_proto_duration(bad).is_err(), "{bad}");
        }
        assert!(parse_proto_duration("315576000000s").is_ok());
        assert!(parse_proto_duration("315576000001s").is_err());
    }

    #[test]
    fn decimals_beyond_the_third_are_dropped() {
        assert_eq!(three_decimals(0.1234), 0.123);
        assert_eq!(three_decimals(0.5466), 0.546);
        assert_eq!(three_decimals(0.1), 0.1);
        assert_eq!(three_decimals(1.0), 1.0);
        assert_eq!(three_decimals(2.9999), 2.999);
        assert_eq!(three_decimals(0.0009999), 0.0);
        assert_eq!(three_decimals(1e-7), 0.0);
    }
}
