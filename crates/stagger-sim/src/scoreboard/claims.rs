//! The published claims the board checks: each is a typed value with its source's words, the
//! margins that read those words, and one check over the board's rows.
//!
//! [`Scoreboard::findings`] is [`Claim::ALL`] checked in order, and the tests that measure the
//! same behaviour fill a [`Scoreboard::empty`] with their own runs and call the same
//! [`Claim::check`]: a margin is written once, here.

use std::time::Duration;

use serde::Serialize;
use stagger_core::{AnyConfig, PolicyConfig, PolicyKind};

use super::{
    Labelled, RECOVERED, RECOVERS_AT_LEAST, RecoveryShare, SPIKE_SEEDS, STAYS_COLLAPSED_BELOW,
    Scoreboard, SweepPoint, TAIL_CLAIM_CUT, TAIL_CLAIM_EXTRA_LOAD, TAIL_SEEDS, THROTTLE_SEEDS,
    TailPoint, W2_CLIENTS, tail_claim, w2_shape,
};
use crate::metrics::ResultRow;
use crate::model::RetryAfterForm;
use crate::workload::open_loop;
use crate::workload::outage::Outage;

/// How the board reads the published findings' words, one constant per margin, each chosen
/// before looking at the figures. [`Claim::check`] is their one reader.
pub mod margins {
    /// The herd: constant puts "about 14%" (one retry in seven) of all retries into one window.
    pub const HERD_PEAK_SHARE: f64 = 1.0 / 7.0;
    /// The herd: how near [`HERD_PEAK_SHARE`] "about" is, and how near exponential's peak must
    /// be to constant's to be "just as synchronised".
    pub const HERD_NEAR: f64 = 0.01;
    /// The herd: full jitter "disperses": its peak is below this share of constant's.
    pub const DISPERSED_BELOW: f64 = 1.0 / 3.0;
    /// The outage: constant succeeds "under 2%" of the time.
    pub const CONSTANT_SUCCEEDS_UNDER: f64 = 0.02;
    /// The outage: exponential succeeds "far more often": more than this multiple of constant.
    pub const FAR_MORE_OFTEN: f64 = 3.0;
    /// W1: full jitter "more than halves" exponential's work: at most this share of it.
    pub const FULL_HALVES_EXPONENTIAL: f64 = 0.5;
    /// W1: full and equal jitter do "about the same work": within this share of each other.
    pub const ABOUT_THE_SAME_WORK: f64 = 0.25;
    /// W1: decorrelated jitter finishes "slightly sooner": sooner, but in more than this share
    /// of full jitter's time.
    pub const SLIGHTLY_SOONER: f64 = 0.8;
    /// W1: equal jitter is "much slower": more than this multiple of full jitter's time.
    pub const MUCH_SLOWER: f64 = 1.25;
    /// W1: exponential is "by far the slowest": more than this multiple of the next slowest.
    pub const BY_FAR_THE_SLOWEST: f64 = 2.0;
    /// W2: the closed form holds within this many standard errors of the sampling error
    /// ([`crate::workload::open_loop::standard_errors`]) at every failure rate swept.
    pub const CLOSED_FORM_STANDARD_ERRORS: f64 = 4.0;
    /// W2: the token bucket "caps extra load near 14 %": load below this at every failure rate
    /// swept.
    pub const BUCKET_CAP: f64 = 1.2;
    /// W2: the circuit breaker "trips early": load below this at x = 0.5.
    pub const BREAKER_TRIPS: f64 = 1.01;
    /// W2: with many small clients the bucket "tends to N retries": the share of "3 retries"'
    /// extra load it keeps grows by more than this factor from the fewest clients to the most,
    /// at x = 0.5.
    pub const BUCKET_TENDS_TO_RETRIES: f64 = 2.0;
    /// W2: and the breaker "tends to none": its share shrinks below this fraction of what it
    /// was, at x = 0.05, where it still retries with few clients.
    pub const BREAKER_TENDS_TO_NONE: f64 = 0.5;
    /// W3: backoff does "nearly nothing" to open clients: their load moves by less than this
    /// share.
    pub const NEARLY_NOTHING: f64 = 0.05;
    /// W3: backoff "cuts total attempts sharply" with serial clients: below this share of the
    /// attempts without it.
    pub const CUTS_SHARPLY: f64 = 0.8;
    /// W4's ramp: "both collapse": a tail goodput ratio below this.
    pub const COLLAPSED_BELOW: f64 = 0.5;
    /// The nginx trial: the floor "serves 3 of 20": the mean over the seeds within this of 3.
    pub const FLOOR_SERVES_NEAR: f64 = 0.5;
    /// The nginx trial: the spread "serves 8 to 10": the mean within these bounds, that range
    /// widened by [`FLOOR_SERVES_NEAR`] on each side.
    pub const SPREAD_SERVES: (f64, f64) = (7.5, 10.5);
}

