//! Hedged requests: [`Hedging`], how a run sends more attempts while earlier ones are still in
//! flight, and [`HedgedRun`], the sans-IO state of such a run.
//!
//! The names pair up as the facade's do: a [`Run`] retries and a [`HedgedRun`] hedges (a run
//! and its [`Hedger`]), as the facade's `Retry` builder has its `HedgedRetry`. A driver that
//! keeps its run elsewhere uses the [`Hedger`] alone.

use std::fmt;
use std::time::Duration;

use super::outcome::{Attempt, StopReason, Stopped, Summary};
use super::run::{Ready, Run};
use crate::budget::Budget;
use crate::clock::Timestamp;
use crate::error::ConfigError;
use crate::failure::Failure;
use crate::policy::Policy;

pub use crate::limits::MAX_HEDGED_ATTEMPTS;

/// What a budget is told a hedge is for, when no attempt failed before it: a hedge is charged
/// as a retry after a transient failure (not as one after a timeout, which some budgets charge
/// more for).
pub const HEDGE_REASON: Failure = Failure::Retryable;

/// When a hedge follows the attempt before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum HedgeDelay {
    /// This long after the attempt before it was sent. Zero sends every attempt at once.
    Fixed(Duration),
    /// At a quantile of the latencies the driver has measured, in hundredths of a percent:
    /// `9500` is the 95th percentile, `9990` the 99.9th. Until the driver has measured enough
    /// attempts to know it, the run sends no hedge on a timer (a failure still sends the next
    /// attempt at once).
    Quantile(u16),
}

impl HedgeDelay {
    /// The longest fixed delay: a day, [`limits::MAX_HEDGE_DELAY`](crate::limits::MAX_HEDGE_DELAY)
    /// (an alias of it). [`FromStr`](std::str::FromStr) reads no longer one, and
    /// [`Hedging::validate`] refuses one.
    pub const MAX_FIXED: Duration = crate::limits::MAX_HEDGE_DELAY;
}

/// Why a hedge delay could not be read: [`HedgeDelay`]'s [`FromStr`](std::str::FromStr).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseHedgeDelayError(String);

impl fmt::Display for ParseHedgeDelayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "a hedge delay is a duration of at most a day (such as 10ms) or a percentile above 0 \
             and below 100 with at most two decimals (p95, p99.9), got `{}`",
            self.0
        )
    }
}

impl std::error::Error for ParseHedgeDelayError {}

/// Reads `p95`, `p99.9`, `p99.99` (a percentile of the measured latencies, with at most two
/// decimals) or a duration such as `10ms` (at most a day).
///
/// ```
/// use std::time::Duration;
/// use stagger_core::engine::HedgeDelay;
///
/// assert_eq!("p95".parse(), Ok(HedgeDelay::Quantile(9500)));
/// assert_eq!("p99.9".parse(), Ok(HedgeDelay::Quantile(9990)));
/// assert_eq!("10ms".parse(), Ok(HedgeDelay::Fixed(Duration::from_millis(10))));
/// assert!("p100".parse::<HedgeDelay>().is_err());
/// assert!("p9.999".parse::<HedgeDelay>().is_err());
/// assert_eq!(HedgeDelay::Quantile(9990).to_string(), "p99.9");
/// ```
impl std::str::FromStr for HedgeDelay {
    type Err = ParseHedgeDelayError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || ParseHedgeDelayError(text.to_owned());
        if let Some(percent) = text.strip_prefix('p') {
            return match percentile(percent) {
                Some(q) if (1..10_000).contains(&q) => Ok(Self::Quantile(q)),
                _ => Err(error()),
            };
        }
        match crate::duration::parse(text) {
            Ok(d) if d <= Self::MAX_FIXED => Ok(Self::Fixed(d)),
            _ => Err(error()),
        }
    }
}

