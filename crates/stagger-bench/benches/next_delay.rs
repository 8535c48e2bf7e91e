//! Cost of producing one retry delay, for stagger and for peer crates.
//!
//! Every benchmark runs the same workload: base 100 ms, multiplier 2, cap
//! 20 s, 8 attempts (7 retries; the cap is never reached). Each timed
//! iteration yields exactly ONE delay. The driver ([`Cycle`]) walks retries
//! `1..=7` and builds a fresh schedule (the library's iterator / backoff
//! state, with its own RNG as the library normally creates it) before retry 1,
//! so construction (and dropping the previous schedule) is amortised over 7
//! delays identically for every library. Every library builds its schedule
//! from its own builder with the workload's constants, written inside that
//! constructor, so the compiler sees the same literals for each of them.
//!
//! Run with `cargo bench -p stagger-bench --bench next_delay`.

use std::time::Duration;

fn main() {
    divan::main();
}

/// First delay (before retry 1).
const BASE: Duration = Duration::from_millis(100);
/// Growth factor between consecutive delays.
const MULTIPLIER: u32 = 2;
/// Upper bound on any un-jittered delay (never reached by this workload).
const CAP: Duration = Duration::from_secs(20);
/// Total attempts, including the first one.
const MAX_ATTEMPTS: u32 = 8;
/// Delays per schedule (`MAX_ATTEMPTS - 1`).
const RETRIES: u32 = MAX_ATTEMPTS - 1;

/// Benchmark driver: yields one output per call, cycling through retries
/// `1..=RETRIES` and rebuilding the schedule with `make` before retry 1.
///
/// Held outside the timed closure, e.g. `bencher.bench_local(|| c.next())`.
struct Cycle<S, M, N> {
    /// Builds a fresh schedule (called once per `RETRIES` delays).
    make: M,
    /// Produces the delay for retry `n` (1-based) from the schedule.
    step: N,
    /// The current schedule.
    state: S,
    /// Retries already taken from `state`.
    retry: u32,
}

impl<S, O, M, N> Cycle<S, M, N>
where
    M: FnMut() -> S,
    N: FnMut(&mut S, u32) -> O,
{
    /// Builds the driver and runs one full schedule as warm-up, so lazy
    /// thread-local RNG / clock initialisation does not skew divan's
    /// sample-size calibration. The first timed call starts a fresh schedule.
    fn new(mut make: M, step: N) -> Self {
        let state = make();
        let mut cycle = Self {
            make,
            step,
            state,
            retry: 0,
        };
        for _ in 0..RETRIES {
            cycle.next();
        }
        cycle
    }

    #[inline]
    fn next(&mut self) -> O {
        if self.retry == RETRIES {
            self.state = (self.make)();
            self.retry = 0;
        }
        self.retry += 1;
        divan::black_box((self.step)(&mut self.state, self.retry))
    }
}

/// Message for schedules that end before `RETRIES` delays (a bench bug).
const EXHAUSTED: &str = "schedule yields RETRIES delays";

/// stagger's own policies: every policy in the catalog, on the same workload and driver.
///
/// Each schedule is a freshly built running policy with its own `SeededRng` (a new seed per
/// schedule, so no two schedules share a sequence), asked `next_delay(n, Retryable)` for
/// `n = 1..=7`.
mod ours {
    use divan::Bencher;
    use stagger_core::policy::{
        Constant, DecorrelatedJitter, DecorrelatedJitterV2, Exponential, ExponentialEqualJitter,
        ExponentialFullJitter, ExponentialProportionalJitter, ExponentialSubtractiveJitter,
        Immediate, Linear,
    };
    use stagger_core::{AnyConfig, Failure, Policy, PolicyConfig, SeededRng};

    use crate::{BASE, CAP, Cycle, EXHAUSTED, MAX_ATTEMPTS, MULTIPLIER};

    const FACTOR: f64 = MULTIPLIER as f64;

