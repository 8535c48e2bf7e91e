//! gRFC A6 service configs: the retry policy and retry throttling imported with A6's rules, and
//! every broken rule named by its path.
#![cfg(feature = "serde")]

use std::time::Duration;

use stagger_core::budget::GrpcThrottle;
use stagger_core::config::PolicySpec;
use stagger_core::config::grpc::{
    MethodHedgingPolicy, MethodName, MethodRetryPolicy, RetryableCodes, ServiceConfig, StatusCode,
};
use stagger_core::engine::Hedging;
use stagger_core::policy::ExponentialProportionalJitter;
use stagger_core::{AnyConfig, PolicyConfig, Preset};

const MS: fn(u64) -> Duration = Duration::from_millis;

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
        [MethodHedgingPolicy {
            methods: vec![MethodName {
                service: "helloworld.Hedged".into(),
                method: String::new()
            }],
            hedging: Hedging::fixed(MS(500), 4),
            non_fatal_codes: [
                StatusCode::Unavailable,
                StatusCode::Internal,
                StatusCode::Aborted
            ]
            .into_iter()
            .collect::<RetryableCodes>()
        }]
    );
    let MethodRetryPolicy {
        methods,
        policy,
        retryable_codes,
    } = &policies[0];
    assert_eq!(
        methods,
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
    assert_eq!(
        retryable_codes.iter().collect::<Vec<_>>(),
        [StatusCode::Unavailable]
    );

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
    let MethodRetryPolicy {
        policy,
        retryable_codes,
        ..
    } = policies.remove(0);
    (policy, retryable_codes)
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
    assert_eq!(limited[0].policy.max_attempts(), 7);
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
