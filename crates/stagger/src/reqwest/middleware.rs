//! [`RetryMiddleware`]: a reqwest middleware that retries each request, and the hooks it can
//! run them with.

use ::reqwest::Response;
use reqwest_middleware::Error;
use stagger_core::budget::{PerDestination, Unlimited};
#[cfg(feature = "serde")]
use stagger_core::config::SpecPerDestination;
use stagger_core::{AnyConfig, ConfigError, PolicyConfig};

use super::classify::ByTransport;
use crate::classify::{Classifier, ClassifyOk};
use crate::clock::{Clock, TokioClock};
use crate::hooks::{HookSet, Hooks};
use crate::http::HttpClassifier;
use crate::notify::Notify;
use crate::setup::Setup;
use crate::sleep::{Sleeper, TokioSleeper};

/// The hooks of a [`RetryMiddleware`]: client errors by reqwest's tests ([`ByTransport`]),
/// responses by the HTTP rules on the operating system's wall clock ([`HttpClassifier`]),
/// tokio's sleep and clock, no budget, no hook.
pub type MiddlewareHooks = Hooks<ByTransport, HttpClassifier, TokioSleeper, TokioClock>;

/// The hooks of a middleware built from a configuration file: the defaults, with the file's
/// budget, if it names one.
#[cfg(feature = "serde")]
pub type SpecHooks =
    Hooks<ByTransport, HttpClassifier, TokioSleeper, TokioClock, SpecPerDestination>;

/// A reqwest-middleware [`Middleware`](reqwest_middleware::Middleware) that retries each request with the engine; see the
/// [module docs](super).
///
/// `P` is the policy configuration (any configuration of the catalog, an [`AnyConfig`], or your
/// own [`PolicyConfig`]), `H` the [`Hooks`]: the classifiers, the sleeper, the clock, the budget
/// and the retry hook. Its settings are every front end's (see the [list](crate::surface)).
#[must_use = "a middleware does nothing until a client is built with it"]
#[derive(Clone, Debug)]
pub struct RetryMiddleware<P = AnyConfig, H = MiddlewareHooks> {
    pub(super) policy: P,
    pub(super) setup: Setup<H>,
}

/// The hooks a middleware starts with: [`MiddlewareHooks`].
pub(super) const fn middleware_hooks() -> MiddlewareHooks {
    Hooks {
        classifier: ByTransport,
        ok: HttpClassifier::new(),
        sleeper: TokioSleeper,
        clock: TokioClock::new(),
        budget: Unlimited,
        notify: (),
    }
}

impl<P, H> RetryMiddleware<P, H> {
    /// A middleware of `policy` and `setup`.
    pub(super) const fn with_parts(policy: P, setup: Setup<H>) -> Self {
        Self { policy, setup }
    }

    /// The same middleware with the setup `f` makes of its own: every setting that changes
    /// the middleware's type is one call of this.
    #[inline]
    fn with_setup<H2>(self, f: impl FnOnce(Setup<H>) -> Setup<H2>) -> RetryMiddleware<P, H2> {
        RetryMiddleware {
            policy: self.policy,
            setup: f(self.setup),
        }
    }
}

impl<P: PolicyConfig> RetryMiddleware<P> {
    /// Retries under `policy`, with no deadline and no budget. Each request builds a policy of
    /// its own from it, with its own generator, when it first fails.
    ///
    /// # Errors
    ///
    /// The [`ConfigError`] naming the policy's first invalid parameter.
    pub fn new(policy: P) -> std::result::Result<Self, ConfigError> {
        policy.validate()?;
        Ok(Self::with_parts(policy, Setup::new(middleware_hooks())))
    }
}

