//! A gRPC service config's `hedgingPolicy` (gRFC A6), imported as a [`Hedging`] and its
//! non-fatal status codes: every spelling of its keys, A6's rules (and grpc-java's where A6
//! leaves a case open), and errors that name the keys as the file spells them.
#![cfg(feature = "serde")]

use std::time::Duration;

use stagger_core::config::grpc::{
    GrpcConfigError, MAX_ATTEMPTS_LIMIT, MethodHedgingPolicy, MethodName, RetryableCodes,
    ServiceConfig, StatusCode,
};
use stagger_core::engine::{HedgeDelay, Hedging, MAX_HEDGED_ATTEMPTS};

const MS: fn(u64) -> Duration = Duration::from_millis;

fn service(json: &str) -> ServiceConfig {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

/// A service config with one method config, for `a.B`, whose hedging policy (spelled
/// `hedging`) has `fields`.
fn with_hedging(hedging: &str, fields: &str) -> String {
    format!(
        r#"{{ "methodConfig": [{{ "name": [{{ "service": "a.B" }}], "{hedging}": {{ {fields} }} }}] }}"#
    )
}

fn hedging_policy(fields: &str) -> String {
    with_hedging("hedgingPolicy", fields)
}

/// The single hedging policy of `json`, which must import without error.
fn only(json: &str) -> (Hedging, RetryableCodes) {
    let config = service(json);
    let mut policies = config
        .hedging_policies()
        .unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(policies.len(), 1, "{json}");
    config.validate().unwrap_or_else(|e| panic!("{json}: {e}"));
    assert!(config.retry_policies().unwrap().is_empty(), "{json}");
    let MethodHedgingPolicy {
        methods,
        hedging,
        non_fatal_codes,
    } = policies.remove(0);
    assert_eq!(
        methods,
        [MethodName {
            service: "a.B".into(),
            method: String::new()
        }]
    );
    (hedging, non_fatal_codes)
}

/// The error that importing `json`'s hedging policies gives; the retry import and `validate`
/// give the same, since each reads every method config.
fn error(json: &str) -> GrpcConfigError {
    let config = service(json);
    let err = match config.hedging_policies() {
        Ok(policies) => panic!("{json}: imported {policies:?}"),
        Err(e) => e,
    };
    assert_eq!(config.retry_policies().unwrap_err(), err, "{json}");
    assert_eq!(config.validate().unwrap_err(), err, "{json}");
    err
}

fn codes(list: &[StatusCode]) -> RetryableCodes {
    list.iter().copied().collect()
}

const VALID: &str =
    r#""maxAttempts": 3, "hedgingDelay": "0.5s", "nonFatalStatusCodes": ["UNAVAILABLE", 13]"#;

#[test]
fn a6s_examples_import() {
    // A6's "Hedging Policy" section.
    let (hedging, non_fatal) = only(&hedging_policy(
        r#""maxAttempts": 4, "hedgingDelay": "0.5s", "nonFatalStatusCodes": ["UNAVAILABLE", "INTERNAL", "ABORTED"]"#,
    ));
    assert_eq!(hedging, Hedging::fixed(MS(500), 4));
    assert_eq!(
        non_fatal,
        codes(&[
            StatusCode::Aborted,
            StatusCode::Internal,
            StatusCode::Unavailable
        ])
    );
    // Its "0s" example: every attempt at once.
    let (hedging, _) = only(&hedging_policy(
        r#""maxAttempts": 4, "hedgingDelay": "0s", "nonFatalStatusCodes": ["UNAVAILABLE", "INTERNAL", "ABORTED"]"#,
    ));
    assert_eq!(hedging.delay(), HedgeDelay::Fixed(Duration::ZERO));
}

#[test]
fn every_spelling_of_every_hedging_key_imports_the_same() {
    let expected = (
        Hedging::fixed(MS(500), 3),
        codes(&[StatusCode::Internal, StatusCode::Unavailable]),
    );
    let mut imported = 0;
    for policy in [
        "hedgingPolicy",
        "HedgingPolicy",
        "HEDGINGPOLICY",
        "hedgingpolicy",
        "hedging_policy",
    ] {
        for attempts in [
            "maxAttempts",
            "MaxAttempts",
            "MAXATTEMPTS",
            "maxattempts",
            "max_attempts",
            // Go's fold takes the long s for `s`.
            "maxAttempt\u{17F}",
        ] {
            for delay in [
                "hedgingDelay",
                "HedgingDelay",
                "HEDGINGDELAY",
                "hedging_delay",
            ] {
                for non_fatal in [
                    "nonFatalStatusCodes",
                    "NonFatalStatusCodes",
                    "NONFATALSTATUSCODES",
                    "non_fatal_status_codes",
                ] {
                    let json = with_hedging(
                        policy,
                        &format!(
                            r#""{attempts}": 3, "{delay}": "0.5s", "{non_fatal}": ["UNAVAILABLE", 13]"#
                        ),
                    );
                    assert_eq!(only(&json), expected, "{json}");
                    imported += 1;
                }
            }
        }
    }
    assert_eq!(imported, 5 * 6 * 4 * 4);
}

#[test]
fn proto_names_of_hedging_keys_match_only_exactly() {
    for (spelled, replaces) in [
        ("MAX_ATTEMPTS", "maxAttempts"),
        ("Max_Attempts", "maxAttempts"),
        ("HEDGING_DELAY", "hedgingDelay"),
        ("hedging_Delay", "hedgingDelay"),
        ("Non_Fatal_Status_Codes", "nonFatalStatusCodes"),
        ("nonfatal_status_codes", "nonFatalStatusCodes"),
    ] {
        let json = hedging_policy(&VALID.replace(replaces, spelled));
        let err = error(&json);
        assert_eq!(
            err.path(),
            format!("methodConfig[0].hedgingPolicy.{spelled}"),
            "{err}"
        );
        assert_eq!(
            err.message(),
            format!(
                "unknown key \"{spelled}\"; a hedgingPolicy's keys are maxAttempts, hedgingDelay \
                 and nonFatalStatusCodes (in any case, or as proto names such as max_attempts)"
            )
        );
    }
    let err = error(&with_hedging("HEDGING_POLICY", VALID));
    assert_eq!(err.path(), "methodConfig[0].HEDGING_POLICY");
    // A retry policy's key is not a hedging policy's.
    let err = error(&hedging_policy(&format!(
        "{VALID}, \"initialBackoff\": \"1s\""
    )));
    assert_eq!(err.path(), "methodConfig[0].hedgingPolicy.initialBackoff");
}

#[test]
fn two_spellings_of_one_hedging_key_are_refused() {
    for (fields, path, message) in [
        (
            r#""maxAttempts": 3, "max_attempts": 3"#,
            "methodConfig[0].hedgingPolicy.max_attempts",
            r#""maxAttempts" and "max_attempts" both set maxAttempts; give it once"#,
        ),
        (
            r#""maxAttempts": 3, "hedgingDelay": "1s", "HedgingDelay": null"#,
            "methodConfig[0].hedgingPolicy.HedgingDelay",
            r#""hedgingDelay" and "HedgingDelay" both set hedgingDelay; give it once"#,
        ),
        (
            r#""maxAttempts": 3, "non_fatal_status_codes": [], "NONFATALSTATUSCODES": [14]"#,
            "methodConfig[0].hedgingPolicy.NONFATALSTATUSCODES",
            r#""non_fatal_status_codes" and "NONFATALSTATUSCODES" both set nonFatalStatusCodes; give it once"#,
        ),
    ] {
        let err = error(&hedging_policy(fields));
        assert_eq!(err.path(), path, "{fields}: {err}");
        assert_eq!(err.message(), message, "{fields}");
    }
}

#[test]
fn max_attempts_is_at_least_two_and_clamped_to_the_limit() {
    let attempts = |n: &str| only(&hedging_policy(&format!("\"maxAttempts\": {n}"))).0;
    assert_eq!(attempts("2"), Hedging::fixed(Duration::ZERO, 2));
    assert_eq!(attempts("5").max_attempts(), 5);
    // Above the client's limit of 5: treated as 5, as a retry policy's is.
    assert_eq!(attempts("7").max_attempts(), MAX_ATTEMPTS_LIMIT);
    assert_eq!(attempts("4294967296").max_attempts(), 5);

    let with_limit = |n: u32, limit: u32| {
        service(&hedging_policy(&format!("\"maxAttempts\": {n}")))
            .hedging_policies_with_limit(limit)
            .unwrap()[0]
            .hedging
            .max_attempts()
    };
    assert_eq!(with_limit(7, 10), 7);
    assert_eq!(with_limit(7, 6), 6);
    // Never above what a hedged run may make, whatever the limit.
    assert_eq!(with_limit(15, 20), MAX_HEDGED_ATTEMPTS);
    assert_eq!(with_limit(15, u32::MAX), MAX_HEDGED_ATTEMPTS);
    // A limit of 1 (or 0) sends no hedge, as a retry limit of 1 makes no retry.
    assert_eq!(with_limit(3, 1), 1);
    assert_eq!(with_limit(3, 0), 1);

    for (value, got) in [
        ("1", "1"),
        ("0", "0"),
        ("-3", "-3"),
        ("2.0", "2.0"),
        (r#""2""#, r#"the string "2""#),
        ("true", "true"),
    ] {
        let err = error(&hedging_policy(&format!("\"maxAttempts\": {value}")));
        assert_eq!(
            err.to_string(),
            format!(
                "methodConfig[0].hedgingPolicy.maxAttempts: must be an integer greater than 1, \
                 got {got}"
            )
        );
    }
    // Required, and named by its lowerCamel name when absent.
    for fields in [r#""hedgingDelay": "1s""#, r#""maxAttempts": null"#] {
        assert_eq!(
            error(&with_hedging("HedgingPolicy", fields)).to_string(),
            "methodConfig[0].HedgingPolicy.maxAttempts: is required"
        );
    }
}

#[test]
fn the_hedging_delay_is_a_proto3_duration_and_optional() {
    let delay = |fields: &str| {
        only(&hedging_policy(&format!("\"maxAttempts\": 3{fields}")))
            .0
            .delay()
    };
    assert_eq!(
        delay(r#", "hedgingDelay": "0.5s""#),
        HedgeDelay::Fixed(MS(500))
    );
    assert_eq!(
        delay(r#", "hedgingDelay": ".02s""#),
        HedgeDelay::Fixed(MS(20))
    );
    assert_eq!(
        delay(r#", "hedgingDelay": "1.s""#),
        HedgeDelay::Fixed(MS(1000))
    );
    assert_eq!(
        delay(r#", "hedgingDelay": "+2s""#),
        HedgeDelay::Fixed(MS(2000))
    );
    assert_eq!(
        delay(r#", "hedgingDelay": "0.000000001s""#),
        HedgeDelay::Fixed(Duration::from_nanos(1))
    );
    // Absent, null or zero: every attempt at once.
    for zero in [
        "",
        r#", "hedgingDelay": null"#,
        r#", "hedgingDelay": "0s""#,
        r#", "hedgingDelay": "-0s""#,
    ] {
        assert_eq!(delay(zero), HedgeDelay::Fixed(Duration::ZERO), "{zero}");
    }

    for (value, message) in [
        (r#""-0.5s""#, r#"must not be negative, got "-0.5s""#),
        (r#""-1s""#, r#"must not be negative, got "-1s""#),
        (
            r#""1""#,
            r#"must be a proto3 JSON duration such as "0.5s" (no `s` suffix), got "1""#,
        ),
        (
            r#""1ms""#,
            r#"must be a proto3 JSON duration such as "0.5s" (not a decimal number of seconds), got "1ms""#,
        ),
        (
            r#""--1s""#,
            r#"must be a proto3 JSON duration such as "0.5s" (not a decimal number of seconds), got "--1s""#,
        ),
        (
            "0.5",
            r#"must be a proto3 JSON duration such as "0.5s", got 0.5"#,
        ),
        (
            "{}",
            r#"must be a proto3 JSON duration such as "0.5s", got an object"#,
        ),
    ] {
        let err = error(&hedging_policy(&format!(
            "\"maxAttempts\": 3, \"hedgingDelay\": {value}"
        )));
        assert_eq!(
            err.path(),
            "methodConfig[0].hedgingPolicy.hedgingDelay",
            "{value}"
        );
        assert_eq!(err.message(), message, "{value}");
    }
}

#[test]
fn non_fatal_codes_are_names_or_numbers_and_optional() {
    let non_fatal = |list: &str| {
        only(&hedging_policy(&format!(
            "\"maxAttempts\": 2, \"nonFatalStatusCodes\": {list}"
        )))
        .1
    };
    assert_eq!(
        non_fatal(r#"["UNAVAILABLE", 13, "aborted", "Deadline_Exceeded", 14]"#),
        codes(&[
            StatusCode::DeadlineExceeded,
            StatusCode::Aborted,
            StatusCode::Internal,
            StatusCode::Unavailable
        ])
    );
    assert_eq!(
        non_fatal("[16, 1]"),
        codes(&[StatusCode::Cancelled, StatusCode::Unauthenticated])
    );
    // Optional and possibly empty (A6, grpc-java): every failure is then fatal.
    assert_eq!(non_fatal("[]"), RetryableCodes::EMPTY);
    assert_eq!(non_fatal("null"), RetryableCodes::EMPTY);
    assert_eq!(
        only(&hedging_policy(r#""maxAttempts": 2"#)).1,
        RetryableCodes::EMPTY
    );

    for (list, path, message) in [
        ("[0]", "[0]", "must not be OK, which is a success"),
        (r#"[14, "OK"]"#, "[1]", "must not be OK, which is a success"),
        (r#"["ok"]"#, "[0]", "must not be OK, which is a success"),
        ("[17]", "[0]", "must be a status code from 0 to 16, got 17"),
        (
            "[14, -1]",
            "[1]",
            "must be a status code from 0 to 16, got -1",
        ),
        (
            "[14.0]",
            "[0]",
            "must be a status code, as an integer or a name, got 14.0",
        ),
        (
            "[null]",
            "[0]",
            "must be a status code, as an integer or a name, got null",
        ),
        (
            r#"["CANCELED"]"#,
            "[0]",
            "unknown status code \"CANCELED\"; the codes are OK, CANCELLED, UNKNOWN, \
             INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED, \
             RESOURCE_EXHAUSTED, FAILED_PRECONDITION, ABORTED, OUT_OF_RANGE, UNIMPLEMENTED, \
             INTERNAL, UNAVAILABLE, DATA_LOSS, UNAUTHENTICATED",
        ),
        (
            r#""UNAVAILABLE""#,
            "",
            "must be an array of status codes, got the string \"UNAVAILABLE\"",
        ),
        ("14", "", "must be an array of status codes, got 14"),
    ] {
        let err = error(&hedging_policy(&format!(
            "\"maxAttempts\": 2, \"nonFatalStatusCodes\": {list}"
        )));
        assert_eq!(
            err.path(),
            format!("methodConfig[0].hedgingPolicy.nonFatalStatusCodes{path}"),
            "{list}"
        );
        assert_eq!(err.message(), message, "{list}");
    }
}

#[test]
fn hedging_errors_name_keys_as_the_file_spells_them() {
    let proto = r#"{ "method_config": [{ "name": [{ "service": "a.B" }], "hedging_policy": { "max_attempts": 1 } }] }"#;
    assert_eq!(
        error(proto).to_string(),
        "method_config[0].hedging_policy.max_attempts: must be an integer greater than 1, got 1"
    );
    let go = r#"{ "MethodConfig": [{ "Name": [{ "Service": "a.B" }], "HedgingPolicy": { "MaxAttempts": 3, "HedgingDelay": "-1s" } }] }"#;
    assert_eq!(
        error(go).to_string(),
        r#"MethodConfig[0].HedgingPolicy.HedgingDelay: must not be negative, got "-1s""#
    );
    let mixed = r#"{ "methodConfig": [{}, { "hedging_policy": { "maxAttempts": 3, "NonFatalStatusCodes": [14, "NOPE"] } }] }"#;
    assert!(
        error(mixed).to_string().starts_with(
            r#"methodConfig[1].hedging_policy.NonFatalStatusCodes[1]: unknown status code "NOPE""#
        ),
        "{}",
        error(mixed)
    );
    let not_an_object = r#"{ "methodConfig": [{ "HEDGINGPOLICY": 3 }] }"#;
    assert_eq!(
        error(not_an_object).to_string(),
        "methodConfig[0].HEDGINGPOLICY: must be an object, got 3"
    );
}

#[test]
fn each_import_lists_its_own_method_configs_in_order() {
    let config = service(
        r#"{
          "methodConfig": [
            { "name": [{ "service": "a.One" }], "hedgingPolicy": { "maxAttempts": 2, "hedgingDelay": "0.1s" } },
            { "name": [{ "service": "a.Two" }], "retryPolicy": {
                "maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s",
                "backoffMultiplier": 2, "retryableStatusCodes": [14] } },
            { "name": [{ "service": "a.Three" }] },
            { "name": [{ "service": "a.Four", "method": "Get" }], "hedging_policy": { "max_attempts": 9, "non_fatal_status_codes": [14] } }
          ]
        }"#,
    );
    let hedged = config.hedging_policies().unwrap();
    let services: Vec<String> = hedged
        .iter()
        .map(|policy| policy.methods[0].to_string())
        .collect();
    assert_eq!(services, ["a.One/*", "a.Four/Get"]);
    assert_eq!(hedged[0].hedging, Hedging::fixed(MS(100), 2));
    assert_eq!(hedged[1].hedging, Hedging::fixed(Duration::ZERO, 5));
    assert_eq!(hedged[1].non_fatal_codes, codes(&[StatusCode::Unavailable]));
    let retried = config.retry_policies().unwrap();
    assert_eq!(retried.len(), 1);
    assert_eq!(retried[0].methods[0].to_string(), "a.Two/*");
    // Every imported hedging is valid for the engine.
    for MethodHedgingPolicy { hedging, .. } in config.hedging_policies_with_limit(u32::MAX).unwrap()
    {
        hedging.validate().unwrap();
    }
}

#[test]
fn a_hedging_policy_reads_from_yaml_too() {
    let config: ServiceConfig = serde_yaml::from_str(
        "methodConfig:\n  - name: [{ service: a.B }]\n    hedgingPolicy:\n      maxAttempts: 3\n      hedgingDelay: 0.5s\n      nonFatalStatusCodes: [UNAVAILABLE, 13]\n",
    )
    .unwrap();
    assert_eq!(
        config.hedging_policies().unwrap()[0].hedging,
        Hedging::fixed(MS(500), 3)
    );
}

/// An imported hedging policy runs as gRFC A6 says: hedges at its delay, a non-fatal code
/// sends the next at once, any other code ends the run.
#[test]
fn an_imported_hedging_policy_runs_in_the_engine() {
    use stagger_core::Timestamp;
    use stagger_core::engine::{Answer, Hedge, HedgedRun, Run, Settings, StopReason};
    use stagger_core::policy::NoRetryPolicy;

    let config: ServiceConfig = serde_json::from_str(
        r#"{ "methodConfig": [{ "name": [{ "service": "shop.Search" }],
             "hedgingPolicy": { "maxAttempts": 3, "hedgingDelay": "0.05s",
                                "nonFatalStatusCodes": ["UNAVAILABLE"] } }] }"#,
    )
    .unwrap();
    let policies = config.hedging_policies().unwrap();
    let MethodHedgingPolicy {
        hedging,
        non_fatal_codes: codes,
        ..
    } = policies[0].clone();
    let ms = |n: u64| Timestamp::from_nanos(n * 1_000_000);
    let run = Run::new(NoRetryPolicy, Settings::new(), ms(0));
    let mut hedged = HedgedRun::new(run, hedging, None);
    assert!(matches!(hedged.next(ms(0)), Hedge::Send(a) if a.number == 1));
    assert_eq!(
        hedged.next(ms(0)),
        Hedge::Wait(std::time::Duration::from_millis(50))
    );
    // UNAVAILABLE is non-fatal: the next hedge goes at once.
    let unavailable = codes.failure(StatusCode::Unavailable);
    assert_eq!(hedged.answered(1, ms(10), Err(unavailable)), Answer::Lost);
    assert!(matches!(hedged.next(ms(10)), Hedge::Send(a) if a.number == 2));
    // INVALID_ARGUMENT is not: the run ends.
    let invalid = codes.failure(StatusCode::InvalidArgument);
    let Answer::Stop(stopped) = hedged.answered(2, ms(20), Err(invalid)) else {
        panic!("a fatal code ends the run");
    };
    assert_eq!(stopped.reason, StopReason::NotRetryable);
    assert_eq!(stopped.summary.attempts, 2);
}
