//! What the engine answers: the next attempt, a retry, or a stop, with a summary of the run.

use std::fmt;
use std::time::Duration;

use crate::clock::Timestamp;
use crate::duration::human;
use crate::failure::Failure;

/// Permission to make an attempt, with what the attempt should know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attempt {
    /// The attempt's number, 1 for the first call.
    pub number: u32,
    /// The time this attempt has, to propagate downstream: the time left before the run's
    /// deadline, or the attempt timeout if that is shorter
    /// ([`Settings::with_attempt_timeout`](super::Settings::with_attempt_timeout)); `None`
    /// with neither.
    pub remaining: Option<Duration>,
    /// The run's deadline, if it has one.
    pub deadline: Option<Timestamp>,
    /// The time since the run started. Without a deadline the executors take it from their
    /// last clock reading plus the wait since (one clock read per attempt, not two), so a
    /// sleeper that overslept makes it an underestimate; with a deadline it is read.
    pub elapsed: Duration,
}

/// A retry the engine has decided on: wait `delay`, then make attempt `attempt + 1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlannedRetry {
    /// The number of the attempt that just failed.
    pub attempt: u32,
    /// How long to wait before the next attempt: the policy's delay, raised to the server's
    /// wait if it asked for a longer one.
    pub delay: Duration,
    /// The wait the server asked for, if any.
    pub server_wait: Option<Duration>,
    /// The time since the run started.
    pub elapsed: Duration,
    /// The time left before the deadline, before waiting; `None` without a deadline.
    pub remaining: Option<Duration>,
}

/// Why a run stopped without success.
///
/// Each reason has one sentence, its [`Display`](fmt::Display), which every executor and
/// integration uses when it reports a give-up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// The deadline passed: before an attempt could start, or while one ran. A success that
    /// arrives at or after the deadline counts as this too: the caller's time is spent.
    Deadline,
    /// The policy allows no more attempts (or the operation cannot be repeated: see
    /// [`Run::limit_attempts`](super::Run::limit_attempts)).
    AttemptLimit,
    /// The failure is permanent: repeating the attempt will not change the answer.
    NotRetryable,
    /// The operation is not idempotent, and the failure may have taken effect (a timeout, a
    /// 5xx): repeating it could repeat its effect. Only a failure known to have had no effect
    /// is retried for such an operation.
    NotIdempotent,
    /// The next delay does not fit in the time left before the deadline. The engine never
    /// shortens a delay to make it fit.
    WaitExceedsDeadline {
        /// The delay the retry needed.
        wait: Duration,
        /// The time that was left.
        remaining: Duration,
    },
    /// The server asked for a longer wait than the run agreed to honour.
    ServerWaitTooLong {
        /// The wait the server asked for.
        asked: Duration,
        /// The longest wait the run honours.
        limit: Duration,
    },
    /// The shared retry budget refused the retry.
    BudgetExhausted,
    /// The shared budget refused the first attempt: no call was made.
    BudgetRefusedFirstAttempt,
    /// This run is nested inside another retrying layer's attempt, which owns recovery: it made
    /// one attempt and leaves the retries to the outer layer.
    OuterLayerOwnsRecovery,
    /// The run's configuration is invalid, so no attempt was made. The engine never gives this
    /// reason; the executors do, when a configuration they were handed is refused as the run
    /// starts.
    InvalidConfig,
}

impl StopReason {
    /// A short, stable name: `deadline`, `attempt-limit`, `not-retryable`, `not-idempotent`,
    /// `wait-exceeds-deadline`, `server-wait-too-long`, `budget-exhausted`,
    /// `budget-refused-first-attempt`, `outer-layer-owns-recovery`, `invalid-config`.
    #[must_use]
    pub const fn name(&self) -> &'static str {
        match self {
            Self::Deadline => "deadline",
            Self::AttemptLimit => "attempt-limit",
            Self::NotRetryable => "not-retryable",
            Self::NotIdempotent => "not-idempotent",
            Self::WaitExceedsDeadline { .. } => "wait-exceeds-deadline",
            Self::ServerWaitTooLong { .. } => "server-wait-too-long",
            Self::BudgetExhausted => "budget-exhausted",
            Self::BudgetRefusedFirstAttempt => "budget-refused-first-attempt",
            Self::OuterLayerOwnsRecovery => "outer-layer-owns-recovery",
            Self::InvalidConfig => "invalid-config",
        }
    }
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Deadline => f.write_str("the deadline passed"),
            Self::AttemptLimit => f.write_str("no attempts left"),
            Self::NotRetryable => f.write_str("the failure is not retryable"),
            Self::NotIdempotent => {
                f.write_str("the operation is not idempotent and the failure may have taken effect")
            }
            Self::WaitExceedsDeadline { wait, remaining } => write!(
                f,
                "the next wait ({}) does not fit in the time left ({})",
                human(*wait),
                human(*remaining)
            ),
            Self::ServerWaitTooLong { asked, limit } => write!(
                f,
                "the server asked to wait {}, longer than the {} honoured",
                human(*asked),
                human(*limit)
            ),
            Self::BudgetExhausted => f.write_str("the retry budget is exhausted"),
            Self::BudgetRefusedFirstAttempt => f.write_str("the budget refused the first attempt"),
            Self::OuterLayerOwnsRecovery => f.write_str("an outer retrying layer owns recovery"),
            Self::InvalidConfig => f.write_str("the configuration is invalid"),
        }
    }
}

/// What a run did, on success as on failure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Summary {
    /// Attempts made, counting the first.
    pub attempts: u32,
    /// The total of the delays the run asked to wait between attempts (what the sleeper really
    /// took may differ).
    pub waited: Duration,
    /// The time from the start of the run to its end.
    pub elapsed: Duration,
    /// The kind of the last failure, if an attempt failed.
    pub last_failure: Option<Failure>,
}

impl Summary {
    /// Retries made: attempts after the first.
    #[must_use]
    pub const fn retries(&self) -> u32 {
        self.attempts.saturating_sub(1)
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} attempt{} in {} ({} waiting)",
            self.attempts,
            if self.attempts == 1 { "" } else { "s" },
            human(self.elapsed),
            human(self.waited)
        )
    }
}

/// A run that stopped without success: why, and what it did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stopped {
    /// Why it stopped.
    pub reason: StopReason,
    /// What it did.
    pub summary: Summary,
    /// Whether the run treated its operation as idempotent: a fact an outer layer needs, since
    /// it may repeat the operation only if it is idempotent or nothing the run did can have
    /// taken effect ([`may_repeat`](Stopped::may_repeat)).
    pub idempotent: bool,
}

impl Stopped {
    /// Whether the operation may be repeated after this run, as far as its effects go: it is
    /// idempotent, or the run's last attempt had no effect, or the run sent nothing. A run
    /// that is not idempotent and whose last attempt may have taken effect (a timeout at the
    /// deadline, a success that came too late) must not be repeated by anyone.
    #[must_use]
    pub fn may_repeat(&self) -> bool {
        self.idempotent || self.summary.last_failure.is_none_or(|f| f.had_no_effect())
    }
}

impl fmt::Display for Stopped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gave up after {}: {}", self.summary, self.reason)
    }
}

/// The engine's answer after an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The attempt succeeded.
    Success(Summary),
    /// Wait, then try again.
    Retry(PlannedRetry),
    /// Stop.
    Stop(Stopped),
}
