//! Random quantities of the models, drawn from injected generators.

use serde::{Deserialize, Serialize};
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

/// A [`Delay`] as a scenario file writes it, its times as text: `{ exp = "10ms" }`,
/// `{ constant = "1ms" }` or `{ abs_normal = { mean = "10ms", sd = "2ms" } }`. [`Latency::delay`]
/// reads it into the delay, refusing a bad time by its key.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub enum Latency {
    /// [`Delay::Exponential`] with this mean.
    Exp(String),
    /// [`Delay::Constant`].
    Constant(String),
    /// [`Delay::AbsNormal`].
    AbsNormal {
        /// The mean.
        mean: String,
        /// The standard deviation.
        sd: String,
    },
}

impl Latency {
    /// The delay, or why a time is refused, named by `key` (the file's key of this latency)
    /// and the variant's.
    ///
    /// # Errors
    ///
    /// A time that is not a duration, or is longer than `u64` nanoseconds.
    pub fn delay(&self, key: &str) -> Result<Delay, String> {
        let nanos = |field: &str, text: &str| -> Result<Nanos, String> {
            let key = format!("{key}.{field}");
            let d = stagger_core::duration::parse(text).map_err(|e| format!("{key}: {e}"))?;
            Nanos::try_from(d.as_nanos()).map_err(|_| format!("{key}: {text} is too long"))
        };
        Ok(match self {
            Self::Exp(mean) => Delay::Exponential {
                mean: nanos("exp", mean)?,
            },
            Self::Constant(d) => Delay::Constant {
                nanos: nanos("constant", d)?,
            },
            Self::AbsNormal { mean, sd } => Delay::AbsNormal {
                mean: nanos("abs_normal.mean", mean)?,
                sd: nanos("abs_normal.sd", sd)?,
            },
        })
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

/// The layers of the ziggurat.
pub(crate) const LAYERS: usize = 128;
/// Where the tail begins, for 128 layers.
pub(crate) const TAIL: f64 = 3.442_619_855_899;
/// The area of each layer, for 128 layers.
pub(crate) const AREA: f64 = 9.912_563_035_262_17e-3;

/// The unnormalised standard normal density, `exp(-x²/2)`.
#[inline]
pub(crate) fn density(x: f64) -> f64 {
    libm::exp(-0.5 * x * x)
}

/// The ziggurat's tables: layer `i` spans `[0, x[i])` between heights `f[i]` and `f[i + 1]`;
/// layer 0 is the base strip, whose part beyond `x[1]` is the tail.
pub(crate) struct Ziggurat {
    x: [f64; LAYERS + 1],
    f: [f64; LAYERS + 1],
}

impl Ziggurat {
    pub(crate) fn new() -> Self {
        let mut x = [0.0; LAYERS + 1];
        x[0] = AREA / density(TAIL);
        x[1] = TAIL;
        for i in 2..LAYERS {
            x[i] = (-2.0 * libm::log(AREA / x[i - 1] + density(x[i - 1]))).sqrt();
        }
        x[LAYERS] = 0.0;
        let f = x.map(density);
        Self { x, f }
    }

    /// A standard normal draw.
    #[inline(always)]
    pub(crate) fn standard_normal(&self, rng: &mut SeededRng) -> f64 {
        loop {
            let bits = rng.next_u64();
            // The low 7 bits pick the layer, the top 53 a uniform in [-1, 1).
            let i = (bits & (LAYERS as u64 - 1)) as usize;
            let u = (bits >> 11) as f64 * (2.0 / (1u64 << 53) as f64) - 1.0;
            let x = u * self.x[i];
            if x.abs() < self.x[i + 1] {
                return x;
            }
            if i == 0 {
                return Self::tail(rng, u < 0.0);
            }
            let y = self.f[i + 1] + rng.next_f64() * (self.f[i] - self.f[i + 1]);
            if y < density(x) {
                return x;
            }
        }
    }

    /// A draw from the tail beyond [`TAIL`] (Marsaglia, 1964).
    #[cold]
    pub(crate) fn tail(rng: &mut SeededRng, negative: bool) -> f64 {
        loop {
            let a = -libm::log(1.0 - rng.next_f64()) / TAIL;
            let b = -libm::log(1.0 - rng.next_f64());
            if 2.0 * b > a * a {
                return if negative { -(TAIL + a) } else { TAIL + a };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ziggurat_draws_a_standard_normal() {
        let zig = Ziggurat::new();
        // The recursion closes: the top layer has the same area as every other.
        let top = zig.x[LAYERS - 1] * (1.0 - zig.f[LAYERS - 1]);
        assert!((top / AREA - 1.0).abs() < 1e-6, "{top}");
        let mut rng = SeededRng::new(3);
        let n = 1_000_000;
        let (mut sum, mut sq, mut quad) = (0.0, 0.0, 0.0);
        let mut within = [0u32; 3];
        let mut beyond_tail = 0u32;
        for _ in 0..n {
            let z = zig.standard_normal(&mut rng);
            sum += z;
            sq += z * z;
            quad += z * z * z * z;
            for (k, w) in within.iter_mut().enumerate() {
                *w += u32::from(z.abs() < (k + 1) as f64);
            }
            beyond_tail += u32::from(z.abs() > TAIL);
        }
        let n = f64::from(n);
        assert!((sum / n).abs() < 0.005, "mean {}", sum / n);
        assert!((sq / n - 1.0).abs() < 0.01, "variance {}", sq / n);
        assert!((quad / n - 3.0).abs() < 0.05, "fourth moment {}", quad / n);
        // P(|Z| < 1), P(|Z| < 2), P(|Z| < 3), and the tail beyond 3.4426 (5.76e-4).
        for (w, p) in within.iter().zip([0.682_689, 0.954_500, 0.997_300]) {
            assert!(
                (f64::from(*w) / n - p).abs() < 0.002,
                "{} vs {p}",
                f64::from(*w) / n
            );
        }
        assert!(
            (f64::from(beyond_tail) / n - 5.76e-4).abs() < 1.5e-4,
            "{}",
            f64::from(beyond_tail) / n
        );
    }

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