/// A published finding beside ours: one [`Claim`] checked on one board.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    /// The claim.
    pub claim: Claim,
    /// The workload ([`Claim::workload`]).
    pub workload: &'static str,
    /// The source and what it reports ([`Claim::published`]).
    pub published: &'static str,
    /// How its words are read ([`Claim::reading`]).
    pub reading: String,
    /// What our model measured.
    pub ours: String,
    /// Whether our model reproduces it.
    pub reproduced: bool,
}

/// A published claim the board checks. Each names its source in [`Claim::published`], reads
/// its words with the constants of [`margins`] and checks them on a [`Scoreboard`]'s rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Claim {
    /// The herd: constant and exponential synchronise a herd, full jitter disperses it.
    HerdSynchronised,
    /// The outage: constant rarely outlasts a 30-second outage, exponential far more often.
    OutageConstantRarelySucceeds,
    /// W1: full jitter more than halves un-jittered exponential's work.
    FullJitterHalvesWork,
    /// W1: full and equal jitter do about the same work.
    FullAndEqualSameWork,
    /// W1: decorrelated jitter does more work than full jitter.
    DecorrelatedMoreWork,
    /// W1: decorrelated jitter finishes slightly sooner than full jitter.
    DecorrelatedSlightlySooner,
    /// W1: equal jitter is much slower than full jitter.
    EqualMuchSlower,
    /// W1: un-jittered exponential is by far the slowest.
    ExponentialSlowest,
    /// W1: no backoff finishes fastest.
    NoBackoffFastest,
    /// W1: no backoff does the most work.
    NoBackoffMostWork,
    /// W2: immediate retries follow the closed form.
    RetriesClosedForm,
    /// W2: the token bucket caps the extra load.
    BucketCapsLoad,
    /// W2: the circuit breaker trips early.
    BreakerTripsEarly,
    /// W2: with many small clients the bucket tends to retries and the breaker to none.
    ManySmallClients,
    /// W3: backoff helps serial clients, not open ones.
    SerialBackoffCuts,
    /// W4: without backoff the spike leaves the system collapsed.
    SpikeStaysCollapsed,
    /// W4: with jittered backoff the system recovers from the spike.
    SpikeRecovers,
    /// W4: under the ramp both strategies collapse.
    RampBothCollapse,
    /// The nginx trial: the floor alone serves 3 of 20, a spread above it 8 to 10.
    ThrottleTrial,
    /// The Tail at Scale: a deferred hedge cuts p99.9 tenfold for a little more load.
    HedgeCutsTail,
}

impl Claim {
    /// Every claim, in the board's order.
    pub const ALL: [Self; 20] = [
        Self::HerdSynchronised,
        Self::OutageConstantRarelySucceeds,
        Self::FullJitterHalvesWork,
        Self::FullAndEqualSameWork,
        Self::DecorrelatedMoreWork,
        Self::DecorrelatedSlightlySooner,
        Self::EqualMuchSlower,
        Self::ExponentialSlowest,
        Self::NoBackoffFastest,
        Self::NoBackoffMostWork,
        Self::RetriesClosedForm,
        Self::BucketCapsLoad,
        Self::BreakerTripsEarly,
        Self::ManySmallClients,
        Self::SerialBackoffCuts,
        Self::SpikeStaysCollapsed,
        Self::SpikeRecovers,
        Self::RampBothCollapse,
        Self::ThrottleTrial,
        Self::HedgeCutsTail,
    ];

