//! The executor's settings from configuration files (RetrySpec): the policy, the budget, the
//! deadline, nesting, hedging, a budget per destination and a gate, each refused by name when invalid.
#![cfg(feature = "serde")]

use std::time::Duration;

use stagger_core::budget::{AnyBudget, TokenBucket};
use stagger_core::config::{BudgetSpec, PolicySpec, RetrySpec, TokenBucketSpec};
use stagger_core::engine::{HedgeDelay, Hedging, Nested, Run, Settings};
use stagger_core::policy::Constant;
use stagger_core::{Failure, PolicyConfig, PolicyKind, SeededRng, Timestamp};

const MS: fn(u64) -> Duration = Duration::from_millis;

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
