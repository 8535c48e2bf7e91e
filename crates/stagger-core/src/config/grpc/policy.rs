//! A `retryPolicy` and a `hedgingPolicy`, read by A6's rules into the catalog's terms: an
//! `exponential-proportional-jitter` configuration, or a fixed [`Hedging`], with their status
//! codes.
//!
//! Where A6 leaves a hedging rule open, grpc-java's rule is followed (see the [module
//! page](super)).

use std::time::Duration;

use super::duration::{parse_proto_duration, positive_duration};
use super::error::{GrpcConfigError, Path};
use super::json::Json;
use super::keys::{Fields, HEDGING_POLICY, RETRY_POLICY};
use super::status::{RetryableCodes, StatusCode, status_code, status_codes};
use crate::engine::{Hedging, MAX_HEDGED_ATTEMPTS};
use crate::policy::{AnyConfig, ExponentialProportionalJitter, PolicyConfig};

/// The client-side limit on `maxAttempts` that A6 sets by default: higher values are treated
/// as 5. An alias of [`limits::GRPC_MAX_ATTEMPTS`](crate::limits::GRPC_MAX_ATTEMPTS).
pub const MAX_ATTEMPTS_LIMIT: u32 = crate::limits::GRPC_MAX_ATTEMPTS;

/// The jitter of A6's 2024 revision: each delay is scaled by `U(0.8, 1.2)`.
pub const JITTER: f64 = 0.2;

/// A retry policy: the catalog configuration of A6's backoff, and the retryable codes.
pub(super) fn retry_policy(
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
pub(super) fn hedging_policy(
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
