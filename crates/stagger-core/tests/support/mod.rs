//! Shared helpers for the integration tests.

#![allow(dead_code, unreachable_pub)] // Each test file uses its own subset.

use stagger_core::PolicyConfig;
use std::path::PathBuf;
use std::time::Duration;

use stagger_core::{AnyConfig, Param, PolicyKind};

/// The repository's `vectors/` folder.
pub fn vectors_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../vectors")
}

/// `kind`'s defaults with the parameters of a vector file applied (`base_ns`, `cap_ns`,
/// `factor`, `jitter`, `max_attempts`).
pub fn config_from_json(
    kind: PolicyKind,
    params: &serde_json::Map<String, serde_json::Value>,
) -> AnyConfig {
    let mut config = AnyConfig::from(kind);
    for (name, value) in params {
        let int = || {
            value
                .as_u64()
                .unwrap_or_else(|| panic!("{name} is an integer"))
        };
        let float = || {
            value
                .as_f64()
                .unwrap_or_else(|| panic!("{name} is a number"))
        };
        let param = match name.as_str() {
            "base_ns" => Param::Base(Duration::from_nanos(int())),
            "cap_ns" => Param::Cap(Duration::from_nanos(int())),
            "factor" => Param::Factor(float()),
            "jitter" => Param::Jitter(float()),
            "max_attempts" => Param::MaxAttempts(u32::try_from(int()).expect("u32")),
            other => panic!("unknown parameter {other}"),
        };
        config = config.set(param).expect("the vector's parameter applies");
    }
    config
}

/// Every policy in the catalog at its defaults.
pub fn catalog() -> impl Iterator<Item = AnyConfig> {
    PolicyKind::ALL.into_iter().map(AnyConfig::from)
}
