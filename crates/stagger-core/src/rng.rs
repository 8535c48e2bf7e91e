//! Randomness, injected.
//!
//! A policy receives its random source when it is built and never reads a global one. That is
//! what makes a schedule reproducible (a delivery scheduler can recompute "next attempt at T"
//! after a restart) and what keeps two clients from sharing a sequence by accident.
//!
//! # The generator
//!
//! [`SeededRng`] is SplitMix64 (Steele, Lea and Flood, 2014), the generator behind Java's
//! `SplittableRandom`: a 64-bit counter advanced by a fixed odd constant and passed through a
//! strong mixing function. It passes BigCrush, has a period of 2<sup>64</sup>, costs about a
//! nanosecond per draw, and seeding it is free, which matters when every operation builds its
//! own policy. It is written out here with integer arithmetic only, so a seed gives the same
//! sequence on every platform and in every version of this crate: the sequences are pinned by
//! test vectors in `vectors/rng.json`, which a Python reference implementation
//! (`vectors/reference.py`) regenerates independently.
//!
//! All SplitMix64 sequences are windows of one cycle of 2<sup>64</sup> values. Two seeds share
//! outputs only if one lies within a few draws of the other along that cycle, which for seeds
//! taken from keys, entropy or [`fork`](SeededRng::fork) has a probability of the order of
//! 2<sup>-60</sup>. It is not a cryptographic generator: never use it for secrets.
//!
//! # Keys
//!
//! [`SeededRng::from_key`] turns a text key, such as a delivery id, into a seed with 64-bit
//! FNV-1a over the key's UTF-8 bytes. The same key always gives the same schedule; two
//! different keys give unrelated ones. FNV-1a is not a cryptographic hash: a key chosen by an
//! adversary can be made to collide with another, which at worst makes two deliveries share a
//! jitter sequence.
//!
//! # Why `SeededRng` is not `Clone`
//!
//! A cloned generator replays its original's sequence. tower's backoff maker cloned one
//! generator into every backoff it made, so every request jittered identically. Here a generator
//! can only be moved, [`forked`](SeededRng::fork) into an independent child, or made again from
//! the same seed or key on purpose.

mod entropy;

/// A source of uniformly distributed random bits.
///
/// One method is required; [`next_f64`](Rng::next_f64) is derived from it. Implement it for a
/// generator of your own, or for a scripted sequence in a test.
///
/// ```
/// use stagger_core::rng::Rng;
///
/// /// Always draws the middle of the range.
/// struct Half;
/// impl Rng for Half {
///     fn next_u64(&mut self) -> u64 {
///         1 << 63
///     }
/// }
/// assert_eq!(Half.next_f64(), 0.5);
/// ```
pub trait Rng {
    /// Returns the next 64 uniformly distributed bits.
    fn next_u64(&mut self) -> u64;

    /// Returns a uniform draw from `[0, 1)`: the top 53 bits of [`next_u64`](Rng::next_u64),
    /// scaled by 2<sup>-53</sup>. Every value is a multiple of 2<sup>-53</sup>, and 1 is never
    /// returned.
    #[inline]
    fn next_f64(&mut self) -> f64 {
        unit_f64(self.next_u64())
    }
}

/// Maps 64 random bits to `[0, 1)` using the top 53 bits.
#[inline]
pub(crate) fn unit_f64(bits: u64) -> f64 {
    const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
    (bits >> 11) as f64 * SCALE
}

impl<R: Rng + ?Sized> Rng for &mut R {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        (**self).next_u64()
    }
}

impl<R: Rng + ?Sized> Rng for Box<R> {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        (**self).next_u64()
    }
}

/// The default generator: SplitMix64.
///
/// ```
/// use stagger_core::rng::{Rng, SeededRng};
///
/// let mut a = SeededRng::from_key("delivery-123");
/// let mut b = SeededRng::from_key("delivery-123");
/// assert_eq!(a.next_u64(), b.next_u64()); // the same key replays the same sequence
///
/// let mut c = SeededRng::from_key("delivery-124");
/// assert_ne!(a.next_u64(), c.next_u64()); // a different key does not
/// ```
#[derive(Debug, PartialEq, Eq)]
pub struct SeededRng {
    state: u64,
}

impl SeededRng {
    /// A generator whose state is `seed`.
    ///
    /// Every seed, zero included, gives a valid, distinct generator.
    #[inline]
    #[must_use]
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// A generator seeded by the 64-bit FNV-1a hash of `key`'s UTF-8 bytes.
    ///
    /// Use the identity of the work being retried (a delivery id, an idempotency key) so that a
    /// restarted process recomputes the same schedule.
    #[must_use]
    pub const fn from_key(key: &str) -> Self {
        Self::new(fnv1a64(key.as_bytes()))
    }

    /// A generator seeded from process entropy: every call returns a generator with a
    /// different sequence, in this process and across processes.
    ///
    /// Use this where reproducibility is not wanted, so that a fleet of clients never jitters in
    /// step. It is the one place this crate reads entropy from the operating system.
    #[must_use]
    pub fn from_entropy() -> Self {
        Self::new(entropy::seed())
    }

    /// Splits off an independent child generator, seeded by this generator's next output.
    ///
    /// A simulator derives every client's generator from one world generator this way: the
    /// children are reproducible from the world seed and do not share sequences.
    #[must_use]
    pub fn fork(&mut self) -> Self {
        Self::new(self.next_u64())
    }
}

impl Rng for SeededRng {
    #[inline]
    fn next_u64(&mut self) -> u64 {
        splitmix64(&mut self.state)
    }
}

/// One step of SplitMix64: advances `state` by the golden-ratio increment and returns its mix.
#[inline]
const fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 64-bit FNV-1a over `bytes`: the documented, stable mapping from a key to a seed.
#[must_use]
pub const fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xCBF2_9CE4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01B3;
    let mut hash = OFFSET;
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(PRIME);
        i += 1;
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_published_values() {
        // Values from the FNV reference test suite.
        assert_eq!(fnv1a64(b""), 0xCBF2_9CE4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xAF63_DC4C_8601_EC8C);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_F739_67E8);
    }

    #[test]
    fn splitmix64_matches_reference_output() {
        // First outputs of the reference splitmix64.c seeded with 1234567.
        let mut rng = SeededRng::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
        assert_eq!(rng.next_u64(), 9_817_491_932_198_370_423);
    }

    #[test]
    fn forks_are_independent_and_reproducible() {
        let mut world_a = SeededRng::new(7);
        let mut world_b = SeededRng::new(7);
        let mut child_a = world_a.fork();
        let mut child_b = world_b.fork();
        assert_eq!(child_a.next_u64(), child_b.next_u64());
        let mut sibling = world_a.fork();
        assert_ne!(child_a.next_u64(), sibling.next_u64());
    }

    #[test]
    fn entropy_seeds_differ_between_calls() {
        let mut a = SeededRng::from_entropy();
        let mut b = SeededRng::from_entropy();
        assert_ne!([a.next_u64(), a.next_u64()], [b.next_u64(), b.next_u64()]);
    }

    #[test]
    fn unit_draws_stay_in_the_half_open_interval() {
        assert_eq!(unit_f64(0), 0.0);
        assert!(unit_f64(u64::MAX) < 1.0);
        assert_eq!(unit_f64(u64::MAX), 1.0 - 1.0 / (1u64 << 53) as f64);
    }
}
