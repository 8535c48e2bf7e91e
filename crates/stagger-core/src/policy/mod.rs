//! The policy catalog.
//!
//! A policy answers one question after each failure: how long to wait before the next attempt,
//! or whether to give up ([`Policy::next_delay`]). Its configuration is a small `Copy` value
//! ([`PolicyConfig`]) that is checked and turned into a running policy by
//! [`build`](PolicyConfig::build), which takes the policy's random generator. The generator is
//! supplied at construction and never passed to `next_delay`, so a policy cannot accidentally
//! share a global one, and a seed or key reproduces its schedule exactly.
//!
//! Each policy lives in its own module, whose documentation is its page: when to use it, when
//! not to, how it works, tie-breaking, parameters, complexity, source and notes. The exponential
//! family shares one running type, [`BackoffPolicy`], and differs only in its [`Jitter`]; the
//! decorrelated pair shares [`DecorrelatedPolicy`], and differs only in its [`Walk`].
//!
//! | name | delay before retry `n` |
//! |---|---|
//! | [`constant`] | `base` |
//! | [`linear`] | `min(cap, base * n)` |
//! | [`exponential`] | `v = min(cap, base * factor^(n-1))` |
//! | [`exponential-full-jitter`](exponential_full_jitter) | `U(0, v)` |
//! | [`exponential-equal-jitter`](exponential_equal_jitter) | `v/2 + U(0, v/2)` |
//! | [`decorrelated-jitter`](decorrelated_jitter) | `U(base, min(cap, 3 * prev))` |
//! | [`decorrelated-jitter-v2`](decorrelated_jitter_v2) | Polly's `2^t * tanh(sqrt(4t))` |
//! | [`exponential-subtractive-jitter`](exponential_subtractive_jitter) | `v * (1 - jitter * U(0,1))` |
//! | [`exponential-proportional-jitter`](exponential_proportional_jitter) | `v * U(1 - r, 1 + r)` |
//! | [`immediate`] | `0` |
//! | [`no-retry`](no_retry) | gives up at once |

mod any;
mod backoff;
mod curve;
mod decorrelated;
mod interface;
mod into_policy;
mod kind;
mod param;

pub mod constant;
pub mod decorrelated_jitter;
pub mod decorrelated_jitter_v2;
pub mod exponential;
pub mod exponential_equal_jitter;
pub mod exponential_full_jitter;
pub mod exponential_proportional_jitter;
pub mod exponential_subtractive_jitter;
pub mod immediate;
pub mod linear;
pub mod no_retry;

pub use any::{AnyConfig, AnyPolicy};
pub use backoff::{Backoff, BackoffPolicy, Jitter};
pub use constant::{Constant, ConstantPolicy};
pub use decorrelated::{Decorrelated, DecorrelatedPolicy, Walk};
pub use decorrelated_jitter::{DecorrelatedJitter, DecorrelatedJitterPolicy};
pub use decorrelated_jitter_v2::{DecorrelatedJitterV2, DecorrelatedJitterV2Policy};
pub use exponential::{Exponential, ExponentialPolicy};
pub use exponential_equal_jitter::{ExponentialEqualJitter, ExponentialEqualJitterPolicy};
pub use exponential_full_jitter::{ExponentialFullJitter, ExponentialFullJitterPolicy};
pub use exponential_proportional_jitter::{
    ExponentialProportionalJitter, ExponentialProportionalJitterPolicy,
};
pub use exponential_subtractive_jitter::{
    ExponentialSubtractiveJitter, ExponentialSubtractiveJitterPolicy,
};
pub use immediate::{Immediate, ImmediatePolicy};
pub use interface::{Bounds, Policy, PolicyConfig};
pub use into_policy::{IntoPolicy, LazyPolicy};
pub use kind::PolicyKind;
pub use linear::{Linear, LinearPolicy};
pub use no_retry::{NoRetry, NoRetryPolicy};
pub use param::Param;