    /// The workload whose rows the claim is checked on.
    #[must_use]
    pub const fn workload(self) -> &'static str {
        match self {
            Self::HerdSynchronised => "herd",
            Self::OutageConstantRarelySucceeds => "outage",
            Self::FullJitterHalvesWork
            | Self::FullAndEqualSameWork
            | Self::DecorrelatedMoreWork
            | Self::DecorrelatedSlightlySooner
            | Self::EqualMuchSlower
            | Self::ExponentialSlowest
            | Self::NoBackoffFastest
            | Self::NoBackoffMostWork => "contention",
            Self::RetriesClosedForm
            | Self::BucketCapsLoad
            | Self::BreakerTripsEarly
            | Self::ManySmallClients => "open-loop",
            Self::SerialBackoffCuts => "serial",
            Self::SpikeStaysCollapsed | Self::SpikeRecovers => "spike",
            Self::RampBothCollapse => "ramp",
            Self::ThrottleTrial => "throttle",
            Self::HedgeCutsTail => "tail",
        }
    }

    /// The source and what it reports, in its words.
    #[must_use]
    pub const fn published(self) -> &'static str {
        match self {
            Self::HerdSynchronised => {
                "the catalog's constant page: constant puts about 14% of all retries into one 10 ms window; exponential is just as synchronised; full jitter disperses"
            }
            Self::OutageConstantRarelySucceeds => {
                "the catalog's constant page: on 30-second outages constant succeeds under 2% of the time; exponential far more often"
            }
            Self::FullJitterHalvesWork => {
                "W1 (AWS 2015): full jitter more than halves the work of un-jittered exponential at 100 clients"
            }
            Self::FullAndEqualSameWork => "W1: full and equal jitter do about the same work",
            Self::DecorrelatedMoreWork => "W1: decorrelated jitter does more work than full jitter",
            Self::DecorrelatedSlightlySooner => {
                "W1: decorrelated jitter finishes slightly sooner than full jitter"
            }
            Self::EqualMuchSlower => "W1: equal jitter is much slower than full jitter",
            Self::ExponentialSlowest => "W1: un-jittered exponential is by far the slowest",
            Self::NoBackoffFastest => "W1: no backoff finishes fastest",
            Self::NoBackoffMostWork => "W1: no backoff does the most work",
            Self::RetriesClosedForm => {
                "W2: with N retries, success 1 - x^(N+1) and load sum x^k (analytic); at x = 0.5, N = 3: 0.9375 and 1.875"
            }
            Self::BucketCapsLoad => "W2: the token bucket caps extra load near 14%",
            Self::BreakerTripsEarly => "W2: the circuit breaker trips early",
            Self::ManySmallClients => {
                "W2: with many small clients the bucket tends to \"N retries\" and the breaker to \"none\""
            }
            Self::SerialBackoffCuts => {
                "W3: backoff does nearly nothing to amplification with open clients; with serial clients it cuts total attempts sharply"
            }
            Self::SpikeStaysCollapsed => {
                "W4: without backoff the system stays collapsed after the spike (the source averages 10 runs: 12 to 16 of the 40 requests a second offered succeed over the last 30 s in our re-runs of it, so most of its runs stay collapsed)"
            }
            Self::SpikeRecovers => {
                "W4: with jittered backoff it recovers (the source's 10-run average: about 40 of 40 a second)"
            }
            Self::RampBothCollapse => {
                "W4: under a ramp up to 80 req/s and down again both collapse"
            }
            Self::ThrottleTrial => {
                "a trial against nginx's limit_req (5 r/s, burst 0, 429 with Retry-After: 1), 20 concurrent GETs, full jitter 100 ms / 2 s / 4 attempts, a 3 s deadline: a client that takes the server's wait as a floor serves 3 of 20; spread by U(0, Retry-After) above it, 8 to 10; never a retry before the server's time"
            }
            Self::HedgeCutsTail => {
                "Dean and Barroso, \"The Tail at Scale\" (CACM 2013): a hedge deferred to the 95th-percentile latency of the fast path cuts p99.9 at least 10x for at most 10 % more load (their BigTable trial: 1,800 ms to 74 ms for 2 % more requests)"
            }
        }
    }

    /// How the check reads the published words: the margins of [`margins`] in words, the same
    /// constants [`Claim::check`] compares with.
    #[must_use]
    pub fn reading(self) -> String {
        use margins as m;
        match self {
            Self::HerdSynchronised => format!(
                "constant's peak window within {} of {}% (one retry in seven); exponential's within {} of constant's; full jitter's below {} of constant's",
                points(m::HERD_NEAR),
                pct(m::HERD_PEAK_SHARE),
                points(m::HERD_NEAR),
                fraction(m::DISPERSED_BELOW)
            ),
            Self::OutageConstantRarelySucceeds => format!(
                "constant's success rate below {}%; exponential's above {}x constant's",
                pct(m::CONSTANT_SUCCEEDS_UNDER),
                m::FAR_MORE_OFTEN
            ),
            Self::FullJitterHalvesWork => format!(
                "full jitter's writes per round below {} of exponential's",
                fraction(m::FULL_HALVES_EXPONENTIAL)
            ),
            Self::FullAndEqualSameWork => format!(
                "equal jitter's writes per round within {}% of full jitter's",
                pct(m::ABOUT_THE_SAME_WORK)
            ),
            Self::DecorrelatedMoreWork => {
                "decorrelated jitter's writes per round above full jitter's".to_owned()
            }
            Self::DecorrelatedSlightlySooner => format!(
                "decorrelated jitter's completion time below full jitter's, and above {}% of it",
                pct(m::SLIGHTLY_SOONER)
            ),
            Self::EqualMuchSlower => format!(
                "equal jitter's completion time above {}x full jitter's",
                m::MUCH_SLOWER
            ),
            Self::ExponentialSlowest => format!(
                "exponential's completion time above {}x the next slowest's",
                m::BY_FAR_THE_SLOWEST
            ),
            Self::NoBackoffFastest => {
                "no backoff's completion time below each other strategy's".to_owned()
            }
            Self::NoBackoffMostWork => {
                "no backoff's writes per round above each other strategy's".to_owned()
            }
            Self::RetriesClosedForm => format!(
                "no retries' and 3 retries' success and load within {} standard errors of the closed form at each failure rate swept",
                m::CLOSED_FORM_STANDARD_ERRORS
            ),
            Self::BucketCapsLoad => format!(
                "the bucket's load below {} at each failure rate swept",
                m::BUCKET_CAP
            ),
            Self::BreakerTripsEarly => {
                format!("the breaker's load below {} at x = 0.5", m::BREAKER_TRIPS)
            }
            Self::ManySmallClients => format!(
                "from {} to {} clients, the share of 3 retries' extra load the bucket keeps grows over {}x at x = 0.5, and the breaker's falls below {} of itself at x = 0.05",
                W2_CLIENTS[0],
                W2_CLIENTS[W2_CLIENTS.len() - 1],
                m::BUCKET_TENDS_TO_RETRIES,
                fraction(m::BREAKER_TENDS_TO_NONE)
            ),
            Self::SerialBackoffCuts => format!(
                "backoff moves open clients' load by less than {}%, and cuts serial clients' attempts below {}% of those without it",
                pct(m::NEARLY_NOTHING),
                pct(m::CUTS_SHARPLY)
            ),
            Self::SpikeStaysCollapsed => format!(
                "fewer than {}% of {SPIKE_SEEDS} seeds recover (a tail goodput ratio of at least {RECOVERED})",
                pct(STAYS_COLLAPSED_BELOW)
            ),
            Self::SpikeRecovers => format!(
                "at least {}% of {SPIKE_SEEDS} seeds recover (a tail goodput ratio of at least {RECOVERED})",
                pct(RECOVERS_AT_LEAST)
            ),
            Self::RampBothCollapse => {
                format!("both tail goodput ratios below {}", m::COLLAPSED_BELOW)
            }
            Self::ThrottleTrial => format!(
                "the floor's mean served within {} of 3; the spread's from {} to {}; no retry before the server's time",
                m::FLOOR_SERVES_NEAR,
                m::SPREAD_SERVES.0,
                m::SPREAD_SERVES.1
            ),
            Self::HedgeCutsTail => format!(
                "p99.9 without hedging over hedged at least {TAIL_CLAIM_CUT}x, for at most {}% more load, on the means over {TAIL_SEEDS} seeds",
                pct(TAIL_CLAIM_EXTRA_LOAD)
            ),
        }
    }

    /// The claim checked on `board`'s rows: our figures and whether they reproduce it. A claim
    /// whose rows (or one of their figures) are missing is not reproduced, and says so.
    #[must_use]
    pub fn check(self, board: &Scoreboard) -> Finding {
        let measured = match self {
            Self::HerdSynchronised => herd(board),
            Self::OutageConstantRarelySucceeds => outage(board),
            Self::FullJitterHalvesWork => contention(board, |w| {
                let (ex, fu) = (w.exponential, w.full);
                (
                    fu.work < margins::FULL_HALVES_EXPONENTIAL * ex.work,
                    format!(
                        "writes/round: full {:.0}, exponential {:.0}",
                        fu.work, ex.work
                    ),
                )
            }),
            Self::FullAndEqualSameWork => contention(board, |w| {
                let (eq, fu) = (w.equal, w.full);
                (
                    (fu.work - eq.work).abs() < margins::ABOUT_THE_SAME_WORK * fu.work,
                    format!("writes/round: full {:.0}, equal {:.0}", fu.work, eq.work),
                )
            }),
            Self::DecorrelatedMoreWork => contention(board, |w| {
                let (de, fu) = (w.decorrelated, w.full);
                (
                    de.work > fu.work,
                    format!(
                        "writes/round: decorrelated {:.0}, full {:.0}",
                        de.work, fu.work
                    ),
                )
            }),
            Self::DecorrelatedSlightlySooner => contention(board, |w| {
                let (de, fu) = (w.decorrelated, w.full);
                (
                    de.time < fu.time && de.time > margins::SLIGHTLY_SOONER * fu.time,
                    format!(
                        "completion: decorrelated {:.0} ms, full {:.0} ms",
                        de.time, fu.time
                    ),
                )
            }),
            Self::EqualMuchSlower => contention(board, |w| {
                let (eq, fu) = (w.equal, w.full);
                (
                    eq.time > margins::MUCH_SLOWER * fu.time,
                    format!(
                        "completion: equal {:.0} ms, full {:.0} ms",
                        eq.time, fu.time
                    ),
                )
            }),
            Self::ExponentialSlowest => contention(board, |w| {
                let next = [w.decorrelated, w.equal, w.full, w.none]
                    .iter()
                    .map(|r| r.time)
                    .fold(f64::NEG_INFINITY, f64::max);
                (
                    w.exponential.time > margins::BY_FAR_THE_SLOWEST * next,
                    format!(
                        "completion: exponential {:.0} ms, next slowest {next:.0} ms",
                        w.exponential.time
                    ),
                )
            }),
            Self::NoBackoffFastest => contention(board, |w| {
                let fastest = w
                    .backing_off()
                    .map(|r| r.time)
                    .fold(f64::INFINITY, f64::min);
                (
                    w.none.time < fastest,
                    format!(
                        "completion: none {:.0} ms, fastest other {fastest:.0} ms",
                        w.none.time
                    ),
                )
            }),
            Self::NoBackoffMostWork => contention(board, |w| {
                let most = w
                    .backing_off()
                    .map(|r| r.work)
                    .fold(f64::NEG_INFINITY, f64::max);
                (
                    w.none.work > most,
                    format!(
                        "writes/round: none {:.0}, most of the others {most:.0}",
                        w.none.work
                    ),
                )
            }),
            Self::RetriesClosedForm => closed_form(board),
            Self::BucketCapsLoad => bucket_caps(board),
            Self::BreakerTripsEarly => at(&board.open_loop, 0.5, "circuit breaker").map(|b| {
                (
                    format!("load {:.3} at x = 0.5", b.load),
                    b.load < margins::BREAKER_TRIPS,
                )
            }),
            Self::ManySmallClients => many_small(board),
            Self::SerialBackoffCuts => serial(board),
            Self::SpikeStaysCollapsed => recovery(board, "no backoff")
                .map(|(text, r)| (text, r.share() < STAYS_COLLAPSED_BELOW)),
            Self::SpikeRecovers => recovery(board, "jittered backoff")
                .map(|(text, r)| (text, r.share() >= RECOVERS_AT_LEAST)),
            Self::RampBothCollapse => ramp(board),
            Self::ThrottleTrial => throttle(board),
            Self::HedgeCutsTail => board.tail_delay.as_ref().and_then(|d| {
                tail_claim(&board.tail, &TailPoint::fixed_label(d.delay_ms), board.seed)
            }),
        };
        let (ours, reproduced) =
            measured.unwrap_or_else(|| ("not measured: a row is missing".to_owned(), false));
        Finding {
            claim: self,
            workload: self.workload(),
            published: self.published(),
            reading: self.reading(),
            ours,
            reproduced,
        }
    }
}

