//! gRPC service configs spelled the other ways gRPC accepts: lowerCamel keys in any case (as
//! grpc-go's `encoding/json` matches them, and as grpc-go's own retry example spells them),
//! the original proto field names, and the duration forms grpc-go reads. Unknown keys and a
//! field given twice are refused, naming the keys as the file spells them. (The hedging
//! policy's own rules are in `grpc_hedging.rs`.)
#![cfg(feature = "serde")]

use std::time::Duration;

use stagger_core::AnyConfig;
use stagger_core::budget::GrpcThrottle;
use stagger_core::config::grpc::{
    GrpcConfigError, MethodHedgingPolicy, MethodName, MethodRetryPolicy, RetryableCodes,
    ServiceConfig, StatusCode,
};
use stagger_core::engine::Hedging;
use stagger_core::policy::ExponentialProportionalJitter;

/// Three method configs (two retried, one hedged), ignored keys beside them, and throttling,
/// in lowerCamel: the reference the other spellings must import the same as.
const LOWER_CAMEL: &str = include_str!("fixtures/grpc/lower_camel.json");
/// The same config spelled as grpc-go's `examples/features/retry` spells its service config:
/// PascalCase keys and durations such as `".01s"`.
const GO_SPELLING: &str = include_str!("fixtures/grpc/go_spelling.json");
/// The same config in the proto field names of `service_config.proto`.
const PROTO_NAMES: &str = include_str!("fixtures/grpc/proto_names.json");

const MS: fn(u64) -> Duration = Duration::from_millis;

