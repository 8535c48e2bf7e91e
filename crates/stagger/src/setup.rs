//! [`Setup`]: what every front end is configured with, the engine's [`Settings`] and the
//! [`Hooks`], and what each of the builders' setters does, written once.
//!
//! The front ends ([`Retry`](crate::Retry), the tower `RetryLayer`, the reqwest
//! `RetryMiddleware`) each hold one `Setup` and forward each public setter to it in one line.
//! A setter's doc stays on the front end, because it says what the setting means there (for
//! one run, or for each request); what the setting does is here, so that the front ends cannot
//! drift apart.

use std::sync::Arc;
use std::time::Duration;

use stagger_core::Timestamp;
use stagger_core::engine::{Nested, Settings};
#[cfg(any(feature = "tower", feature = "reqwest"))]
use stagger_core::gate::GatedPerDestination;
use stagger_core::gate::{Gate, GatedBudget};

use crate::hooks::Hooks;

/// A front end's settings and hooks. A setter of the settings changes them in place, so that a
/// `const` builder can call it; a setter of a hook part makes another type.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Setup<H> {
    pub(crate) settings: Settings,
    pub(crate) hooks: H,
}

impl<H> Setup<H> {
    /// The default settings with `hooks`.
    pub(crate) const fn new(hooks: H) -> Self {
        Self {
            settings: Settings::new(),
            hooks,
        }
    }

    /// Every setting replaced.
    pub(crate) const fn settings(&mut self, settings: Settings) {
        self.settings = settings;
    }

    /// One end-to-end deadline, `timeout` after the run starts.
    pub(crate) const fn timeout(&mut self, timeout: Duration) {
        self.settings = self.settings.with_timeout(timeout);
    }

    /// A timeout for each attempt, within the deadline.
    pub(crate) const fn attempt_timeout(&mut self, timeout: Duration) {
        self.settings = self.settings.with_attempt_timeout(timeout);
    }

    /// One end-to-end deadline at `deadline`.
    pub(crate) const fn deadline(&mut self, deadline: Timestamp) {
        self.settings = self.settings.with_deadline(deadline);
    }

    /// Whether the operation may be repeated safely.
    pub(crate) const fn idempotent(&mut self, idempotent: bool) {
        self.settings = self.settings.with_idempotent(idempotent);
    }

    /// The longest server-directed wait honoured.
    pub(crate) const fn max_server_wait(&mut self, limit: Duration) {
        self.settings = self.settings.with_max_server_wait(limit);
    }

    /// What to do when running inside another executor's attempt.
    pub(crate) const fn when_nested(&mut self, nested: Nested) {
        self.settings = self.settings.with_nested(nested);
    }

    /// The same settings with the hooks `f` makes of these.
    #[inline]
    pub(crate) fn map_hooks<H2>(self, f: impl FnOnce(H) -> H2) -> Setup<H2> {
        Setup {
            settings: self.settings,
            hooks: f(self.hooks),
        }
    }
}

impl<C, V, S, K, B, N> Setup<Hooks<C, V, S, K, B, N>> {
    /// Another error classifier.
    pub(crate) fn classifier<C2>(self, classifier: C2) -> Setup<Hooks<C2, V, S, K, B, N>> {
        self.map_hooks(|hooks| hooks.classifier(classifier))
    }

    /// Another value classifier.
    pub(crate) fn ok<V2>(self, ok: V2) -> Setup<Hooks<C, V2, S, K, B, N>> {
        self.map_hooks(|hooks| hooks.ok(ok))
    }

    /// Another sleeper.
    pub(crate) fn sleeper<S2>(self, sleeper: S2) -> Setup<Hooks<C, V, S2, K, B, N>> {
        self.map_hooks(|hooks| hooks.sleeper(sleeper))
    }

    /// Another clock.
    pub(crate) fn clock<K2>(self, clock: K2) -> Setup<Hooks<C, V, S, K2, B, N>> {
        self.map_hooks(|hooks| hooks.clock(clock))
    }

    /// Another budget.
    pub(crate) fn budget<B2>(self, budget: B2) -> Setup<Hooks<C, V, S, K, B2, N>> {
        self.map_hooks(|hooks| hooks.budget(budget))
    }

    /// Another retry hook.
    pub(crate) fn notify<N2>(self, notify: N2) -> Setup<Hooks<C, V, S, K, B, N2>> {
        self.map_hooks(|hooks| hooks.notify(notify))
    }

    /// The budget set so far behind `gate`, for the one destination `key` names.
    pub(crate) fn gate_to(
        self,
        gate: Arc<Gate>,
        key: Arc<str>,
    ) -> Setup<Hooks<C, V, S, K, GatedBudget<B>, N>> {
        self.map_hooks(|hooks| hooks.map_budget(|budget| GatedBudget::new(budget, gate, key)))
    }

    /// The budget set so far behind `gate`, keyed by each request's destination.
    #[cfg(any(feature = "tower", feature = "reqwest"))]
    pub(crate) fn gate_per_destination(
        self,
        gate: Arc<Gate>,
    ) -> Setup<Hooks<C, V, S, K, GatedPerDestination<B>, N>> {
        self.map_hooks(|hooks| hooks.map_budget(|budget| GatedPerDestination::new(gate, budget)))
    }
}

/// A front end as a configuration file describes it: its policy, checked, and its setup, the
/// default `hooks` with the file's settings and budget. The tower layer's and the reqwest
/// middleware's `from_spec` are this, each with its own default hooks.
///
/// # Errors
///
/// The first [`ConfigError`](stagger_core::ConfigError) of the file, naming the field.
#[cfg(all(feature = "serde", any(feature = "tower", feature = "reqwest")))]
#[allow(clippy::type_complexity)] // The parts a front end is built from.
pub(crate) fn from_spec<C, V, S, K>(
    spec: &stagger_core::config::RetrySpec,
    hooks: Hooks<C, V, S, K>,
) -> Result<
    (
        stagger_core::AnyConfig,
        Setup<Hooks<C, V, S, K, stagger_core::config::SpecPerDestination>>,
    ),
    stagger_core::ConfigError,
> {
    use stagger_core::PolicyConfig;
    let settings = spec.to_settings()?;
    let budgets = spec.to_budgets(stagger_core::SeededRng::from_entropy())?;
    let policy = spec.to_config()?;
    policy.validate()?;
    let mut setup = Setup::new(hooks);
    setup.settings(settings);
    Ok((policy, setup.budget(budgets)))
}