/// The row labelled `label`, if the board has it.
fn row<'a>(rows: &'a [Labelled], label: &str) -> Option<&'a ResultRow> {
    rows.iter().find(|l| l.label == label).map(|l| &l.row)
}

/// The row labelled `label` at failure rate `x` of a sweep.
fn at<'a>(points: &'a [SweepPoint], x: f64, label: &str) -> Option<&'a ResultRow> {
    row(
        &points.iter().find(|p| (p.x - x).abs() < 1e-9)?.results,
        label,
    )
}

fn herd(board: &Scoreboard) -> Option<(String, bool)> {
    let peak = |p: &str| Some(row(&board.herd, p)?.peak_window_share);
    let (c, e, j) = (
        peak("constant")?,
        peak("exponential")?,
        peak("exponential-full-jitter")?,
    );
    Some((
        format!(
            "constant {:.1}%, exponential {:.1}%, full jitter {:.1}%",
            100.0 * c,
            100.0 * e,
            100.0 * j
        ),
        (c - margins::HERD_PEAK_SHARE).abs() < margins::HERD_NEAR
            && (e - c).abs() < margins::HERD_NEAR
            && j < margins::DISPERSED_BELOW * c,
    ))
}

/// Constant's patience at its defaults: the sum of its delays, the longest outage a request
/// that meets it can outlast.
#[must_use]
pub fn constant_patience() -> Duration {
    let constant = AnyConfig::from(PolicyKind::Constant);
    (1..constant.max_attempts())
        .map(|n| constant.bounds(n).max)
        .sum()
}

