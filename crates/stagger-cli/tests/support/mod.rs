//! What the CLI tests share: running the built binary.

#![allow(dead_code, unreachable_pub)] // Each test file uses its own subset.

use std::process::{Command, Output};

/// Runs `stagger` with `args`.
pub fn stagger(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stagger"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// The stdout of a run that must succeed.
pub fn stdout(args: &[&str]) -> String {
    let out = stagger(args);
    assert!(
        out.status.success(),
        "`stagger {}` exited with {:?}: {}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}
