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
//! configs ([`MethodRetryPolicy`]) and [`hedging_policies`](ServiceConfig::hedging_policies)
//! the hedged ones ([`MethodHedgingPolicy`]); each reads every method config, so a file is
//! accepted or refused as a whole, whichever is asked for. A `null` value is the same as an
//! absent key.
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
//! use stagger_core::config::grpc::{MethodRetryPolicy, ServiceConfig, StatusCode};
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
//! let MethodRetryPolicy { methods, policy, retryable_codes } = &policies[0];
//! assert_eq!(methods[0].service, "helloworld.Greeter");
//! assert_eq!(policy.kind(), PolicyKind::ExponentialProportionalJitter);
//! assert_eq!(policy.max_attempts(), 4);
//! assert_eq!(policy.bounds(1).max, Duration::from_millis(120)); // 100 ms * 1.2
//! assert!(retryable_codes.contains(StatusCode::Unavailable));
//! assert!(!retryable_codes.contains(StatusCode::Internal));
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
//!
//! [`Hedging`]: crate::engine::Hedging
//! [`Hedging::max_attempts`]: crate::engine::Hedging::max_attempts
//! [`Hedging::delay`]: crate::engine::Hedging::delay
//! [`GrpcThrottle::max_tokens`]: crate::budget::GrpcThrottle::max_tokens
//! [`GrpcThrottle::token_ratio`]: crate::budget::GrpcThrottle::token_ratio
//! [`MAX_HEDGED_ATTEMPTS`]: crate::limits::MAX_HEDGED_ATTEMPTS

// One file per concept: the document and its imports (`service_config`), a method config
// (`method`), its retry and hedging policies (`policy`), `retryThrottling` (`throttling`),
// status codes (`status`), the keys and their spellings (`keys`), durations (`duration`), the
// JSON values as read (`json`), and the errors with their paths (`error`).
mod duration;
mod error;
mod json;
mod keys;
mod method;
mod policy;
mod service_config;
mod status;
mod throttling;

pub use error::GrpcConfigError;
pub use method::{MethodHedgingPolicy, MethodName, MethodRetryPolicy};
pub use policy::{JITTER, MAX_ATTEMPTS_LIMIT};
pub use service_config::ServiceConfig;
pub use status::{RetryableCodes, StatusCode};
