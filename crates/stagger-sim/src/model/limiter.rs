//! A limiter in front of the dependency: the token bucket ([`RateLimiter`]) and what a
//! limiter holds and counts while a run goes. How a refusal states its wait
//! ([`RetryAfterForm`]) is part of its configuration, in `parts`.

use crate::metrics::ResultRow;
use crate::model::SECOND;
use crate::model::event::Outcome;
use crate::model::parts::{Limiter, RetryAfterForm};
use crate::queue::{Nanos, nanos};

/// A token bucket of `burst` tokens refilled at one per `interval`, as a generic cell rate
/// algorithm: exact in integer nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimiter {
    interval: Nanos,
    /// How far ahead of `theoretical` a request may come: `(burst - 1) × interval`.
    tolerance: Nanos,
    /// When the bucket would be full again if nothing more came.
    theoretical: Nanos,
}

impl RateLimiter {
    /// A full bucket of `burst` tokens (at least 1), refilled at `rate` per second.
    #[must_use]
    pub fn new(rate: f64, burst: u32) -> Self {
        let interval = ((SECOND as f64) / rate).round().max(1.0) as Nanos;
        Self {
            interval,
            tolerance: interval.saturating_mul(Nanos::from(burst.max(1) - 1)),
            theoretical: 0,
        }
    }

    /// A request at `now`: `Ok` admits it, `Err` refuses it with the time until the next
    /// request could be admitted.
    pub fn admit(&mut self, now: Nanos) -> Result<(), Nanos> {
        let earliest = self.theoretical.saturating_sub(self.tolerance);
        if now < earliest {
            return Err(earliest - now);
        }
        self.theoretical = self.theoretical.max(now).saturating_add(self.interval);
        Ok(())
    }
}

/// What a limiter holds while a run goes.
enum Holding {
    /// A token bucket.
    Rate(RateLimiter),
    /// At most `limit` attempts in service, each for `service`; `in_service` are.
    Concurrency {
        limit: u32,
        service: Nanos,
        in_service: u32,
    },
}

/// A limiter in front of the dependency while a run goes: its token bucket or its attempts in
/// service, how its refusals state their wait, and what it counted.
pub(crate) struct Limiting {
    holding: Holding,
    /// The fixed wait a refusal tells, in nanoseconds.
    retry_after: Nanos,
    form: RetryAfterForm,
    rejected: u64,
    early: u64,
}

impl Limiting {
    /// The limiter, empty.
    pub(crate) fn new(limiter: Limiter) -> Self {
        Self {
            holding: match limiter {
                Limiter::Rate(l) => Holding::Rate(RateLimiter::new(l.rate, l.burst)),
                Limiter::Concurrency(l) => Holding::Concurrency {
                    limit: l.limit,
                    service: nanos(l.service),
                    in_service: 0,
                },
            },
            retry_after: nanos(limiter.retry_after()),
            form: limiter.form(),
            rejected: 0,
            early: 0,
        }
    }

    /// An attempt reaches the limiter at `now`, `early` if it comes before the time a refusal
    /// told its client: its refusal (a 429 from the token bucket, a 503 from the concurrency
    /// limit, each with its wait), or `None` if admitted.
    #[inline]
    pub(crate) fn reach(&mut self, now: Nanos, early: bool) -> Option<Outcome> {
        if early {
            self.early += 1;
        }
        // The exact wait until the limiter could admit it, and whether the refusal is a 503.
        let (exact, busy) = match &mut self.holding {
            Holding::Rate(bucket) => (bucket.admit(now).err()?, false),
            Holding::Concurrency {
                limit,
                service,
                in_service,
            } => ((*in_service >= *limit).then_some(*service)?, true),
        };
        self.rejected += 1;
        let wait = self.form.wait(self.retry_after, exact);
        Some(if busy {
            Outcome::Busy(wait)
        } else {
            Outcome::Throttled(wait)
        })
    }

    /// With a concurrency limit, an attempt it admitted at `now` goes into service: when it
    /// leaves. `None` for a token bucket, which serves nothing.
    #[inline]
    pub(crate) fn serve(&mut self, now: Nanos) -> Option<Nanos> {
        match &mut self.holding {
            Holding::Concurrency {
                service,
                in_service,
                ..
            } => {
                *in_service += 1;
                Some(now.saturating_add(*service))
            }
            Holding::Rate(_) => None,
        }
    }

    /// An attempt leaves the concurrency limit's service.
    #[inline]
    pub(crate) fn leave(&mut self) {
        if let Holding::Concurrency { in_service, .. } = &mut self.holding {
            *in_service = in_service.saturating_sub(1);
        }
    }

    /// The row's figures: the share served of `requests`, the refusals per success and the
    /// early retries.
    pub(crate) fn fill(&self, row: &mut ResultRow, requests: u64, ratio: impl Fn(u64, u64) -> f64) {
        row.served_share = Some(ratio(row.successes, requests));
        row.rejected_per_success = Some(ratio(self.rejected, row.successes));
        row.early_retries = Some(self.early);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_limiter_admits_one_request_per_interval_with_a_burst_of_one() {
        let mut limiter = RateLimiter::new(5.0, 1);
        assert_eq!(limiter.admit(0), Ok(()));
        assert_eq!(limiter.admit(1), Err(200_000_000 - 1));
        assert_eq!(limiter.admit(200_000_000), Ok(()));
        // A slot nobody takes is lost: the bucket holds one token.
        assert_eq!(limiter.admit(1_000_000_000), Ok(()));
        assert_eq!(limiter.admit(1_100_000_000), Err(100_000_000));
    }

    #[test]
    fn a_burst_admits_that_many_at_once() {
        let mut limiter = RateLimiter::new(10.0, 3);
        assert!((0..3).all(|_| limiter.admit(0).is_ok()));
        assert_eq!(limiter.admit(0), Err(100_000_000));
    }
}