fn outage(board: &Scoreboard) -> Option<(String, bool)> {
    let (c, e) = (
        row(&board.outage, "constant")?.success_rate,
        row(&board.outage, "exponential")?.success_rate,
    );
    let patience = constant_patience();
    let down = Outage::default().down_for;
    let human = stagger_core::duration::human;
    let share = patience.as_secs_f64() / down.as_secs_f64();
    let against = if share < margins::CONSTANT_SUCCEEDS_UNDER {
        "within"
    } else {
        "above"
    };
    Some((
        format!(
            "constant {:.1}% of the requests that met the outage, exponential {:.1}%. \
             Constant's patience is {}, so only requests meeting the outage's last {} of {} \
             can succeed: {:.1}%, {against} the page's \"under 2%\"",
            100.0 * c,
            100.0 * e,
            human(patience),
            human(patience),
            human(down),
            100.0 * share
        ),
        // The page's "under 2%" is the policy's patience over the outage. Our model counts
        // every request whose first attempt met the outage, and the last patience's worth of
        // them succeed: a little more, so "under 2%" is not reproduced.
        c < margins::CONSTANT_SUCCEEDS_UNDER && e > margins::FAR_MORE_OFTEN * c,
    ))
}

/// One W1 strategy's figures: writes per round and completion in ms.
#[derive(Clone, Copy)]
struct Cost {
    work: f64,
    time: f64,
}