#[cfg(feature = "serde")]
impl RetryMiddleware<AnyConfig, SpecHooks> {
    /// A middleware as a configuration file describes it, in one call: its policy, its
    /// [`Settings`](stagger_core::engine::Settings) and its budget (one budget, shared by every
    /// request of the client, or one per host and port with `budget_per_destination`), behind a
    /// gate per host and port if the file has a `gate`
    /// ([`RetrySpec::to_budgets`](stagger_core::config::RetrySpec::to_budgets)).
    ///
    /// ```
    /// use stagger::config::RetrySpec;
    /// use stagger::reqwest::RetryMiddleware;
    ///
    /// let spec: RetrySpec = serde_json::from_str(r#"{"preset": "aws-standard", "budget": "aws-standard"}"#)?;
    /// let client = reqwest_middleware::ClientBuilder::new(reqwest::Client::new())
    ///     .with(RetryMiddleware::from_spec(&spec)?)
    ///     .build();
    /// # let _ = client;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The first [`ConfigError`] of the file, naming the field; a file with a `hedging` table
    /// is refused (build it with [`HedgedMiddleware::from_spec`](super::HedgedMiddleware::from_spec)).
    pub fn from_spec(spec: &stagger_core::config::RetrySpec) -> Result<Self, ConfigError> {
        let refusal = "the file hedges: build the middleware with HedgedMiddleware::from_spec";
        let (policy, setup) = crate::setup::from_spec(spec, middleware_hooks(), Some(refusal))?;
        Ok(Self::with_parts(policy, setup))
    }
}

impl<P, H> crate::surface::sealed::Front for RetryMiddleware<P, H> {}

impl<P, H> crate::surface::Fails<Error> for RetryMiddleware<P, H> {}

impl<P, H> crate::surface::Succeeds<Response> for RetryMiddleware<P, H> {}

crate::surface::surface! {
    front: RetryMiddleware<P>,
    generics: [P,],
    where: [],
    setup: |this| this.setup,
    map: with_setup,
    sleeper: [Sized],
    budget: [Sized],
    gate: [],
}

/// Hooks a middleware can run each request with: each part shared by the client's requests
/// (`Send + Sync + 'static`), and fit for reqwest's responses and reqwest-middleware's errors.
/// Every [`Hooks`] whose parts fit is one.
#[diagnostic::on_unimplemented(
    message = "the middleware's hooks do not fit reqwest's responses and errors, or are not `Clone + Send + Sync + 'static`",
    note = "classifiers take `&reqwest_middleware::Error` and `&reqwest::Response`: `.classify(|e| ...)`, `.classify_ok(|response| ...)`"
)]
pub trait RequestHooks:
    HookSet<
        Classifier: Classifier<Error> + Clone + Send + Sync + 'static,
        Ok: ClassifyOk<Response, Kept = Response> + Send + Sync + 'static,
        Sleeper: Sleeper<Sleep: Send> + Clone + Send + Sync + 'static,
        Clock: Clock + Clone + Send + Sync + 'static,
        Budget: PerDestination<Budget: Send> + Send + Sync + 'static,
        Notify: Notify<Response, Error> + Clone + Send + Sync + 'static,
    >
    + Send
    + Sync
    + 'static
    + sealed::Sealed
{
}

impl<C, V, S, K, B, N> RequestHooks for Hooks<C, V, S, K, B, N>
where
    C: Classifier<Error> + Clone + Send + Sync + 'static,
    V: ClassifyOk<Response, Kept = Response> + Send + Sync + 'static,
    S: Sleeper + Clone + Send + Sync + 'static,
    S::Sleep: Send,
    K: Clock + Clone + Send + Sync + 'static,
    B: PerDestination + Send + Sync + 'static,
    B::Budget: Send,
    N: Notify<Response, Error> + Clone + Send + Sync + 'static,
{
}

mod sealed {
    /// Keeps [`RequestHooks`](super::RequestHooks) implemented by [`Hooks`](super::Hooks)
    /// alone.
    pub trait Sealed {}

    impl<C, V, S, K, B, N> Sealed for super::Hooks<C, V, S, K, B, N> {}
}
