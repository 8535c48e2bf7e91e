//! Configuration loading: policies, budgets and executor settings from TOML, JSON and YAML, and
//! gRFC A6 service configs. Every invalid value is refused with an error naming its field.
#![cfg(feature = "serde")]

use std::time::Duration;

use stagger_core::budget::{
    AnyBudget, Breaker, BudgetKind, GrpcThrottle, Ratio, SreAdaptive, TokenBucket,
};
use stagger_core::config::grpc::{MethodName, RetryableCodes, ServiceConfig, StatusCode};
use stagger_core::config::{
    BudgetSpec, GrpcThrottleSpec, PolicySource, PolicySpec, RetrySpec, TokenBucketSpec,
};
use stagger_core::engine::{HedgeDelay, Hedging, Nested, Run, Settings};
use stagger_core::policy::{Constant, ExponentialProportionalJitter, ExponentialSubtractiveJitter};
use stagger_core::{
    AnyConfig, ConfigError, Failure, Param, PolicyConfig, PolicyKind, Preset, SeededRng, Timestamp,
};

const MS: fn(u64) -> Duration = Duration::from_millis;

fn toml_spec(text: &str) -> PolicySpec {
    toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

// ---------------------------------------------------------------------------------------------
// PolicySpec
// ---------------------------------------------------------------------------------------------

#[test]
fn the_same_policy_from_toml_json_and_yaml_gives_equal_configs() {
    let toml: PolicySpec = toml::from_str(
        r#"
        policy = "exponential-subtractive-jitter"
        base = "250ms"
        cap = "1h30m"
        factor = 1.5
        jitter = 0.25
        max_attempts = 9
        "#,
    )
    .unwrap();
    let json: PolicySpec = serde_json::from_str(
        r#"{
            "policy": "exponential-subtractive-jitter",
            "base": 250,
            "cap": "5400s",
            "factor": 1.5,
            "jitter": 0.25,
            "max_attempts": 9
        }"#,
    )
    .unwrap();
    let yaml: PolicySpec = serde_yaml::from_str(
        "policy: exponential-subtractive-jitter\nbase: 0.25s\ncap: 90m\nfactor: 1.5\njitter: 0.25\nmax_attempts: 9\n",
    )
    .unwrap();

    let expected = AnyConfig::ExponentialSubtractiveJitter(
        ExponentialSubtractiveJitter::new()
            .with_base(MS(250))
            .with_cap(Duration::from_secs(5400))
            .with_factor(1.5)
            .with_jitter(0.25)
            .with_max_attempts(9),
    );
    assert_eq!(toml.to_config().unwrap(), expected);
    assert_eq!(json.to_config().unwrap(), expected);
    assert_eq!(yaml.to_config().unwrap(), expected);
    assert_eq!(toml, json);
    assert_eq!(json, yaml);
}

#[test]
fn durations_read_as_text_or_milliseconds() {
    let cases = [
        ("\"100ms\"", MS(100)),
        ("\"1s\"", Duration::from_secs(1)),
        ("\"1h30m\"", Duration::from_secs(5400)),
        ("\"1.5s\"", MS(1500)),
        ("100", MS(100)),
        ("0.5", Duration::from_micros(500)),
        ("0", Duration::ZERO),
    ];
    for (text, expected) in cases {
        let spec = toml_spec(&format!("policy = \"constant\"\nbase = {text}"));
        assert_eq!(spec.base, Some(expected), "{text}");
    }
}

#[test]
fn a_preset_with_overrides() {
    let spec = toml_spec("preset = \"grpc\"\nmax_attempts = 3\njitter = 0.1");
    assert_eq!(spec.source, PolicySource::Preset(Preset::GRPC));
    let expected = Preset::GRPC
        .config()
        .set(Param::MaxAttempts(3))
        .unwrap()
        .set(Param::Jitter(0.1))
        .unwrap();
    assert_eq!(spec.to_config().unwrap(), expected);
}

#[test]
fn every_catalog_policy_round_trips_through_policy_spec() {
    for kind in PolicyKind::ALL {
        let config = AnyConfig::from(kind);
        assert_round_trip(&config, kind.name());
    }
}

#[test]
fn every_preset_round_trips_through_policy_spec() {
    for preset in Preset::ALL {
        assert_round_trip(&preset.config(), preset.name());
        // And by name.
        let spec = PolicySpec::preset(preset);
        let text = toml::to_string(&spec).unwrap();
        assert_eq!(text, format!("preset = \"{}\"\n", preset.name()));
        let back: PolicySpec = toml::from_str(&text).unwrap();
        assert_eq!(
            back.to_config().unwrap(),
            preset.config(),
            "{}",
            preset.name()
        );
    }
}

#[test]
fn odd_values_round_trip_exactly() {
    let config = AnyConfig::ExponentialProportionalJitter(
        ExponentialProportionalJitter::new()
            .with_base(Duration::from_nanos(123_456_789))
            .with_cap(Duration::from_nanos(98_765_432_101))
            .with_factor(1.1)
            .with_jitter(0.333_333_333_333_333_3)
            .with_max_attempts(u32::MAX),
    );
    assert_round_trip(&config, "odd");
}

fn assert_round_trip(config: &AnyConfig, label: &str) {
    let spec = PolicySpec::from_config(config);
    assert_eq!(spec.to_config().as_ref(), Ok(config), "{label}: spec");

    let toml_text = toml::to_string(&spec).unwrap();
    let from_toml: PolicySpec = toml::from_str(&toml_text).unwrap();
    assert_eq!(from_toml, spec, "{label}: TOML\n{toml_text}");

    let json_text = serde_json::to_string(&spec).unwrap();
    let from_json: PolicySpec = serde_json::from_str(&json_text).unwrap();
    assert_eq!(from_json, spec, "{label}: JSON {json_text}");

    let yaml_text = serde_yaml::to_string(&spec).unwrap();
    let from_yaml: PolicySpec = serde_yaml::from_str(&yaml_text).unwrap();
    assert_eq!(from_yaml, spec, "{label}: YAML\n{yaml_text}");

    // AnyConfig itself reads and writes the same shape.
    let direct: AnyConfig = serde_json::from_str(&serde_json::to_string(config).unwrap()).unwrap();
    assert_eq!(&direct, config, "{label}: AnyConfig");
    assert_eq!(serde_json::to_string(config).unwrap(), json_text);
}

