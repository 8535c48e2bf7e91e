//! HTTP: classification, idempotency and server-directed waits for `http` crate types.
//!
//! Retrying an HTTP request well takes three decisions, and this module makes each one from the
//! response and request alone, without I/O and without reading a clock:
//!
//! - **What kind of failure a response is** ([`classify_status`], [`classify_response`],
//!   [`HttpClassifier`]). Classification is deliberate: only the statuses that say "try again"
//!   are retryable, and the kind records whether the failed attempt could have taken effect.
//! - **How long the server asked to wait** (`Retry-After` and its millisecond cousins), which
//!   becomes the failure's server-directed wait, a floor under the next delay.
//! - **Whether the request may be repeated at all** ([`is_idempotent`],
//!   [`request_is_idempotent`]), for [`Retry::idempotent`](crate::Retry::idempotent).
//!
//! [`HttpClassifier`] classifies both ways: as a [`Classifier`] of an operation that returns
//! its failed responses as errors, and as a [`ClassifyOk`] of one that returns every response
//! as `Ok`, which is how the HTTP layers use it by default. An executor takes it in a closure:
//! `.classify_ok(move |response| http.classify_response(response))`.
//!
//! # Statuses
//!
//! | status | [`Failure`] | why |
//! |---|---|---|
//! | 1xx, 2xx, 3xx | none (`None`) | not a failure |
//! | 408 Request Timeout | [`Rejected`](Failure::Rejected) | the server closed a connection it never read a request from (RFC 9110 §15.5.9): no effect |
//! | 429 Too Many Requests | [`Throttled`](Failure::Throttled), with the wait if given | the server shed the request before processing it (RFC 6585 §4): no effect |
//! | 500, 502, 504 | [`Retryable`](Failure::Retryable) | transient, but the request may have taken effect |
//! | 503 Service Unavailable | [`RetryAfter`](Failure::RetryAfter) with a wait, else [`Retryable`](Failure::Retryable) | temporary overload or maintenance (RFC 9110 §15.6.4); the effect is uncertain |
//! | 501, 505, every other 4xx and 5xx | [`Permanent`](Failure::Permanent) | repeating the same request will not change the answer |
//! | 600 and above | [`Permanent`](Failure::Permanent) | not a status RFC 9110 defines; never retried blindly |
//!
//! Since 408 and 429 are known to have had no effect, even a non-idempotent request (a POST) is
//! retried after them. After a 500, 502, 503 or 504 the server may have acted, so only an
//! idempotent request is retried: a POST that gets a 503 is not.
//!
//! # Server-directed waits
//!
//! A wait is read from a 429 or a 503 only; the same headers on any other status are ignored.
//! Three headers can carry it, consulted in this order:
//!
//! 1. `grpc-retry-pushback-ms` (gRFC A6), milliseconds. If present it takes precedence over
//!    the others. A negative value asks the client not to retry at all, and A6 says an
//!    unparseable value means the same, so either makes the response
//!    [`Permanent`](Failure::Permanent).
//! 2. `Retry-After` (RFC 9110 §10.2.3), delay-seconds (`120`) or an HTTP-date in any of the
//!    three formats. A date is measured from the response's own `Date` header (RFC 9110
//!    §6.6.1) when it is present and valid: both dates then come from the server's clock, so
//!    skew between the two clocks cancels out. Without a valid `Date`, the date is measured from
//!    the `now` argument. A date in the past means "retry now", a zero wait.
//! 3. `x-amz-retry-after` (AWS), milliseconds, when there is no usable `Retry-After`.
//!
//! A 503 with a wait becomes [`RetryAfter(wait)`](Failure::RetryAfter) and a 429 becomes
//! [`Throttled(Some(wait))`](Failure::Throttled). The executor never retries sooner than that,
//! and gives up if the wait is longer than its
//! [`max_server_wait`](crate::Retry::max_server_wait) or does not fit the deadline.
//!
//! A malformed `Retry-After` or `x-amz-retry-after` value (including bytes that are not
//! visible ASCII) is ignored: the failure keeps its kind, without a wait. With the `tracing`
//! feature, each ignored value, and each unparseable pushback, is reported in a `warn` event
//! with target `stagger`. No header value, whatever its bytes, makes these functions panic.
//! Only the first value of a repeated header is read.
//!
//! # Idempotency
//!
//! RFC 9110 §9.2.2 defines GET, HEAD, OPTIONS, TRACE, PUT and DELETE as idempotent: repeating
//! them has the same effect as sending them once, so they may be retried after any transient
//! failure. POST, PATCH, CONNECT and extension methods are not, unless the request carries a
//! non-empty `Idempotency-Key` header (IETF draft-ietf-httpapi-idempotency-key-header), with
//! which the server recognises and discards repeats.
//!
//! # Example
//!
//! ```
//! use std::time::{Duration, UNIX_EPOCH};
//! use http::{HeaderMap, Method, Response, StatusCode};
//! use stagger::http::{HttpClassifier, is_idempotent};
//! use stagger::Failure;
//!
//! let classifier = HttpClassifier::with_clock(UNIX_EPOCH);
//! let busy = Response::builder().status(503).header("retry-after", "2").body(()).unwrap();
//! assert_eq!(
//!     classifier.classify_response(&busy),
//!     Some(Failure::RetryAfter(Duration::from_secs(2)))
//! );
//! assert_eq!(classifier.classify_response(&Response::new(())), None); // 200 OK
//!
//! let headers = HeaderMap::new();
//! assert!(is_idempotent(&Method::GET, &headers));
//! assert!(!is_idempotent(&Method::POST, &headers));
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::header::{DATE, RETRY_AFTER};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode};
use stagger_core::Failure;
use stagger_core::retry_after::{
    Pushback, parse_amz_retry_after, parse_grpc_pushback, parse_retry_after,
};