fn service(json: &str) -> ServiceConfig {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

fn name(service: &str, method: &str) -> MethodName {
    MethodName {
        service: service.into(),
        method: method.into(),
    }
}

fn a6_policy(base: Duration, cap: Duration, factor: f64, attempts: u32) -> AnyConfig {
    AnyConfig::ExponentialProportionalJitter(
        ExponentialProportionalJitter::new()
            .with_base(base)
            .with_cap(cap)
            .with_factor(factor)
            .with_jitter(0.2)
            .with_max_attempts(attempts),
    )
}

/// The retry policies every fixture imports: the hedged method config is not among them,
/// `maxAttempts` 6 becomes 5, and the ignored keys change nothing.
fn expected_policies() -> Vec<MethodRetryPolicy> {
    vec![
        MethodRetryPolicy {
            methods: vec![name("shop.Cart", "Checkout"), name("shop.Cart", "Refund")],
            policy: a6_policy(MS(50), MS(800), 1.5, 3),
            retryable_codes: [StatusCode::Unavailable, StatusCode::ResourceExhausted]
                .into_iter()
                .collect(),
        },
        MethodRetryPolicy {
            methods: vec![name("shop.Stock", "")],
            policy: a6_policy(MS(10), MS(10), 1.0, 5),
            retryable_codes: [StatusCode::Unavailable].into_iter().collect(),
        },
    ]
}

/// The hedging policy every fixture imports: `shop.Search`, three attempts 20 ms apart.
fn expected_hedging() -> Vec<MethodHedgingPolicy> {
    vec![MethodHedgingPolicy {
        methods: vec![name("shop.Search", "")],
        hedging: Hedging::fixed(MS(20), 3),
        non_fatal_codes: [StatusCode::Unavailable].into_iter().collect(),
    }]
}

fn expected_throttling() -> GrpcThrottle {
    GrpcThrottle::DEFAULT
        .with_max_tokens(20.0)
        .with_token_ratio(0.25)
}

/// Asserts that `json` imports exactly the fixtures' policies and throttling, as the
/// lowerCamel reference does.
fn assert_imports_like_lower_camel(json: &str) {
    let reference = service(LOWER_CAMEL);
    assert_eq!(reference.retry_policies().unwrap(), expected_policies());
    assert_eq!(reference.hedging_policies().unwrap(), expected_hedging());
    assert_eq!(reference.throttling().unwrap(), Some(expected_throttling()));

    let config = service(json);
    assert_eq!(config.retry_policies().unwrap(), expected_policies());
    assert_eq!(config.hedging_policies().unwrap(), expected_hedging());
    assert_eq!(
        config.retry_policies_with_limit(10).unwrap(),
        reference.retry_policies_with_limit(10).unwrap()
    );
    assert_eq!(
        config.hedging_policies_with_limit(10).unwrap(),
        reference.hedging_policies_with_limit(10).unwrap()
    );
    assert_eq!(config.throttling().unwrap(), Some(expected_throttling()));
    config.validate().unwrap();
}

/// The single retry policy of `json`, which must import without error.
fn only_policy(json: &str) -> (AnyConfig, RetryableCodes) {
    let mut policies = service(json)
        .retry_policies()
        .unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(policies.len(), 1, "{json}");
    let MethodRetryPolicy {
        policy,
        retryable_codes,
        ..
    } = policies.remove(0);
    (policy, retryable_codes)
}

/// The error that importing `json`'s retry policies gives.
fn policy_error(json: &str) -> GrpcConfigError {
    match service(json).retry_policies() {
        Ok(policies) => panic!("{json}: imported {policies:?}"),
        Err(e) => e,
    }
}

/// A service config with one method config whose retry policy has `fields`.
fn with_retry_policy(fields: &str) -> String {
    format!(
        r#"{{ "methodConfig": [{{ "name": [{{ "service": "a.B" }}], "retryPolicy": {{ {fields} }} }}] }}"#
    )
}

const VALID_POLICY: &str = r#""maxAttempts": 4, "initialBackoff": "0.1s", "maxBackoff": "1s", "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]"#;

#[test]
fn go_example_spelling_imports_like_lower_camel() {
    assert_imports_like_lower_camel(GO_SPELLING);
}

#[test]
fn proto_field_names_import_like_lower_camel() {
    assert_imports_like_lower_camel(PROTO_NAMES);
}

#[test]
fn method_config_under_its_proto_name_is_not_ignored() {
    let config = service(&format!(
        r#"{{ "method_config": [{{ "name": [{{ "service": "a.B" }}], "retryPolicy": {{ {VALID_POLICY} }} }}] }}"#
    ));
    let policies = config.retry_policies().unwrap();
    assert_eq!(policies.len(), 1, "method_config gave no policy");
    assert_eq!(policies[0].methods, [name("a.B", "")]);
    assert_eq!(
        policies[0].policy,
        a6_policy(MS(100), Duration::from_secs(1), 2.0, 4)
    );
}

#[test]
fn lower_camel_keys_match_in_any_case_as_go_folds_it() {
    let reference = only_policy(&with_retry_policy(VALID_POLICY));
    // ASCII case, every way.
    let shouting = with_retry_policy(
        r#""MAXATTEMPTS": 4, "initialbackoff": "0.1s", "MaxBackoff": "1s", "bACKOFFmULTIPLIER": 2, "RetryableStatusCodes": ["UNAVAILABLE"]"#,
    );
    assert_eq!(only_policy(&shouting), reference);
    // Go's fold also takes the Kelvin sign for `k` and the long s for `s`.
    let unicode = with_retry_policy(
        "\"maxAttempt\u{17F}\": 4, \"initialBackoff\": \"0.1s\", \"maxBackoff\": \"1s\", \"backoffMultiplier\": 2, \"retryableStatusCodes\": [\"UNAVAILABLE\"]",
    );
    assert_eq!(only_policy(&unicode), reference);
    let throttling =
        service("{ \"retryThrottling\": { \"maxTo\u{212A}ens\": 10, \"TOKENRATIO\": 0.1 } }")
            .throttling()
            .unwrap();
    assert_eq!(throttling, Some(GrpcThrottle::DEFAULT));
}

#[test]
fn proto_names_match_only_exactly() {
    for spelled in [
        "MAX_ATTEMPTS",
        "Max_Attempts",
        "max_Attempts",
        "maxattempts_",
    ] {
        let json =
            with_retry_policy(&VALID_POLICY.replace("\"maxAttempts\"", &format!("\"{spelled}\"")));
        let err = policy_error(&json);
        assert_eq!(
            err.path(),
            format!("methodConfig[0].retryPolicy.{spelled}"),
            "{err}"
        );
        assert!(
            err.message()
                .starts_with(&format!("unknown key \"{spelled}\"; ")),
            "{err}"
        );
    }
    let err = policy_error(r#"{ "METHOD_CONFIG": [] }"#);
    assert_eq!(err.path(), "METHOD_CONFIG");
}

#[test]
fn an_unknown_key_is_named_at_every_level() {
    let cases = [
        (
            r#"{ "methodConfg": [] }"#.to_owned(),
            "methodConfg",
            "a service config's keys are methodConfig, retryThrottling, loadBalancingConfig, \
             loadBalancingPolicy, healthCheckConfig and connectionScaling (in any case, or as \
             proto names such as method_config)",
        ),
        (
            r#"{ "methodConfig": [{ "name": [{}], "retryPolicyy": {} }] }"#.to_owned(),
            "methodConfig[0].retryPolicyy",
            "a method config's keys are name, retryPolicy, hedgingPolicy, waitForReady, timeout, \
             maxRequestMessageBytes and maxResponseMessageBytes (in any case, or as proto names \
             such as retry_policy)",
        ),
        (
            r#"{ "methodConfig": [{ "name": [{ "service": "a.B" }, { "servce": "a.C" }] }] }"#
                .to_owned(),
            "methodConfig[0].name[1].servce",
            "a name entry's keys are service and method (in any case)",
        ),
        (
            with_retry_policy(&VALID_POLICY.replace("maxAttempts", "maxAttemps")),
            "methodConfig[0].retryPolicy.maxAttemps",
            "a retryPolicy's keys are maxAttempts, initialBackoff, maxBackoff, backoffMultiplier, \
             retryableStatusCodes and perAttemptRecvTimeout (in any case, or as proto names such \
             as max_attempts)",
        ),
        (
            // Read by the retry import too: a file is accepted or refused as a whole.
            r#"{ "methodConfig": [{ "hedgingPolicy": { "maxAttempts": 2, "hedgeDelay": "1s" } }] }"#
                .to_owned(),
            "methodConfig[0].hedgingPolicy.hedgeDelay",
            "a hedgingPolicy's keys are maxAttempts, hedgingDelay and nonFatalStatusCodes (in any \
             case, or as proto names such as max_attempts)",
        ),
        (
            r#"{ "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1, "tokenRate": 1 } }"#
                .to_owned(),
            "retryThrottling.tokenRate",
            "retryThrottling's keys are maxTokens and tokenRatio (in any case, or as proto names \
             such as max_tokens)",
        ),
    ];
    for (json, path, keys) in cases {
        let config = service(&json);
        let err = config
            .retry_policies()
            .err()
            .or_else(|| config.throttling().err())
            .unwrap_or_else(|| panic!("{json} imported"));
        let key = path.rsplit('.').next().unwrap();
        assert_eq!(err.path(), path, "{json}: {err}");
        assert_eq!(
            err.to_string(),
            format!("{path}: unknown key \"{key}\"; {keys}"),
            "{json}"
        );
        assert!(config.validate().is_err(), "{json}");
    }
}

#[test]
fn a_misspelt_top_level_key_fails_both_imports() {
    // Before, `retryThrotling` made throttling() answer "no throttling" without a word.
    let config = service(&format!(
        r#"{{ "retryThrotling": {{ "maxTokens": 10, "tokenRatio": 0.1 }}, "methodConfig": [{{ "retryPolicy": {{ {VALID_POLICY} }} }}] }}"#
    ));
    for err in [
        config.throttling().unwrap_err(),
        config.retry_policies().unwrap_err(),
    ] {
        assert_eq!(err.path(), "retryThrotling");
        assert!(
            err.message().starts_with("unknown key \"retryThrotling\""),
            "{err}"
        );
    }
}

#[test]
fn known_keys_the_import_does_not_use_are_accepted_and_ignored() {
    // (object, lowerCamel name, proto name): every field of service_config.proto's
    // ServiceConfig and MethodConfig that the import does not read, and A6's
    // perAttemptRecvTimeout. Their values are not checked.
    let ignored = [
        (
            "service config",
            "loadBalancingConfig",
            "load_balancing_config",
        ),
        (
            "service config",
            "loadBalancingPolicy",
            "load_balancing_policy",
        ),
        ("service config", "healthCheckConfig", "health_check_config"),
        ("service config", "connectionScaling", "connection_scaling"),
        ("method config", "waitForReady", "wait_for_ready"),
        (
            "method config",
            "maxRequestMessageBytes",
            "max_request_message_bytes",
        ),
        (
            "method config",
            "maxResponseMessageBytes",
            "max_response_message_bytes",
        ),
        (
            "retry policy",
            "perAttemptRecvTimeout",
            "per_attempt_recv_timeout",
        ),
    ];
    let value = r#"{ "whatever": ["is", 1, null] }"#;
    let proto_policy = r#""max_attempts": 4, "initial_backoff": "0.1s", "max_backoff": "1s", "backoff_multiplier": 2, "retryable_status_codes": ["UNAVAILABLE"]"#;
    let build = |object: &str, key: &str, proto_style: bool| {
        let (top, method, policy) = if proto_style {
            ("method_config", "retry_policy", proto_policy)
        } else {
            ("methodConfig", "retryPolicy", VALID_POLICY)
        };
        let extra = format!(r#""{key}": {value}, "#);
        let at = |here: &str| if object == here { extra.as_str() } else { "" };
        format!(
            r#"{{ {}"{top}": [{{ {}"name": [{{ "service": "a.B" }}], "{method}": {{ {}{policy} }} }}] }}"#,
            at("service config"),
            at("method config"),
            at("retry policy"),
        )
    };
    let reference = only_policy(&with_retry_policy(VALID_POLICY));
    for (object, json_name, proto_name) in ignored {
        for (key, proto_style) in [
            (json_name.to_owned(), false),
            (json_name.to_ascii_uppercase(), false),
            (proto_name.to_owned(), true),
        ] {
            let config = build(object, &key, proto_style);
            assert_eq!(only_policy(&config), reference, "{config}");
            // A key one letter off is not one of them.
            let typo = build(object, &format!("{key}x"), proto_style);
            let err = policy_error(&typo);
            assert!(err.path().ends_with(&format!("{key}x")), "{typo}: {err}");
            assert!(err.message().starts_with("unknown key"), "{typo}: {err}");
        }
    }
}

#[test]
fn a_method_configs_timeout_is_read_as_the_calls_deadline_and_checked() {
    use std::time::Duration;
    let config = |timeout: &str| {
        serde_json::from_str::<ServiceConfig>(&format!(
            r#"{{ "methodConfig": [
                {{ "name": [{{ "service": "a.B" }}], {timeout} "retryPolicy": {{ {VALID_POLICY} }} }},
                {{ "name": [{{ "service": "c.D" }}] }}
            ] }}"#
        ))
        .unwrap()
    };
    for key in ["timeout", "TIMEOUT", "Timeout"] {
        let timeouts = config(&format!(r#""{key}": "2.5s","#))
            .method_timeouts()
            .unwrap();
        assert_eq!(timeouts.len(), 1, "{key}");
        assert_eq!(timeouts[0].0[0].service, "a.B");
        assert_eq!(timeouts[0].1, Duration::from_millis(2_500));
    }
    // None set: none listed, and the policy is read as before.
    assert!(config("").method_timeouts().unwrap().is_empty());
    for (bad, says) in [
        (r#""0s""#, "must be greater than 0"),
        (r#""-1s""#, "must be greater than 0"),
        ("5", "must be a proto3 JSON duration"),
        (r#""5 seconds""#, "must be a proto3 JSON duration"),
    ] {
        let c = config(&format!(r#""timeout": {bad},"#));
        for err in [
            c.method_timeouts().unwrap_err(),
            c.retry_policies().unwrap_err(),
        ] {
            assert_eq!(err.path(), "methodConfig[0].timeout", "{bad}: {err}");
            assert!(err.message().starts_with(says), "{bad}: {err}");
        }
    }
}

#[test]
fn two_spellings_of_one_field_are_refused_naming_both() {
    let cases = [
        (
            with_retry_policy(&format!(r#"{VALID_POLICY}, "max_attempts": 4"#)),
            "methodConfig[0].retryPolicy.max_attempts",
            r#""maxAttempts" and "max_attempts" both set maxAttempts; give it once"#,
        ),
        (
            with_retry_policy(&format!(r#""MaxAttempts": 3, {VALID_POLICY}"#)),
            "methodConfig[0].retryPolicy.maxAttempts",
            r#""MaxAttempts" and "maxAttempts" both set maxAttempts; give it once"#,
        ),
        (
            // Even when one of them is null: which one the file means is not clear.
            with_retry_policy(&format!(r#""max_attempts": null, {VALID_POLICY}"#)),
            "methodConfig[0].retryPolicy.maxAttempts",
            r#""max_attempts" and "maxAttempts" both set maxAttempts; give it once"#,
        ),
        (
            r#"{ "methodConfig": [{ "name": [{ "service": "a.B", "Service": "a.C" }] }] }"#
                .to_owned(),
            "methodConfig[0].name[0].Service",
            r#""service" and "Service" both set service; give it once"#,
        ),
        (
            r#"{ "methodConfig": [], "method_config": [] }"#.to_owned(),
            "method_config",
            r#""methodConfig" and "method_config" both set methodConfig; give it once"#,
        ),
    ];
    for (json, path, message) in cases {
        let err = policy_error(&json);
        assert_eq!(err.path(), path, "{json}: {err}");
        assert_eq!(err.message(), message, "{json}");
    }
    let err = service(
        r#"{ "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }, "RetryThrottling": {} }"#,
    )
    .throttling()
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"RetryThrottling: "retryThrottling" and "RetryThrottling" both set retryThrottling; give it once"#
    );
    let err = service(
        r#"{ "retryThrottling": { "maxTokens": 10, "max_tokens": 10, "tokenRatio": 0.1 } }"#,
    )
    .throttling()
    .unwrap_err();
    assert_eq!(err.path(), "retryThrottling.max_tokens");
    // The very same key twice is refused as the document is read, as before.
    let err = serde_json::from_str::<ServiceConfig>(
        r#"{ "retryThrottling": { "maxTokens": 10, "maxTokens": 10, "tokenRatio": 0.1 } }"#,
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("duplicate field `maxTokens`"),
        "{err}"
    );
}

#[test]
fn errors_name_keys_as_the_file_spells_them() {
    let proto_policy = |fields: &str| {
        format!(
            r#"{{ "method_config": [{{ "name": [{{ "service": "a.B" }}], "retry_policy": {{ {fields} }} }}] }}"#
        )
    };
    let pascal_policy = |fields: &str| {
        format!(
            r#"{{ "methodConfig": [{{ "Name": [{{ "Service": "a.B" }}], "RetryPolicy": {{ {fields} }} }}] }}"#
        )
    };
    let cases = [
        (
            proto_policy(
                r#""max_attempts": 1, "initial_backoff": "0.1s", "max_backoff": "1s", "backoff_multiplier": 2, "retryable_status_codes": [14]"#,
            ),
            "method_config[0].retry_policy.max_attempts: must be an integer greater than 1, got 1",
        ),
        (
            proto_policy(
                r#""max_attempts": 3, "initial_backoff": "2s", "max_backoff": "1s", "backoff_multiplier": 0.5, "retryable_status_codes": [14]"#,
            ),
            "method_config[0].retry_policy.max_backoff: below initial_backoff with \
             backoff_multiplier below 1: the ceiling would rise and fall, which the catalog's \
             capped curve cannot follow",
        ),
        (
            // A missing field is named by its lowerCamel name: the file has no spelling of it.
            proto_policy(
                r#""initial_backoff": "0.1s", "max_backoff": "1s", "backoff_multiplier": 2, "retryable_status_codes": [14]"#,
            ),
            "method_config[0].retry_policy.maxAttempts: is required",
        ),
        (
            pascal_policy(
                r#""MaxAttempts": 4, "InitialBackoff": "100ms", "MaxBackoff": "1s", "BackoffMultiplier": 2, "RetryableStatusCodes": [14]"#,
            ),
            "methodConfig[0].RetryPolicy.InitialBackoff: must be a proto3 JSON duration such as \
             \"0.1s\" (not a decimal number of seconds), got \"100ms\"",
        ),
        (
            pascal_policy(
                r#""MaxAttempts": 4, "InitialBackoff": ".1s", "MaxBackoff": "1s", "BackoffMultiplier": 2, "RetryableStatusCodes": ["UNAVAILABLE", 17]"#,
            ),
            "methodConfig[0].RetryPolicy.RetryableStatusCodes[1]: must be a status code from 0 to \
             16, got 17",
        ),
        (
            r#"{ "methodConfig": [{ "Name": [{ "Service": "", "Method": "Get" }] }] }"#.to_owned(),
            "methodConfig[0].Name[0].Method: a method needs its service: `Service` is empty",
        ),
        (
            r#"{ "methodConfig": [{ "Name": [{ "Service": 3 }] }] }"#.to_owned(),
            "methodConfig[0].Name[0].Service: must be a string, got 3",
        ),
        (
            r#"{ "MethodConfig": 7 }"#.to_owned(),
            "MethodConfig: must be an array, got 7",
        ),
    ];
    for (json, error) in cases {
        assert_eq!(policy_error(&json).to_string(), error, "{json}");
    }
    let err = service(r#"{ "RetryThrottling": { "MaxTokens": 0, "token_ratio": 0.1 } }"#)
        .throttling()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "RetryThrottling.MaxTokens: must be an integer in (0, 1000], got 0"
    );
    let err = service(r#"{ "retry_throttling": { "max_tokens": 10, "token_ratio": "0.1" } }"#)
        .throttling()
        .unwrap_err();
    assert_eq!(err.path(), "retry_throttling.token_ratio");
}

#[test]
fn a_hedging_policy_is_imported_under_every_spelling() {
    for hedging in [
        "hedgingPolicy",
        "HedgingPolicy",
        "HEDGINGPOLICY",
        "hedging_policy",
    ] {
        for retry in ["retryPolicy", "RetryPolicy", "retry_policy"] {
            // Beside a retry policy: refused by both imports, naming both keys as spelled.
            let both = format!(
                r#"{{ "methodConfig": [{{ "name": [{{}}], "{retry}": {{ {VALID_POLICY} }}, "{hedging}": {{ "maxAttempts": 2 }} }}] }}"#
            );
            let expected = format!("methodConfig[0]: only one of {retry} or {hedging} may be set");
            assert_eq!(policy_error(&both).to_string(), expected, "{both}");
            let config = service(&both);
            let err = config.hedging_policies().unwrap_err();
            assert_eq!(err.to_string(), expected, "{both}");
            assert_eq!(config.validate().unwrap_err(), err);
        }
        // Alone: imported as a hedging policy, and not among the retry policies.
        let alone = format!(
            r#"{{ "methodConfig": [{{ "name": [{{ "service": "a.H" }}], "{hedging}": {{ "maxAttempts": 2 }} }}, {{ "name": [{{ "service": "a.R" }}], "retryPolicy": {{ {VALID_POLICY} }} }}] }}"#
        );
        let config = service(&alone);
        let policies = config.retry_policies().unwrap();
        assert_eq!(policies.len(), 1, "{alone}");
        assert_eq!(policies[0].methods, [name("a.R", "")], "{alone}");
        assert_eq!(
            config.hedging_policies().unwrap(),
            [MethodHedgingPolicy {
                methods: vec![name("a.H", "")],
                hedging: Hedging::fixed(Duration::ZERO, 2),
                non_fatal_codes: RetryableCodes::EMPTY
            }],
            "{alone}"
        );
        config.validate().unwrap();
    }
}

#[test]
fn durations_are_read_as_grpc_go_reads_them() {
    let with_initial = |initial: &str| {
        with_retry_policy(&VALID_POLICY.replace(r#""0.1s""#, &format!("\"{initial}\"")))
    };
    let base = |initial: &str| {
        let (policy, _) = only_policy(&with_initial(initial));
        assert_eq!(
            policy,
            a6_policy(MS(100), Duration::from_secs(1), 2.0, 4),
            "{initial}"
        );
    };
    // Every way of writing 100 ms that grpc-go takes.
    for initial in ["0.1s", ".1s", ".10s", "0.100000000s", "+0.1s", "+00.1s"] {
        base(initial);
    }
    let (policy, _) = only_policy(&with_retry_policy(
        &VALID_POLICY.replace(r#""1s""#, r#""+1.s""#),
    ));
    assert_eq!(policy, a6_policy(MS(100), Duration::from_secs(1), 2.0, 4));

    let message = |initial: &str| policy_error(&with_initial(initial)).message().to_owned();
    // grpc-go takes these, as negative durations; A6 refuses them as backoffs.
    for negative in ["-0.1s", "-+1s", "-.5s"] {
        assert!(
            message(negative).starts_with("must be greater than 0"),
            "{negative}: {}",
            message(negative)
        );
    }
    // grpc-go refuses these too, and the import does.
    for bad in [
        "+.5s",
        "+s",
        "s",
        ".s",
        "1",
        "1e3s",
        "0.0000000001s",
        "+-1s",
    ] {
        assert!(
            message(bad).starts_with("must be a proto3 JSON duration"),
            "{bad}: {}",
            message(bad)
        );
    }
    // grpc-go reads these as 1 s, 0.95 s and 1.05 s; refused as the artefacts they are.
    for artefact in ["--1s", "1.-5s", "1.+5s"] {
        assert!(
            message(artefact).contains("not a decimal number of seconds"),
            "{artefact}: {}",
            message(artefact)
        );
    }
}

#[test]
fn status_codes_under_the_proto_name_are_read_as_before() {
    let policy = |codes: &str| {
        format!(
            r#"{{ "methodConfig": [{{ "retry_policy": {{ "max_attempts": 2, "initial_backoff": ".01s", "max_backoff": ".01s", "backoff_multiplier": 1, "retryable_status_codes": {codes} }} }}] }}"#
        )
    };
    // grpc-go takes integers from 0 to 16 and names in capitals; any case is taken here.
    let (_, codes) = only_policy(&policy(r#"[14, "UNAVAILABLE", "aborted", 4]"#));
    assert_eq!(
        codes.iter().collect::<Vec<_>>(),
        [
            StatusCode::DeadlineExceeded,
            StatusCode::Aborted,
            StatusCode::Unavailable
        ]
    );
    // grpc-go reads null as OK (0), and refuses the others; all refused here.
    for (codes, message) in [
        (
            "[null]",
            "must be a status code, as an integer or a name, got null",
        ),
        (r#"["14"]"#, "unknown status code \"14\""),
        (r#"["CANCELED"]"#, "unknown status code \"CANCELED\""),
        ("[17]", "must be a status code from 0 to 16, got 17"),
        (
            "[14.0]",
            "must be a status code, as an integer or a name, got 14.0",
        ),
        ("[]", "must be a non-empty array of status codes"),
    ] {
        let err = policy_error(&policy(codes));
        assert!(
            err.path()
                .starts_with("methodConfig[0].retry_policy.retryable_status_codes"),
            "{codes}: {err}"
        );
        assert!(err.message().starts_with(message), "{codes}: {err}");
    }
}
