//! [`HedgedMiddleware`]: a reqwest middleware that hedges each request,
//! [`RetryMiddleware::hedge`].

use stagger_core::AnyConfig;
#[cfg(feature = "serde")]
use stagger_core::ConfigError;

#[cfg(feature = "serde")]
use super::middleware::SpecHooks;
use super::middleware::{MiddlewareHooks, RetryMiddleware};
use crate::hedge::Hedges;

/// A reqwest-middleware [`Middleware`](reqwest_middleware::Middleware) that hedges each request:
/// [`RetryMiddleware::hedge`].
#[must_use = "a middleware does nothing until a client is built with it"]
#[derive(Clone, Debug)]
pub struct HedgedMiddleware<P = AnyConfig, H = MiddlewareHooks> {
    pub(super) retry: RetryMiddleware<P, H>,
    pub(super) hedges: Hedges,
}

#[cfg(feature = "serde")]
impl HedgedMiddleware<AnyConfig, SpecHooks> {
    /// A hedging middleware as a configuration file with a `hedging` table describes it, in
    /// one call: [`RetryMiddleware::from_spec`], then [`hedge`](RetryMiddleware::hedge) by the
    /// table.
    ///
    /// # Errors
    ///
    /// The first [`ConfigError`] of the file, naming the field; a file without a `hedging`
    /// table is [`ConfigError::Unusable`] (use [`RetryMiddleware::from_spec`]).
    pub fn from_spec(spec: &stagger_core::config::RetrySpec) -> Result<Self, ConfigError> {
        let hedging = crate::setup::hedging_of(
            spec,
            "the file does not hedge: build the middleware with RetryMiddleware::from_spec",
        )?;
        let (policy, setup) =
            crate::setup::from_spec(spec, super::middleware::middleware_hooks(), None)?;
        Ok(RetryMiddleware::with_parts(policy, setup).hedge(hedging))
    }
}

crate::hedge::hedge_setting! {
    front: RetryMiddleware<P>,
    hedged: HedgedMiddleware<P, H>,
    generics: [P,],
    where: [],
}

impl<P, H> crate::hedge::HedgedForm<HedgedMiddleware<P, H>> for RetryMiddleware<P, H> {
    const MANY_REQUESTS: bool = true;

    fn hedged(self, hedges: Hedges) -> HedgedMiddleware<P, H> {
        HedgedMiddleware {
            retry: self,
            hedges,
        }
    }
}

crate::surface::hedged_settings! {
    front: HedgedMiddleware<P, H>,
    generics: [P, H],
    where: [],
    hedges: |this| Some(&mut this.hedges),
}