use crate::classify::{Classifier, ClassifyOk};
use crate::clock::{SystemClock, WallClock};

/// The gRPC pushback header (gRFC A6).
const GRPC_RETRY_PUSHBACK_MS: &str = "grpc-retry-pushback-ms";
/// The AWS millisecond wait header.
const X_AMZ_RETRY_AFTER: &str = "x-amz-retry-after";
/// The header that makes any method idempotent.
const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// The kind of failure a response status is, with the wait its headers ask for; `None` if the
/// status is not a failure (1xx, 2xx, 3xx).
///
/// `now` is the wall-clock time the response was received. It is used only to measure a
/// date-valued `Retry-After` when the response has no valid `Date` header. See the
/// [module docs](self) for the full rules.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use http::{HeaderMap, HeaderValue, StatusCode};
/// use stagger::http::classify_status;
/// use stagger::Failure;
///
/// let now = UNIX_EPOCH;
/// let none = HeaderMap::new();
/// assert_eq!(classify_status(StatusCode::OK, &none, now), None);
/// assert_eq!(classify_status(StatusCode::REQUEST_TIMEOUT, &none, now), Some(Failure::Rejected));
/// assert_eq!(classify_status(StatusCode::BAD_GATEWAY, &none, now), Some(Failure::Retryable));
/// assert_eq!(classify_status(StatusCode::NOT_FOUND, &none, now), Some(Failure::Permanent));
///
/// let mut wait = HeaderMap::new();
/// wait.insert("retry-after", HeaderValue::from_static("3"));
/// let three = Duration::from_secs(3);
/// assert_eq!(
///     classify_status(StatusCode::TOO_MANY_REQUESTS, &wait, now),
///     Some(Failure::Throttled(Some(three)))
/// );
/// assert_eq!(
///     classify_status(StatusCode::SERVICE_UNAVAILABLE, &wait, now),
///     Some(Failure::RetryAfter(three))
/// );
/// // Retry-After is read from 429 and 503 only.
/// assert_eq!(
///     classify_status(StatusCode::INTERNAL_SERVER_ERROR, &wait, now),
///     Some(Failure::Retryable)
/// );
/// ```
#[must_use]
pub fn classify_status(
    status: StatusCode,
    headers: &HeaderMap,
    now: SystemTime,
) -> Option<Failure> {
    let failure = match status.as_u16() {
        100..=399 => return None,
        408 => Failure::Rejected,
        429 => match server_directive(headers, now) {
            Directive::Wait(wait) => Failure::Throttled(Some(wait)),
            Directive::Nothing => Failure::Throttled(None),
            Directive::DoNotRetry => Failure::Permanent,
        },
        503 => match server_directive(headers, now) {
            Directive::Wait(wait) => Failure::RetryAfter(wait),
            Directive::Nothing => Failure::Retryable,
            Directive::DoNotRetry => Failure::Permanent,
        },
        500 | 502 | 504 => Failure::Retryable,
        _ => Failure::Permanent,
    };
    Some(failure)
}

