//! # `tail`: a long tail from replicas that pause, and a timeout per attempt
//!
//! A pool of replicas serves requests that arrive at random. Most requests take a few
//! milliseconds; now and then a replica stops serving for a while (a stop-the-world pause),
//! and the requests it holds wait for it. Those few requests make the tail: the 99.9th
//! percentile is set by the pauses, not by the service time. A timeout per attempt
//! ([`Settings::with_attempt_timeout`](stagger_core::engine::Settings::with_attempt_timeout))
//! cuts an attempt stuck on a paused replica and retries it on another, picked at random.
//!
//! The workload is a composition ([`Tail::composed`]): one open source of requests, no
//! network delay, and a dependency that is a pool of replicas ([`Replicas`]), so a scenario
//! file can put the same pool behind any other part (a spike, a network, a deeper retry
//! stack). Its model, deterministic by seed:
//!
//! - **Replicas:** `replicas` servers (default 10), each with `concurrency` requests in
//!   service at once (default 4) and a first-in, first-out queue beyond that. Each attempt's
//!   service time is drawn when it is sent, from `service` (default `Exp(mean 10 ms)`).
//! - **Pauses:** each replica runs for `Exp(mean pause_every)` (default 99 s), then pauses for
//!   `pause` (default 1 s), and so on, from a generator of its own: the pauses do not depend
//!   on the traffic. A paused replica serves nothing: the work of the attempts in service
//!   stops and resumes when the pause ends, and the queue waits. A `pause` of 0 is a pool with
//!   no tail.
//! - **Arrivals:** a Poisson process at `load` of the pool's capacity (default 0.6:
//!   `0.6 x replicas x concurrency / mean service`, 2 400 requests per second at the defaults)
//!   for `duration` (default 100 s). Every attempt, the first and each retry, goes to a replica
//!   picked at random; there is no load balancer that knows which replica is paused. A hedge
//!   ([`Strategy::hedging`](crate::Strategy::hedging)) goes to a replica picked at random among those the request has not
//!   tried, as gRFC A6 asks of hedges ("distinct backends, if possible"). No network delay is
//!   modelled.
//! - **Hedging:** each request runs the engine's [`HedgedRun`](stagger_core::engine::HedgedRun); a
//!   delay at a quantile is read, when the request starts, from one
//!   `LatencySketch` of the fleet's attempt latencies.
//!   Every attempt that answers is measured; a loser is measured for the time it ran. A loser
//!   still queued is dropped when its turn comes; one in service runs on, as a cut attempt
//!   does.
//! - **Clients:** each request is a run of the real engine with the strategy's policy, one
//!   budget for the whole client fleet (the strategy's, if any), an end-to-end deadline
//!   `timeout` (default 2 s) and, with `attempt_timeout`, a timeout per attempt. An attempt that
//!   outlives the time the engine gave it
//!   ([`Attempt::remaining`](stagger_core::engine::Attempt::remaining): the shorter of its
//!   timeout and the time left before the deadline) is cut at that time, and the client
//!   reports [`Failure::Timeout`](stagger_core::Failure::Timeout), retried as any timeout is. Without an attempt timeout, an
//!   attempt has until the deadline.
//! - **What a cut attempt costs the server:** an attempt still waiting in a replica's queue is
//!   dropped when its turn comes, without service, as a server does that checks whether its
//!   client is still there (the connection, or a deadline it was passed) before starting work.
//!   An attempt already in service runs to its end and holds its slot: the server does not
//!   learn of the cancellation mid-work. This is the conservative choice for the
//!   attempt timeout (the work of a cut attempt is still paid where it started), and dropping
//!   the queued ones is what keeps the abandoned backlog of a paused replica from being served
//!   to nobody after the pause.
//!
//! **How the defaults make a tail.** A replica is paused `1 s / (99 s + 1 s)` = 1 % of the
//! time, so (Poisson arrivals see time averages) about 1 % of attempts arrive at a paused
//! replica. One that arrives `u` into a pause waits for the rest of the pause, `1 s - u`, and
//! then for the backlog ahead of it: the replica receives 240 requests per second (a tenth of
//! 2 400) and serves 400 (4 at a time, 10 ms each), so the backlog of `240 u` drains in
//! `0.6 u`. Its latency is `1 s - 0.4 u`, between 0.6 and 1 s: 60 to 100 times the 10 ms mean.
//! After the pause the backlog of 240 drains at 400 - 240 = 160 per second, in 1.5 s, during
//! which about another 1.5 % of requests wait less, from 0.6 s down to nothing. With 10
//! replicas over 100 s a run holds about 10 pauses. Without an attempt timeout, the 99.9th
//! percentile lies among the requests that met a pause; with a 50 ms attempt timeout those are
//! cut at 50 ms and retried on a replica that is (almost surely) running, at the cost of about
//! one extra attempt per request that met a pause or a long queue.
//!
//! Figures: the common ones, with `p50_ms`, `p99_ms` and `p999_ms` the latency of the requests
//! that succeeded, from their first attempt to the answer of their last (a request that gave
//! up, at its deadline or its attempts' end, has no latency; with the defaults hardly any
//! give up, and `success_rate` says how many), and `load` the attempts per request.