    /// Times `next_delay` of the policies `build` makes, a fresh one every 7 delays.
    fn run<P: Policy>(bencher: Bencher, mut build: impl FnMut(SeededRng) -> P) {
        let mut seed = 0;
        let mut c = Cycle::new(
            || {
                seed += 1;
                build(SeededRng::new(seed))
            },
            |p, n| p.next_delay(n, &Failure::Retryable).expect(EXHAUSTED),
        );
        bencher.bench_local(|| c.next());
    }

    /// Times a statically typed configuration, written out by `config` in the schedule's
    /// constructor, as every peer's builder is: the same constants, seen the same way by the
    /// compiler.
    fn typed<C: PolicyConfig>(bencher: Bencher, config: impl Fn() -> C) {
        run(bencher, |rng| {
            config().build(rng).expect("valid bench config")
        });
    }

    #[divan::bench]
    fn constant(bencher: Bencher) {
        typed(bencher, || {
            Constant::new()
                .with_base(BASE)
                .with_max_attempts(MAX_ATTEMPTS)
        });
    }

    #[divan::bench]
    fn immediate(bencher: Bencher) {
        typed(bencher, || Immediate::new().with_max_attempts(MAX_ATTEMPTS));
    }

    #[divan::bench]
    fn linear(bencher: Bencher) {
        typed(bencher, || {
            let config = Linear::new().with_base(BASE).with_cap(CAP);
            config.with_max_attempts(MAX_ATTEMPTS)
        });
    }

    #[divan::bench]
    fn exponential(bencher: Bencher) {
        typed(bencher, || {
            let config = Exponential::new().with_base(BASE).with_cap(CAP);
            config.with_factor(FACTOR).with_max_attempts(MAX_ATTEMPTS)
        });
    }

    #[divan::bench]
    fn exponential_full_jitter(bencher: Bencher) {
        typed(bencher, || {
            let config = ExponentialFullJitter::new().with_base(BASE).with_cap(CAP);
            config.with_factor(FACTOR).with_max_attempts(MAX_ATTEMPTS)
        });
    }

    #[divan::bench]
    fn exponential_equal_jitter(bencher: Bencher) {
        typed(bencher, || {
            let config = ExponentialEqualJitter::new().with_base(BASE).with_cap(CAP);
            config.with_factor(FACTOR).with_max_attempts(MAX_ATTEMPTS)
        });
    }

    #[divan::bench]
    fn exponential_subtractive_jitter(bencher: Bencher) {
        typed(bencher, || {
            let config = ExponentialSubtractiveJitter::new()
                .with_base(BASE)
                .with_cap(CAP);
            config.with_factor(FACTOR).with_max_attempts(MAX_ATTEMPTS)
        });
    }

    #[divan::bench]
    fn exponential_proportional_jitter(bencher: Bencher) {
        typed(bencher, || {
            let config = ExponentialProportionalJitter::new()
                .with_base(BASE)
                .with_cap(CAP);
            config.with_factor(FACTOR).with_max_attempts(MAX_ATTEMPTS)
        });
    }

    #[divan::bench]
    fn decorrelated_jitter(bencher: Bencher) {
        typed(bencher, || {
            let config = DecorrelatedJitter::new().with_base(BASE).with_cap(CAP);
            config.with_max_attempts(MAX_ATTEMPTS)
        });
    }

    #[divan::bench]
    fn decorrelated_jitter_v2(bencher: Bencher) {
        typed(bencher, || {
            let config = DecorrelatedJitterV2::new().with_base(BASE).with_cap(CAP);
            config.with_max_attempts(MAX_ATTEMPTS)
        });
    }

    /// Full jitter chosen at run time: the cost of dispatching through `AnyPolicy`.
    #[divan::bench]
    fn any_full_jitter(bencher: Bencher) {
        let config = ExponentialFullJitter::new().with_base(BASE).with_cap(CAP);
        let config = AnyConfig::from(config.with_factor(FACTOR).with_max_attempts(MAX_ATTEMPTS));
        run(bencher, |rng| {
            config.build(rng).expect("valid bench config")
        });
    }
}

