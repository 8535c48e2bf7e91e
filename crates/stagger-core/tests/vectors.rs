//! The language-neutral test vectors in `vectors/`, computed by an independent Python
//! reference implementation (`vectors/reference.py`), reproduced bit for bit.

mod support;

use stagger_core::PolicyConfig;
use std::fs;

use serde_json::Value;
use stagger_core::{Failure, Policy, PolicyKind, Rng, SeededRng};

fn load(name: &str) -> Value {
    let path = support::vectors_dir().join(format!("{name}.json"));
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).expect("valid JSON")
}

fn rng_of(case: &Value) -> SeededRng {
    match (case.get("key"), case.get("seed")) {
        (Some(key), _) => SeededRng::from_key(key.as_str().expect("key is text")),
        (None, Some(seed)) => SeededRng::new(seed.as_u64().expect("seed is an integer")),
        (None, None) => panic!("a case has a seed or a key"),
    }
}

#[test]
fn every_policy_reproduces_its_vectors() {
    let mut checked = 0;
    for kind in PolicyKind::ALL {
        let file = load(&kind.name().replace('-', "_"));
        assert_eq!(file["policy"], kind.name());
        let cases = file["cases"].as_array().expect("cases");
        assert!(!cases.is_empty(), "{kind} has vectors");
        for case in cases {
            let name = case["name"].as_str().expect("name");
            let params = case["params"].as_object().expect("params");
            let config = support::config_from_json(kind, params);
            let mut policy = config
                .build(rng_of(case))
                .expect("vector configs are valid");
            let failure = match case["failure"].as_str() {
                Some("permanent") => Failure::Permanent,
                _ => Failure::Retryable,
            };
            let attempts = case["attempts"].as_array().expect("attempts");
            let expected = case["expected_ns"].as_array().expect("expected_ns");
            assert_eq!(attempts.len(), expected.len());
            for (attempt, want) in attempts.iter().zip(expected) {
                let attempt = u32::try_from(attempt.as_u64().expect("attempt")).expect("u32");
                let got = policy
                    .next_delay(attempt, &failure)
                    .map(|d| u64::try_from(d.as_nanos()).expect("fits"));
                let want = want.as_u64();
                if kind == PolicyKind::DecorrelatedJitterV2 {
                    // stagger takes pow and tanh from the pure-Rust libm crate, the same on
                    // every platform; the Python reference takes them from the C library,
                    // which may differ in the last bit: allow one nanosecond.
                    let close = match (got, want) {
                        (Some(g), Some(w)) => g.abs_diff(w) <= 1,
                        (g, w) => g == w,
                    };
                    assert!(
                        close,
                        "{kind} / {name} / attempt {attempt}: {got:?} vs {want:?}"
                    );
                } else {
                    assert_eq!(got, want, "{kind} / {name} / attempt {attempt}");
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 200, "only {checked} delays checked");
}

#[test]
fn the_generator_reproduces_its_vectors() {
    let file = load("rng");
    assert_eq!(file["generator"], "splitmix64");
    for case in file["cases"].as_array().expect("cases") {
        let seed: u64 = case["seed"].as_str().expect("seed").parse().expect("u64");
        let mut rng = match case.get("key") {
            Some(key) => {
                let key = key.as_str().expect("key");
                assert_eq!(
                    stagger_core::rng::fnv1a64(key.as_bytes()),
                    seed,
                    "key {key:?}"
                );
                SeededRng::from_key(key)
            }
            None => SeededRng::new(seed),
        };
        for want in case["u64"].as_array().expect("u64") {
            let want: u64 = want.as_str().expect("decimal").parse().expect("u64");
            assert_eq!(rng.next_u64(), want, "seed {seed}");
        }
    }
    let mut rng = SeededRng::new(7);
    for want in file["f64_seed_7"].as_array().expect("f64") {
        assert_eq!(rng.next_f64(), want.as_f64().expect("f64"));
    }
}
