//! [`Setup`]: what every front end is configured with, the engine's [`Settings`] and the
//! [`Hooks`](crate::hooks::Hooks). Every front end holds one; the settings that change it are
//! written once, in [`surface`](crate::surface).

use stagger_core::engine::Settings;

#[cfg(all(feature = "serde", any(feature = "tower", feature = "reqwest")))]
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

    /// The same settings with the hooks `f` makes of these.
    #[inline]
    pub(crate) fn map_hooks<H2>(self, f: impl FnOnce(H) -> H2) -> Setup<H2> {
        Setup {
            settings: self.settings,
            hooks: f(self.hooks),
        }
    }
}

/// A front end as a configuration file describes it: its policy, checked, and its setup, the
/// default `hooks` with the file's settings and budget. The tower layer's and the reqwest
/// middleware's `from_spec` are this, each with its own default hooks; a retrying one refuses
/// a file that hedges, saying why (`refuse_hedging`).
///
/// # Errors
///
/// The first [`ConfigError`](stagger_core::ConfigError) of the file, naming the field.
#[cfg(all(feature = "serde", any(feature = "tower", feature = "reqwest")))]
#[allow(clippy::type_complexity)] // The parts a front end is built from.
pub(crate) fn from_spec<C, V, S, K>(
    spec: &stagger_core::config::RetrySpec,
    hooks: Hooks<C, V, S, K>,
    refuse_hedging: Option<&'static str>,
) -> Result<
    (
        stagger_core::AnyConfig,
        Setup<Hooks<C, V, S, K, stagger_core::config::SpecPerDestination>>,
    ),
    stagger_core::ConfigError,
> {
    use stagger_core::PolicyConfig;
    if let Some(refusal) = refuse_hedging {
        spec.refuse_hedging(refusal)?;
    }
    let settings = spec.to_settings()?;
    let budgets = spec.to_budgets(stagger_core::SeededRng::from_entropy())?;
    let policy = spec.to_config()?;
    policy.validate()?;
    let mut setup = Setup::new(hooks);
    setup.settings = settings;
    Ok((policy, setup.map_hooks(|hooks| hooks.budget(budgets))))
}

/// The hedging of a file that a hedging front end is built from: its `hedging` table, or
/// [`ConfigError::Unusable`](stagger_core::ConfigError::Unusable) saying `reason`.
///
/// # Errors
///
/// The table's [`ConfigError`](stagger_core::ConfigError), or `reason` without one.
#[cfg(all(feature = "serde", any(feature = "tower", feature = "reqwest")))]
pub(crate) fn hedging_of(
    spec: &stagger_core::config::RetrySpec,
    reason: &'static str,
) -> Result<stagger_core::engine::Hedging, stagger_core::ConfigError> {
    spec.to_hedging()?
        .ok_or(stagger_core::ConfigError::Unusable {
            param: "hedging",
            reason,
        })
}