use std::time::Duration;

use serde::Deserialize;

use super::{Model, Workload, WorkloadKind};
use crate::dist::Delay;
use crate::error::SimError;
use crate::estimate::ns;
use crate::model::{Clients, Composed, Dependency, Network, Replicas};
use crate::model::{check_duration, check_window};

const SECOND: f64 = 1e9;

/// The tail workload's parameters.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Tail {
    /// Replicas in the pool, 1 to [`Tail::MAX_REPLICAS`].
    pub replicas: u32,
    /// Requests each replica serves at once, 1 to [`Tail::MAX_CONCURRENCY`]; more wait in its
    /// queue.
    pub concurrency: u32,
    /// The service time of one attempt, drawn when it is sent (default `Exp(mean 10 ms)`); its
    /// mean between 1 µs and 1 s.
    #[serde(skip)]
    pub service: Delay,
    /// The offered load, as a share of the pool's capacity (`replicas x concurrency / mean
    /// service`), in (0, 1).
    pub load: f64,
    /// How long a replica pauses, at most a day; 0 for no pauses.
    pub pause: Duration,
    /// The mean time a replica runs between pauses (exponential), from 1 ms to a day.
    pub pause_every: Duration,
    /// How long requests arrive, longer than 0 and at most a day.
    pub duration: Duration,
    /// Each request's end-to-end deadline, from its first attempt, longer than 0 and at most
    /// a day.
    pub timeout: Duration,
    /// A timeout for each attempt ([`Settings::with_attempt_timeout`](stagger_core::engine::Settings::with_attempt_timeout)), from 1 ms to a day,
    /// or none.
    pub attempt_timeout: Option<Duration>,
    /// The window of the peak retry share.
    pub window: Duration,
    /// The sub-requests each request fans out to, 1 to [`Tail::MAX_FANOUT`] (default 1): each
    /// is a run of its own, to a replica picked at random, and the request succeeds when all
    /// of them have, as slow as the slowest. The offered load counts sub-requests: arrivals
    /// come `fanout` times less often.
    pub fanout: u32,
}

impl Default for Tail {
    fn default() -> Self {
        Self {
            replicas: 10,
            concurrency: 4,
            service: Delay::Exponential { mean: 10_000_000 },
            load: 0.6,
            pause: Duration::from_secs(1),
            pause_every: Duration::from_secs(99),
            duration: Duration::from_secs(100),
            timeout: Duration::from_secs(2),
            attempt_timeout: None,
            window: Duration::from_millis(10),
            fanout: 1,
        }
    }
}