/// A percentile after its `p`: a whole number and up to two decimals (`"95"`, `"99.9"`,
/// `"99.99"`), in hundredths of a percent; `None` if it is not such a number, or too large to
/// hold. Whether it is above 0 and below 100 is the caller's to check
/// ([`Hedging::validate`]). The one reader of `pNN` for the CLI and configuration files.
pub(crate) fn percentile(number: &str) -> Option<u16> {
    let (whole, decimals) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let decimals_ok = !number.contains('.') || (1..=2).contains(&decimals.len());
    if whole.is_empty() || !digits(whole) || !digits(decimals) || !decimals_ok {
        return None;
    }
    let whole: u32 = whole.parse().ok()?;
    let hundredths: u32 = format!("{decimals:0<2}").parse().ok()?;
    u16::try_from(whole.checked_mul(100)?.checked_add(hundredths)?).ok()
}

/// `p95`, `p99.9` for a quantile; the delay in the duration syntax (`10ms`) otherwise, as
/// [`FromStr`](std::str::FromStr) reads them back.
impl fmt::Display for HedgeDelay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::Quantile(q) if q % 100 == 0 => write!(f, "p{}", q / 100),
            Self::Quantile(q) if q % 10 == 0 => write!(f, "p{}.{}", q / 100, q / 10 % 10),
            Self::Quantile(q) => write!(f, "p{}.{:02}", q / 100, q % 100),
            Self::Fixed(d) => f.write_str(&crate::duration::compact(d)),
        }
    }
}

/// How a run hedges: the attempts it may make in all, and when each hedge follows the one
/// before.
///
/// A hedged run sends its first attempt at once and another each time `delay` passes without
/// an answer, up to `max_attempts` in all, the first included (gRPC's `hedgingPolicy`
/// `maxAttempts` and `hedgingDelay`). The first success wins, and the attempts still in flight
/// are cancelled. A failure that may be repeated sends the next hedge at once; one that may not
/// ([`Failure::Permanent`]) ends the run, cancelling the rest. A server's wait delays the next
/// hedge until it has passed, and a wait longer than the run honours stops further hedges.
/// Every hedge is a retry to the budget, which may refuse it; only an idempotent operation is
/// hedged. The one deadline bounds every attempt.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::engine::{HedgeDelay, Hedging};
///
/// let hedging = Hedging::fixed(Duration::from_millis(10), 2);
/// assert_eq!(hedging.max_attempts(), 2);
/// assert_eq!(hedging.delay(), HedgeDelay::Fixed(Duration::from_millis(10)));
/// assert!(hedging.validate().is_ok());
/// assert!(Hedging::quantile(9500, 3).validate().is_ok());
/// assert!(Hedging::quantile(10_000, 3).validate().is_err());
/// assert!(Hedging::fixed(Duration::ZERO, 0).validate().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hedging {
    delay: HedgeDelay,
    max_attempts: u32,
}

impl Hedging {
    /// The page on hedging, as `stagger bench` writes it to `docs/hedging.md` with its
    /// measured figures.
    pub const PAGE: &'static str = include_str!("hedging.md");

    /// Hedges `delay` apart, up to `max_attempts` attempts in all.
    #[must_use]
    pub const fn fixed(delay: Duration, max_attempts: u32) -> Self {
        Self {
            delay: HedgeDelay::Fixed(delay),
            max_attempts,
        }
    }

    /// Hedges at the latency quantile `per_ten_thousand` (`9500` for the 95th percentile) of
    /// the attempts the driver measured, up to `max_attempts` attempts in all.
    #[must_use]
    pub const fn quantile(per_ten_thousand: u16, max_attempts: u32) -> Self {
        Self {
            delay: HedgeDelay::Quantile(per_ten_thousand),
            max_attempts,
        }
    }

    /// When each hedge follows the attempt before it.
    #[must_use]
    pub const fn delay(&self) -> HedgeDelay {
        self.delay
    }