/// The five W1 strategies' figures.
struct W1 {
    exponential: Cost,
    decorrelated: Cost,
    equal: Cost,
    full: Cost,
    none: Cost,
}

impl W1 {
    /// The four strategies that back off.
    fn backing_off(&self) -> impl Iterator<Item = Cost> {
        [self.exponential, self.decorrelated, self.equal, self.full].into_iter()
    }
}

/// A W1 comparison on the board's 100-client rows: `compare` says whether it held, and the
/// figures behind it.
fn contention(board: &Scoreboard, compare: fn(&W1) -> (bool, String)) -> Option<(String, bool)> {
    let cost = |label: &str| {
        let r = row(&board.contention, label)?;
        Some(Cost {
            work: r.writes_per_round?,
            time: r.completion_ms?,
        })
    };
    let w = W1 {
        exponential: cost("Exponential")?,
        decorrelated: cost("Decorr")?,
        equal: cost("EqualJitter")?,
        full: cost("FullJitter")?,
        none: cost("None")?,
    };
    let (held, ours) = compare(&w);
    Some((ours, held))
}

/// The closed form at every failure rate of the sweep, for no retries (N = 0) and three
/// (N = 3), within [`margins::CLOSED_FORM_STANDARD_ERRORS`] of each run's sampling error.
fn closed_form(board: &Scoreboard) -> Option<(String, bool)> {
    let mut checked = 0;
    let mut off = Vec::new();
    for point in &board.open_loop {
        for (label, retries) in [("no retries", 0), ("3 retries", 3)] {
            let r = row(&point.results, label)?;
            let (success, load) = open_loop::analytic(retries, point.x);
            let (se_s, se_l) = open_loop::standard_errors(retries, point.x, r.first_tries);
            let k = margins::CLOSED_FORM_STANDARD_ERRORS;
            checked += 1;
            if (r.success_rate - success).abs() > k * se_s || (r.load - load).abs() > k * se_l {
                off.push(format!("{label} at x = {}", point.x));
            }
        }
    }
    let r = at(&board.open_loop, 0.5, "3 retries")?;
    let (success, load) = open_loop::analytic(3, 0.5);
    let within = if off.is_empty() {
        format!(
            "all {checked} runs within {} standard errors",
            margins::CLOSED_FORM_STANDARD_ERRORS
        )
    } else {
        format!(
            "outside {} standard errors: {}",
            margins::CLOSED_FORM_STANDARD_ERRORS,
            off.join(", ")
        )
    };
    Some((
        format!(
            "success {:.4}, load {:.4} at x = 0.5 (analytic {success:.4}, {load:.4}); {within}",
            r.success_rate, r.load
        ),
        off.is_empty(),
    ))
}

