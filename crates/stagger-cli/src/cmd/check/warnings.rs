//! The warnings of a report, each with its fix: read from the [`Report`]'s figures, so a
//! warning never says a number the report does not.

use std::time::Duration;

use stagger_core::duration::human;
use stagger_core::{AnyConfig, Param, PolicyConfig};

use super::args::Args;
use super::input::Subject;
use super::output::{clients, rate};
use super::report::{Report, Warning, jittered};

/// The warnings of `r`, the report of `subject` checked with `args`, in the order the text
/// lists them.
pub(super) fn warnings(subject: &Subject, r: &Report, args: &Args) -> Vec<Warning> {
    let mut w = Vec::new();
    let policy = subject.policy;
    let retries = r.max_attempts.saturating_sub(1);
    if subject.hedging.is_none() && !jittered(policy) && retries > 0 && args.clients > 1 {
        let peak = |label: &str| {
            r.workloads
                .iter()
                .find(|row| row.label.starts_with(label))
                .map(|row| row.herd_peak_share)
        };
        let figures = match (peak("this configuration"), peak("exponential-full-jitter")) {
            (Some(mine), Some(jittered)) => format!(
                " On the herd (1000 clients failing at once) {:.1}% of all retries land in one 10 ms window, against {:.1}% with full jitter.",
                100.0 * mine,
                100.0 * jittered
            ),
            _ => String::new(),
        };
        w.push(Warning {
            what: format!(
                "The delays have no jitter: {} clients that fail together retry together.{figures}",
                args.clients
            ),
            fix: "policy = \"exponential-full-jitter\" (or another jittered policy)".to_owned(),
        });
    }
    if subject.settings.timeout().is_none() {
        let what = if subject.hedging.is_some() {
            format!(
                "No deadline: a call lasts as long as the slowest of its {} attempts takes to answer.",
                r.max_attempts
            )
        } else {
            format!(
                "No deadline: a call can take the whole retry window (up to {}) plus the time of each of its {} attempts.",
                human(Duration::from_secs_f64(r.window_ms.1 / 1e3)),
                r.max_attempts
            )
        };
        w.push(Warning {
            what,
            fix: "timeout = \"10s\" (one end-to-end deadline; every retry that would end past it is not sent)".to_owned(),
        });
    }
    if let Some(n) = cap_never_reached(policy, retries) {
        w.push(Warning {
            what: format!(
                "The cap is never reached: within {} attempts the longest delay is {}.",
                r.max_attempts,
                human(policy.bounds(n).max)
            ),
            fix: "lower cap to where the waits should stop growing, or raise max_attempts if the fleet should wait longer".to_owned(),
        });
    }
    if let Some(o) = &r.outage {
        match o.with_budget {
            None if r.max_attempts >= 3 => w.push(Warning {
                what: format!(
                    "No budget: during a total outage of {} every request makes all {} attempts, {:.2}x the load on a dependency that is down.",
                    o.duration, r.max_attempts, o.without_budget
                ),
                fix: "[budget] budget = \"aws-standard\" (or \"finagle\" for a share of the traffic)".to_owned(),
            }),
            Some(load) if load >= 3.0 => w.push(Warning {
                what: format!(
                    "The budget still allows {load:.2}x the load during a total outage of {} at {} requests a second from {}.",
                    o.duration, rate(o.rate), clients(o.clients)
                ),
                fix: "a smaller budget: a lower capacity, or a ratio budget (budget = \"finagle\")".to_owned(),
            }),
            _ => {}
        }
    }
    if args.layers > 1 && r.layers.uncoordinated != Some(r.layers.owned) {
        let worst = r.layers.worst();
        let what = if r.layers.nested == Some("retry") {
            format!(
                "Layers that multiply: this configuration sets nested = \"retry\", so each of the {} layers retries on its own: {worst} calls per request reach the dependency in the worst case.",
                args.layers
            )
        } else {
            let others = match args.layers - 1 {
                1 => "the other layer retries".to_owned(),
                n => format!("the other {n} layers retry"),
            };
            format!(
                "Layers that multiply: if {others} with other libraries, or with nested = \"retry\", {worst} calls per request reach the dependency in the worst case; with stagger's default ownership of recovery at every layer, {}.",
                r.layers.owned
            )
        };
        w.push(Warning {
            what,
            fix: "retry at one layer only: nested = \"single-attempt\" (the default) in every stagger layer inside another, and no retries in the layers stagger does not run".to_owned(),
        });
    }
    w
}

/// The last retry, if the policy has a cap that none of its `retries` delays reaches: the
/// same bounds with the cap lifted.
fn cap_never_reached(policy: AnyConfig, retries: u32) -> Option<u32> {
    let uncapped = policy.set(Param::Cap(Duration::MAX)).ok()?;
    if retries == 0 {
        return None;
    }
    let same = (1..=retries.min(1_000)).all(|n| policy.bounds(n) == uncapped.bounds(n));
    same.then_some(retries)
}

#[cfg(test)]
mod tests {
    use stagger_core::PolicyKind;

    use super::*;

    #[test]
    fn a_cap_beyond_every_delay_is_never_reached_and_a_cap_that_binds_is() {
        use stagger_core::policy::Exponential;
        let far = AnyConfig::from(
            Exponential::new()
                .with_base(Duration::from_millis(100))
                .with_cap(Duration::from_secs(60))
                .with_max_attempts(4),
        );
        assert_eq!(cap_never_reached(far, 3), Some(3));
        let near = AnyConfig::from(
            Exponential::new()
                .with_base(Duration::from_millis(100))
                .with_cap(Duration::from_millis(300))
                .with_max_attempts(4),
        );
        assert_eq!(cap_never_reached(near, 3), None);
        // A policy without a cap has nothing to reach.
        let constant = AnyConfig::from(PolicyKind::Constant);
        assert_eq!(cap_never_reached(constant, 3), None);
    }

    #[test]
    fn every_policy_at_its_defaults_and_at_the_edges_is_read_without_a_panic() {
        for kind in PolicyKind::ALL {
            let config = AnyConfig::from(kind);
            for retries in [0, 1, 9, 999, u32::MAX] {
                let _ = cap_never_reached(config, retries);
            }
            if let Ok(long) = config.set(Param::Base(Duration::MAX)) {
                let _ = cap_never_reached(long, 9);
            }
        }
    }
}
