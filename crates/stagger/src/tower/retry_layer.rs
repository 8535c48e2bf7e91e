//! [`RetryLayer`]: a tower layer that retries each request.

use std::fmt;

use http::Request;
use http_body::Body;
use stagger_core::budget::PerDestination;
#[cfg(feature = "serde")]
use stagger_core::config::SpecPerDestination;
use stagger_core::{AnyConfig, ConfigError, PolicyConfig};

use super::classify::ByIoCause;
use super::future;
use crate::clock::DefaultClock;
use crate::hooks::{HookSet, Hooks, per_request};
use crate::http::{HttpClassifier, request_is_idempotent};
use crate::overrides::RetryOverrides;
use crate::parts::Parts;
use crate::setup::Setup;
use crate::sleep::DefaultSleeper;

/// The hooks of a [`RetryLayer`] by default: errors by their I/O cause, responses by the HTTP
/// classifier, the async default sleeper and clock, no budget, no hook.
pub type LayerHooks = Hooks<ByIoCause, HttpClassifier>;

/// The hooks of a layer built from a configuration file: the defaults, with the file's budget,
/// if it names one.
#[cfg(feature = "serde")]
pub type SpecHooks =
    Hooks<ByIoCause, HttpClassifier, DefaultSleeper, DefaultClock, SpecPerDestination>;

/// A tower [`Layer`](tower_layer::Layer) that retries HTTP requests; see the [module docs](super).
///
/// `P` is the policy configuration, `H` the [`Hooks`]: how errors and responses are
/// classified, the sleeper, the clock, the budget and the retry hook. The defaults: no
/// deadline, idempotency by the request's method, a 5-minute longest server wait, one attempt
/// when nested, no buffering, [`LayerHooks`].
#[derive(Clone)]
#[must_use = "a layer does nothing until it wraps a service"]
pub struct RetryLayer<P = AnyConfig, H = LayerHooks> {
    policy: P,
    setup: Setup<H>,
    buffer_limit: Option<usize>,
}

impl<P: PolicyConfig> RetryLayer<P> {
    /// A layer that retries under `policy`: any configuration in the catalog, an
    /// [`AnyConfig`], or your own [`PolicyConfig`].
    ///
    /// # Errors
    ///
    /// The policy's [`ConfigError`], if it is invalid: checked once, here.
    pub fn new(policy: P) -> Result<Self, ConfigError> {
        policy.validate()?;
        Ok(Self::with_parts(policy, Setup::new(layer_hooks())))
    }
}

/// The hooks a layer starts with: [`LayerHooks`].
pub(super) fn layer_hooks() -> LayerHooks {
    Hooks::with_time(DefaultSleeper::default(), DefaultClock::default())
        .classifier(ByIoCause)
        .ok(HttpClassifier::new())
}

#[cfg(feature = "serde")]
impl RetryLayer<AnyConfig, SpecHooks> {
    /// A layer as a configuration file describes it, in one call: its policy, its
    /// [`Settings`](stagger_core::engine::Settings) and its budget (one budget, shared by every request of the layer's
    /// services, or one per host and port with `budget_per_destination`), behind a gate per
    /// host and port if the file has a `gate` ([`RetrySpec::to_budgets`](stagger_core::config::RetrySpec::to_budgets)).
    ///
    /// ```
    /// # #[cfg(feature = "tokio")]
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use stagger::config::RetrySpec;
    /// use stagger::tower::RetryLayer;
    ///
    /// let spec: RetrySpec = serde_json::from_str(
    ///     r#"{"policy": "exponential-full-jitter", "max_attempts": 3, "timeout": "2s", "budget": "aws-standard"}"#,
    /// )?;
    /// let layer = RetryLayer::from_spec(&spec)?;
    /// # let _ = layer;
    /// # Ok(())
    /// # }
    /// # #[cfg(not(feature = "tokio"))]
    /// # fn main() {}
    /// ```
    ///
    /// # Errors
    ///
    /// The first [`ConfigError`] of the file, naming the field.
    pub fn from_spec(spec: &stagger_core::config::RetrySpec) -> Result<Self, ConfigError> {
        let refusal = "the file hedges: build the layer with HedgeLayer::from_spec";
        let (policy, setup) = crate::setup::from_spec(spec, layer_hooks(), Some(refusal))?;
        Ok(Self::with_parts(policy, setup))
    }
}

impl<P, H> RetryLayer<P, H> {
    /// Reads each request body into memory, up to `max_bytes`, so that it can be sent again:
    /// a setting of a body. A larger body is sent once. Without this, only empty bodies are
    /// replayed.
    pub fn buffer_bodies(mut self, max_bytes: usize) -> Self {
        self.buffer_limit = Some(max_bytes);
        self
    }
}

impl<P, H> crate::surface::sealed::Front for RetryLayer<P, H> {}

impl<P, H, E> crate::surface::Fails<E> for RetryLayer<P, H> {}

impl<P, H, T> crate::surface::Succeeds<T> for RetryLayer<P, H> {}

crate::surface::surface! {
    front: RetryLayer<P>,
    generics: [P,],
    where: [],
    setup: |this| this.setup,
    map: with_setup,
    sleeper: [Sized],
    budget: [Sized],
    gate: [],
}

impl<P, H> RetryLayer<P, H> {
    /// A layer of `policy` and `setup`, without buffering.
    pub(super) const fn with_parts(policy: P, setup: Setup<H>) -> Self {
        Self {
            policy,
            setup,
            buffer_limit: None,
        }
    }

    /// The same layer with the setup `f` makes of its own: every setter is one call of this.
    #[inline]
    fn with_setup<H2>(self, f: impl FnOnce(Setup<H>) -> Setup<H2>) -> RetryLayer<P, H2> {
        RetryLayer {
            policy: self.policy,
            setup: f(self.setup),
            buffer_limit: self.buffer_limit,
        }
    }
}

impl<P, H> fmt::Debug for RetryLayer<P, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RetryLayer")
            .field("settings", &self.setup.settings)
            .field("buffer_limit", &self.buffer_limit)
            .finish_non_exhaustive()
    }
}

/// The run of one request, as a layer makes it.
type RequestRun<Svc, B, P, H> =
    Parts<future::TowerOp<Svc, B>, crate::overrides::RequestPolicy<P>, crate::hooks::PerRequest<H>>;

impl<P: PolicyConfig, H: HookSet + Clone> RetryLayer<P, H>
where
    H::Budget: PerDestination,
{
    /// The run of `request` on the `ready` service: the request's policy and settings (its
    /// overrides, its idempotency), its hooks keyed by its destination. `max_attempts` is the
    /// most attempts the run will make, if not the policy's (a hedged run's).
    pub(super) fn run<Svc, B: Body>(
        &self,
        ready: Svc,
        request: Request<B>,
        max_attempts: Option<u32>,
    ) -> RequestRun<Svc, B, P, H> {
        let overrides = request.extensions().get::<RetryOverrides>();
        let (policy, settings) =
            RetryOverrides::apply(overrides, self.policy, self.setup.settings, || {
                request_is_idempotent(&request)
            });
        let hooks = per_request(&self.setup.hooks, || crate::http::destination(&request));
        let max_attempts = max_attempts.unwrap_or_else(|| policy.max_attempts());
        let op = future::TowerOp::new(ready, request, self.buffer_limit, max_attempts);
        let mut parts = Parts::new(op, policy, hooks);
        parts.setup.settings = settings;
        parts
    }
}