/// Peer crates, one function per crate in each group.
mod peers {
    /// Jittered exponential backoff. Only `tokio_retry` and `retry_policies`
    /// offer full jitter (`uniform[0, d)`); the others use their own scheme,
    /// documented on each function.
    #[divan::bench_group]
    mod jittered_exponential {
        use std::time::{Duration, SystemTime};

        use backoff::backoff::Backoff as _;
        use backon::BackoffBuilder as _;
        use divan::Bencher;
        use tower::retry::backoff::{Backoff as _, MakeBackoff as _};

        use crate::{BASE, CAP, Cycle, EXHAUSTED, MAX_ATTEMPTS, MULTIPLIER, RETRIES};

        /// Additive jitter: `d + d * uniform[0, 1)`, i.e. `[d, 2d)` (f32
        /// arithmetic, `fastrand`). Not full jitter; can exceed the cap by up
        /// to 2x.
        #[divan::bench]
        fn backon(bencher: Bencher) {
            let mut c = Cycle::new(
                || {
                    backon::ExponentialBuilder::new()
                        .with_min_delay(BASE)
                        .with_factor(MULTIPLIER as f32)
                        .with_max_delay(CAP)
                        .with_max_times(RETRIES as usize)
                        .with_jitter()
                        .build()
                },
                |s, _| s.next().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        /// Randomization factor 0.5 (the crate default): `d * uniform[0.5,
        /// 1.5]` via `rand::random` (thread RNG). Not full jitter; can exceed
        /// the cap by 1.5x. Reads `Instant::now()` on every call (elapsed-time
        /// check) — that is its real cost and is kept.
        #[divan::bench]
        fn backoff(bencher: Bencher) {
            let mut c = Cycle::new(
                || {
                    backoff::ExponentialBackoffBuilder::new()
                        .with_initial_interval(BASE)
                        .with_multiplier(f64::from(MULTIPLIER))
                        .with_max_interval(CAP)
                        .with_randomization_factor(0.5)
                        .with_max_elapsed_time(None)
                        .build()
                },
                |s, _| s.next_backoff().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        /// Jitter 0.3 (the crate default): a skewed integer scheme, roughly
        /// `d * [0.7, 1.3)` (`fastrand`), then clamped to `[base, cap]`, so it
        /// never exceeds the cap (or goes below the base). Not full jitter.
        #[divan::bench]
        fn exponential_backoff(bencher: Bencher) {
            let mut c = Cycle::new(
                || {
                    let mut b = exponential_backoff::Backoff::new(MAX_ATTEMPTS, BASE, CAP);
                    b.set_factor(MULTIPLIER);
                    b.set_jitter(0.3);
                    b.into_iter()
                },
                |s, _| s.next().flatten().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        /// Full jitter via `tokio_retry::strategy::jitter` (`d * uniform[0, 1)`,
        /// `rand::random`). Never exceeds the cap. Note `from_millis(2)` is the
        /// exponent base and `factor(50)` the scale: 2 * 50 = 100 ms.
        #[divan::bench]
        fn tokio_retry(bencher: Bencher) {
            let mut c = Cycle::new(
                || {
                    tokio_retry::strategy::ExponentialBackoff::from_millis(u64::from(MULTIPLIER))
                        .factor(BASE.as_millis() as u64 / u64::from(MULTIPLIER))
                        .max_delay(CAP)
                        .map(tokio_retry::strategy::jitter)
                        .take(RETRIES as usize)
                },
                |s, _| s.next().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        /// `Jitter::Full` (`d * uniform[0, 1)`, `rand::rng()` per call), clipped
        /// to the cap. The policy is stateless; the "schedule" is the policy
        /// plus the retry counter. `should_retry` returns an absolute
        /// `SystemTime` computed from its own `SystemTime::now()` (read on
        /// every call, unavoidably); we subtract a `SystemTime` taken once
        /// outside the timed region, so the returned value is the delay plus
        /// the wall time elapsed since setup (the cost is one subtraction).
        #[divan::bench]
        fn retry_policies(bencher: Bencher) {
            let origin = setup_system_time();
            let mut c = Cycle::new(
                || {
                    retry_policies::policies::ExponentialBackoff::builder()
                        .retry_bounds(BASE, CAP)
                        .base(MULTIPLIER)
                        .jitter(retry_policies::Jitter::Full)
                        .build_with_max_retries(RETRIES)
                },
                move |policy, n| retry_policies_delay(policy, origin, n),
            );
            bencher.bench_local(|| c.next());
        }

        /// Additive jitter 0.99 (the crate's `Default`): `d + d * 0.99 *
        /// uniform[0, 1)`, capped so that the total never exceeds the cap.
        /// `HasherRng` is SipHash of a counter; `make_backoff` *clones* the
        /// maker's RNG, so every schedule from one maker repeats the same
        /// jitter sequence. `next_backoff` returns a `tokio::time::Sleep`
        /// (reads the clock for its deadline); we measure creating it, inside
        /// a current-thread runtime entered outside the timed region. The
        /// `Sleep` is returned; divan drops it outside the timed region.
        #[divan::bench]
        fn tower(bencher: Bencher) {
            let rt = super::tokio_runtime();
            let _guard = rt.enter();
            let mut c = Cycle::new(tower_maker(0.99), |s, _| s.next_backoff());
            bencher.bench_local(|| c.next());
        }

        /// Returns a closure building fresh `tower` backoffs from one maker.
        pub(super) fn tower_maker(
            jitter: f64,
        ) -> impl FnMut() -> tower::retry::backoff::ExponentialBackoff {
            let mut maker = tower::retry::backoff::ExponentialBackoffMaker::new(
                BASE,
                CAP,
                jitter,
                tower::util::rng::HasherRng::new(),
            )
            .expect("valid tower backoff parameters");
            move || maker.make_backoff()
        }

        /// Delay for retry `n` (1-based) from a `retry-policies` policy,
        /// relative to `origin`.
        #[inline]
        pub(super) fn retry_policies_delay(
            policy: &impl retry_policies::RetryPolicy,
            origin: SystemTime,
            n: u32,
        ) -> Duration {
            match policy.should_retry(origin, n - 1) {
                retry_policies::RetryDecision::Retry { execute_after } => {
                    execute_after.duration_since(origin).unwrap_or_default()
                }
                retry_policies::RetryDecision::DoNotRetry => panic!("{EXHAUSTED}"),
            }
        }

        /// The wall-clock reference for `retry-policies`, read once per bench.
        pub(super) fn setup_system_time() -> SystemTime {
            #[expect(
                clippy::disallowed_methods,
                reason = "bench setup, outside the timed region; the peer reads it anyway"
            )]
            SystemTime::now()
        }
    }

    /// The same exponential schedules without jitter.
    #[divan::bench_group]
    mod plain_exponential {
        use backoff::backoff::Backoff as _;
        use backon::BackoffBuilder as _;
        use divan::Bencher;
        use tower::retry::backoff::Backoff as _;

        use super::jittered_exponential::{retry_policies_delay, setup_system_time, tower_maker};
        use crate::{BASE, CAP, Cycle, EXHAUSTED, MAX_ATTEMPTS, MULTIPLIER, RETRIES};

        #[divan::bench]
        fn backon(bencher: Bencher) {
            let mut c = Cycle::new(
                || {
                    backon::ExponentialBuilder::new()
                        .with_min_delay(BASE)
                        .with_factor(MULTIPLIER as f32)
                        .with_max_delay(CAP)
                        .with_max_times(RETRIES as usize)
                        .build()
                },
                |s, _| s.next().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        /// Randomization factor 0: still draws `rand::random` and reads
        /// `Instant::now()` on every call (no way to opt out).
        #[divan::bench]
        fn backoff(bencher: Bencher) {
            let mut c = Cycle::new(
                || {
                    backoff::ExponentialBackoffBuilder::new()
                        .with_initial_interval(BASE)
                        .with_multiplier(f64::from(MULTIPLIER))
                        .with_max_interval(CAP)
                        .with_randomization_factor(0.0)
                        .with_max_elapsed_time(None)
                        .build()
                },
                |s, _| s.next_backoff().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        /// Jitter 0: skips the RNG (the iterator still seeds a `fastrand::Rng`).
        #[divan::bench]
        fn exponential_backoff(bencher: Bencher) {
            let mut c = Cycle::new(
                || {
                    let mut b = exponential_backoff::Backoff::new(MAX_ATTEMPTS, BASE, CAP);
                    b.set_factor(MULTIPLIER);
                    b.set_jitter(0.0);
                    b.into_iter()
                },
                |s, _| s.next().flatten().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        #[divan::bench]
        fn tokio_retry(bencher: Bencher) {
            let mut c = Cycle::new(
                || {
                    tokio_retry::strategy::ExponentialBackoff::from_millis(u64::from(MULTIPLIER))
                        .factor(BASE.as_millis() as u64 / u64::from(MULTIPLIER))
                        .max_delay(CAP)
                        .take(RETRIES as usize)
                },
                |s, _| s.next().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        /// `Jitter::None`; still reads `SystemTime::now()` on every call and
        /// returns an absolute time (see the jittered variant).
        #[divan::bench]
        fn retry_policies(bencher: Bencher) {
            let origin = setup_system_time();
            let mut c = Cycle::new(
                || {
                    retry_policies::policies::ExponentialBackoff::builder()
                        .retry_bounds(BASE, CAP)
                        .base(MULTIPLIER)
                        .jitter(retry_policies::Jitter::None)
                        .build_with_max_retries(RETRIES)
                },
                move |policy, n| retry_policies_delay(policy, origin, n),
            );
            bencher.bench_local(|| c.next());
        }

        /// Jitter 0 (skips the RNG). Measures creating the `tokio::time::Sleep`
        /// inside an entered current-thread runtime (see the jittered variant).
        #[divan::bench]
        fn tower(bencher: Bencher) {
            let rt = super::tokio_runtime();
            let _guard = rt.enter();
            let mut c = Cycle::new(tower_maker(0.0), |s, _| s.next_backoff());
            bencher.bench_local(|| c.next());
        }
    }

    /// A fixed 100 ms delay, 7 retries.
    #[divan::bench_group]
    mod constant {
        use backoff::backoff::Backoff as _;
        use backon::BackoffBuilder as _;
        use divan::Bencher;
        use tower::retry::backoff::{Backoff as _, MakeBackoff as _};

        use super::jittered_exponential::{retry_policies_delay, setup_system_time};
        use crate::{BASE, Cycle, EXHAUSTED, MAX_ATTEMPTS, RETRIES};

        /// `ConstantBuilder`.
        #[divan::bench]
        fn backon(bencher: Bencher) {
            let mut c = Cycle::new(
                || {
                    backon::ConstantBuilder::new()
                        .with_delay(BASE)
                        .with_max_times(RETRIES as usize)
                        .build()
                },
                |s, _| s.next().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        /// `backoff::backoff::Constant` (unbounded; the driver stops it).
        #[divan::bench]
        fn backoff(bencher: Bencher) {
            let mut c = Cycle::new(
                || backoff::backoff::Constant::new(BASE),
                |s, _| s.next_backoff().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        /// No constant policy: exponential with factor 1 and jitter 0.
        #[divan::bench]
        fn exponential_backoff(bencher: Bencher) {
            let mut c = Cycle::new(
                || {
                    let mut b = exponential_backoff::Backoff::new(MAX_ATTEMPTS, BASE, BASE);
                    b.set_factor(1);
                    b.set_jitter(0.0);
                    b.into_iter()
                },
                |s, _| s.next().flatten().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        /// `FixedInterval`.
        #[divan::bench]
        fn tokio_retry(bencher: Bencher) {
            let mut c = Cycle::new(
                || tokio_retry::strategy::FixedInterval::new(BASE).take(RETRIES as usize),
                |s, _| s.next().expect(EXHAUSTED),
            );
            bencher.bench_local(|| c.next());
        }

        /// No constant policy: exponential with base 1, bounds `[100 ms,
        /// 100 ms]`, `Jitter::None` (still reads `SystemTime::now()`).
        #[divan::bench]
        fn retry_policies(bencher: Bencher) {
            let origin = setup_system_time();
            let mut c = Cycle::new(
                || {
                    retry_policies::policies::ExponentialBackoff::builder()
                        .retry_bounds(BASE, BASE)
                        .base(1)
                        .jitter(retry_policies::Jitter::None)
                        .build_with_max_retries(RETRIES)
                },
                move |policy, n| retry_policies_delay(policy, origin, n),
            );
            bencher.bench_local(|| c.next());
        }

        /// No constant policy: exponential with `min == max == 100 ms`,
        /// jitter 0. Measures creating the `tokio::time::Sleep`.
        #[divan::bench]
        fn tower(bencher: Bencher) {
            let rt = super::tokio_runtime();
            let _guard = rt.enter();
            let mut maker = tower::retry::backoff::ExponentialBackoffMaker::new(
                BASE,
                BASE,
                0.0,
                tower::util::rng::HasherRng::new(),
            )
            .expect("valid tower backoff parameters");
            let mut c = Cycle::new(|| maker.make_backoff(), |s, _| s.next_backoff());
            bencher.bench_local(|| c.next());
        }
    }

    // No `decorrelated_jitter` group: none of these peers offers decorrelated
    // jitter (retry-policies removed it in favour of none/full/bounded).

    /// Current-thread runtime with the time driver, for `tower`'s `Sleep`.
    fn tokio_runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("tokio runtime")
    }
}

/// Hand-written floor references: `min(cap, base * 2^(n-1))`, with and
/// without an inline xorshift64 full jitter.
#[divan::bench_group]
mod hand_written {
    use std::time::Duration;

    use divan::{Bencher, black_box};

    use crate::{BASE, CAP, Cycle, MULTIPLIER};

    const _: () = assert!(MULTIPLIER == 2, "exp_ns hard-codes a doubling");

    /// Schedule parameters, passed through `black_box` so they are not
    /// constant-folded, plus the jitter RNG state.
    struct Params {
        base_ns: u64,
        cap_ns: u64,
        rng: u64,
    }

    impl Params {
        fn new(seed: u64) -> Self {
            black_box(Self {
                base_ns: BASE.as_nanos() as u64,
                cap_ns: CAP.as_nanos() as u64,
                // xorshift state must be non-zero.
                rng: seed | 1,
            })
        }

        /// `min(cap, base * 2^(n-1))` in nanoseconds (`n <= 64`).
        #[inline]
        fn exp_ns(&self, n: u32) -> u64 {
            self.base_ns.saturating_mul(1 << (n - 1)).min(self.cap_ns)
        }

        /// xorshift64 step.
        #[inline]
        fn next_u64(&mut self) -> u64 {
            let mut x = self.rng;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            self.rng = x;
            x
        }
    }

    /// A fixed delay behind an attempt limit, as any policy that enforces `max_attempts` must
    /// check: the floor for `constant` (peers without a limit skip this check entirely).
    #[divan::bench]
    fn constant(bencher: Bencher) {
        let limit = black_box(crate::MAX_ATTEMPTS);
        let mut c = Cycle::new(
            || black_box(BASE),
            |base, n| (if n >= limit { None } else { Some(*base) }).expect(crate::EXHAUSTED),
        );
        bencher.bench_local(|| c.next());
    }

    #[divan::bench]
    fn plain(bencher: Bencher) {
        let mut c = Cycle::new(|| Params::new(0), |p, n| Duration::from_nanos(p.exp_ns(n)));
        bencher.bench_local(|| c.next());
    }

    /// Full jitter `uniform[0, d)` via a 64x64->128 multiply-high.
    #[divan::bench]
    fn full_jitter(bencher: Bencher) {
        let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
        let mut c = Cycle::new(
            || {
                seed = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
                Params::new(seed)
            },
            |p, n| {
                let d = p.exp_ns(n);
                let r = p.next_u64();
                Duration::from_nanos(((u128::from(r) * u128::from(d)) >> 64) as u64)
            },
        );
        bencher.bench_local(|| c.next());
    }
}
