//! The settings every front end has, declared, documented and implemented once.
//!
//! The async executor ([`Retry`](crate::Retry)), the blocking one
//! ([`BlockingRetry`](crate::blocking::BlockingRetry)), the tower `RetryLayer` and the reqwest
//! `RetryMiddleware` each get the methods below from the macros of this module (and `hedge`
//! from the hedged executor's), as inherent methods (no trait to import), by the same names with
//! the same meaning. Each method's body is written once:
//!
//! | setting | method |
//! |---|---|
//! | every setting at once, from a file | `settings` |
//! | one deadline for attempts and waits | `timeout` |
//! | a timeout for each attempt | `attempt_timeout` |
//! | whether the operation may be repeated | `idempotent` |
//! | the longest server-directed wait honoured | `max_server_wait` |
//! | what to do inside another executor's attempt | `when_nested` |
//! | how a retry is dispersed above a server's wait | `server_wait_dispersal` |
//! | which errors are worth retrying | `classify` |
//! | which `Ok` values or responses are failures after all | `classify_ok` |
//! | a hook before every retry (a closure), or a [`Notify`] of any type | `notify`, `notifier` |
//! | how to wait | `sleeper` |
//! | where time is read | `clock` |
//! | a budget for retries | `budget` |
//! | a gate per destination | `gate` |
//! | hedging instead of retrying (async front ends) | `hedge` |
//!
//! Beside them, a front end has only what exists for it alone: the executors' absolute
//! `deadline` and `destination` (of one call), the HTTP layers' `buffer_bodies` (of a body).
//!
//! The settings of the run (`timeout` to `when_nested` above, `server_wait_dispersal` included)
//! are one table in the core
//! (`stagger_core::each_setting!`), which a configuration file's `RetrySpec::to_settings` reads
//! too, so a file and a setter cannot drift apart.
//!
//! Set every setting before the first poll: a retry polled and then set panics (a hedged
//! retry's `latencies`, then, measures nothing more).
//!
//! Where the front ends differ, by their nature:
//!
//! - The classifiers and the hook take closures, whose argument the compiler infers where the
//!   front end knows the type (the executors, the middleware); for the tower layer, which
//!   learns its inner service's types only when it wraps one, annotate it
//!   (`|e: &hyper::Error| ...`).
//! - On the HTTP layers, `classify_ok` replaces the HTTP rules (408, 429 and 5xx retried,
//!   `Retry-After` a floor): a closure that should keep them calls
//!   [`HttpClassifier::classify_response`](crate::http::HttpClassifier::classify_response).
//! - The HTTP layers clone their hook and budget into each request: an `FnMut` hook's state is
//!   its request's own, and a budget shared across requests is an `Arc` (the middleware needs
//!   `'static` parts). An executor's run takes them by value, a reference included.
//! - `gate` wraps the budget set so far: set `budget` before `gate`, since a `budget` after it
//!   replaces the gated budget, gate and all.
//!
//! A hook that hears more than retries (give-ups) is a type implementing [`Notify`], given to
//! `notifier`: Rust infers a closure's argument only through the `Fn` traits, so one method
//! cannot take both an inferred closure and a type with several methods.

#[cfg(doc)]
use crate::notify::Notify;

/// The errors a front end's attempts fail with: `E` for an executor's operation, the client's
/// error for the middleware, any type for the tower layer (which learns it when it wraps a
/// service). It lets `classify(|e| ...)` infer `e`. Implemented by the front ends alone.
pub trait Fails<E>: sealed::Front {}

/// The values a front end's attempts succeed with: `T` for an executor's operation, the
/// response for the middleware, any type for the tower layer. It lets
/// `classify_ok(|value| ...)` infer `value`. Implemented by the front ends alone.
pub trait Succeeds<T>: sealed::Front {}

pub(crate) mod sealed {
    /// A front end: keeps [`Fails`](super::Fails) and [`Succeeds`](super::Succeeds)
    /// implemented by this crate's alone.
    pub trait Front {}
}

