//! HTTP: classification, idempotency and server-directed waits for `http` crate types.