    /// The attempts a run may make in all, the first included.
    #[must_use]
    pub const fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// Checks the parameters: `max_attempts` from 1 to [`MAX_HEDGED_ATTEMPTS`] (1 sends no
    /// hedge), a quantile from 1 to 9999 hundredths of a percent, a fixed delay of at most
    /// [`MAX_HEDGE_DELAY`](crate::limits::MAX_HEDGE_DELAY) (a day).
    ///
    /// # Errors
    ///
    /// A [`ConfigError::OutOfRange`] naming the parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(1..=MAX_HEDGED_ATTEMPTS).contains(&self.max_attempts) {
            return Err(ConfigError::OutOfRange {
                param: "hedge_max_attempts",
                value: f64::from(self.max_attempts),
                allowed: crate::limits::MAX_HEDGED_ATTEMPTS_ALLOWED,
            });
        }
        if let HedgeDelay::Quantile(q) = self.delay
            && !(1..10_000).contains(&q)
        {
            return Err(ConfigError::OutOfRange {
                param: "hedge_quantile",
                value: f64::from(q) / 100.0,
                allowed: "a percentile above 0 and below 100",
            });
        }
        if let HedgeDelay::Fixed(d) = self.delay
            && d > crate::limits::MAX_HEDGE_DELAY
        {
            return Err(ConfigError::OutOfRange {
                param: "hedge_delay",
                value: d.as_secs_f64(),
                allowed: crate::limits::MAX_HEDGE_DELAY_ALLOWED,
            });
        }
        Ok(())
    }
}

/// What a hedged run does next: [`HedgedRun::next`].
#[derive(Clone, Debug, PartialEq)]
#[must_use]
pub enum Hedge {
    /// Send this attempt now, beside those in flight.
    Send(Attempt),
    /// Nothing to send yet: ask again after this long, or when an attempt in flight answers.
    Wait(Duration),
    /// Nothing more will be sent: ask again when an attempt in flight answers.
    Idle,
    /// The run is over: cancel every attempt still in flight.
    Stop(Stopped),
}

/// What an answer means for a hedged run: [`HedgedRun::answered`].
#[derive(Clone, Debug, PartialEq)]
#[must_use]
pub enum Answer {
    /// It won: cancel every other attempt in flight and return its result.
    Won(Summary),
    /// It failed, and the run goes on: ask [`HedgedRun::next`].
    Lost,
    /// The run is over: cancel every attempt still in flight.
    Stop(Stopped),
}

/// The hedging state of a run, beside the [`Run`] it hedges: when the next attempt goes out
/// while others are in flight. [`HedgedRun`] holds the two together; a driver that keeps its run
/// elsewhere (the `stagger` crate's executor) passes it to each call.
#[derive(Clone, Debug)]
pub struct Hedger {
    max_attempts: u32,
    /// The time between hedges; `None` sends no hedge on a timer.
    delay: Option<Duration>,
    /// Attempts in flight, by number: bit `n - 1` for attempt `n`.
    flying: u32,
    /// When the next hedge may go, if one may.
    due: Option<Timestamp>,
    /// Why no more attempt will be sent, once none may.
    exhausted: Option<StopReason>,
    /// A pacing budget reserved a slot for the next attempt, not yet taken.
    slot_reserved: bool,
}

impl Hedger {
    /// The hedging of `run` by `hedging`. `measured` is the hedge delay when `hedging` takes it from a
    /// latency quantile ([`HedgeDelay::Quantile`]): the driver's current estimate, `None` while
    /// it has too few measurements (the run then sends no hedge on a timer). A fixed delay
    /// ignores it.
    ///
    /// A run of an operation that is not idempotent sends no hedge: after a failure known to
    /// have had no effect, it sends the next attempt once the previous one has answered, as a
    /// retried run would. A nested run ([`Run::mark_nested`]) makes one attempt.
    pub fn new<P: Policy, B: Budget>(
        run: &Run<P, B>,
        hedging: Hedging,
        measured: Option<Duration>,
    ) -> Self {
        let delay = match hedging.delay {
            HedgeDelay::Fixed(delay) => Some(delay),
            HedgeDelay::Quantile(_) => measured,
        };
        let max_attempts = hedging.max_attempts.clamp(1, MAX_HEDGED_ATTEMPTS);
        let exhausted = run
            .is_nested()
            .then_some(StopReason::OuterLayerOwnsRecovery);
        Self {
            max_attempts,
            delay,
            flying: 0,
            due: None,
            exhausted,
            slot_reserved: false,
        }
    }

    /// Attempts in flight.
    #[must_use]
    pub fn in_flight(&self) -> u32 {
        self.flying.count_ones()
    }