/// The bucket's load at every failure rate of the sweep, below [`margins::BUCKET_CAP`].
fn bucket_caps(board: &Scoreboard) -> Option<(String, bool)> {
    let mut highest: Option<(f64, f64)> = None;
    for point in &board.open_loop {
        let load = row(&point.results, "token bucket")?.load;
        if highest.is_none_or(|(_, h)| load > h) {
            highest = Some((point.x, load));
        }
    }
    let (x, load) = highest?;
    let half = at(&board.open_loop, 0.5, "token bucket")?.load;
    Some((
        format!("load {half:.3} at x = 0.5; the highest {load:.3}, at x = {x}"),
        load < margins::BUCKET_CAP,
    ))
}

fn many_small(board: &Scoreboard) -> Option<(String, bool)> {
    // The share of "3 retries"' extra load each strategy keeps, at the same failure rate and
    // client count.
    let share = |clients: u64, x: f64, label: &str| {
        let shape = w2_shape(clients);
        let load = |l: &str| Some(at(&board.many_small, x, &format!("{shape}, {l}"))?.load);
        Some((load(label)? - 1.0) / (load("3 retries")? - 1.0))
    };
    let (few, many) = (W2_CLIENTS[0], W2_CLIENTS[W2_CLIENTS.len() - 1]);
    let (b_few, b_many) = (
        share(few, 0.5, "token bucket")?,
        share(many, 0.5, "token bucket")?,
    );
    let (c_few, c_many) = (
        share(few, 0.05, "circuit breaker")?,
        share(many, 0.05, "circuit breaker")?,
    );
    Some((
        format!(
            "100 req/s in all, as published; share of 3 retries' extra load kept, {} -> {}: token bucket {b_few:.2} -> {b_many:.2} at x = 0.5, circuit breaker {c_few:.2} -> {c_many:.2} at x = 0.05",
            w2_shape(few),
            w2_shape(many)
        ),
        b_many > margins::BUCKET_TENDS_TO_RETRIES * b_few
            && c_many < margins::BREAKER_TENDS_TO_NONE * c_few,
    ))
}