/// Writes the settings of one front end. `$front<$($arg),*, Hooks<..>>` is the front end's
/// type, its hooks last; `$parts` the expression that reaches its [`Setup`](crate::setup::Setup)
/// mutably in `self`, `$map` the function that makes it with another; the bounds say what its
/// type needs of a sleeper and of a budget, and what a gate needs of the budget set so far.
macro_rules! surface {
    (
        front: $front:ident<$($arg:ident),*>,
        generics: [$($g:tt)*],
        where: [$($bounds:tt)*],
        setup: |$this:ident| $setup:expr,
        map: $map:ident,
        sleeper: [$($sleeper:tt)*],
        budget: [$($budget:tt)*],
        gate: [$($gate:tt)*],
    ) => {
        impl<$($g)* C, V, S, K, B, N> $front<$($arg,)* $crate::hooks::Hooks<C, V, S, K, B, N>>
        where
            $($bounds)*
        {
            /// Replaces every setting: the deadline (an executor's `deadline` included), the
            /// attempt timeout, idempotency, the longest server wait, the dispersal above it
            /// and what to do when nested, as a configuration file's `RetrySpec::to_settings`
            /// gives them: set the others after this. In the HTTP layers, idempotency left
            /// unset is read from each request.
            pub fn settings(mut self, settings: stagger_core::engine::Settings) -> Self {
                let $this = &mut self;
                $setup.settings = settings;
                self
            }

            stagger_core::each_setting!([$crate::surface::setting_methods] { $this => $setup });

            /// Decides which errors are worth retrying, and how: any `Fn(&E) -> Failure`.
            /// [`retry_any`](crate::classify::retry_any) retries everything, if you mean it.
            pub fn classify<E, C2>(
                self,
                classifier: C2,
            ) -> $front<$($arg,)* $crate::hooks::Hooks<C2, V, S, K, B, N>>
            where
                Self: $crate::surface::Fails<E>,
                C2: Fn(&E) -> stagger_core::Failure,
            {
                self.$map(|setup| setup.map_hooks(|hooks| hooks.classifier(classifier)))
            }

            /// Looks at every successful value (every response, in the HTTP layers): any
            /// `Fn(&T) -> Option<Failure>`. `None` accepts it, a
            /// [`Failure`](stagger_core::Failure) retries it like an error (a 200 whose body
            /// says "try later", an empty page). When the run gives up on such a value, the
            /// caller gets it back ([`RetryError::last_value`](crate::RetryError::last_value),
            /// or the last response in the HTTP layers) with the reason.
            pub fn classify_ok<T, V2>(
                self,
                classifier: V2,
            ) -> $front<$($arg,)* $crate::hooks::Hooks<C, V2, S, K, B, N>>
            where
                Self: $crate::surface::Succeeds<T>,
                V2: Fn(&T) -> Option<stagger_core::Failure>,
            {
                self.$map(|setup| setup.map_hooks(|hooks| hooks.ok(classifier)))
            }

            /// Calls `hook` before every retry that will actually happen, with the attempt
            /// number, what it returned, the delay, the elapsed time and the time left; its
            /// argument is inferred. (If the wait then overruns the deadline, because the
            /// sleeper overslept, the next attempt does not start after all.)
            pub fn notify<T, E, N2>(
                self,
                hook: N2,
            ) -> $front<$($arg,)* $crate::hooks::Hooks<C, V, S, K, B, N2>>
            where
                Self: $crate::surface::Succeeds<T> + $crate::surface::Fails<E>,
                N2: FnMut(&$crate::notify::RetryEvent<'_, T, E>),
            {
                self.$map(|setup| setup.map_hooks(|hooks| hooks.notify(hook)))
            }

            /// Tells `notifier`, a [`Notify`](crate::notify::Notify) of any type, of every
            /// retry and of the give-up.
            pub fn notifier<T, E, N2>(
                self,
                notifier: N2,
            ) -> $front<$($arg,)* $crate::hooks::Hooks<C, V, S, K, B, N2>>
            where
                Self: $crate::surface::Succeeds<T> + $crate::surface::Fails<E>,
                N2: $crate::notify::Notify<T, E>,
            {
                self.$map(|setup| setup.map_hooks(|hooks| hooks.notify(notifier)))
            }

            /// Waits with `sleeper`: any `Fn(Duration) -> impl Future` for the async front
            /// ends, any `Fn(Duration)` for the blocking executor.
            pub fn sleeper<S2: $($sleeper)*>(
                self,
                sleeper: S2,
            ) -> $front<$($arg,)* $crate::hooks::Hooks<C, V, S2, K, B, N>> {
                self.$map(|setup| setup.map_hooks(|hooks| hooks.sleeper(sleeper)))
            }

            /// Reads time from `clock`, for the deadline, server waits and the summary: any
            /// [`Clock`](stagger_core::Clock), such as a
            /// [`ManualClock`](stagger_core::ManualClock) in a test.
            pub fn clock<K2>(
                self,
                clock: K2,
            ) -> $front<$($arg,)* $crate::hooks::Hooks<C, V, S, K2, B, N>> {
                self.$map(|setup| setup.map_hooks(|hooks| hooks.clock(clock)))
            }

            /// Retries only as far as `budget` allows; share one budget across a service (an
            /// `Arc`, or a reference for an executor's run) to bound the extra load retries
            /// add. The HTTP
            /// layers take any [`PerDestination`](stagger_core::budget::PerDestination): an
            /// `Arc<`[`BudgetPerDestination`](stagger_core::budget::BudgetPerDestination)`>`
            /// gives each host and port a budget of its own, so that one host's outage cannot
            /// spend the retries of another.
            pub fn budget<B2: $($budget)*>(
                self,
                budget: B2,
            ) -> $front<$($arg,)* $crate::hooks::Hooks<C, V, S, K, B2, N>> {
                self.$map(|setup| setup.map_hooks(|hooks| hooks.budget(budget)))
            }

            /// Paces the calls to each destination through `gate`, shared (an `Arc`) by every
            /// call to it: once a server tells any of them to wait, every other call to it,
            /// first attempts included, waits for a paced slot of its own, and gives up at once
            /// if that slot would come after its deadline. The destination is each request's
            /// host and port in the HTTP layers, and the executors' `destination` (one for all
            /// the runs that name none). The budget set so far stays behind the gate (a
            /// [`Gated`](crate::hooks::Gated)); set it before this. See
            /// [`Gate`](stagger_core::gate::Gate).
            #[allow(clippy::type_complexity)] // The builder's type, one part wrapped.
            pub fn gate(
                self,
                gate: std::sync::Arc<stagger_core::gate::Gate>,
            ) -> $front<$($arg,)* $crate::hooks::Hooks<C, V, S, K, $crate::hooks::Gated<B>, N>>
            where
                $($gate)*
            {
                self.$map(|setup| setup.map_hooks(|hooks| {
                    hooks.map_budget(|budget| $crate::hooks::Gated::new(gate, budget))
                }))
            }
        }
    };
}

/// Writes one setter for each row of the table of settings (`stagger_core::each_setting!`),
/// on a front end whose [`Setup`](crate::setup::Setup) `$setup` reaches through `$this`.
macro_rules! setting_methods {
    (
        { $this:ident => $setup:expr }
        $($(#[$doc:meta])* $setter:ident($field:ident: $ty:ty) $with:ident,)*
    ) => {$(
        $(#[$doc])*
        pub fn $setter(mut self, $field: $ty) -> Self {
            let $this = &mut self;
            $setup.settings = $setup.settings.$with($field);
            self
        }
    )*};
}

/// Writes the settings of one call, which only the executors have: its absolute `deadline`, the
/// generator of its dispersal, and, behind a gate, its `destination`. `$parts` reaches the run's
/// [`Parts`](crate::parts::Parts) through `$this`; the bounds are the front end's type's, with
/// its hooks `H`, and with a gate.
macro_rules! call_settings {
    (
        front: $front:ident<$($arg:ident),*>,
        generics: [$($g:tt)*],
        where: [$($bounds:tt)*],
        gated_where: [$($gated:tt)*],
        parts: |$this:ident| $parts:expr,
    ) => {
        impl<$($g)* H> $front<$($arg,)* H>
        where
            $($bounds)*
        {
            /// One end-to-end deadline at `deadline` on the executor's clock's timeline: a
            /// setting of one call. The default clocks share the process timeline, so a
            /// deadline read from any of them (say `MonotonicClock::new().now() + 5 s`, computed
            /// when a request arrived) holds for every run; with a
            /// [`ManualClock`](stagger_core::ManualClock), compute it from that clock. For a
            /// time from now, use `timeout`.
            pub fn deadline(mut self, deadline: stagger_core::Timestamp) -> Self {
                let $this = &mut self;
                let setup = &mut $parts.setup;
                setup.settings = setup.settings.with_deadline(deadline);
                self
            }

            /// Draws the dispersal above a server-directed wait
            /// ([`Dispersal`](stagger_core::engine::Dispersal)) from `rng` rather than from a
            /// generator seeded from process entropy: with a seeded policy and a manual clock,
            /// a run's every delay is then reproducible, `Retry-After` included. Give each run
            /// its own generator ([`SeededRng::fork`](stagger_core::SeededRng::fork)), so that
            /// runs do not draw in step.
            pub fn dispersal_rng(mut self, rng: stagger_core::SeededRng) -> Self {
                let $this = &mut self;
                $parts.dispersal_rng = Some(rng);
                self
            }
        }

        impl<$($g)* C, V, S, K, B, N>
            $front<$($arg,)* $crate::hooks::Hooks<C, V, S, K, $crate::hooks::Gated<B>, N>>
        where
            $($gated)*
            B: stagger_core::budget::Budget,
        {
            /// The destination this call goes to, which its gate paces it by: a setting of one
            /// call, as the HTTP layers read each request's host and port, set after `gate`.
            /// The runs of a gate that name none share one destination.
            pub fn destination(mut self, key: impl Into<std::sync::Arc<str>>) -> Self {
                let $this = &mut self;
                $parts.setup.hooks.budget.to(key.into());
                self
            }
        }
    };
}

/// Writes the settings of a front end's hedged form: the latencies it measures into.
/// `$hedges` reaches its [`Hedges`](crate::hedge::Hedges), while it has them, through `$this`.
macro_rules! hedged_settings {
    (
        front: $front:ident<$($arg:ident),*>,
        generics: [$($g:tt)*],
        where: [$($bounds:tt)*],
        hedges: |$this:ident| $hedges:expr,
    ) => {
        impl<$($g)*> $front<$($arg),*>
        where
            $($bounds)*
        {
            /// Measures every attempt's latency into `latencies` (shared with other front ends
            /// or runs, say), and takes a delay at a quantile
            /// ([`HedgeDelay::Quantile`](stagger_core::engine::HedgeDelay)) from it. An attempt
            /// cancelled because another won is measured for as long as it ran, a lower bound
            /// of its latency that is past the hedge delay, which is all a quantile at the delay
            /// needs of it.
            pub fn latencies(
                mut self,
                latencies: std::sync::Arc<stagger_core::sketch::LatencySketch>,
            ) -> Self {
                let $this = &mut self;
                if let Some(hedges) = $hedges {
                    hedges.latencies(latencies);
                }
                self
            }
        }
    };
}

pub(crate) use {call_settings, hedged_settings, setting_methods, surface};