    /// Whether attempt `number` is in flight.
    #[must_use]
    pub fn is_in_flight(&self, number: u32) -> bool {
        bit(number).is_some_and(|b| self.flying & b != 0)
    }

    /// What to do at `now`: send an attempt, wait, or stop.
    pub fn next<P: Policy, B: Budget>(&mut self, run: &mut Run<P, B>, now: Timestamp) -> Hedge {
        if let Some(deadline) = run.deadline()
            && now >= deadline
        {
            return Hedge::Stop(self.deadline(run, now));
        }
        if run.attempts() == 0 {
            return self.send(run, now, None);
        }
        let wake = run.deadline();
        if self.may_send_more(run) {
            match self.due {
                Some(due) if due <= now => return self.send(run, now, Some(HEDGE_REASON)),
                Some(due) => return Hedge::Wait(until(now, wake.map_or(due, |d| d.min(due)))),
                None => {}
            }
        } else if self.flying == 0 {
            let reason = self.exhausted.unwrap_or(StopReason::AttemptLimit);
            return Hedge::Stop(self.stop(run, now, reason));
        }
        match wake {
            Some(deadline) => Hedge::Wait(until(now, deadline)),
            None => Hedge::Idle,
        }
    }

    /// Attempt `number` answered at `now` with `result` (a [`Failure::Timeout`] if it was cut
    /// at its own timeout). An answer from an attempt that is not in flight (answered already,
    /// or never sent) changes nothing and is [`Answer::Lost`].
    pub fn answered<P: Policy, B: Budget>(
        &mut self,
        run: &mut Run<P, B>,
        number: u32,
        now: Timestamp,
        result: Result<(), Failure>,
    ) -> Answer {
        let Some(b) = bit(number).filter(|b| self.flying & b != 0) else {
            return Answer::Lost;
        };
        self.flying &= !b;
        let failure = match result {
            Ok(()) => {
                // The others are cancelled.
                self.flying = 0;
                self.due = None;
                self.give_back_slot(run);
                return match run.succeeded(now) {
                    Ok(summary) => Answer::Won(summary),
                    Err(stopped) => Answer::Stop(stopped),
                };
            }
            Err(failure) => failure,
        };
        run.heard(now, failure);
        if run.deadline().is_some_and(|d| now >= d) {
            return Answer::Stop(self.stop(run, now, StopReason::Deadline));
        }
        if !failure.is_retryable() {
            // A fatal answer: the others cannot do better.
            return Answer::Stop(self.stop(run, now, StopReason::NotRetryable));
        }
        if !(run.is_idempotent() || failure.had_no_effect()) {
            self.exhausted.get_or_insert(StopReason::NotIdempotent);
        } else if let Some(asked) = failure.retry_after() {
            let limit = run.max_server_wait();
            let at = now.saturating_add(asked);
            if asked > limit {
                // Told not to come back within the time the run honours: no more hedges.
                self.exhausted
                    .get_or_insert(StopReason::ServerWaitTooLong { asked, limit });
            } else if let Some(deadline) = run.deadline().filter(|d| at >= *d) {
                self.exhausted
                    .get_or_insert(StopReason::WaitExceedsDeadline {
                        wait: asked,
                        remaining: deadline.saturating_duration_since(now),
                    });
            } else {
                // The next hedge goes when the server's wait is over (sooner than the timer
                // would have sent it, if so: gRPC's pushback), and later ones follow it at the
                // delay.
                self.due = Some(at);
                run.not_before(at);
            }
        } else if self.exhausted.is_none() {
            // A failure the others may not share: the next hedge goes at once.
            self.due = Some(self.due.map_or(now, |due| due.min(now)));
        }
        if self.flying == 0 && !self.may_send_more(run) {
            let reason = self.exhausted.unwrap_or(StopReason::AttemptLimit);
            return Answer::Stop(self.stop(run, now, reason));
        }
        Answer::Lost
    }

    /// Ends the run at `now`, for `reason`, cancelling what is in flight: the driver cannot go
    /// on (the operation could not get ready for a hedge, say).
    pub fn abandon<P: Policy, B: Budget>(
        &mut self,
        run: &mut Run<P, B>,
        now: Timestamp,
        reason: StopReason,
    ) -> Stopped {
        self.stop(run, now, reason)
    }