impl Tail {
    /// The most replicas.
    pub const MAX_REPLICAS: u32 = Replicas::MAX_COUNT;
    /// The most requests a replica serves at once.
    pub const MAX_CONCURRENCY: u32 = Replicas::MAX_CONCURRENCY;
    /// The most requests a run may expect (arrival rate x `duration`),
    /// [`limits::MAX_REQUESTS`](crate::limits::MAX_REQUESTS).
    pub const MAX_REQUESTS: f64 = crate::limits::MAX_REQUESTS;
    /// The most events a run may process; past it the run stops with [`SimError::TooLarge`].
    pub const MAX_EVENTS: u64 = crate::limits::MAX_EVENTS;
    /// The most sub-requests a request fans out to,
    /// [`limits::MAX_FANOUT`](crate::limits::MAX_FANOUT).
    pub const MAX_FANOUT: u32 = crate::limits::MAX_FANOUT;

    /// The offered rate, in requests per second: `load x replicas x concurrency / mean
    /// service`.
    #[must_use]
    pub fn requests_per_second(&self) -> f64 {
        self.rate() * SECOND
    }

    /// The arrival rate, in requests per nanosecond.
    fn rate(&self) -> f64 {
        self.load * f64::from(self.replicas) * f64::from(self.concurrency) / self.service.mean()
    }

    /// The requests the run expects.
    fn requests(&self) -> f64 {
        self.rate() * ns(self.duration)
    }

    /// The share of time a replica is paused.
    #[cfg(test)]
    fn pause_share(&self) -> f64 {
        self.composed()
            .dependency
            .replicas
            .map_or(0.0, |r| ns(r.pause) / (ns(r.pause_every) + ns(r.pause)))
    }

    /// The pool of replicas.
    fn pool(&self) -> Replicas {
        Replicas {
            count: self.replicas,
            concurrency: self.concurrency,
            service: self.service,
            pause: self.pause,
            pause_every: self.pause_every,
        }
    }

    /// The composition this workload runs: one open source of requests (each fanning out to
    /// `fanout` sub-requests), no network, and the pool of replicas behind the dependency;
    /// every request with the deadline and the attempt timeout.
    #[must_use]
    pub fn composed(&self) -> Composed {
        let clients =
            Clients::one_source(self.requests_per_second() / f64::from(self.fanout.max(1)));
        let network = Network::RoundTrip(Delay::Constant { nanos: 0 });
        let mut model = Composed::new(clients, self.duration, network);
        model.dependency = Dependency {
            replicas: Some(self.pool()),
            ..Dependency::HEALTHY
        };
        model.deadline = Some(self.timeout);
        model.attempt_timeout = self.attempt_timeout;
        model.window = self.window;
        model.fanout = self.fanout;
        model
    }
}

impl Workload for Tail {
    const KIND: WorkloadKind = WorkloadKind::Tail;

    fn validate(&self) -> Result<(), SimError> {
        const DAY: Duration = crate::limits::MAX_DURATION;
        if !(self.load.is_finite() && self.load > 0.0 && self.load < 1.0) {
            return Err(SimError::Invalid {
                param: "load",
                allowed: "a share of the pool's capacity in (0, 1)",
            });
        }
        self.pool()
            .validate_as(["replicas", "concurrency", "service", "pause", "pause_every"])?;
        check_duration(self.duration)?;
        if self.timeout.is_zero() || self.timeout > DAY {
            return Err(SimError::Invalid {
                param: "timeout",
                allowed: "longer than 0 and at most a day",
            });
        }
        if let Some(t) = self.attempt_timeout
            && (t < crate::limits::MIN_ATTEMPT_TIMEOUT || t > DAY)
        {
            return Err(SimError::Invalid {
                param: "attempt_timeout",
                allowed: crate::limits::ATTEMPT_TIMEOUT_ALLOWED,
            });
        }
        check_window(self.window)?;
        if self.fanout == 0 || self.fanout > Self::MAX_FANOUT {
            return Err(SimError::Invalid {
                param: "fanout",
                allowed: crate::limits::FANOUT_ALLOWED,
            });
        }
        if self.requests() > Self::MAX_REQUESTS {
            return Err(SimError::TooLarge {
                what: "load x replicas x concurrency / mean service x duration",
                limit: format!("{:e} requests", Self::MAX_REQUESTS),
            });
        }
        Ok(())
    }

