//! A limiter in front of the dependency: the token bucket ([`RateLimiter`]), how a refusal
//! states its wait ([`RetryAfterForm`]), and what a run counts at the limiter.

use crate::model::SECOND;
use crate::model::parts::*;
use crate::queue::Nanos;

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

/// What a limiter counted.
pub(crate) struct Limiting {
    pub(crate) rate: Option<RateLimiter>,
    /// A concurrency limiter's most attempts in service, its service time and how many are.
    pub(crate) concurrency: Option<(u32, Nanos, u32)>,
    pub(crate) limiter: Limiter,
    pub(crate) rejected: u64,
    pub(crate) early: u64,
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

    #[test]
    fn rounded_forms_round_up_to_whole_seconds() {
        assert_eq!(RetryAfterForm::ExactRounded.wait(0, 200_000_000), SECOND);
        assert_eq!(
            RetryAfterForm::FixedRounded.wait(1_500_000_000, 0),
            2 * SECOND
        );
        assert_eq!(RetryAfterForm::Exact.wait(SECOND, 3), 3);
        assert_eq!("exact-rounded".parse(), Ok(RetryAfterForm::ExactRounded));
        assert!("exactly".parse::<RetryAfterForm>().is_err());
    }
}
