//! Shared pieces of the executor tests.

#![allow(dead_code, unreachable_pub)] // Each test file uses its own subset.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use stagger::Failure;
use stagger::clock::ManualClock;
use stagger::policy::Policy;

/// Seed 001's policy: a ceiling of `2^min(attempt - 1, 3)` seconds times a fixed sample.
pub struct ScriptPolicy {
    pub sample: f64,
    pub max_attempts: u32,
}

impl Policy for ScriptPolicy {
    fn next_delay(&mut self, attempt: u32, failure: &Failure) -> Option<Duration> {
        if !failure.is_retryable() || attempt >= self.max_attempts {
            return None;
        }
        let ceiling = 2f64.powi(attempt.saturating_sub(1).min(3) as i32);
        Some(Duration::from_secs_f64(ceiling * self.sample))
    }
}

pub fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// Seed 001's classification: 503 and timeouts are retryable, everything else permanent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Code(u16),
    TimedOut,
}

pub fn classify(status: &Status) -> Failure {
    match status {
        Status::Code(503) => Failure::Retryable,
        Status::TimedOut => Failure::Timeout,
        Status::Code(_) => Failure::Permanent,
    }
}

/// A blocking sleeper that advances a manual clock and records every wait.
#[derive(Clone, Default)]
pub struct RecordingSleeper {
    pub clock: ManualClock,
    pub waits: Rc<RefCell<Vec<Duration>>>,
}

impl RecordingSleeper {
    pub fn new(clock: &ManualClock) -> Self {
        Self {
            clock: clock.clone(),
            waits: Rc::default(),
        }
    }

    pub fn sleeper(&self) -> impl Fn(Duration) + use<> {
        let (clock, waits) = (self.clock.clone(), self.waits.clone());
        move |d| {
            waits.borrow_mut().push(d);
            clock.advance(d);
        }
    }

    pub fn waits(&self) -> Vec<Duration> {
        self.waits.borrow().clone()
    }
}
