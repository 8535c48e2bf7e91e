//! The `throttle` workload: a 429 storm against a rate limiter, as in the trial against nginx's
//! `limit_req` (5 requests/s, `burst=0`, `Retry-After: 1`, 20 concurrent GETs, full jitter
//! 100 ms / 2 s / 4 attempts, a 3 s deadline).

use std::time::Duration;

use stagger_core::engine::Dispersal;
use stagger_sim::Workload;
use stagger_sim::model::RetryAfterForm;
use stagger_sim::scoreboard::{
    Claim, Scoreboard, THROTTLE_SEEDS, ThrottleVariant, throttle_points, throttle_variant_points,
};
use stagger_sim::workload::throttle::{Throttle, trial_strategy};

fn served(model: &Throttle, seeds: std::ops::RangeInclusive<u64>) -> Vec<u64> {
    seeds
        .map(|seed| model.run(&trial_strategy(), seed).unwrap().successes)
        .collect()
}

#[test]
fn the_floor_alone_reproduces_the_lockstep_3_of_20() {
    let floor = Throttle {
        dispersal: Dispersal::Floor,
        ..Throttle::default()
    };
    // One request at time zero, then one per wave: every client told "1 s" comes back at once.
    assert_eq!(served(&floor, 1..=20), vec![3; 20]);
    let row = floor.run(&trial_strategy(), 1).unwrap();
    assert!(row.peak_window_share > 0.45, "{}", row.peak_window_share);
    assert_eq!(row.early_retries, Some(0));
}

#[test]
fn the_trials_figures_hold_and_the_spread_never_passes_the_ceiling() {
    let default = Throttle::default();
    assert_eq!(default.dispersal, Dispersal::UniformAsked);
    // Never above the ceiling: one at time zero, then one per 200 ms slot from 1 s to 3 s.
    let served = served(&default, 1..=THROTTLE_SEEDS);
    assert!(served.iter().all(|&s| s <= 11), "{served:?}");
    // The published figures, read by the board's check on the board's own points.
    let mut board = Scoreboard::empty(1);
    board.throttle = throttle_points(1).unwrap();
    let finding = Claim::ThrottleTrial.check(&board);
    assert!(finding.reproduced, "{}", finding.ours);
}

#[test]
fn no_rule_under_any_form_of_retry_after_retries_before_the_servers_time() {
    let points = throttle_points(1).unwrap();
    assert_eq!(
        points.len(),
        2 * Dispersal::ALL.len() * RetryAfterForm::ALL.len()
    );
    for p in &points {
        assert_eq!(p.early_retries, 0, "{p:?}");
        // Told an exact wait, a client may come back before 1 s: up to 1 + 3 s / 200 ms.
        assert!(p.served >= 1.0 && p.served <= 16.0, "{p:?}");
    }
    // The default is the best rule for a fixed wait, and the floor the worst.
    let fixed = |d: &str, gate: bool| {
        points
            .iter()
            .find(|p| p.dispersal == d && p.retry_after == "fixed" && p.gate == gate)
            .unwrap()
    };
    assert!(fixed("uniform-asked", false).served > fixed("policy-above", false).served);
    assert!(fixed("policy-above", false).served > fixed("floor", false).served);
    // A shared gate paces the calls that wait: more served, fewer refused, for every rule.
    for rule in ["floor", "policy-above", "uniform-asked"] {
        let (alone, gated) = (fixed(rule, false), fixed(rule, true));
        assert!(
            gated.served > alone.served,
            "{rule}: {gated:?} against {alone:?}"
        );
        assert!(
            gated.rejected_per_success < alone.rejected_per_success,
            "{rule}"
        );
    }
}

#[test]
fn a_shared_gate_serves_at_least_9_of_20_on_average() {
    let gated = Throttle {
        gate: true,
        ..Throttle::default()
    };
    let served = served(&gated, 1..=20);
    let mean = served.iter().sum::<u64>() as f64 / 20.0;
    assert!(mean >= 9.0, "{served:?}");
    assert!(served.iter().all(|&s| s <= 11), "{served:?}");
    for seed in 1..=20 {
        let row = gated.run(&trial_strategy(), seed).unwrap();
        assert_eq!(row.early_retries, Some(0));
        assert_eq!(row.gate, Some(true));
    }
}

