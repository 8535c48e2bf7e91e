//! Random quantities of the models, drawn from injected generators.

use serde::Serialize;
use stagger_core::{Rng, SeededRng};

use crate::queue::Nanos;

/// A distribution of delays, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Delay {
    /// Always `nanos`.
    Constant {
        /// The delay.
        nanos: Nanos,
    },
    /// `|Normal(mean, sd)|`, as the 2015 AWS simulator's network.
    AbsNormal {
        /// The mean.
        mean: Nanos,
        /// The standard deviation.
        sd: Nanos,
    },
    /// Exponential with this mean.
    Exponential {
        /// The mean.
        mean: Nanos,
    },
}

impl Delay {
    /// A draw, in whole nanoseconds.
    pub fn sample(&self, rng: &mut SeededRng) -> Nanos {
        match *self {
            Self::Constant { nanos } => nanos,
            Self::AbsNormal { mean, sd } => {
                let z = standard_normal(rng);
                (mean as f64 + sd as f64 * z).abs() as Nanos
            }
            Self::Exponential { mean } => exponential(rng, mean as f64) as Nanos,
        }
    }
}

impl Delay {
    /// The mean of a draw, in nanoseconds (for `|Normal(mean, sd)|`, the mean of the folded
    /// normal).
    #[must_use]
    pub fn mean(&self) -> f64 {
        match *self {
            Self::Constant { nanos } => nanos as f64,
            Self::AbsNormal { mean, sd } => {
                let (mean, sd) = (mean as f64, sd as f64);
                if sd == 0.0 {
                    return mean;
                }
                // E|X| = sd sqrt(2/pi) exp(-mean^2 / 2 sd^2) + mean erf(mean / (sd sqrt 2)).
                let z = mean / sd;
                sd * (2.0 / std::f64::consts::PI).sqrt() * libm::exp(-0.5 * z * z)
                    + mean * libm::erf(z / std::f64::consts::SQRT_2)
            }
            Self::Exponential { mean } => mean as f64,
        }
    }
}

/// A standard normal draw by the Box–Muller transform (one of its two values).
pub fn standard_normal(rng: &mut SeededRng) -> f64 {
    // 1 - U keeps the logarithm finite: U is in [0, 1).
    let u1 = 1.0 - rng.next_f64();
    let u2 = rng.next_f64();
    (-2.0 * libm::log(u1)).sqrt() * libm::cos(std::f64::consts::TAU * u2)
}

/// An exponential draw with mean `mean`.
pub fn exponential(rng: &mut SeededRng, mean: f64) -> f64 {
    -mean * libm::log(1.0 - rng.next_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_are_right() {
        let mut rng = SeededRng::new(1);
        let n = 200_000;
        let normal = Delay::AbsNormal {
            mean: 10_000_000,
            sd: 2_000_000,
        };
        let mean: f64 = (0..n).map(|_| normal.sample(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((mean / 1e7 - 1.0).abs() < 0.01, "{mean}");
        let exp = Delay::Exponential { mean: 10_000_000 };
        let mean: f64 = (0..n).map(|_| exp.sample(&mut rng) as f64).sum::<f64>() / n as f64;
        assert!((mean / 1e7 - 1.0).abs() < 0.01, "{mean}");
    }

    #[test]
    fn means_are_the_draws_means() {
        let mut rng = SeededRng::new(2);
        let n = 200_000;
        for delay in [
            Delay::Constant { nanos: 7 },
            Delay::Exponential { mean: 1_000 },
            Delay::AbsNormal {
                mean: 10_000_000,
                sd: 2_000_000,
            },
            // Folded about zero: the mean of |X| is sd * sqrt(2 / pi).
            Delay::AbsNormal { mean: 0, sd: 1_000 },
            Delay::AbsNormal {
                mean: 500,
                sd: 1_000,
            },
        ] {
            let drawn = (0..n).map(|_| delay.sample(&mut rng) as f64).sum::<f64>() / f64::from(n);
            let mean = delay.mean();
            assert!(
                (drawn / mean - 1.0).abs() < 0.01,
                "{delay:?}: {drawn} vs {mean}"
            );
        }
    }
}
