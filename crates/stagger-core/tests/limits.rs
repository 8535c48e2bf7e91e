//! Every limit of `stagger_core::limits`, met through each entry point that reads it: the
//! builders (and their `validate`), a configuration file, a gRPC service config and the text
//! readers. Each accepts the limit itself and refuses just past it, with an error that names
//! the parameter and states the limit. (The CLI's flags and scenario files are checked against
//! the same constants in `crates/stagger-cli/tests/limits.rs`.)
#![cfg(feature = "serde")]

use std::time::Duration;

use stagger_core::budget::{Breaker, BudgetPerDestination, GrpcThrottle, Ratio, TokenBucket};
use stagger_core::config::grpc::{MAX_ATTEMPTS_LIMIT, ServiceConfig};
use stagger_core::config::{BudgetSpec, RetrySpec};
use stagger_core::engine::{HedgeDelay, Hedging};
use stagger_core::gate::Gate;
use stagger_core::limits::{
    GRPC_MAX_ATTEMPTS, GRPC_MAX_TOKENS, MAX_DESTINATIONS, MAX_HEDGE_DELAY, MAX_HEDGED_ATTEMPTS,
    MAX_RATIO_PERCENT, MAX_RATIO_TTL, MAX_SCHEDULE_RETRIES, MAX_SKETCH_WINDOW, MAX_TOKENS,
    MIN_RATIO_TTL, TOKEN_RESOLUTION,
};
use stagger_core::policy::Constant;
use stagger_core::sketch::LatencySketch;
use stagger_core::{ConfigError, Schedule, SeededRng};

const NS: Duration = Duration::from_nanos(1);

fn retry_spec(text: &str) -> RetrySpec {
    toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// A configuration file hedging `delay` (a TOML value) up to `attempts`.
fn hedged_file(attempts: u32, delay: &str) -> RetrySpec {
    retry_spec(&format!(
        "preset = \"grpc\"\n[hedging]\nmax_attempts = {attempts}\ndelay = {delay}\n"
    ))
}

/// A gRPC service config hedging at `delay` (a proto3 JSON duration) up to `attempts`.
fn grpc_hedged(attempts: u32, delay: &str) -> ServiceConfig {
    serde_json::from_str(&format!(
        r#"{{"methodConfig": [{{"name": [{{"service": "s"}}], "hedgingPolicy":
            {{"maxAttempts": {attempts}, "hedgingDelay": "{delay}"}}}}]}}"#
    ))
    .unwrap()
}

#[test]
fn the_longest_hedge_delay_is_a_day_for_the_builder_the_file_the_text_and_grpc() {
    assert_eq!(MAX_HEDGE_DELAY, Duration::from_secs(86_400));
    assert_eq!(HedgeDelay::MAX_FIXED, MAX_HEDGE_DELAY);
    let past = MAX_HEDGE_DELAY + NS;

    // The builder: `validate`, which every executor runs before it hedges.
    assert_eq!(Hedging::fixed(MAX_HEDGE_DELAY, 2).validate(), Ok(()));
    let refused = Hedging::fixed(past, 2).validate().unwrap_err();
    assert_eq!(refused.param(), Some("hedge_delay"));
    assert!(
        matches!(refused, ConfigError::OutOfRange { .. }),
        "{refused:?}"
    );
    assert_eq!(
        Hedging::fixed(Duration::from_secs(25 * 3_600), 2)
            .validate()
            .unwrap_err()
            .to_string(),
        "hedge_delay must be at most 86400 seconds (a day), got 90000"
    );

    // A configuration file: read, then refused as a whole, naming the field as written.
    for accepted in ["\"24h\"", "\"1d\"", "86400000"] {
        let spec = hedged_file(2, accepted);
        assert_eq!(
            spec.to_hedging(),
            Ok(Some(Hedging::fixed(MAX_HEDGE_DELAY, 2))),
            "{accepted}"
        );
        assert!(spec.to_settings().is_ok(), "{accepted}");
    }
    for (refused, got) in [("\"25h\"", "90000"), ("86400001", "86400.001")] {
        let spec = hedged_file(2, refused);
        let error = spec.to_hedging().unwrap_err();
        assert_eq!(error.param(), Some("hedging.delay"), "{refused}");
        assert_eq!(
            error.to_string(),
            format!("hedging.delay must be at most 86400 seconds (a day), got {got}")
        );
        assert_eq!(spec.validate().unwrap_err(), error);
        assert_eq!(spec.to_settings().unwrap_err(), error);
    }

    // The text reader of the CLI's `--hedge`.
    assert_eq!("24h".parse(), Ok(HedgeDelay::Fixed(MAX_HEDGE_DELAY)));
    assert_eq!("1d".parse(), Ok(HedgeDelay::Fixed(MAX_HEDGE_DELAY)));
    for refused in ["25h", "86400001ms", "1d1ns"] {
        let error = refused.parse::<HedgeDelay>().unwrap_err().to_string();
        assert!(error.contains("at most a day"), "{refused}: {error}");
    }

    // A gRPC service config's hedgingDelay.
    let policies = grpc_hedged(2, "86400s").hedging_policies().unwrap();
    assert_eq!(policies[0].hedging, Hedging::fixed(MAX_HEDGE_DELAY, 2));
    let error = grpc_hedged(2, "86400.000000001s")
        .hedging_policies()
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("hedgingDelay") && error.contains("at most 86400 seconds (a day)"),
        "{error}"
    );
}