    fn model(&self) -> Model {
        Model::Composed(self.composed())
    }
}

#[cfg(test)]
mod tests {
    use crate::strategy::Strategy;
    use stagger_core::AnyConfig;
    use stagger_core::policy::{Immediate, NoRetry};

    use super::*;
    use crate::workload::Overrides;

    fn immediate(attempts: u32) -> Strategy {
        Strategy::policy(AnyConfig::from(
            Immediate::new().with_max_attempts(attempts),
        ))
    }

    fn short() -> Tail {
        Tail {
            duration: Duration::from_secs(20),
            pause_every: Duration::from_secs(19),
            ..Tail::default()
        }
    }

    #[test]
    fn the_defaults_offer_2400_requests_per_second() {
        assert!((Tail::default().requests_per_second() - 2_400.0).abs() < 1e-6);
        assert!((Tail::default().pause_share() - 0.01).abs() < 1e-12);
    }

    #[test]
    fn the_same_seed_gives_the_same_row_and_another_seed_another() {
        let w = Tail {
            attempt_timeout: Some(Duration::from_millis(50)),
            ..short()
        };
        let s = immediate(3);
        assert_eq!(w.run(&s, 5).unwrap(), w.run(&s, 5).unwrap());
        assert_ne!(w.run(&s, 5).unwrap(), w.run(&s, 6).unwrap());
    }

    #[test]
    fn without_pauses_or_retries_every_request_is_served_once() {
        let w = Tail {
            pause: Duration::ZERO,
            ..short()
        };
        let row = w
            .run(&Strategy::policy(AnyConfig::from(NoRetry::new())), 1)
            .unwrap();
        assert_eq!(row.success_rate, 1.0);
        assert_eq!(row.load, 1.0);
        // An M/M/4 queue at 60 %: the median is near the service time, the tail short.
        let (p50, p999) = (row.p50_ms.unwrap(), row.p999_ms.flatten().unwrap());
        assert!((5.0..12.0).contains(&p50), "{p50}");
        assert!(p999 < 150.0, "{p999}");
    }

    #[test]
    fn bad_parameters_are_refused_with_their_names() {
        let s = immediate(3);
        let d = Tail::default();
        let param = |w: Tail| w.run(&s, 1).unwrap_err().param();
        for load in [0.0, -0.5, 1.0, 2.0, f64::NAN, f64::INFINITY] {
            assert_eq!(param(Tail { load, ..d }), Some("load"), "{load}");
        }
        assert_eq!(param(Tail { replicas: 0, ..d }), Some("replicas"));
        assert_eq!(
            param(Tail {
                replicas: u32::MAX,
                ..d
            }),
            Some("replicas")
        );
        assert_eq!(
            param(Tail {
                concurrency: 0,
                ..d
            }),
            Some("concurrency")
        );
        assert_eq!(
            param(Tail {
                service: Delay::Constant { nanos: 0 },
                ..d
            }),
            Some("service")
        );
        assert_eq!(
            param(Tail {
                pause: Duration::from_secs(100_000),
                ..d
            }),
            Some("pause")
        );
        assert_eq!(
            param(Tail {
                pause_every: Duration::ZERO,
                ..d
            }),
            Some("pause_every")
        );
        assert_eq!(
            param(Tail {
                duration: Duration::ZERO,
                ..d
            }),
            Some("duration")
        );
        assert_eq!(
            param(Tail {
                timeout: Duration::ZERO,
                ..d
            }),
            Some("timeout")
        );
        for t in [Duration::ZERO, Duration::from_micros(999), Duration::MAX] {
            assert_eq!(
                param(Tail {
                    attempt_timeout: Some(t),
                    ..d
                }),
                Some("attempt_timeout"),
                "{t:?}"
            );
        }
        assert_eq!(
            param(Tail {
                window: Duration::ZERO,
                ..d
            }),
            Some("window")
        );
        let huge = Tail {
            replicas: 10_000,
            concurrency: 10_000,
            ..d
        };
        assert!(matches!(huge.validate(), Err(SimError::TooLarge { .. })));
        // An override the workload does not use is refused, not ignored.
        let clients = Overrides {
            clients: Some(3),
            ..Overrides::default()
        };
        assert_eq!(
            Tail::from_overrides(&clients),
            Err(SimError::NotApplicable {
                param: "clients",
                workload: "tail",
            })
        );
        let w = Tail::from_overrides(&Overrides {
            attempt_timeout: Some(Duration::from_millis(50)),
            load: Some(0.3),
            replicas: Some(3),
            ..Overrides::default()
        })
        .unwrap();
        assert_eq!(
            (w.attempt_timeout, w.load, w.replicas),
            (Some(Duration::from_millis(50)), 0.3, 3)
        );
    }