/// The kind of failure `response` is; `None` if its status is not a failure. The same as
/// [`classify_status`] with the response's status and headers.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use http::Response;
/// use stagger::http::classify_response;
/// use stagger::Failure;
///
/// let now = UNIX_EPOCH + Duration::from_secs(1_445_412_000);
/// // The date is 480 s after the response's own Date, so the wait is 480 s, whatever `now` is.
/// let response = Response::builder()
///     .status(429)
///     .header("date", "Wed, 21 Oct 2015 07:20:00 GMT")
///     .header("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")
///     .body(())
///     .unwrap();
/// assert_eq!(
///     classify_response(&response, now),
///     Some(Failure::Throttled(Some(Duration::from_secs(480))))
/// );
/// ```
#[must_use]
pub fn classify_response<B>(response: &Response<B>, now: SystemTime) -> Option<Failure> {
    classify_status(response.status(), response.headers(), now)
}

/// Whether a request with this method and these headers may be repeated safely.
///
/// GET, HEAD, OPTIONS, TRACE, PUT and DELETE are idempotent (RFC 9110 §9.2.2). Any method is
/// idempotent with a non-empty `Idempotency-Key` header. Every other method (POST, PATCH,
/// CONNECT, extension methods) is not. Method names are case-sensitive: `get` is not `GET`.
///
/// ```
/// use http::{HeaderMap, HeaderValue, Method};
/// use stagger::http::is_idempotent;
///
/// let mut headers = HeaderMap::new();
/// assert!(is_idempotent(&Method::PUT, &headers));
/// assert!(!is_idempotent(&Method::POST, &headers));
/// headers.insert("idempotency-key", HeaderValue::from_static("8e03978e-40d5"));
/// assert!(is_idempotent(&Method::POST, &headers));
/// ```
#[must_use]
pub fn is_idempotent(method: &Method, headers: &HeaderMap) -> bool {
    let by_method = matches!(
        method.as_str(),
        "GET" | "HEAD" | "OPTIONS" | "TRACE" | "PUT" | "DELETE"
    );
    by_method
        || headers
            .get(IDEMPOTENCY_KEY)
            .is_some_and(|key| !trim_ows(key.as_bytes()).is_empty())
}

/// Whether `request` may be repeated safely: [`is_idempotent`] with its method and headers.
///
/// ```
/// use http::Request;
/// use stagger::http::request_is_idempotent;
///
/// let get = Request::get("https://example.com/").body(()).unwrap();
/// let post = Request::post("https://example.com/orders").body(()).unwrap();
/// let keyed = Request::post("https://example.com/orders")
///     .header("Idempotency-Key", "order-17")
///     .body(())
///     .unwrap();
/// assert!(request_is_idempotent(&get));
/// assert!(!request_is_idempotent(&post));
/// assert!(request_is_idempotent(&keyed));
/// ```
#[must_use]
pub fn request_is_idempotent<B>(request: &Request<B>) -> bool {
    is_idempotent(request.method(), request.headers())
}

/// The destination a request goes to, as the key of a [`Gate`](stagger_core::gate::Gate) or a
/// [`BudgetPerDestination`](stagger_core::budget::BudgetPerDestination) budget: its host, in lower
/// case and without a final dot, and its port (the scheme's default if none is given), without the
/// user name or password. A request whose URI has no authority is keyed by its `Host` header (port
/// 80 if it names none: a relative URI does not say whether the connection is TLS), and one with
/// neither by the empty key, which all such requests share. The host is taken as written: names are
/// not resolved, nor IP addresses put in one form, so two spellings of one host are two
/// destinations.
///
/// ```
/// use http::Request;
/// use stagger::http::destination;
///
/// let request = Request::get("https://user:secret@API.Example.com/v1").body(()).unwrap();
/// assert_eq!(&*destination(&request), "api.example.com:443");
/// let request = Request::get("http://127.0.0.1:8080/").body(()).unwrap();
/// assert_eq!(&*destination(&request), "127.0.0.1:8080");
/// let request = Request::get("/relative").header("host", "Cache:81").body(()).unwrap();
/// assert_eq!(&*destination(&request), "cache:81");
/// let request = Request::get("http://[::1]:8080/").body(()).unwrap();
/// assert_eq!(&*destination(&request), "[::1]:8080");
/// let request = Request::get("https://example.com./").body(()).unwrap();
/// assert_eq!(&*destination(&request), "example.com:443");
/// ```
#[must_use]
pub fn destination<B>(request: &Request<B>) -> Arc<str> {
    let uri = request.uri();
    if let Some(host) = uri.host() {
        let port = uri
            .port_u16()
            .or_else(|| default_port(uri.scheme_str().unwrap_or("http")));
        return destination_key(host, port);
    }
    let host = request
        .headers()
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.parse::<http::uri::Authority>().ok());
    match host {
        Some(authority) => destination_key(
            authority.host(),
            authority.port_u16().or_else(|| default_port("http")),
        ),
        None => Arc::from(""),
    }
}

