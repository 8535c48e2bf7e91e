//! [`RetryOverrides`]: one request's own settings, the same extension for tower and reqwest,
//! and how an HTTP layer turns its settings and a request into one run's.

use std::time::Duration;

use stagger_core::engine::Settings;
use stagger_core::policy::LazyPolicy;
use stagger_core::{AnyConfig, ConfigError, Failure, IntoPolicy, Policy, PolicyConfig};

/// One request's own settings, as a request extension: what is `None` keeps the layer's.
///
/// Accepted alike by the tower [`RetryLayer`](crate::tower::RetryLayer) (insert it in the
/// request's extensions) and the reqwest [`RetryMiddleware`](crate::reqwest::RetryMiddleware)
/// (`RequestBuilder::with_extension`). An invalid policy fails that request with its
/// [`ConfigError`], before any attempt.
///
/// ```
/// use std::time::Duration;
/// use stagger::tower::RetryOverrides;
/// use stagger::policy::Immediate;
///
/// // A POST the server deduplicates by other means, with a shorter deadline of its own.
/// let overrides = RetryOverrides::new()
///     .idempotent(true)
///     .timeout(Duration::from_millis(500))
///     .policy(Immediate::new().with_max_attempts(2));
/// let mut request = http::Request::post("http://localhost/orders").body(()).unwrap();
/// request.extensions_mut().insert(overrides);
/// assert_eq!(overrides.timeout, Some(Duration::from_millis(500)));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct RetryOverrides {
    /// The policy for this request.
    pub policy: Option<AnyConfig>,
    /// The end-to-end timeout for this request, in place of the layer's deadline.
    pub timeout: Option<Duration>,
    /// Whether this request may be repeated safely, whatever its method and headers say.
    pub idempotent: Option<bool>,
}

impl RetryOverrides {
    /// No override.
    #[must_use]
    pub const fn new() -> Self {
        Self {
            policy: None,
            timeout: None,
            idempotent: None,
        }
    }

    /// Uses `policy` for this request.
    #[must_use]
    pub fn policy(mut self, policy: impl Into<AnyConfig>) -> Self {
        self.policy = Some(policy.into());
        self
    }

    /// Gives this request its own end-to-end timeout.
    #[must_use]
    pub const fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Declares this request idempotent, or not.
    #[must_use]
    pub const fn idempotent(mut self, idempotent: bool) -> Self {
        self.idempotent = Some(idempotent);
        self
    }

    /// The run of one request: the layer's `policy` and `settings` with these overrides. The
    /// request is idempotent by its override, else by the layer's settings, else by
    /// `by_request` (its method and headers).
    pub(crate) fn apply<P>(
        overrides: Option<&Self>,
        policy: P,
        settings: Settings,
        by_request: impl FnOnce() -> bool,
    ) -> (RequestPolicy<P>, Settings) {
        let overrides = overrides.copied().unwrap_or_default();
        let idempotent = overrides
            .idempotent
            .or(settings.idempotent())
            .unwrap_or_else(by_request);
        let mut settings = settings.with_idempotent(idempotent);
        if let Some(timeout) = overrides.timeout {
            settings = settings.with_timeout(timeout);
        }
        let policy = RequestPolicy {
            layer: policy,
            request: overrides.policy,
        };
        (policy, settings)
    }
}

/// The policy of one request: the layer's configuration, or the request's own.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RequestPolicy<P> {
    layer: P,
    request: Option<AnyConfig>,
}

impl<P: PolicyConfig> RequestPolicy<P> {
    /// The most attempts the request's policy allows.
    #[cfg(feature = "tower")]
    pub(crate) fn max_attempts(&self) -> u32 {
        self.request
            .as_ref()
            .map_or_else(|| self.layer.max_attempts(), PolicyConfig::max_attempts)
    }
}

impl<P: PolicyConfig> IntoPolicy for RequestPolicy<P> {
    type Policy = RequestRunPolicy<P>;

    fn into_policy(self) -> Result<RequestRunPolicy<P>, ConfigError> {
        Ok(match self.request {
            Some(config) => RequestRunPolicy::Request(LazyPolicy::new(config)?),
            None => RequestRunPolicy::Layer(LazyPolicy::new(self.layer)?),
        })
    }
}

/// The running policy of one request, built with its own generator when it first fails.
#[derive(Debug)]
pub(crate) enum RequestRunPolicy<P: PolicyConfig> {
    Layer(LazyPolicy<P>),
    Request(LazyPolicy<AnyConfig>),
}

impl<P: PolicyConfig> Policy for RequestRunPolicy<P> {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        match self {
            Self::Layer(policy) => policy.next_delay(attempt, failure),
            Self::Request(policy) => policy.next_delay(attempt, failure),
        }
    }
}