    #[test]
    fn a_hedged_run_is_the_same_for_the_same_seed_and_never_exceeds_its_attempts() {
        use stagger_core::engine::Hedging;
        for hedging in [
            Hedging::quantile(9500, 2),
            Hedging::fixed(Duration::from_millis(30), 3),
        ] {
            let s = immediate(2).with_hedging(Some(hedging));
            let w = Tail {
                fanout: 3,
                ..short()
            };
            let row = w.run(&s, 7).unwrap();
            assert_eq!(row, w.run(&s, 7).unwrap());
            assert_ne!(row, w.run(&s, 8).unwrap());
            assert!(row.load > 1.0 && row.load <= f64::from(hedging.max_attempts()));
            assert_eq!(row.policy, s.name());
        }
    }

    #[test]
    fn a_request_that_fans_out_is_as_slow_as_its_slowest_sub_request() {
        let one = short();
        let ten = Tail {
            fanout: 10,
            ..short()
        };
        let s = Strategy::policy(AnyConfig::from(NoRetry::new()));
        let (a, b) = (one.run(&s, 1).unwrap(), ten.run(&s, 1).unwrap());
        // The same offered load of sub-requests, each served once.
        assert_eq!(b.load, 1.0);
        assert!((b.first_tries as f64 / a.first_tries as f64 - 1.0).abs() < 0.05);
        // A tenth as many requests, each needing ten: many more of them meet a slow replica
        // (here, pausing 5 % of the time, about two in five), so the median climbs into the
        // tail, and the tail is no shorter.
        assert!(b.p50_ms.unwrap() > 5.0 * a.p50_ms.unwrap(), "{a:?} {b:?}");
        assert!(b.p99_ms.unwrap() >= a.p99_ms.unwrap(), "{a:?} {b:?}");
        // The same seed gives the same row.
        assert_eq!(b, ten.run(&s, 1).unwrap());
        assert_eq!(
            Tail {
                fanout: 0,
                ..short()
            }
            .run(&s, 1)
            .unwrap_err()
            .param(),
            Some("fanout")
        );
    }

    #[test]
    fn the_estimate_is_near_the_run() {
        for attempt_timeout in [None, Some(Duration::from_millis(50))] {
            let w = Tail {
                attempt_timeout,
                ..short()
            };
            let s = immediate(3);
            let e = w.estimate(&s);
            let row = w.run(&s, 1).unwrap();
            let ratio = row.events as f64 / e.events as f64;
            assert!(
                (0.8..=1.25).contains(&ratio),
                "{attempt_timeout:?}: {ratio}"
            );
        }
    }
}
