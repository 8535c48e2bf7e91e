//! [`Parts`]: what a run starts from, whichever executor or integration runs it.

use stagger_core::SeededRng;

use crate::setup::Setup;

/// What a run starts from, whichever executor runs it: the operation, its policy, and its
/// [`Setup`] (settings and hooks). The builders ([`Retry`], `BlockingRetry`) hold one until the
/// run starts; the tower layer and the reqwest middleware make one per request.
pub(crate) struct Parts<O, P, H> {
    pub(crate) op: O,
    pub(crate) policy: P,
    pub(crate) setup: Setup<H>,
    /// The most attempts the operation can make, whatever the policy says.
    pub(crate) attempt_limit: u32,
    /// The generator of the dispersal above a server's wait, if the caller gave one.
    pub(crate) dispersal_rng: Option<SeededRng>,
}

impl<O, P, H> Parts<O, P, H> {
    pub(crate) const fn new(op: O, policy: P, hooks: H) -> Self {
        Self {
            op,
            policy,
            setup: Setup::new(hooks),
            attempt_limit: u32::MAX,
            dispersal_rng: None,
        }
    }

    /// The same parts with the setup `f` makes of their own.
    #[inline(always)]
    pub(crate) fn map_setup<H2>(self, f: impl FnOnce(Setup<H>) -> Setup<H2>) -> Parts<O, P, H2> {
        Parts {
            op: self.op,
            policy: self.policy,
            setup: f(self.setup),
            attempt_limit: self.attempt_limit,
            dispersal_rng: self.dispersal_rng,
        }
    }

    /// Allows at most `max` attempts, whatever the policy says: an operation that cannot be
    /// repeated.
    #[cfg(feature = "reqwest")]
    pub(crate) fn attempt_limit(mut self, max: u32) -> Self {
        self.attempt_limit = self.attempt_limit.min(max);
        self
    }
}