fn serial(board: &Scoreboard) -> Option<(String, bool)> {
    let r = |l: &str| row(&board.serial, l);
    let (on, ob, sn, sb) = (
        r("open, no backoff")?,
        r("open, backoff")?,
        r("serial, no backoff")?,
        r("serial, backoff")?,
    );
    Some((
        format!(
            "open: load {:.3} -> {:.3}; serial: attempts {} -> {}",
            on.load, ob.load, sn.attempts, sb.attempts
        ),
        (on.load - ob.load).abs() < margins::NEARLY_NOTHING * on.load
            && (sb.attempts as f64) < margins::CUTS_SHARPLY * sn.attempts as f64,
    ))
}

/// The tail goodput ratio of the row labelled `label`.
fn tail(rows: &[Labelled], label: &str) -> Option<f64> {
    row(rows, label)?.tail_goodput_ratio
}

/// The share of the spike's runs of `label` that recover, with its text.
fn recovery<'a>(board: &'a Scoreboard, label: &str) -> Option<(String, &'a RecoveryShare)> {
    let r = board.spike_recovery.iter().find(|r| r.label == label)?;
    Some((
        format!(
            "{} of {} seeds recover (tail goodput ratio at least {RECOVERED}), mean tail goodput ratio {:.3}; seed {}: {}",
            r.recovered,
            r.runs,
            r.mean_ratio,
            board.seed,
            tail(&board.spike, &r.label).map_or_else(|| "-".to_owned(), |t| format!("{t:.3}"))
        ),
        r,
    ))
}

fn ramp(board: &Scoreboard) -> Option<(String, bool)> {
    let (nb, jb) = (
        tail(&board.ramp, "no backoff")?,
        tail(&board.ramp, "jittered backoff")?,
    );
    Some((
        format!("tail goodput ratio {nb:.3} without backoff, {jb:.3} with"),
        nb < margins::COLLAPSED_BELOW && jb < margins::COLLAPSED_BELOW,
    ))
}

fn throttle(board: &Scoreboard) -> Option<(String, bool)> {
    let storm = |dispersal: &str| {
        board.throttle.iter().find(|p| {
            !p.gate && p.dispersal == dispersal && p.retry_after == RetryAfterForm::Fixed.name()
        })
    };
    let (floor, spread) = (storm("floor")?, storm("uniform-asked")?);
    let (low, high) = margins::SPREAD_SERVES;
    Some((
        format!(
            "floor {:.1} of 20, uniform-asked {:.1} of 20 (means over {THROTTLE_SEEDS} seeds), {} early retries",
            floor.served,
            spread.served,
            floor.early_retries + spread.early_retries
        ),
        (floor.served - 3.0).abs() <= margins::FLOOR_SERVES_NEAR
            && (low..=high).contains(&spread.served)
            && floor.early_retries + spread.early_retries == 0,
    ))
}

/// `share` as a percentage, with a decimal only where it has one: 0.25 is "25", 1/7 "14.3".
fn pct(share: f64) -> String {
    let p = 100.0 * share;
    if (p - p.round()).abs() < 1e-9 {
        format!("{:.0}", p.round())
    } else {
        format!("{p:.1}")
    }
}

/// `share` in percentage points: "1 percentage point", "2 percentage points".
fn points(share: f64) -> String {
    let p = pct(share);
    let s = if p == "1" { "" } else { "s" };
    format!("{p} percentage point{s}")
}

/// `share` as a fraction in words where it is a simple one: "half", "a third".
fn fraction(share: f64) -> String {
    match share {
        s if (s - 0.5).abs() < 1e-12 => "half".to_owned(),
        s if (s - 1.0 / 3.0).abs() < 1e-12 => "a third".to_owned(),
        s => format!("{}%", pct(s)),
    }
}
