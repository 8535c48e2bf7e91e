//! [`HedgeLayer`]: a tower layer that hedges each request, [`RetryLayer::hedge`].

use std::fmt;

use stagger_core::AnyConfig;
#[cfg(feature = "serde")]
use stagger_core::ConfigError;

#[cfg(feature = "serde")]
use super::retry_layer::SpecHooks;
use super::retry_layer::{LayerHooks, RetryLayer};
use crate::hedge::Hedges;

#[cfg(feature = "serde")]
impl HedgeLayer<AnyConfig, SpecHooks> {
    /// A hedging layer as a configuration file with a `hedging` table describes it, in one
    /// call: [`RetryLayer::from_spec`], then [`hedge`](RetryLayer::hedge) by the table.
    ///
    /// # Errors
    ///
    /// The first [`ConfigError`] of the file, naming the field; a file without a `hedging`
    /// table is [`ConfigError::Unusable`] (use [`RetryLayer::from_spec`]).
    pub fn from_spec(spec: &stagger_core::config::RetrySpec) -> Result<Self, ConfigError> {
        let hedging = crate::setup::hedging_of(
            spec,
            "the file does not hedge: build the layer with RetryLayer::from_spec",
        )?;
        let (policy, setup) =
            crate::setup::from_spec(spec, super::retry_layer::layer_hooks(), None)?;
        Ok(RetryLayer::with_parts(policy, setup).hedge(hedging))
    }
}

/// A tower [`Layer`](tower_layer::Layer) that hedges HTTP requests: [`RetryLayer::hedge`].
#[derive(Clone)]
#[must_use = "a layer does nothing until it wraps a service"]
pub struct HedgeLayer<P = AnyConfig, H = LayerHooks> {
    pub(super) retry: RetryLayer<P, H>,
    pub(super) hedges: Hedges,
}

crate::surface::hedged_settings! {
    front: HedgeLayer<P, H>,
    generics: [P, H],
    where: [],
    hedges: |this| Some(&mut this.hedges),
}

impl<P, H> fmt::Debug for HedgeLayer<P, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HedgeLayer")
            .field("retry", &self.retry)
            .field("hedging", &self.hedges.hedging)
            .finish_non_exhaustive()
    }
}

crate::hedge::hedge_setting! {
    front: RetryLayer<P>,
    hedged: HedgeLayer<P, H>,
    generics: [P,],
    where: [],
}

impl<P, H> crate::hedge::HedgedForm<HedgeLayer<P, H>> for RetryLayer<P, H> {
    const MANY_REQUESTS: bool = true;

    fn hedged(self, hedges: Hedges) -> HedgeLayer<P, H> {
        HedgeLayer {
            retry: self,
            hedges,
        }
    }
}