    /// Whether [`next`](Hedger::next) at `now` would try to send an attempt (the first, or a
    /// hedge that is due): a driver that must get ready before each attempt (a tower service)
    /// does so first, then asks [`next`](Hedger::next).
    #[must_use]
    pub fn sends_at<P: Policy, B: Budget>(&self, run: &Run<P, B>, now: Timestamp) -> bool {
        if run.deadline().is_some_and(|d| now >= d) {
            return false;
        }
        run.attempts() == 0 || (self.may_send_more(run) && self.due.is_some_and(|due| due <= now))
    }

    /// Sends no more attempts, for `reason` (the operation could not get ready for one): those
    /// in flight go on, and when the last has answered without success the run stops for it.
    pub fn stop_sending(&mut self, reason: StopReason) {
        self.exhausted.get_or_insert(reason);
    }

    /// Whether another attempt may go out besides those in flight, now or later.
    fn may_send_more<P: Policy, B: Budget>(&self, run: &Run<P, B>) -> bool {
        if self.exhausted.is_some() || run.attempts() >= self.max_attempts.min(run.attempt_limit())
        {
            return false;
        }
        // An operation that is not idempotent is never in flight twice.
        run.is_idempotent() || self.flying == 0
    }

    /// Sends the next attempt at `now`, a hedge charged to the budget for `reason` unless it is
    /// the first, once a pacing budget's slot has come.
    fn send<P: Policy, B: Budget>(
        &mut self,
        run: &mut Run<P, B>,
        now: Timestamp,
        reason: Option<Failure>,
    ) -> Hedge {
        match run.ready(now) {
            // A slot a pacing budget gave is given back if the attempt is not sent after all.
            Ready::Go => self.slot_reserved = run.budget().paces(),
            Ready::Wait(rest) => {
                self.slot_reserved = run.budget().paces();
                let rest = run
                    .deadline()
                    .map_or(rest, |d| rest.min(d.saturating_duration_since(now)));
                return Hedge::Wait(rest);
            }
            Ready::GiveUp(stopped) => {
                self.slot_reserved = false;
                if self.flying == 0 {
                    return Hedge::Stop(stopped);
                }
                // No slot in time for another hedge; those in flight go on.
                self.exhausted = Some(stopped.reason);
                return self.next(run, now);
            }
        }
        let mut spent = None;
        if let Some(reason) = reason {
            match run.budget().try_retry(now, &reason) {
                Some(cost) => spent = Some(cost),
                None => {
                    // The budget refuses: no more hedges, those in flight go on.
                    self.exhausted = Some(StopReason::BudgetExhausted);
                    self.give_back_slot(run);
                    return self.next(run, now);
                }
            }
        }
        match run.begin(now) {
            Ok(attempt) => {
                self.slot_reserved = false;
                if let Some(cost) = spent {
                    run.charged(cost);
                }
                if let Some(b) = bit(attempt.number) {
                    self.flying |= b;
                }
                self.due = match self.delay {
                    Some(delay) if run.is_idempotent() => Some(now.saturating_add(delay)),
                    _ => None,
                };
                Hedge::Send(attempt)
            }
            Err(stopped) => {
                self.slot_reserved = false;
                if let Some(cost) = spent {
                    run.budget().retry_abandoned(now, cost);
                }
                Hedge::Stop(stopped)
            }
        }
    }

    /// The run ends at the deadline, at `now`: attempts still in flight count as timed out.
    fn deadline<P: Policy, B: Budget>(&mut self, run: &mut Run<P, B>, now: Timestamp) -> Stopped {
        if self.flying != 0 {
            run.heard(now, Failure::Timeout);
        }
        self.stop(run, now, StopReason::Deadline)
    }

    fn stop<P: Policy, B: Budget>(
        &mut self,
        run: &mut Run<P, B>,
        now: Timestamp,
        reason: StopReason,
    ) -> Stopped {
        self.give_back_slot(run);
        self.flying = 0;
        self.due = None;
        run.stop(now, reason)
    }

