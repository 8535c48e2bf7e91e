//! Benchmarks comparing `stagger` with peer retry/backoff crates.
//!
//! This crate is not published and has no library API; everything lives in
//! `benches/`. Run with `cargo bench -p stagger-bench`.