#[test]
fn a_concurrency_limiter_and_open_arrivals_never_see_an_early_retry() {
    for model in [
        Throttle {
            limit_concurrency: Some(2),
            ..Throttle::default()
        },
        Throttle {
            rate: Some(20.0),
            duration: Duration::from_secs(5),
            ..Throttle::default()
        },
    ] {
        for dispersal in Dispersal::ALL {
            let model = Throttle { dispersal, ..model };
            let row = model.run(&trial_strategy(), 3).unwrap();
            assert_eq!(row.early_retries, Some(0), "{model:?}");
            assert!(row.successes > 0 && row.first_tries > 0, "{model:?}");
            let estimate = model.estimate(&trial_strategy());
            assert!(
                row.events <= 2 * estimate.events,
                "{} > 2 × {}",
                row.events,
                estimate.events
            );
        }
    }
}

#[test]
fn the_variants_bind_their_limit_and_never_see_an_early_retry() {
    // Open arrivals above the limiter's rate; fewer in service than start together.
    let open = ThrottleVariant::OpenArrivals.model();
    assert!(open.rate.unwrap() > open.limit_rate, "{open:?}");
    let conc = ThrottleVariant::ConcurrencyLimiter.model();
    assert!(
        u64::from(conc.limit_concurrency.unwrap()) < conc.clients,
        "{conc:?}"
    );
    let points = throttle_variant_points(1).unwrap();
    assert_eq!(
        points.len(),
        ThrottleVariant::ALL.len() * 2 * ThrottleVariant::DISPERSALS.len()
    );
    for p in &points {
        assert_eq!(p.early_retries, 0, "{p:?}");
        assert!(p.served_share > 0.0 && p.served_share < 1.0, "{p:?}");
        assert!(
            p.served_share_range.0 <= p.served_share && p.served_share <= p.served_share_range.1,
            "{p:?}"
        );
    }
    // The limiter admits one request per interval from the first arrival to the last
    // deadline, whatever the clients do.
    let most = (open.limit_rate * (open.duration + open.timeout).as_secs_f64()).floor() as u64;
    for dispersal in ThrottleVariant::DISPERSALS {
        for gate in [false, true] {
            let model = Throttle {
                dispersal,
                gate,
                ..open
            };
            for seed in 1..=THROTTLE_SEEDS {
                let row = model.run(&trial_strategy(), seed).unwrap();
                assert!(row.successes <= most, "{model:?} at {seed}: {row:?}");
            }
        }
    }
    // One in service at a time and the floor: every wave of retries comes back at once and
    // one of it is served, at time zero, 1 s and 2 s.
    let floor = points
        .iter()
        .find(|p| p.variant == "concurrency-limiter" && p.dispersal == "floor" && !p.gate)
        .unwrap();
    assert_eq!(floor.served_share_range, (0.15, 0.15), "{floor:?}");
}

#[test]
fn the_same_seed_gives_the_same_row_and_bad_parameters_are_named() {
    let model = Throttle::default();
    assert_eq!(
        model.run(&trial_strategy(), 9).unwrap(),
        model.run(&trial_strategy(), 9).unwrap()
    );
    for (bad, param) in [
        (
            Throttle {
                limit_rate: 0.0,
                ..model
            },
            "limit_rate",
        ),
        (
            Throttle {
                limit_burst: 0,
                ..model
            },
            "limit_burst",
        ),
        (
            Throttle {
                limit_concurrency: Some(0),
                ..model
            },
            "limit_concurrency",
        ),
        (
            Throttle {
                clients: 0,
                ..model
            },
            "clients",
        ),
        (
            Throttle {
                rate: Some(f64::NAN),
                ..model
            },
            "rate",
        ),
        (
            Throttle {
                timeout: Duration::ZERO,
                ..model
            },
            "timeout",
        ),
    ] {
        let err = bad.run(&trial_strategy(), 1).unwrap_err();
        assert_eq!(err.param(), Some(param), "{err}");
    }
}