/// The port a scheme defaults to.
pub(crate) fn default_port(scheme: &str) -> Option<u16> {
    let is = |name: &str| scheme.eq_ignore_ascii_case(name);
    if is("http") || is("ws") {
        Some(80)
    } else if is("https") || is("wss") {
        Some(443)
    } else {
        None
    }
}

/// The key of the destination `host` and `port`: the host in lower case without the dot that
/// ends a fully qualified name, then the port.
pub(crate) fn destination_key(host: &str, port: Option<u16>) -> Arc<str> {
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    match port {
        Some(port) => format!("{host}:{port}").into(),
        None => host.into(),
    }
}

/// A classifier for executors whose error is an [`http::Response`], reading the wall clock from
/// `W` when a response arrives.
///
/// The executor classifies only the errors an operation returns, so the operation decides which
/// responses are errors, usually every non-2xx one. A response whose status is not a failure
/// (1xx, 2xx, 3xx) that is returned as an error anyway is classified as
/// [`Failure::Permanent`]: nothing says retrying it will help.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use http::Response;
/// use stagger::http::HttpClassifier;
/// use stagger::Failure;
/// use stagger::classify::Classifier;
///
/// let classifier = HttpClassifier::with_clock(UNIX_EPOCH);
/// let throttled = Response::builder().status(429).header("retry-after", "1").body(()).unwrap();
/// let error = Response::builder().status(500).body(()).unwrap();
/// assert_eq!(
///     classifier.classify(&throttled),
///     Failure::Throttled(Some(Duration::from_secs(1)))
/// );
/// assert_eq!(classifier.classify(&error), Failure::Retryable);
/// assert_eq!(classifier.classify(&Response::new(())), Failure::Permanent); // 200 as an error
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct HttpClassifier<W = SystemClock> {
    clock: W,
}

impl HttpClassifier {
    /// A classifier that reads the operating system's wall clock ([`SystemClock`]).
    ///
    /// ```
    /// use http::Response;
    /// use stagger::http::HttpClassifier;
    /// use stagger::Failure;
    ///
    /// let bad = Response::builder().status(400).body(()).unwrap();
    /// assert_eq!(HttpClassifier::new().classify_response(&bad), Some(Failure::Permanent));
    /// ```
    #[must_use]
    pub const fn new() -> Self {
        Self { clock: SystemClock }
    }
}

impl<W> HttpClassifier<W> {
    /// A classifier that reads the wall clock from `clock`: a fixed `SystemTime` in tests, any
    /// `Fn() -> SystemTime`, or any other [`WallClock`].
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    /// use http::Response;
    /// use stagger::http::HttpClassifier;
    /// use stagger::Failure;
    ///
    /// // Wed, 21 Oct 2015 07:28:00 GMT, less 90 seconds.
    /// let now = UNIX_EPOCH + Duration::from_secs(1_445_412_480 - 90);
    /// let classifier = HttpClassifier::with_clock(move || now);
    /// let busy = Response::builder()
    ///     .status(503)
    ///     .header("retry-after", "Wed, 21 Oct 2015 07:28:00 GMT")
    ///     .body(())
    ///     .unwrap();
    /// assert_eq!(
    ///     classifier.classify_response(&busy),
    ///     Some(Failure::RetryAfter(Duration::from_secs(90)))
    /// );
    /// ```
    #[must_use]
    pub const fn with_clock(clock: W) -> Self {
        Self { clock }
    }
}

impl<W: WallClock> HttpClassifier<W> {
    /// The kind of failure `response` is, or `None` if its status is not a failure:
    /// [`classify_response`] at this classifier's current wall-clock time.
    ///
    /// ```
    /// use std::time::UNIX_EPOCH;
    /// use http::Response;
    /// use stagger::http::HttpClassifier;
    /// use stagger::Failure;
    ///
    /// let classifier = HttpClassifier::with_clock(UNIX_EPOCH);
    /// let gone = Response::builder().status(410).body(()).unwrap();
    /// assert_eq!(classifier.classify_response(&gone), Some(Failure::Permanent));
    /// assert_eq!(classifier.classify_response(&Response::new(())), None);
    /// ```
    #[must_use]
    pub fn classify_response<B>(&self, response: &Response<B>) -> Option<Failure> {
        classify_response(response, self.clock.now())
    }

    /// A successful answer's status and headers as the HTTP rules see them: below 400 nothing
    /// is a failure, answered without reading the wall clock; above, [`classify_status`] at
    /// this classifier's time. What the tower layer and the reqwest middleware run on every
    /// response.
    #[inline]
    pub(crate) fn classify_answer(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
    ) -> Option<Failure> {
        if status.as_u16() < 400 {
            return None;
        }
        classify_status(status, headers, self.clock.now())
    }
}

