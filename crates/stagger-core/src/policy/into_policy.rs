//! [`IntoPolicy`]: what an executor runs under, a configuration or a policy already built.

use std::fmt;
use std::time::Duration;

use super::{
    AnyConfig, Backoff, Constant, DecorrelatedJitter, DecorrelatedJitterV2, Immediate, Jitter,
    Linear, NoRetry, Policy, PolicyConfig,
};
use crate::error::ConfigError;
use crate::failure::Failure;
use crate::rng::SeededRng;

/// What an executor can run under: a configuration of the catalog, or a running [`Policy`].
///
/// A configuration is checked when the run starts (an invalid one is a [`ConfigError`], never a
/// panic) and becomes a [`LazyPolicy`]: built with its own generator, seeded from process
/// entropy, when the run first needs a delay, so that a run whose first attempt succeeds builds
/// nothing and reads no entropy. A running policy, your own or one built with a seed or a key,
/// is used as it is, for that one run.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::policy::{Constant, IntoPolicy};
/// use stagger_core::{Failure, Policy, PolicyConfig, SeededRng};
///
/// let config = Constant::new().with_base(Duration::from_millis(5));
/// let mut lazy = config.into_policy()?;
/// assert_eq!(lazy.next_delay(1, &Failure::Retryable), Some(Duration::from_millis(5)));
///
/// let built = config.build(SeededRng::new(7))?; // a running policy passes through
/// assert_eq!(built.into_policy()?.next_delay(8, &Failure::Retryable), None);
///
/// let invalid = Constant::new().with_max_attempts(0).into_policy().unwrap_err();
/// assert_eq!(invalid.param(), Some("max_attempts"));
/// # Ok::<(), stagger_core::ConfigError>(())
/// ```
pub trait IntoPolicy {
    /// The policy the run asks.
    type Policy: Policy;

    /// The policy for one run.
    ///
    /// # Errors
    ///
    /// The configuration's [`ConfigError`], naming the first invalid parameter.
    fn into_policy(self) -> Result<Self::Policy, ConfigError>;
}

/// A running policy is used as it is.
impl<P: Policy> IntoPolicy for P {
    type Policy = P;

    #[inline]
    fn into_policy(self) -> Result<P, ConfigError> {
        Ok(self)
    }
}

macro_rules! configs_into_lazy {
    ($($ty:ty),* $(,)?) => {$(
        impl IntoPolicy for $ty {
            type Policy = LazyPolicy<$ty>;

            #[inline]
            fn into_policy(self) -> Result<LazyPolicy<$ty>, ConfigError> {
                LazyPolicy::new(self)
            }
        }
    )*};
}

configs_into_lazy!(
    Constant,
    Linear,
    DecorrelatedJitter,
    DecorrelatedJitterV2,
    Immediate,
    NoRetry,
    AnyConfig
);

/// The exponential family.
impl<S: Jitter> IntoPolicy for Backoff<S> {
    type Policy = LazyPolicy<Self>;

    #[inline]
    fn into_policy(self) -> Result<LazyPolicy<Self>, ConfigError> {
        LazyPolicy::new(self)
    }
}

/// A checked configuration whose running policy is built, with its own generator seeded from
/// process entropy ([`SeededRng::from_entropy`]), the first time it is asked for a delay.
///
/// This is what the executors and the HTTP layers run when given a configuration: every run
/// gets a policy of its own, so no two runs share a jitter sequence, and a run that never fails
/// costs no build and no entropy.
pub struct LazyPolicy<C: PolicyConfig> {
    state: State<C>,
}

enum State<C: PolicyConfig> {
    Config(C),
    Built(C::Policy<SeededRng>),
}

impl<C: PolicyConfig> LazyPolicy<C> {
    /// `config`, checked now and built when first asked.
    ///
    /// # Errors
    ///
    /// The configuration's [`ConfigError`].
    pub fn new(config: C) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self {
            state: State::Config(config),
        })
    }
}

impl<C: PolicyConfig> Policy for LazyPolicy<C> {
    #[inline]
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if let State::Config(config) = self.state {
            // Checked by `new`, so this builds; were it to fail, the run would give up.
            self.state = State::Built(config.policy().ok()?);
        }
        match &mut self.state {
            State::Built(policy) => policy.next_delay(attempt, failure),
            State::Config(_) => None,
        }
    }
}

impl<C: PolicyConfig> fmt::Debug for LazyPolicy<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (config, built) = match &self.state {
            State::Config(config) => (Some(config), false),
            State::Built(_) => (None, true),
        };
        f.debug_struct("LazyPolicy")
            .field("config", &config)
            .field("built", &built)
            .finish()
    }
}
