//! The simulator's event loop: the cost of one event on each canonical workload at a fixed
//! size, one strategy each. divan's throughput column is events per second.
//!
//! Run with `cargo bench -p stagger-bench --bench sim`.

use divan::Bencher;
use divan::counter::ItemsCount;
use stagger_core::{AnyConfig, PolicyKind};
use stagger_sim::workload::contention::Contention;
use stagger_sim::workload::herd::Herd;
use stagger_sim::workload::open_loop::OpenLoop;
use stagger_sim::workload::spike::Spike;
use stagger_sim::{Strategy, Workload};

fn main() {
    divan::main();
}

/// Times `workload` with `strategy`, counting the events of one run.
fn bench_events<W: Workload>(bencher: Bencher, workload: W, strategy: Strategy) {
    let events = workload
        .run(&strategy, 1)
        .expect("a valid bench run")
        .events;
    bencher
        .counter(ItemsCount::new(events))
        .bench_local(|| workload.run(&strategy, 1).expect("a valid bench run"));
}

fn jitter() -> Strategy {
    Strategy::policy(AnyConfig::from(PolicyKind::ExponentialFullJitter))
}

/// 10 000 clients of the herd, full jitter.
#[divan::bench]
fn herd_10k(bencher: Bencher) {
    bench_events(
        bencher,
        Herd {
            clients: 10_000,
            ..Herd::default()
        },
        jitter(),
    );
}

/// Contention, 100 clients, 10 rounds, the published full jitter.
#[divan::bench]
fn contention_100x10(bencher: Bencher) {
    let strategy = stagger_sim::workload::contention::published_strategies()
        .into_iter()
        .find(|(name, _)| *name == "FullJitter")
        .expect("published")
        .1;
    bench_events(
        bencher,
        Contention {
            rounds: 10,
            ..Contention::default()
        },
        strategy,
    );
}

/// Open-loop at its defaults (100 clients x 10/s x 10 s), failure rate 0.5.
#[divan::bench]
fn open_loop_default(bencher: Bencher) {
    bench_events(bencher, OpenLoop::default(), jitter());
}

/// The spike at its defaults, no backoff.
#[divan::bench]
fn spike_default(bencher: Bencher) {
    bench_events(
        bencher,
        Spike::default(),
        stagger_sim::workload::spike::no_backoff(),
    );
}
