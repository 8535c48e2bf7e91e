//! Budgets from configuration files (BudgetSpec): each budget by name at its published
//! defaults, overrides, and errors that name the field.
#![cfg(feature = "serde")]

use std::time::Duration;

use stagger_core::SeededRng;
use stagger_core::budget::{
    AnyBudget, Breaker, BudgetKind, GrpcThrottle, Ratio, SreAdaptive, TokenBucket,
};
use stagger_core::config::{BudgetSpec, GrpcThrottleSpec, RetrySpec};

// ---------------------------------------------------------------------------------------------
// BudgetSpec
// ---------------------------------------------------------------------------------------------

fn budget(text: &str) -> AnyBudget {
    let spec: BudgetSpec = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    spec.to_budget(SeededRng::new(7)).unwrap()
}

#[test]
fn every_budget_by_name_is_its_published_default() {
    for kind in BudgetKind::ALL {
        let spec: BudgetSpec = toml::from_str(&format!("budget = \"{kind}\"")).unwrap();
        assert_eq!(spec, BudgetSpec::named(kind));
        assert_eq!(spec.kind(), kind);
        let round: BudgetSpec = toml::from_str(&toml::to_string(&spec).unwrap()).unwrap();
        assert_eq!(round, spec);
        let built = spec.to_budget(SeededRng::new(0)).unwrap();
        let default = AnyBudget::new(kind, SeededRng::new(0)).unwrap();
        assert_eq!(format!("{built:?}"), format!("{default:?}"), "{kind}");
    }
}

#[test]
fn token_bucket_overrides() {
    let AnyBudget::TokenBucket(bucket) = budget(
        r#"
        budget = "aws-standard"
        capacity = 100
        timeout_cost = 20
        refund = false
        "#,
    ) else {
        panic!("a token bucket");
    };
    assert_eq!(
        bucket.config(),
        TokenBucket::AWS_STANDARD
            .with_capacity(100.0)
            .with_costs(5.0, 20.0, 5.0)
            .with_refund(false)
    );

    let AnyBudget::TokenBucket(bucket) = budget(
        "budget = \"brooker\"\ncall_deposit = 0.2\nreserve = 2\nsuccess_reward = 0.5\nretry_cost = 2",
    ) else {
        panic!("a token bucket");
    };
    assert_eq!(
        bucket.config(),
        TokenBucket::BROOKER
            .with_call_deposit(0.2)
            .with_reserve(2.0)
            .with_success_reward(0.5)
            .with_costs(2.0, 1.0, 1.0)
    );
}

#[test]
fn ratio_throttle_sre_and_breaker_overrides() {
    let AnyBudget::Ratio(ratio) =
        budget("budget = \"finagle\"\nttl = \"20s\"\nmin_per_sec = 5\npercent = 0.5")
    else {
        panic!("a ratio");
    };
    assert_eq!(
        ratio.config(),
        Ratio::FINAGLE
            .with_ttl(Duration::from_secs(20))
            .with_min_per_sec(5)
            .with_percent(0.5)
    );

    let AnyBudget::GrpcThrottle(throttle) =
        budget("budget = \"grpc-throttle\"\nmax_tokens = 100\ntoken_ratio = 0.5")
    else {
        panic!("a throttle");
    };
    assert_eq!(
        throttle.config(),
        GrpcThrottle::DEFAULT
            .with_max_tokens(100.0)
            .with_token_ratio(0.5)
    );

    let AnyBudget::SreAdaptive(sre) = budget("budget = \"sre-adaptive\"\nk = 1.5\nwindow = \"1m\"")
    else {
        panic!("sre-adaptive");
    };
    assert_eq!(
        sre.config(),
        SreAdaptive::DEFAULT
            .with_k(1.5)
            .with_window(Duration::from_secs(60))
    );

    let AnyBudget::Breaker(breaker) =
        budget("budget = \"breaker\"\nthreshold = 0.3\nwindow = 30000")
    else {
        panic!("a breaker");
    };
    assert_eq!(
        breaker.config(),
        Breaker::DEFAULT
            .with_threshold(0.3)
            .with_window(Some(Duration::from_secs(30)))
    );
}

#[test]
fn budget_errors_name_the_field() {
    let refuse = |text: &str| {
        toml::from_str::<BudgetSpec>(text)
            .unwrap()
            .to_budget(SeededRng::new(0))
            .unwrap_err()
    };
    assert_eq!(
        refuse("budget = \"aws-2026\"\ncapacity = -1").param(),
        Some("capacity")
    );
    assert_eq!(
        refuse("budget = \"brooker\"\nthrottle_cost = 0.0001").param(),
        Some("throttle_cost")
    );
    assert_eq!(
        refuse("budget = \"finagle\"\npercent = 2000").param(),
        Some("percent")
    );
    assert_eq!(
        refuse("budget = \"grpc-throttle\"\nmax_tokens = 1001").param(),
        Some("max_tokens")
    );
    assert_eq!(
        refuse("budget = \"sre-adaptive\"\nk = 0.5").param(),
        Some("k")
    );
    assert_eq!(
        refuse("budget = \"breaker\"\nthreshold = 1.5").param(),
        Some("threshold")
    );
    assert_eq!(
        refuse("budget = \"breaker\"\nwindow = \"0s\"").param(),
        Some("window")
    );
}

#[test]
fn a_field_of_another_budget_is_refused_with_the_right_ones() {
    let err = toml::from_str::<BudgetSpec>("budget = \"grpc-throttle\"\nk = 2").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("unknown field `k`, expected `max_tokens` or `token_ratio`"),
        "{text}"
    );
}

#[test]
fn an_unknown_budget_lists_the_budgets() {
    let err = toml::from_str::<BudgetSpec>("budget = \"leaky\"").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("unknown variant `leaky`"), "{text}");
    for name in BudgetKind::names() {
        assert!(text.contains(name), "{name} in {text}");
    }
    // The short form inside a retry spec says the same.
    let err = toml::from_str::<RetrySpec>("policy = \"constant\"\nbudget = \"leaky\"").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("unknown budget `leaky`"), "{text}");
    for name in BudgetKind::names() {
        assert!(text.contains(name), "{name} in {text}");
    }
}

#[test]
fn budgets_from_json_and_yaml() {
    let json: BudgetSpec =
        serde_json::from_str(r#"{"budget":"grpc-throttle","max_tokens":20}"#).unwrap();
    let yaml: BudgetSpec = serde_yaml::from_str("budget: grpc-throttle\nmax_tokens: 20\n").unwrap();
    let expected = BudgetSpec::GrpcThrottle(GrpcThrottleSpec {
        max_tokens: Some(20.0),
        token_ratio: None,
    });
    assert_eq!(json, expected);
    assert_eq!(yaml, expected);
}
