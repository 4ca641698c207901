//! The seeded random choices of the fault tests (xorshift64*): each run prints its seed, and a
//! run with the same seed makes the same choices.
//!
//! Include it by path: `#[path = "support/rng.rs"] mod rng;`
#![allow(dead_code)] // each including test crate uses a different part

pub struct Rng(u64);

impl Rng {
    /// A generator starting at `seed` (not 0: xorshift never leaves 0).
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A seed from the clock, odd so it is never 0.
pub fn clock_seed() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64 | 1
}

/// The seed in `$var` (to replay a run), else [`clock_seed`].
pub fn seed_from_env(var: &str) -> u64 {
    std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or_else(clock_seed)
}