#[test]
fn from_config_lists_only_the_parameters_a_policy_has() {
    let json = |kind: PolicyKind| serde_json::to_value(AnyConfig::from(kind)).unwrap();
    assert_eq!(
        json(PolicyKind::Constant),
        serde_json::json!({ "policy": "constant", "base": "100ms", "max_attempts": 8 })
    );
    assert_eq!(
        json(PolicyKind::NoRetry),
        serde_json::json!({ "policy": "no-retry" })
    );
    assert_eq!(
        json(PolicyKind::Immediate),
        serde_json::json!({ "policy": "immediate", "max_attempts": 3 })
    );
}

fn config_error(text: &str) -> ConfigError {
    toml_spec(text).to_config().unwrap_err()
}

#[test]
fn a_negative_factor_names_factor() {
    let err = config_error("policy = \"exponential\"\nfactor = -1");
    assert_eq!(err.param(), Some("factor"));
    assert_eq!(err.to_string(), "factor must be greater than 0, got -1");
}

#[test]
fn jitter_above_one_names_jitter() {
    let err = config_error("policy = \"exponential-proportional-jitter\"\njitter = 1.5");
    assert_eq!(err.param(), Some("jitter"));
    assert_eq!(
        err.to_string(),
        "jitter must be in [0, 1] (0 turns jitter off), got 1.5"
    );
}

#[test]
fn a_cap_below_the_base_names_cap() {
    let err = config_error("policy = \"exponential-full-jitter\"\nbase = \"1s\"\ncap = \"1ms\"");
    assert_eq!(err.param(), Some("cap"));
    assert_eq!(err.to_string(), "cap (1 ms) must be at least base (1 s)");
}

#[test]
fn zero_attempts_names_max_attempts() {
    let err = config_error("policy = \"constant\"\nmax_attempts = 0");
    assert_eq!(err.param(), Some("max_attempts"));
    assert!(
        err.to_string()
            .starts_with("max_attempts must be at least 1")
    );
}

#[test]
fn a_parameter_the_policy_lacks_names_it() {
    let err = config_error("policy = \"constant\"\nfactor = 3");
    assert_eq!(
        err.to_string(),
        "factor does not apply to the constant policy"
    );
    let err = config_error("policy = \"exponential-full-jitter\"\njitter = 0.5");
    assert_eq!(err.param(), Some("jitter"));
}

#[test]
fn an_unknown_field_is_named_with_the_expected_ones() {
    let err = toml::from_str::<PolicySpec>("policy = \"constant\"\nbse = \"1s\"").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("unknown field `bse`"), "{text}");
    assert!(text.contains("`base`"), "{text}");

    let err =
        serde_json::from_str::<PolicySpec>(r#"{"policy":"constant","bse":"1s"}"#).unwrap_err();
    assert!(err.to_string().contains("unknown field `bse`"), "{err}");

    let err = serde_yaml::from_str::<PolicySpec>("policy: constant\nbse: 1s\n").unwrap_err();
    assert!(err.to_string().contains("unknown field `bse`"), "{err}");
}

#[test]
fn an_unknown_policy_lists_the_catalog() {
    let err = toml::from_str::<PolicySpec>("policy = \"fibonacci\"").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("unknown policy `fibonacci`"), "{text}");
    for name in PolicyKind::names() {
        assert!(text.contains(name), "{name} in {text}");
    }
}