    fn give_back_slot<P: Policy, B: Budget>(&mut self, run: &Run<P, B>) {
        if std::mem::take(&mut self.slot_reserved) {
            run.budget().slot_unused();
        }
    }
}

/// A run that hedges: the [`Run`] it wraps decides the deadline, the budget, the pacing and the
/// summary, as for a retried run; `HedgedRun` decides when the next attempt goes out while others
/// are in flight ([`Hedging`]).
///
/// The driver loops: [`next`](HedgedRun::next) says to send an attempt, to wait (until a time, or
/// an answer) or that the run is over; each attempt's answer goes to
/// [`answered`](HedgedRun::answered) with the attempt's number, and an attempt cut short at its
/// own timeout answers [`Failure::Timeout`]. When the run is over, the driver cancels (drops)
/// what is still in flight. Those attempts were sent, so the budget keeps what they cost.
///
/// ```
/// use std::time::Duration;
/// use stagger_core::engine::{Answer, Hedge, HedgedRun, Hedging, Run, Settings};
/// use stagger_core::policy::NoRetryPolicy;
/// use stagger_core::Timestamp;
///
/// let ms = |n: u64| Timestamp::from_nanos(n * 1_000_000);
/// let run = Run::new(NoRetryPolicy, Settings::new(), ms(0));
/// let mut hedged = HedgedRun::new(run, Hedging::fixed(Duration::from_millis(10), 2), None);
/// let Hedge::Send(first) = hedged.next(ms(0)) else { panic!("the first attempt") };
/// assert_eq!(hedged.next(ms(0)), Hedge::Wait(Duration::from_millis(10)));
/// let Hedge::Send(second) = hedged.next(ms(10)) else { panic!("a hedge") };
/// assert_eq!((first.number, second.number), (1, 2));
/// assert_eq!(hedged.next(ms(10)), Hedge::Idle); // two attempts in all
/// // The hedge answers first: it wins, and the first attempt is cancelled.
/// let Answer::Won(summary) = hedged.answered(2, ms(12), Ok(())) else { panic!("a win") };
/// assert_eq!(summary.attempts, 2);
/// ```
#[derive(Debug)]
pub struct HedgedRun<P, B> {
    run: Run<P, B>,
    hedger: Hedger,
}

impl<P: Policy, B: Budget> HedgedRun<P, B> {
    /// Hedges `run` by `hedging`; see [`Hedger::new`] for `measured`.
    pub fn new(run: Run<P, B>, hedging: Hedging, measured: Option<Duration>) -> Self {
        let hedger = Hedger::new(&run, hedging, measured);
        Self { run, hedger }
    }

    /// The run it hedges.
    pub fn run(&self) -> &Run<P, B> {
        &self.run
    }

    /// Attempts in flight.
    #[must_use]
    pub fn in_flight(&self) -> u32 {
        self.hedger.in_flight()
    }

    /// Whether attempt `number` is in flight.
    #[must_use]
    pub fn is_in_flight(&self, number: u32) -> bool {
        self.hedger.is_in_flight(number)
    }

    /// What to do at `now`: [`Hedger::next`].
    pub fn next(&mut self, now: Timestamp) -> Hedge {
        self.hedger.next(&mut self.run, now)
    }

    /// Attempt `number` answered at `now` with `result`: [`Hedger::answered`].
    pub fn answered(&mut self, number: u32, now: Timestamp, result: Result<(), Failure>) -> Answer {
        self.hedger.answered(&mut self.run, number, now, result)
    }

    /// Ends the run at `now`: [`Hedger::abandon`].
    pub fn abandon(&mut self, now: Timestamp, reason: StopReason) -> Stopped {
        self.hedger.abandon(&mut self.run, now, reason)
    }
}

/// The bit of attempt `number` in [`HedgedRun::flying`].
fn bit(number: u32) -> Option<u32> {
    number
        .checked_sub(1)
        .and_then(|shift| 1u32.checked_shl(shift))
}

fn until(now: Timestamp, at: Timestamp) -> Duration {
    at.saturating_duration_since(now)
}