#[test]
fn the_most_hedged_attempts_are_ten_for_the_builder_the_file_and_grpc() {
    assert_eq!(MAX_HEDGED_ATTEMPTS, 10);
    assert_eq!(
        stagger_core::engine::MAX_HEDGED_ATTEMPTS,
        MAX_HEDGED_ATTEMPTS
    );
    let delay = Duration::from_millis(5);
    assert_eq!(
        Hedging::fixed(delay, MAX_HEDGED_ATTEMPTS).validate(),
        Ok(())
    );
    assert_eq!(
        Hedging::fixed(delay, MAX_HEDGED_ATTEMPTS + 1)
            .validate()
            .unwrap_err()
            .to_string(),
        "hedge_max_attempts must be from 1 to 10, got 11"
    );
    assert!(
        hedged_file(MAX_HEDGED_ATTEMPTS, "\"5ms\"")
            .validate()
            .is_ok()
    );
    assert_eq!(
        hedged_file(MAX_HEDGED_ATTEMPTS + 1, "\"5ms\"")
            .validate()
            .unwrap_err()
            .to_string(),
        "hedging.max_attempts must be from 1 to 10, got 11"
    );
    // gRPC treats a larger maxAttempts as its limit (A6), and never above ten.
    assert_eq!(MAX_ATTEMPTS_LIMIT, GRPC_MAX_ATTEMPTS);
    let attempts = |n: u32, limit: u32| {
        grpc_hedged(n, "0s")
            .hedging_policies_with_limit(limit)
            .unwrap()[0]
            .hedging
            .max_attempts()
    };
    assert_eq!(attempts(9, u32::MAX), 9);
    assert_eq!(attempts(11, u32::MAX), MAX_HEDGED_ATTEMPTS);
    assert_eq!(
        grpc_hedged(9, "0s").hedging_policies().unwrap()[0]
            .hedging
            .max_attempts(),
        GRPC_MAX_ATTEMPTS
    );
}

#[test]
fn the_most_destinations_are_65536_for_the_builders_and_the_file() {
    assert_eq!(MAX_DESTINATIONS, 65_536);
    assert_eq!(Gate::MAX_CAPACITY, MAX_DESTINATIONS);
    assert_eq!(BudgetPerDestination::<()>::MAX_CAPACITY, MAX_DESTINATIONS);
    let allowed = "between 1 and 65536 destinations";

    assert!(Gate::new(MAX_DESTINATIONS).is_ok());
    let error = Gate::new(MAX_DESTINATIONS + 1).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!("capacity must be {allowed}, got 65537")
    );
    let bucket = TokenBucket::AWS_STANDARD;
    assert!(BudgetPerDestination::new(bucket, MAX_DESTINATIONS, SeededRng::new(1)).is_ok());
    assert!(BudgetPerDestination::new(bucket, MAX_DESTINATIONS + 1, SeededRng::new(1)).is_err());

    for field in ["gate", "budget_per_destination"] {
        let file = |n: usize| {
            retry_spec(&format!(
                "preset = \"grpc\"\n{field} = {n}\n[budget]\nbudget = \"aws-standard\"\n"
            ))
        };
        assert!(file(MAX_DESTINATIONS).validate().is_ok(), "{field}");
        assert_eq!(
            file(MAX_DESTINATIONS + 1)
                .validate()
                .unwrap_err()
                .to_string(),
            format!("{field} must be {allowed}, got 65537")
        );
    }
}

#[test]
fn a_schedule_lists_at_most_ten_thousand_retries() {
    assert_eq!(MAX_SCHEDULE_RETRIES, 10_000);
    assert_eq!(
        stagger_core::schedule::MAX_SCHEDULE_RETRIES,
        MAX_SCHEDULE_RETRIES
    );
    let schedule = |attempts: u32| {
        Schedule::new(
            Constant::new().with_max_attempts(attempts),
            SeededRng::new(1),
        )
    };
    assert_eq!(
        schedule(MAX_SCHEDULE_RETRIES + 1).unwrap().retries().len(),
        MAX_SCHEDULE_RETRIES as usize
    );
    assert_eq!(
        schedule(MAX_SCHEDULE_RETRIES + 2).unwrap_err(),
        ConfigError::ScheduleTooLong {
            retries: MAX_SCHEDULE_RETRIES + 1,
            limit: MAX_SCHEDULE_RETRIES
        }
    );
}