#[test]
fn an_unknown_preset_lists_the_presets() {
    let err = serde_json::from_str::<PolicySpec>(r#"{"preset":"hystrix"}"#).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("unknown preset `hystrix`"), "{text}");
    for name in Preset::names() {
        assert!(text.contains(name), "{name} in {text}");
    }
}

#[test]
fn exactly_one_of_policy_or_preset() {
    let none = toml::from_str::<PolicySpec>("base = \"1s\"").unwrap_err();
    assert!(
        none.to_string().contains("missing `policy` or `preset`"),
        "{none}"
    );
    let both =
        toml::from_str::<PolicySpec>("policy = \"constant\"\npreset = \"delivery\"").unwrap_err();
    assert!(
        both.to_string().contains("either `policy` or `preset`"),
        "{both}"
    );
}

#[test]
fn a_malformed_duration_names_its_field() {
    for (text, field) in [
        (r#"{"policy":"constant","base":"fast"}"#, "base"),
        (r#"{"policy":"linear","cap":"-1s"}"#, "cap"),
        (r#"{"policy":"linear","cap":-5}"#, "cap"),
        (r#"{"policy":"linear","base":"100"}"#, "base"),
        (r#"{"policy":"linear","base":true}"#, "base"),
    ] {
        let err = serde_json::from_str::<PolicySpec>(text).unwrap_err();
        assert!(
            err.to_string().contains(&format!("{field}: ")),
            "{text}: {err}"
        );
    }
}

#[test]
fn a_wrong_type_is_refused_by_serde() {
    let err =
        toml::from_str::<PolicySpec>("policy = \"exponential\"\nfactor = \"two\"").unwrap_err();
    assert!(err.to_string().contains("factor"), "{err}");
    let err = toml::from_str::<PolicySpec>("policy = \"constant\"\nmax_attempts = -3").unwrap_err();
    assert!(err.to_string().contains("max_attempts"), "{err}");
}

#[test]
fn an_any_config_reads_itself_checked() {
    let config: AnyConfig = toml::from_str("preset = \"envoy\"").unwrap();
    assert_eq!(config, Preset::ENVOY.config());
    let err = toml::from_str::<AnyConfig>("policy = \"exponential\"\nfactor = 0").unwrap_err();
    assert!(
        err.to_string().contains("factor must be greater than 0"),
        "{err}"
    );
}

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

// ---------------------------------------------------------------------------------------------
// RetrySpec
// ---------------------------------------------------------------------------------------------

const RETRY_TOML: &str = r#"
policy = "exponential-full-jitter"
base = "200ms"
cap = "5s"
max_attempts = 6
timeout = "30s"
idempotent = false
max_server_wait = "1m"
nested = "retry"

[budget]
budget = "aws-standard"
capacity = 50
"#;

#[test]
fn a_retry_spec_gives_the_config_the_options_and_the_budget() {
    let spec: RetrySpec = toml::from_str(RETRY_TOML).unwrap();
    let config = spec.to_config().unwrap();
    assert_eq!(config.kind(), PolicyKind::ExponentialFullJitter);
    assert_eq!(config.max_attempts(), 6);
    assert_eq!(config.bounds(1).max, MS(200));
    assert_eq!(config.bounds(9).max, Duration::from_secs(5));
    assert_eq!(
        spec.to_settings().unwrap(),
        Settings::new()
            .with_timeout(Duration::from_secs(30))
            .with_idempotent(false)
            .with_max_server_wait(Duration::from_secs(60))
            .with_nested(Nested::Retry)
    );
    assert_eq!(
        spec.budget,
        Some(BudgetSpec::AwsStandard(TokenBucketSpec {
            capacity: Some(50.0),
            ..TokenBucketSpec::default()
        }))
    );
    let Some(AnyBudget::TokenBucket(bucket)) = spec.to_budget(SeededRng::new(0)).unwrap() else {
        panic!("a token bucket");
    };
    assert_eq!(
        bucket.config(),
        TokenBucket::AWS_STANDARD.with_capacity(50.0)
    );
}

#[test]
fn a_retry_spec_reads_the_same_from_json_and_yaml_and_round_trips() {
    let toml: RetrySpec = toml::from_str(RETRY_TOML).unwrap();
    let json: RetrySpec = serde_json::from_str(
        r#"{
            "policy": "exponential-full-jitter", "base": 200, "cap": "5s", "max_attempts": 6,
            "timeout": "30s", "idempotent": false, "max_server_wait": 60000, "nested": "retry",
            "budget": { "budget": "aws-standard", "capacity": 50 }
        }"#,
    )
    .unwrap();
    let yaml: RetrySpec = serde_yaml::from_str(
        "policy: exponential-full-jitter\nbase: 200ms\ncap: 5s\nmax_attempts: 6\ntimeout: 30s\nidempotent: false\nmax_server_wait: 1m\nnested: retry\nbudget:\n  budget: aws-standard\n  capacity: 50\n",
    )
    .unwrap();
    assert_eq!(toml, json);
    assert_eq!(toml, yaml);

    let text = toml::to_string(&toml).unwrap();
    assert_eq!(toml::from_str::<RetrySpec>(&text).unwrap(), toml, "{text}");
    let text = serde_json::to_string(&toml).unwrap();
    assert_eq!(
        serde_json::from_str::<RetrySpec>(&text).unwrap(),
        toml,
        "{text}"
    );
    let text = serde_yaml::to_string(&toml).unwrap();
    assert_eq!(
        serde_yaml::from_str::<RetrySpec>(&text).unwrap(),
        toml,
        "{text}"
    );
}

#[test]
fn a_minimal_retry_spec_keeps_the_defaults() {
    let spec: RetrySpec = toml::from_str("policy = \"constant\"").unwrap();
    assert_eq!(
        spec,
        RetrySpec::new(PolicySpec::policy(PolicyKind::Constant))
    );
    assert_eq!(spec.to_settings().unwrap(), Settings::new());
    assert_eq!(spec.to_settings().unwrap().nested(), Nested::SingleAttempt);
    assert!(spec.to_budget(SeededRng::new(0)).unwrap().is_none());
}

#[test]
fn a_presets_deadline_is_the_timeout_unless_one_is_given() {
    let spec: RetrySpec = toml::from_str("preset = \"cenkalti\"").unwrap();
    assert_eq!(spec.effective_timeout(), Some(Duration::from_secs(900)));
    assert_eq!(
        spec.to_settings().unwrap(),
        Settings::new().with_timeout(Duration::from_secs(900))
    );
    let spec: RetrySpec = toml::from_str("preset = \"cenkalti\"\ntimeout = \"1m\"").unwrap();
    assert_eq!(
        spec.to_settings().unwrap(),
        Settings::new().with_timeout(Duration::from_secs(60))
    );
}

#[test]
fn retry_spec_errors_name_the_field() {
    let typo = toml::from_str::<RetrySpec>("policy = \"constant\"\ntimeot = \"1s\"").unwrap_err();
    assert!(
        typo.to_string().contains("unknown field `timeot`"),
        "{typo}"
    );

    let nested =
        toml::from_str::<RetrySpec>("policy = \"constant\"\nnested = \"twice\"").unwrap_err();
    assert!(
        nested.to_string().contains("unknown variant `twice`"),
        "{nested}"
    );

    let timeout =
        serde_json::from_str::<RetrySpec>(r#"{"policy":"constant","timeout":"soon"}"#).unwrap_err();
    assert!(timeout.to_string().starts_with("timeout: "), "{timeout}");

    let spec: RetrySpec =
        toml::from_str("policy = \"linear\"\nbase = \"1s\"\ncap = \"1ms\"").unwrap();
    assert_eq!(spec.to_settings().unwrap_err().param(), Some("cap"));

    let spec: RetrySpec =
        toml::from_str("policy = \"constant\"\n[budget]\nbudget = \"finagle\"\nttl = \"2m\"")
            .unwrap();
    assert_eq!(spec.to_settings().unwrap_err().param(), Some("ttl"));
    assert_eq!(
        spec.to_budget(SeededRng::new(0)).unwrap_err().param(),
        Some("ttl")
    );
}

#[test]
fn nested_is_a_setting_the_engine_applies_when_told_it_is_nested() {
    let policy = Constant::new().with_max_attempts(3);
    for (file, attempts) in [("single-attempt", 1), ("retry", 3)] {
        let spec: RetrySpec =
            toml::from_str(&format!("policy = \"constant\"\nnested = \"{file}\"")).unwrap();
        let settings = spec.to_settings().unwrap();
        let mut run = Run::new(
            policy.build(SeededRng::new(0)).unwrap(),
            settings,
            Timestamp::ZERO,
        );
        run.mark_nested();
        let mut made = 0;
        loop {
            run.begin(Timestamp::ZERO).unwrap();
            made += 1;
            if run.failed(Timestamp::ZERO, Failure::Retryable).is_err() {
                break;
            }
        }
        assert_eq!(made, attempts, "{file}");
    }
}

// ---------------------------------------------------------------------------------------------
// RetrySpec: hedging
// ---------------------------------------------------------------------------------------------

fn hedged(table: &str) -> RetrySpec {
    let text = format!("preset = \"grpc\"\n\n[hedging]\n{table}");
    toml::from_str(&text).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn hedging_read_error(table: &str) -> String {
    let text = format!("preset = \"grpc\"\n\n[hedging]\n{table}");
    match toml::from_str::<RetrySpec>(&text) {
        Ok(spec) => panic!("{text}: read as {spec:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_retry_spec_reads_a_fixed_hedge_delay() {
    let spec = hedged("max_attempts = 3\ndelay = \"10ms\"");
    let expected = Hedging::fixed(MS(10), 3);
    assert_eq!(spec.hedging, Some(expected));
    assert_eq!(spec.to_hedging().unwrap(), Some(expected));
    assert_eq!(
        spec.to_hedging().unwrap().unwrap().delay(),
        HedgeDelay::Fixed(MS(10))
    );
    // The file's usual duration forms: text, or a number of milliseconds.
    assert_eq!(
        hedged("max_attempts = 2\ndelay = \"1s500ms\"").hedging,
        Some(Hedging::fixed(MS(1500), 2))
    );
    assert_eq!(
        hedged("max_attempts = 2\ndelay = 25").hedging,
        Some(Hedging::fixed(MS(25), 2))
    );
    assert_eq!(
        hedged("max_attempts = 4\ndelay = \"0s\"").hedging,
        Some(Hedging::fixed(Duration::ZERO, 4))
    );
    // One attempt is a valid hedging (it sends no hedge); the settings are unchanged by it.
    let single = hedged("max_attempts = 1\ndelay = \"5ms\"");
    assert_eq!(single.to_hedging().unwrap(), Some(Hedging::fixed(MS(5), 1)));
    assert_eq!(
        single.to_settings().unwrap(),
        toml::from_str::<RetrySpec>("preset = \"grpc\"")
            .unwrap()
            .to_settings()
            .unwrap()
    );
    // Without the table, no hedging.
    let plain: RetrySpec = toml::from_str("preset = \"grpc\"").unwrap();
    assert_eq!(plain.hedging, None);
    assert_eq!(plain.to_hedging().unwrap(), None);
}

#[test]
fn a_retry_spec_reads_a_hedge_delay_as_a_latency_percentile() {
    for (delay, per_ten_thousand) in [
        ("p95", 9500),
        ("p99", 9900),
        ("p99.9", 9990),
        ("p99.90", 9990),
        ("p99.99", 9999),
        ("p50.5", 5050),
        ("p0.01", 1),
        ("p95.0", 9500),
    ] {
        let spec = hedged(&format!("max_attempts = 3\ndelay = \"{delay}\""));
        assert_eq!(
            spec.to_hedging().unwrap(),
            Some(Hedging::quantile(per_ten_thousand, 3)),
            "{delay}"
        );
    }
    let json: RetrySpec = serde_json::from_str(
        r#"{"preset": "grpc", "hedging": {"max_attempts": 2, "delay": "p99.9"}}"#,
    )
    .unwrap();
    assert_eq!(json.hedging, Some(Hedging::quantile(9990, 2)));
    let yaml: RetrySpec =
        serde_yaml::from_str("preset: grpc\nhedging:\n  max_attempts: 2\n  delay: p95\n").unwrap();
    assert_eq!(yaml.hedging, Some(Hedging::quantile(9500, 2)));
}

#[test]
fn hedging_round_trips_through_toml_json_and_yaml() {
    for (hedging, written) in [
        (Hedging::fixed(MS(10), 3), "\"10ms\""),
        (Hedging::fixed(MS(1500), 2), "\"1s500ms\""),
        (Hedging::fixed(Duration::ZERO, 5), "\"0s\""),
        (
            Hedging::fixed(Duration::from_nanos(1_000_001), 2),
            "\"1ms1ns\"",
        ),
        (Hedging::quantile(9500, 3), "\"p95\""),
        (Hedging::quantile(9990, 4), "\"p99.9\""),
        (Hedging::quantile(9999, 2), "\"p99.99\""),
        (Hedging::quantile(5005, 2), "\"p50.05\""),
        (Hedging::quantile(1, 2), "\"p0.01\""),
    ] {
        let mut spec: RetrySpec = toml::from_str(RETRY_TOML).unwrap();
        spec.hedging = Some(hedging);
        let text = toml::to_string(&spec).unwrap();
        assert!(
            text.contains(&format!(
                "[hedging]\nmax_attempts = {}\ndelay = {written}\n",
                hedging.max_attempts()
            )),
            "{text}"
        );
        assert_eq!(toml::from_str::<RetrySpec>(&text).unwrap(), spec, "{text}");
        let text = serde_json::to_string(&spec).unwrap();
        assert!(text.contains(&format!("\"delay\":{written}")), "{text}");
        assert_eq!(
            serde_json::from_str::<RetrySpec>(&text).unwrap(),
            spec,
            "{text}"
        );
        let text = serde_yaml::to_string(&spec).unwrap();
        assert_eq!(
            serde_yaml::from_str::<RetrySpec>(&text).unwrap(),
            spec,
            "{text}"
        );
    }
}

#[test]
fn an_unknown_or_missing_hedging_key_is_refused() {
    let unknown = hedging_read_error("max_attempts = 3\ndelay = \"10ms\"\ndealy = \"5ms\"");
    assert!(
        unknown.contains("unknown field `dealy`, expected `max_attempts` or `delay`"),
        "{unknown}"
    );
    let quantile = hedging_read_error("max_attempts = 3\ndelay = \"10ms\"\nquantile = 0.95");
    assert!(quantile.contains("unknown field `quantile`"), "{quantile}");
    let no_delay = hedging_read_error("max_attempts = 3");
    assert!(
        no_delay.contains(
            "hedging.delay is required: a duration such as \"10ms\", or a latency percentile \
             such as \"p95\""
        ),
        "{no_delay}"
    );
    let no_attempts = hedging_read_error("delay = \"p95\"");
    assert!(
        no_attempts.contains(
            "hedging.max_attempts is required: the attempts in all, the first included, from 1 \
             to 10"
        ),
        "{no_attempts}"
    );
    let json =
        serde_json::from_str::<RetrySpec>(r#"{"preset": "grpc", "hedging": {}}"#).unwrap_err();
    assert!(
        json.to_string()
            .starts_with("hedging.max_attempts is required"),
        "{json}"
    );
    let json = serde_json::from_str::<RetrySpec>(
        r#"{"preset": "grpc", "hedging": {"max_attempts": 2, "delay": "1ms", "jitter": 0.1}}"#,
    )
    .unwrap_err();
    assert!(
        json.to_string().contains("unknown field `jitter`"),
        "{json}"
    );
}

#[test]
fn hedging_max_attempts_out_of_range_is_refused_by_name() {
    for (attempts, value) in [(0, "0"), (11, "11"), (1000, "1000")] {
        let spec = hedged(&format!("max_attempts = {attempts}\ndelay = \"10ms\""));
        let error = spec.to_hedging().unwrap_err();
        assert_eq!(error.param(), Some("hedging.max_attempts"), "{attempts}");
        assert_eq!(
            error.to_string(),
            format!("hedging.max_attempts must be from 1 to 10, got {value}")
        );
        // The file is refused as a whole.
        assert_eq!(spec.validate().unwrap_err(), error);
        assert_eq!(spec.to_settings().unwrap_err(), error);
    }
    assert!(
        hedged("max_attempts = 10\ndelay = \"10ms\"")
            .to_hedging()
            .is_ok()
    );
    let negative = hedging_read_error("max_attempts = -1\ndelay = \"10ms\"");
    assert!(negative.contains("max_attempts"), "{negative}");
}

#[test]
fn a_bad_hedge_delay_is_refused_with_its_name() {
    // Percentiles that are not above 0 and below 100: read, then refused by name.
    for (delay, value) in [
        ("p100", "100"),
        ("p0", "0"),
        ("p0.00", "0"),
        ("p250", "250"),
    ] {
        let spec = hedged(&format!("max_attempts = 3\ndelay = \"{delay}\""));
        let error = spec.to_hedging().unwrap_err();
        assert_eq!(error.param(), Some("hedging.delay"), "{delay}");
        assert_eq!(
            error.to_string(),
            format!("hedging.delay must be a percentile above 0 and below 100, got {value}"),
            "{delay}"
        );
    }
    // Text that is no percentile, or no duration: refused as the file is read.
    for delay in [
        "pfoo", "p", "p95.", "p.5", "p99.999", "p-5", "p 95", "p1000",
    ] {
        let error = hedging_read_error(&format!("max_attempts = 3\ndelay = \"{delay}\""));
        assert!(
            error.contains(&format!(
                "hedging.delay: a latency percentile is `p` and a number from 0 to 100 with up \
                 to two decimals, such as \"p95\" or \"p99.9\" (got \"{delay}\")"
            )),
            "{delay}: {error}"
        );
    }
    let negative = hedging_read_error("max_attempts = 3\ndelay = \"-1ms\"");
    assert!(
        negative.contains("hedging.delay: ") && negative.contains("negative"),
        "{negative}"
    );
    let negative_ms = hedging_read_error("max_attempts = 3\ndelay = -1");
    assert!(
        negative_ms.contains("hedging.delay: durations cannot be negative, got -1"),
        "{negative_ms}"
    );
    let soon = hedging_read_error("max_attempts = 3\ndelay = \"soon\"");
    assert!(soon.contains("hedging.delay: "), "{soon}");
    let wrong_type = hedging_read_error("max_attempts = 3\ndelay = true");
    assert!(
        wrong_type.contains("a latency percentile such as \"p95\""),
        "{wrong_type}"
    );
}

// ---------------------------------------------------------------------------------------------
// gRPC service config (gRFC A6)
// ---------------------------------------------------------------------------------------------

/// The service config of A6's "Integration with Service Config", filled with its examples.
const A6_EXAMPLE: &str = r#"{
  "loadBalancingPolicy": "round_robin",
  "methodConfig": [
    {
      "name": [
        { "service": "helloworld.Greeter", "method": "SayHello" },
        { "service": "helloworld.Greeter", "method": "SayGoodbye" }
      ],
      "retryPolicy": {
        "maxAttempts": 4,
        "initialBackoff": "0.1s",
        "maxBackoff": "1s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": ["UNAVAILABLE"]
      },
      "waitForReady": true,
      "timeout": "10s"
    },
    {
      "name": [{ "service": "helloworld.Hedged" }],
      "hedgingPolicy": {
        "maxAttempts": 4,
        "hedgingDelay": "0.5s",
        "nonFatalStatusCodes": ["UNAVAILABLE", "INTERNAL", "ABORTED"]
      }
    }
  ],
  "retryThrottling": {
    "maxTokens": 10,
    "tokenRatio": 0.1
  }
}"#;

fn service(json: &str) -> ServiceConfig {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

#[test]
fn the_a6_example_imports_as_proportional_jitter() {
    let config = service(A6_EXAMPLE);
    let policies = config.retry_policies().unwrap();
    assert_eq!(
        policies.len(),
        1,
        "the hedged method config has no retry policy"
    );
    // The hedged one is imported as a hedging policy: 4 attempts, 500 ms apart.
    assert_eq!(
        config.hedging_policies().unwrap(),
        [(
            vec![MethodName {
                service: "helloworld.Hedged".into(),
                method: String::new()
            }],
            Hedging::fixed(MS(500), 4),
            [
                StatusCode::Unavailable,
                StatusCode::Internal,
                StatusCode::Aborted
            ]
            .into_iter()
            .collect::<RetryableCodes>()
        )]
    );
    let (names, policy, codes) = &policies[0];
    assert_eq!(
        names,
        &[
            MethodName {
                service: "helloworld.Greeter".into(),
                method: "SayHello".into()
            },
            MethodName {
                service: "helloworld.Greeter".into(),
                method: "SayGoodbye".into()
            },
        ]
    );
    let expected = AnyConfig::ExponentialProportionalJitter(
        ExponentialProportionalJitter::new()
            .with_base(MS(100))
            .with_cap(Duration::from_secs(1))
            .with_factor(2.0)
            .with_jitter(0.2)
            .with_max_attempts(4),
    );
    assert_eq!(*policy, expected);
    assert_eq!(*policy, Preset::GRPC.config());
    assert_eq!(codes.iter().collect::<Vec<_>>(), [StatusCode::Unavailable]);

    let throttling = config.throttling().unwrap().unwrap();
    assert_eq!(throttling, GrpcThrottle::DEFAULT);
    assert_eq!(throttling.max_tokens(), 10.0);
    assert_eq!(throttling.token_ratio(), 0.1);
    config.validate().unwrap();
}

fn retry_policy(fields: &str) -> String {
    format!(r#"{{ "methodConfig": [{{ "name": [{{}}], "retryPolicy": {{ {fields} }} }}] }}"#)
}

const VALID: [(&str, &str); 5] = [
    ("maxAttempts", "4"),
    ("initialBackoff", "\"0.1s\""),
    ("maxBackoff", "\"1s\""),
    ("backoffMultiplier", "2"),
    ("retryableStatusCodes", "[\"UNAVAILABLE\"]"),
];

/// The valid policy with `field` set to `value`, or removed if `value` is `None`.
fn with_field(field: &str, value: Option<&str>) -> ServiceConfig {
    let fields: Vec<String> = VALID
        .iter()
        .filter_map(|(k, v)| {
            if *k == field {
                value.map(|value| format!("\"{k}\": {value}"))
            } else {
                Some(format!("\"{k}\": {v}"))
            }
        })
        .collect();
    service(&retry_policy(&fields.join(", ")))
}

fn import(config: &ServiceConfig) -> (AnyConfig, RetryableCodes) {
    let mut policies = config.retry_policies().unwrap();
    assert_eq!(policies.len(), 1);
    let (_, policy, codes) = policies.remove(0);
    (policy, codes)
}

#[test]
fn max_attempts_above_five_becomes_five() {
    let (policy, _) = import(&with_field("maxAttempts", Some("7")));
    assert_eq!(policy.max_attempts(), 5);
    let (policy, _) = import(&with_field("maxAttempts", Some("5")));
    assert_eq!(policy.max_attempts(), 5);
    let (policy, _) = import(&with_field("maxAttempts", Some("2")));
    assert_eq!(policy.max_attempts(), 2);
    let (policy, _) = import(&with_field("maxAttempts", Some("18446744073709551615")));
    assert_eq!(policy.max_attempts(), 5);

    let limited = with_field("maxAttempts", Some("7"))
        .retry_policies_with_limit(10)
        .unwrap();
    assert_eq!(limited[0].1.max_attempts(), 7);
}

#[test]
fn every_retry_policy_rule_broken_names_the_field() {
    let cases: &[(&str, Option<&str>, &str)] = &[
        // 1. maxAttempts: required, a JSON integer greater than 1.
        ("maxAttempts", None, "is required"),
        ("maxAttempts", Some("1"), "greater than 1, got 1"),
        ("maxAttempts", Some("0"), "greater than 1, got 0"),
        ("maxAttempts", Some("-3"), "greater than 1, got -3"),
        ("maxAttempts", Some("4.5"), "got 4.5"),
        ("maxAttempts", Some("4.0"), "got 4.0"),
        ("maxAttempts", Some("\"4\""), "got the string \"4\""),
        // 2. initialBackoff and maxBackoff: required proto3 durations greater than 0.
        ("initialBackoff", None, "is required"),
        ("initialBackoff", Some("\"0s\""), "must be greater than 0"),
        ("initialBackoff", Some("\"-1s\""), "must be greater than 0"),
        ("initialBackoff", Some("\"100ms\""), "proto3 JSON duration"),
        ("initialBackoff", Some("\"0.1\""), "proto3 JSON duration"),
        ("initialBackoff", Some("\"0.0000000001s\""), "nine decimals"),
        ("initialBackoff", Some("0.1"), "proto3 JSON duration"),
        ("maxBackoff", None, "is required"),
        ("maxBackoff", Some("\"0.000s\""), "must be greater than 0"),
        ("maxBackoff", Some("\"1 s\""), "proto3 JSON duration"),
        ("maxBackoff", Some("1"), "proto3 JSON duration"),
        // 3. backoffMultiplier: required, a JSON number greater than 0.
        ("backoffMultiplier", None, "is required"),
        ("backoffMultiplier", Some("0"), "greater than 0"),
        ("backoffMultiplier", Some("-2"), "greater than 0"),
        ("backoffMultiplier", Some("\"2\""), "greater than 0"),
        // 4. retryableStatusCodes: required, non-empty, valid codes.
        ("retryableStatusCodes", None, "is required"),
        ("retryableStatusCodes", Some("[]"), "non-empty"),
        (
            "retryableStatusCodes",
            Some("\"UNAVAILABLE\""),
            "non-empty array",
        ),
    ];
    for (field, value, message) in cases {
        let err = with_field(field, *value).retry_policies().unwrap_err();
        assert_eq!(
            err.path(),
            format!("methodConfig[0].retryPolicy.{field}"),
            "{field} = {value:?}: {err}"
        );
        assert!(
            err.message().contains(message),
            "{field} = {value:?}: {err}"
        );
        assert!(
            err.to_string()
                .starts_with(&format!("methodConfig[0].retryPolicy.{field}: "))
        );
    }
}

#[test]
fn a_bad_status_code_is_named_by_its_index() {
    for (codes, index) in [
        (r#"["UNAVAILABLE", "SOMETIMES"]"#, 1),
        ("[14, 17]", 1),
        ("[-1]", 0),
        ("[14, 4.0]", 1),
        ("[\"14\"]", 0),
    ] {
        let err = with_field("retryableStatusCodes", Some(codes))
            .retry_policies()
            .unwrap_err();
        assert_eq!(
            err.path(),
            format!("methodConfig[0].retryPolicy.retryableStatusCodes[{index}]"),
            "{codes}: {err}"
        );
    }
}

#[test]
fn status_codes_are_integers_or_names_in_any_case() {
    let (_, codes) = import(&with_field(
        "retryableStatusCodes",
        Some(r#"[14, "unavailable", "Deadline_Exceeded", 10, "RESOURCE_EXHAUSTED"]"#),
    ));
    assert_eq!(
        codes.iter().collect::<Vec<_>>(),
        [
            StatusCode::DeadlineExceeded,
            StatusCode::ResourceExhausted,
            StatusCode::Aborted,
            StatusCode::Unavailable
        ]
    );
    assert!(codes.contains_code(4));
    assert!(!codes.contains_code(13));
}

#[test]
fn backoffs_are_proto3_durations() {
    let (policy, _) = import(&with_field("initialBackoff", Some("\".25s\"")));
    assert_eq!(policy.bounds(1).min, MS(200)); // 250 ms * 0.8
    let (policy, _) = import(&with_field("maxBackoff", Some("\"2.000000001s\"")));
    assert_eq!(
        PolicySpec::from_config(&policy).cap,
        Some(Duration::new(2, 1))
    );
    let (policy, _) = import(&with_field("backoffMultiplier", Some("1.5")));
    assert_eq!(PolicySpec::from_config(&policy).factor, Some(1.5));
}

#[test]
fn a_max_backoff_below_the_initial_one_caps_every_delay() {
    let config = service(&retry_policy(
        r#""maxAttempts": 3, "initialBackoff": "2s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": [14]"#,
    ));
    let (policy, _) = import(&config);
    for retry in 1..=2 {
        assert_eq!(policy.bounds(retry).max, MS(1200)); // 1 s * 1.2
    }
    let shrinking = service(&retry_policy(
        r#""maxAttempts": 3, "initialBackoff": "2s", "maxBackoff": "1s", "backoffMultiplier": 0.5, "retryableStatusCodes": [14]"#,
    ));
    let err = shrinking.retry_policies().unwrap_err();
    assert_eq!(err.path(), "methodConfig[0].retryPolicy.maxBackoff");
}

#[test]
fn the_structure_around_the_policy_is_checked_with_paths() {
    let cases = [
        (r#"{ "methodConfig": {} }"#, "methodConfig"),
        (r#"{ "methodConfig": [7] }"#, "methodConfig[0]"),
        (
            r#"{ "methodConfig": [{ "name": {} }] }"#,
            "methodConfig[0].name",
        ),
        (
            r#"{ "methodConfig": [{ "name": [{ "service": 3 }] }] }"#,
            "methodConfig[0].name[0].service",
        ),
        (
            r#"{ "methodConfig": [{ "name": [{ "method": "Get" }] }] }"#,
            "methodConfig[0].name[0].method",
        ),
        (
            r#"{ "methodConfig": [{ "retryPolicy": [] }] }"#,
            "methodConfig[0].retryPolicy",
        ),
        (
            r#"{ "methodConfig": [{}, { "retryPolicy": {}, "hedgingPolicy": {} }] }"#,
            "methodConfig[1]",
        ),
    ];
    for (json, path) in cases {
        let err = service(json).retry_policies().unwrap_err();
        assert_eq!(err.path(), path, "{json}: {err}");
        assert_eq!(service(json).hedging_policies().unwrap_err(), err, "{json}");
    }
    let err = serde_json::from_str::<ServiceConfig>("[1, 2]").unwrap_err();
    assert!(
        err.to_string()
            .contains("a service config is a JSON object"),
        "{err}"
    );
}

#[test]
fn a_config_without_retries_imports_nothing() {
    let config = service(r#"{ "loadBalancingConfig": [{ "round_robin": {} }] }"#);
    assert!(config.retry_policies().unwrap().is_empty());
    assert!(config.hedging_policies().unwrap().is_empty());
    assert_eq!(config.throttling().unwrap(), None);
    let default = service(r#"{ "methodConfig": [{ "name": [{}], "waitForReady": true }] }"#);
    assert!(default.retry_policies().unwrap().is_empty());
    assert!(default.hedging_policies().unwrap().is_empty());
}

#[test]
fn unknown_retry_policy_fields_are_ignored_as_grpc_does() {
    let config = service(&retry_policy(
        r#""maxAttempts": 3, "initialBackoff": "1s", "maxBackoff": "2s", "backoffMultiplier": 2, "retryableStatusCodes": [14], "perAttemptRecvTimeout": "5s""#,
    ));
    assert_eq!(import(&config).0.max_attempts(), 3);
}

fn throttling(json: &str) -> ServiceConfig {
    service(&format!(r#"{{ "retryThrottling": {json} }}"#))
}

#[test]
fn token_ratio_decimals_beyond_the_third_are_ignored() {
    let config = throttling(r#"{ "maxTokens": 10, "tokenRatio": 0.1234 }"#)
        .throttling()
        .unwrap()
        .unwrap();
    assert_eq!(config.max_tokens(), 10.0);
    assert_eq!(config.token_ratio(), 0.123);
    let config = throttling(r#"{ "maxTokens": 1000, "tokenRatio": 0.5466 }"#)
        .throttling()
        .unwrap()
        .unwrap();
    assert_eq!((config.max_tokens(), config.token_ratio()), (1000.0, 0.546));
    let config = throttling(r#"{ "maxTokens": 1, "tokenRatio": 2 }"#)
        .throttling()
        .unwrap()
        .unwrap();
    assert_eq!((config.max_tokens(), config.token_ratio()), (1.0, 2.0));
}

#[test]
fn every_throttling_rule_broken_names_the_field() {
    let cases = [
        (
            r#"{ "tokenRatio": 0.1 }"#,
            "retryThrottling.maxTokens",
            "is required",
        ),
        (
            r#"{ "maxTokens": 0, "tokenRatio": 0.1 }"#,
            "retryThrottling.maxTokens",
            "(0, 1000]",
        ),
        (
            r#"{ "maxTokens": 1001, "tokenRatio": 0.1 }"#,
            "retryThrottling.maxTokens",
            "(0, 1000]",
        ),
        (
            r#"{ "maxTokens": -5, "tokenRatio": 0.1 }"#,
            "retryThrottling.maxTokens",
            "(0, 1000]",
        ),
        (
            r#"{ "maxTokens": 10.5, "tokenRatio": 0.1 }"#,
            "retryThrottling.maxTokens",
            "integer",
        ),
        (
            r#"{ "maxTokens": "10", "tokenRatio": 0.1 }"#,
            "retryThrottling.maxTokens",
            "integer",
        ),
        (
            r#"{ "maxTokens": 10 }"#,
            "retryThrottling.tokenRatio",
            "is required",
        ),
        (
            r#"{ "maxTokens": 10, "tokenRatio": 0 }"#,
            "retryThrottling.tokenRatio",
            "greater than 0",
        ),
        (
            r#"{ "maxTokens": 10, "tokenRatio": -0.5 }"#,
            "retryThrottling.tokenRatio",
            "greater than 0",
        ),
        (
            r#"{ "maxTokens": 10, "tokenRatio": 0.0009 }"#,
            "retryThrottling.tokenRatio",
            "third",
        ),
        (
            r#"{ "maxTokens": 10, "tokenRatio": "0.1" }"#,
            "retryThrottling.tokenRatio",
            "number",
        ),
        (r#"[10, 0.1]"#, "retryThrottling", "object"),
    ];
    for (json, path, message) in cases {
        let err = throttling(json).throttling().unwrap_err();
        assert_eq!(err.path(), path, "{json}: {err}");
        assert!(err.message().contains(message), "{json}: {err}");
    }
}

#[test]
fn a_service_config_reads_from_yaml_too() {
    let config: ServiceConfig = serde_yaml::from_str(
        "methodConfig:\n  - name: [{service: a.B}]\n    retryPolicy:\n      maxAttempts: 4\n      initialBackoff: 0.1s\n      maxBackoff: 1s\n      backoffMultiplier: 2\n      retryableStatusCodes: [UNAVAILABLE]\nretryThrottling: {maxTokens: 10, tokenRatio: 0.1234}\n",
    )
    .unwrap();
    assert_eq!(import(&config).0, Preset::GRPC.config());
    assert_eq!(config.throttling().unwrap().unwrap().token_ratio(), 0.123);
}

#[test]
fn a_retry_spec_keeps_a_budget_per_destination_and_a_gate_when_asked() {
    use stagger_core::budget::{Budget, PerDestination};
    use stagger_core::config::SpecBudget;
    let spec: RetrySpec = toml::from_str(
        "policy = \"constant\"\nbudget_per_destination = 8\ngate = 16\n[budget]\nbudget = \"aws-standard\"\ncapacity = 10",
    )
    .unwrap();
    assert_eq!(
        (spec.budget_per_destination, spec.gate),
        (Some(8), Some(16))
    );
    // Round trip, as every other field.
    let text = toml::to_string(&spec).unwrap();
    assert_eq!(toml::from_str::<RetrySpec>(&text).unwrap(), spec, "{text}");
    let budgets = spec.to_budgets(SeededRng::new(0)).unwrap();
    let down = budgets.for_destination(|| "down:443".into());
    let up = budgets.for_destination(|| "up:443".into());
    assert!(matches!(down, SpecBudget::Gated(_)) && down.paces());
    // Two retries (10 tokens, 5 each) on one host leave the other's untouched.
    let now = Timestamp::ZERO;
    let granted = (0..5)
        .filter(|_| down.try_retry(now, &Failure::Retryable).is_some())
        .count();
    assert_eq!(granted, 2);
    assert!(up.try_retry(now, &Failure::Retryable).is_some());
    // Without either key: one budget for all, no gate.
    let shared: RetrySpec = toml::from_str(RETRY_TOML).unwrap();
    let budgets = shared.to_budgets(SeededRng::new(0)).unwrap();
    let one = budgets.for_destination(|| unreachable!("a shared budget needs no key"));
    assert!(matches!(one, SpecBudget::Plain(Some(_))) && !one.paces());
}

#[test]
fn a_budget_per_destination_or_a_gate_out_of_place_is_refused_by_name() {
    let bad = |text: &str| {
        let spec: RetrySpec = toml::from_str(text).unwrap();
        spec.to_settings().err().map(|e| (e.param(), e.to_string()))
    };
    let (param, message) = bad("policy = \"constant\"\ngate = 0").unwrap();
    assert_eq!(param, Some("gate"));
    assert!(message.contains("between 1 and 65536"), "{message}");
    let (param, _) =
        bad("policy = \"constant\"\nbudget = \"finagle\"\nbudget_per_destination = 70000").unwrap();
    assert_eq!(param, Some("budget_per_destination"));
    let (param, message) = bad("policy = \"constant\"\nbudget_per_destination = 8").unwrap();
    assert_eq!(param, Some("budget_per_destination"));
    assert!(message.contains("needs a `budget`"), "{message}");
    let negative = toml::from_str::<RetrySpec>("policy = \"constant\"\ngate = -1").unwrap_err();
    assert!(negative.to_string().contains("gate"), "{negative}");
    // An executor's one budget cannot be kept per destination: said, not ignored.
    let spec: RetrySpec =
        toml::from_str("policy = \"constant\"\nbudget = \"finagle\"\nbudget_per_destination = 8")
            .unwrap();
    let error = spec.to_budget(SeededRng::new(0)).unwrap_err();
    assert_eq!(error.param(), Some("budget_per_destination"));
    let spec: RetrySpec = toml::from_str("policy = \"constant\"\ngate = 8").unwrap();
    assert_eq!(
        spec.to_budget(SeededRng::new(0)).unwrap_err().param(),
        Some("gate")
    );
}

#[test]
fn a_retry_spec_reads_an_attempt_timeout_and_refuses_zero() {
    let spec: RetrySpec =
        toml::from_str("policy = \"constant\"\ntimeout = \"5s\"\nattempt_timeout = \"250ms\"")
            .unwrap();
    assert_eq!(spec.attempt_timeout, Some(MS(250)));
    assert_eq!(
        spec.to_settings().unwrap(),
        Settings::new()
            .with_timeout(Duration::from_secs(5))
            .with_attempt_timeout(MS(250))
    );
    let text = toml::to_string(&spec).unwrap();
    assert_eq!(toml::from_str::<RetrySpec>(&text).unwrap(), spec, "{text}");
    let zero: RetrySpec =
        toml::from_str("policy = \"constant\"\nattempt_timeout = \"0s\"").unwrap();
    assert_eq!(
        zero.to_settings().unwrap_err().param(),
        Some("attempt_timeout")
    );
    let bad =
        serde_json::from_str::<RetrySpec>(r#"{"policy":"constant","attempt_timeout":"soon"}"#)
            .unwrap_err();
    assert!(bad.to_string().starts_with("attempt_timeout: "), "{bad}");
}
