//! [`GrpcConfigError`], and the JSON [`Path`] that every error of the import names.
//!
//! The rules are checked after the document is read, as the validation descends into it, so
//! that each error can say where it is: the path is built on the way down.

use std::fmt;

/// A service config field that breaks one of A6's rules: its JSON path and what is wrong.
///
/// ```
/// use stagger_core::config::grpc::ServiceConfig;
///
/// let config: ServiceConfig =
///     serde_json::from_str(r#"{ "retryThrottling": { "maxTokens": 0, "tokenRatio": 0.1 } }"#)?;
/// let err = config.throttling().unwrap_err();
/// assert_eq!(err.path(), "retryThrottling.maxTokens");
/// assert_eq!(err.message(), "must be an integer in (0, 1000], got 0");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrpcConfigError {
    path: String,
    message: String,
}

impl GrpcConfigError {
    /// The offending field's JSON path, such as `methodConfig[0].retryPolicy.maxAttempts`.
    #[must_use]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong with it.
    #[must_use]
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for GrpcConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

impl std::error::Error for GrpcConfigError {}

/// A JSON path, built as the validation descends.
#[derive(Clone, Debug)]
pub(super) struct Path(String);

impl Path {
    /// The service config itself, whose fields' paths are their bare keys.
    pub(super) fn top() -> Self {
        Self(String::new())
    }

    pub(super) fn field(&self, name: &str) -> Self {
        if self.0.is_empty() {
            Self(name.to_owned())
        } else {
            Self(format!("{}.{name}", self.0))
        }
    }

    pub(super) fn index(&self, i: usize) -> Self {
        Self(format!("{}[{i}]", self.0))
    }

    pub(super) fn error(&self, message: impl Into<String>) -> GrpcConfigError {
        GrpcConfigError {
            path: self.0.clone(),
            message: message.into(),
        }
    }
}
