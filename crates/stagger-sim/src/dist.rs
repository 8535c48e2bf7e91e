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
}
