//! The generator streams of a run, and the order they are forked in.
//!
//! Every generator derives from the world seed, in an order fixed by the parts, so a run is
//! reproducible to the byte. When each request holds its own budget (fixed clients, or
//! [`BudgetScope::PerRequest`]), one stream forked first draws the arrivals, the network and
//! the failures, and each request forks from the world in turn its budget's (if the strategy
//! has one), its policy's and, if the dependency can tell a wait
//! ([`Dependency::tells_waits`]), its spread's generators. Otherwise one open source draws from
//! the world in turn: its arrivals, its server (the network and the failures), its budget, and
//! then each request's policy from the world itself; several open sources each fork four of
//! their own (arrivals, server, policies, budget), and serial clients four (server, policies,
//! budget, pacing); a request that meets a server's wait and needs a draw for its spread forks
//! that generator from its source's policies then. The inner layers of a stack draw from a
//! stream of their own, derived from the world seed apart from the rest, so a stack whose
//! inner layers never retry draws exactly what its outer layer alone does. A failure is drawn
//! only when it is uncertain (a failure probability strictly between 0 and 1), after the
//! network's draw, and only for an attempt whose client still waits. With a load that varies,
//! each candidate arrival draws whether it is kept before the next one's gap. A hedged
//! request forks its policy's generator (and, if the dependency can tell a wait, its
//! spread's) when it starts. Behind a service, the way back is drawn when the work is done,
//! and only for an attempt still awaited. With two hosts, each request forks a generator of
//! its own from its source's server generator (its arrivals' when each request holds its own
//! budget) as it arrives, and draws from it its host, its policy's generator (forked) and
//! then its answers: the network's delays and its failures ([`TwoHosts`]). With a pool of
//! replicas and one open source, the source forks in turn its arrivals, its server (which
//! also picks the replicas), the pool's service times, its policies and its budget, and then
//! each replica forks its pauses' generator from the world, in the replicas' order; with
//! other clients the pool's streams (service times first, then each replica's) derive from
//! the world seed apart from the rest.

use stagger_core::SeededRng;

/// What the world seed is mixed with for the inner layers' stream.
const LAYER_STREAM: u64 = 0x6c61_7965_7273_2121;

/// What the world seed is mixed with for a pool's streams, but for one open source's.
const POOL_STREAM: u64 = 0x7265_706c_6963_6173;

/// The generators of one source, as [`Streams`] forks them.
pub(crate) struct SourceStreams {
    /// Open: the gaps between arrivals. Serial: the gaps between starts. A budget per request:
    /// the network's delays and the failures too.
    pub(crate) gaps: SeededRng,
    /// The network's delays and the failures; `None` when they come from `gaps`.
    pub(crate) server: Option<SeededRng>,
    /// One generator per request, forked in turn.
    pub(crate) policies: SeededRng,
}

/// The world's generator and the seed it came from: each method forks what one arrangement of
/// the parts needs, in that arrangement's fixed order (see the module's documentation).
pub(crate) struct Streams {
    seed: u64,
    world: SeededRng,
}

impl Streams {
    /// The streams of a run from `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self {
            seed,
            world: SeededRng::new(seed),
        }
    }

    /// Each request holds its own budget: one stream for the arrivals, the network and the
    /// failures, then a shared budget's (if `shared_budget`); every request then forks its own
    /// from what is left, the source's `policies`.
    pub(crate) fn per_request(mut self, shared_budget: bool) -> (SourceStreams, Option<SeededRng>) {
        let gaps = self.world.fork();
        let budget = shared_budget.then(|| self.world.fork());
        let source = SourceStreams {
            gaps,
            server: None,
            policies: self.world,
        };
        (source, budget)
    }

    /// One open source: its arrivals, its server, its budget; each request's policy then forks
    /// from what is left.
    pub(crate) fn one_source(mut self) -> (SourceStreams, SeededRng) {
        let gaps = self.world.fork();
        let server = Some(self.world.fork());
        let budget = self.world.fork();
        let source = SourceStreams {
            gaps,
            server,
            policies: self.world,
        };
        (source, budget)
    }

    /// One open source in front of a pool (the tail's order): its arrivals, its server (which
    /// also picks the replicas), the pool's service times, its policies, its budget, and then
    /// the pool's replicas from what is left ([`PoolStreams`]).
    pub(crate) fn one_source_with_pool(mut self) -> (SourceStreams, SeededRng, PoolStreams) {
        let gaps = self.world.fork();
        let server = Some(self.world.fork());
        let service = self.world.fork();
        let policies = self.world.fork();
        let budget = self.world.fork();
        let source = SourceStreams {
            gaps,
            server,
            policies,
        };
        (
            source,
            budget,
            PoolStreams {
                service,
                replicas: self.world,
            },
        )
    }

    /// The next of several sources or serial clients: an open source's arrivals first, then
    /// its server, its policies and its budget's (forked whether or not there is a budget, so
    /// that the streams stay the same), and a serial client's pacing last.
    pub(crate) fn next_source(&mut self, open: bool) -> (SourceStreams, SeededRng) {
        let first = open.then(|| self.world.fork());
        let server = Some(self.world.fork());
        let policies = self.world.fork();
        let budget = self.world.fork();
        let gaps = first.unwrap_or_else(|| self.world.fork());
        let source = SourceStreams {
            gaps,
            server,
            policies,
        };
        (source, budget)
    }

    /// A pool's streams when the source did not fork them: derived from the world seed apart
    /// from the rest, its service times first.
    pub(crate) fn pool_apart(seed: u64) -> PoolStreams {
        let mut replicas = SeededRng::new(seed ^ POOL_STREAM);
        PoolStreams {
            service: replicas.fork(),
            replicas,
        }
    }

    /// The inner layers' policy generators, one per inner run in turn: a stream of its own, so
    /// that a stack whose inner layers never retry draws what its outer layer alone does.
    pub(crate) fn layers(&self) -> SeededRng {
        SeededRng::new(self.seed ^ LAYER_STREAM).fork()
    }

    /// Independent clients run one at a time: the stream of arrivals, network and failures
    /// is forked first (a constant network and a certain outcome never draw from it), then
    /// each client forks from the world its budget's (if it has its own) and its policy's.
    pub(crate) fn one_at_a_time(mut self) -> SeededRng {
        let _arrivals = self.world.fork();
        self.world
    }
}

/// A pool's generators: its service times, and the world its replicas fork their pauses from,
/// in the replicas' order.
pub(crate) struct PoolStreams {
    /// The service times.
    pub(crate) service: SeededRng,
    /// What each replica forks its pauses' generator from, in turn.
    pub(crate) replicas: SeededRng,
}
