//! `retryThrottling`, read by A6's rules into the `grpc-throttle` budget's configuration.

use super::error::{GrpcConfigError, Path};
use super::json::Json;
use super::keys::{Fields, RETRY_THROTTLING};
use crate::budget::GrpcThrottle;
use crate::error::ConfigError;

/// `retryThrottling`, as the `grpc-throttle` budget's configuration.
pub(super) fn throttling(path: &Path, json: &Json) -> Result<GrpcThrottle, GrpcConfigError> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
