//! Compile-fail tests of stagger's error messages: each common mistake must fail to compile with
//! a message that names its fix. The snippets are in `tests/ui/`, their expected messages beside
//! them; this crate has no code of its own.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
