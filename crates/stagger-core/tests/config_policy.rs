//! Policies from configuration files (PolicySpec): the same policy from TOML, JSON and YAML,
//! presets with overrides, round trips, and every invalid value refused naming its field.
#![cfg(feature = "serde")]

use std::time::Duration;

use stagger_core::config::{PolicySource, PolicySpec};
use stagger_core::policy::{ExponentialProportionalJitter, ExponentialSubtractiveJitter};
use stagger_core::{AnyConfig, ConfigError, Param, PolicyConfig, PolicyKind, Preset};

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