#[test]
fn a_sketch_window_is_at_most_ten_million() {
    assert_eq!(LatencySketch::MAX_WINDOW, MAX_SKETCH_WINDOW);
    assert!(LatencySketch::with_window(MAX_SKETCH_WINDOW).is_ok());
    assert_eq!(
        LatencySketch::with_window(MAX_SKETCH_WINDOW + 1)
            .unwrap_err()
            .to_string(),
        "window must be between 1 and 10000000 samples, got 10000001"
    );
}

/// `text` as a budget file, built: `Ok` or the error's text.
fn budget_file(text: &str) -> Result<(), String> {
    let spec: BudgetSpec = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    spec.to_budget(SeededRng::new(1))
        .map(drop)
        .map_err(|e| e.to_string())
}

#[test]
fn budget_limits_hold_for_the_builders_and_the_file() {
    // Token buckets: every amount up to MAX_TOKENS, none below TOKEN_RESOLUTION but zero.
    assert!(
        TokenBucket::AWS_STANDARD
            .with_capacity(MAX_TOKENS)
            .validate()
            .is_ok()
    );
    assert!(
        TokenBucket::AWS_STANDARD
            .with_capacity(MAX_TOKENS * 1.001)
            .validate()
            .is_err()
    );
    let bucket = |field: &str, value: f64| {
        budget_file(&format!("budget = \"aws-standard\"\n{field} = {value:?}"))
    };
    assert_eq!(bucket("capacity", MAX_TOKENS), Ok(()));
    assert_eq!(
        bucket("capacity", 1.5e9),
        Err("capacity must be between 0 and 1e9 tokens, got 1500000000".to_owned())
    );
    assert_eq!(bucket("capacity", TOKEN_RESOLUTION), Ok(()));
    assert_eq!(
        bucket("capacity", 0.0009),
        Err("capacity must be at least 0.001 tokens, got 0.0009".to_owned())
    );
    assert_eq!(bucket("retry_cost", TOKEN_RESOLUTION), Ok(()));
    assert_eq!(
        bucket("retry_cost", 0.0009),
        Err("retry_cost must be 0, or at least 0.001 tokens, got 0.0009".to_owned())
    );

    // gRPC's throttle: maxTokens up to GRPC_MAX_TOKENS, tokenRatio up to MAX_TOKENS.
    let throttle = |field: &str, value: f64| {
        budget_file(&format!("budget = \"grpc-throttle\"\n{field} = {value:?}"))
    };
    assert_eq!(throttle("max_tokens", GRPC_MAX_TOKENS), Ok(()));
    assert_eq!(
        throttle("max_tokens", 1000.5),
        Err("max_tokens must be in (0, 1000], at least 0.001, got 1000.5".to_owned())
    );
    assert!(
        GrpcThrottle::DEFAULT
            .with_max_tokens(GRPC_MAX_TOKENS)
            .validate()
            .is_ok()
    );
    assert!(
        GrpcThrottle::DEFAULT
            .with_token_ratio(MAX_TOKENS)
            .validate()
            .is_ok()
    );
    assert!(
        GrpcThrottle::DEFAULT
            .with_token_ratio(2e9)
            .validate()
            .is_err()
    );

    // Finagle's ratio: percent up to MAX_RATIO_PERCENT, ttl from MIN_RATIO_TTL to MAX_RATIO_TTL.
    assert!(
        Ratio::FINAGLE
            .with_percent(MAX_RATIO_PERCENT)
            .validate()
            .is_ok()
    );
    assert!(Ratio::FINAGLE.with_percent(1000.5).validate().is_err());
    let ratio = |line: &str| budget_file(&format!("budget = \"finagle\"\n{line}"));
    assert_eq!(ratio("percent = 1000.0"), Ok(()));
    assert_eq!(
        ratio("percent = 1000.5"),
        Err("percent must be between 0 and 1000, got 1000.5".to_owned())
    );
    assert_eq!(MIN_RATIO_TTL, Duration::from_secs(1));
    assert_eq!(MAX_RATIO_TTL, Duration::from_secs(60));
    assert_eq!(ratio("ttl = \"1s\""), Ok(()));
    assert_eq!(ratio("ttl = \"60s\""), Ok(()));
    for (ttl, got) in [("999ms", "0.999"), ("60001ms", "60.001")] {
        assert_eq!(
            ratio(&format!("ttl = \"{ttl}\"")),
            Err(format!(
                "ttl must be between 1 s and 60 s, as Finagle requires, got {got}"
            ))
        );
    }
    // A breaker's threshold is a ratio, not a limit: both ends of [0, 1] are taken.
    assert!(Breaker::DEFAULT.with_threshold(1.0).validate().is_ok());
}
