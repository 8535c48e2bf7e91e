//! gRPC status codes ([`StatusCode`]), sets of them ([`RetryableCodes`]), and reading them
//! from a service config, as integers or names.

use std::fmt;
use std::str::FromStr;

use super::error::{GrpcConfigError, Path};
use super::json::Json;

macro_rules! status_codes {
    ($($variant:ident = $code:literal, $name:literal;)*) => {
        /// A gRPC status code.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[non_exhaustive]
        #[allow(missing_docs)] // Each variant is the status of the same name.
        pub enum StatusCode {
            $($variant = $code,)*
        }

        impl StatusCode {
            /// Every status code, in numeric order.
            pub const ALL: [Self; 17] = [$(Self::$variant,)*];

            /// The code's canonical name, such as `UNAVAILABLE`.
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name,)*
                }
            }
        }
    };
}

status_codes! {
    Ok = 0, "OK";
    Cancelled = 1, "CANCELLED";
    Unknown = 2, "UNKNOWN";
    InvalidArgument = 3, "INVALID_ARGUMENT";
    DeadlineExceeded = 4, "DEADLINE_EXCEEDED";
    NotFound = 5, "NOT_FOUND";
    AlreadyExists = 6, "ALREADY_EXISTS";
    PermissionDenied = 7, "PERMISSION_DENIED";
    ResourceExhausted = 8, "RESOURCE_EXHAUSTED";
    FailedPrecondition = 9, "FAILED_PRECONDITION";
    Aborted = 10, "ABORTED";
    OutOfRange = 11, "OUT_OF_RANGE";
    Unimplemented = 12, "UNIMPLEMENTED";
    Internal = 13, "INTERNAL";
    Unavailable = 14, "UNAVAILABLE";
    DataLoss = 15, "DATA_LOSS";
    Unauthenticated = 16, "UNAUTHENTICATED";
}

impl StatusCode {
    /// The code with this number, if it is one (0 to 16).
    #[must_use]
    pub fn from_code(code: i32) -> Option<Self> {
        usize::try_from(code)
            .ok()
            .and_then(|i| Self::ALL.get(i).copied())
    }

    /// The code's number.
    #[must_use]
    pub const fn code(self) -> i32 {
        self as i32
    }
}

impl fmt::Display for StatusCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for StatusCode {
    type Err = String;

    /// A code's name, in any case (`"UNAVAILABLE"`, `"unavailable"`).
    fn from_str(name: &str) -> Result<Self, String> {
        Self::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
            .ok_or_else(|| format!("unknown status code `{name}`"))
    }
}

/// A set of gRPC status codes: a retry policy's `retryableStatusCodes`.
///
/// ```
/// use stagger_core::config::grpc::{RetryableCodes, StatusCode};
///
/// let codes: RetryableCodes = [StatusCode::Unavailable, StatusCode::Aborted].into_iter().collect();
/// assert!(codes.contains(StatusCode::Aborted));
/// assert!(codes.contains_code(14));
/// assert!(!codes.contains_code(99));
/// assert_eq!(codes.iter().collect::<Vec<_>>(), [StatusCode::Aborted, StatusCode::Unavailable]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RetryableCodes(u32);

impl RetryableCodes {
    /// No codes.
    pub const EMPTY: Self = Self(0);

    /// Whether `code` is in the set.
    #[must_use]
    pub const fn contains(self, code: StatusCode) -> bool {
        self.0 & (1 << code as u32) != 0
    }

    /// Whether the status code numbered `code` is in the set; `false` for a number that is no
    /// status code.
    #[must_use]
    pub fn contains_code(self, code: i32) -> bool {
        StatusCode::from_code(code).is_some_and(|c| self.contains(c))
    }

    /// The set with `code` added.
    #[must_use]
    pub const fn with(self, code: StatusCode) -> Self {
        Self(self.0 | (1 << code as u32))
    }

    /// How many codes the set holds.
    #[must_use]
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether the set is empty.
    #[must_use]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// What a failed call that ended with `code` is to the engine, as gRFC A6 reads the set:
    /// [`Failure::Retryable`](crate::Failure::Retryable) for a code in it (a retryable code of
    /// a retry policy, a non-fatal code of a hedging policy: the call may have taken effect),
    /// [`Failure::Permanent`](crate::Failure::Permanent) for any other (which stops a retried
    /// run, and a hedged run with the attempts it has in flight). The classifier of a gRPC
    /// client calls it for every status but `OK`.
    ///
    /// ```
    /// use stagger_core::Failure;
    /// use stagger_core::config::grpc::{RetryableCodes, StatusCode};
    ///
    /// let non_fatal: RetryableCodes = [StatusCode::Unavailable].into_iter().collect();
    /// assert_eq!(non_fatal.failure(StatusCode::Unavailable), Failure::Retryable);
    /// assert_eq!(non_fatal.failure(StatusCode::InvalidArgument), Failure::Permanent);
    /// ```
    #[must_use]
    pub const fn failure(self, code: StatusCode) -> crate::Failure {
        if self.contains(code) {
            crate::Failure::Retryable
        } else {
            crate::Failure::Permanent
        }
    }

    /// The codes, in numeric order.
    pub fn iter(self) -> impl Iterator<Item = StatusCode> {
        StatusCode::ALL
            .into_iter()
            .filter(move |c| self.contains(*c))
    }
}

impl FromIterator<StatusCode> for RetryableCodes {
    fn from_iter<I: IntoIterator<Item = StatusCode>>(codes: I) -> Self {
        codes.into_iter().fold(Self::EMPTY, Self::with)
    }
}

/// The status codes of `items`, each an integer or a name, at `path`.
pub(super) fn status_codes(path: &Path, items: &[Json]) -> Result<RetryableCodes, GrpcConfigError> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| status_code(&path.index(i), item))
        .collect()
}

/// One status code, an integer or a name, at `path`.
pub(super) fn status_code(path: &Path, item: &Json) -> Result<StatusCode, GrpcConfigError> {
    match item {
        Json::Int(n) => i32::try_from(*n)
            .ok()
            .and_then(StatusCode::from_code)
            .ok_or_else(|| path.error(format!("must be a status code from 0 to 16, got {n}"))),
        Json::String(name) => name.parse::<StatusCode>().map_err(|_| {
            path.error(format!(
                "unknown status code \"{name}\"; the codes are {}",
                StatusCode::ALL.map(StatusCode::name).join(", ")
            ))
        }),
        other => Err(path.error(format!(
            "must be a status code, as an integer or a name, got {}",
            other.describe()
        ))),
    }
}