impl<B, W: WallClock> Classifier<Response<B>> for HttpClassifier<W> {
    fn classify(&self, error: &Response<B>) -> Failure {
        self.classify_response(error).unwrap_or(Failure::Permanent)
    }
}

/// The HTTP classifier looks at successful responses too: the tower layer's default
/// classification of the inner service's responses. A response it refuses (a 503) is retried;
/// when the run gives up, it goes back to the caller.
impl<B, W: WallClock> ClassifyOk<Response<B>> for HttpClassifier<W> {
    type Kept = Response<B>;

    #[inline]
    fn classify_ok(&self, response: &Response<B>) -> Option<Failure> {
        self.classify_answer(response.status(), response.headers())
    }

    #[inline]
    fn keep(response: Response<B>) -> Option<Response<B>> {
        Some(response)
    }
}

/// What a 429's or 503's headers ask of the client.
enum Directive {
    /// No usable wait.
    Nothing,
    /// Wait at least this long.
    Wait(Duration),
    /// Do not retry (a negative or unparseable gRPC pushback).
    DoNotRetry,
}

/// Reads the server-directed wait, in the module docs' order.
fn server_directive(headers: &HeaderMap, now: SystemTime) -> Directive {
    if let Some(value) = headers.get(GRPC_RETRY_PUSHBACK_MS) {
        return match text(value).and_then(|v| parse_grpc_pushback(v).map_err(Malformed::Value)) {
            Ok(Pushback::After(wait)) => Directive::Wait(wait),
            // `Pushback` may grow: anything but a wait is taken as A6's "do not retry".
            Ok(_) => Directive::DoNotRetry,
            Err(error) => {
                ignored(
                    GRPC_RETRY_PUSHBACK_MS,
                    value,
                    &error,
                    "not retrying, per gRFC A6",
                );
                Directive::DoNotRetry
            }
        };
    }
    if let Some(value) = headers.get(RETRY_AFTER) {
        let now = server_date(headers).unwrap_or(now);
        match text(value).and_then(|v| parse_retry_after(v, now).map_err(Malformed::Value)) {
            Ok(wait) => return Directive::Wait(wait),
            Err(error) => ignored(RETRY_AFTER.as_str(), value, &error, "ignored"),
        }
    }
    if let Some(value) = headers.get(X_AMZ_RETRY_AFTER) {
        match text(value).and_then(|v| parse_amz_retry_after(v).map_err(Malformed::Value)) {
            Ok(wait) => return Directive::Wait(wait),
            Err(error) => ignored(X_AMZ_RETRY_AFTER, value, &error, "ignored"),
        }
    }
    Directive::Nothing
}

/// The response's `Date` (RFC 9110 §6.6.1), if present and a valid HTTP-date.
fn server_date(headers: &HeaderMap) -> Option<SystemTime> {
    let value = headers.get(DATE)?.to_str().ok()?;
    // An HTTP-date always names a day or month, so a value with no letters is not one; this
    // keeps the parser's delay-seconds form (digits only) from being taken for a date.
    if !value.bytes().any(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    // Measured from the epoch, an HTTP-date's wait is the date itself.
    let since_epoch = parse_retry_after(value, UNIX_EPOCH).ok()?;
    UNIX_EPOCH.checked_add(since_epoch)
}

/// Why a header value could not be read.
enum Malformed {
    /// Bytes that are not visible ASCII.
    NotText,
    /// Text the parser refused.
    Value(stagger_core::retry_after::RetryAfterError),
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotText => write!(f, "not visible ASCII text"),
            Self::Value(error) => error.fmt(f),
        }
    }
}

/// A header value as text, if it is visible ASCII.
fn text(value: &HeaderValue) -> Result<&str, Malformed> {
    value.to_str().map_err(|_| Malformed::NotText)
}

/// `bytes` without HTTP's optional whitespace (spaces and tabs) at either end.
fn trim_ows(bytes: &[u8]) -> &[u8] {
    let is_ows = |b: &u8| *b == b' ' || *b == b'\t';
    let start = bytes.iter().position(|b| !is_ows(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !is_ows(b))
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}

/// Reports a server-directed wait that could not be read, and what was done about it.
#[inline]
fn ignored(header: &str, value: &HeaderValue, error: &Malformed, action: &str) {
    #[cfg(feature = "tracing")]
    tracing::warn!(
        target: "stagger",
        header,
        value = ?value,
        error = %error,
        "malformed server-directed wait: {action}"
    );
    #[cfg(not(feature = "tracing"))]
    let _ = (header, value, error, action);
}
