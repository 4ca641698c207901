//! Helpers shared by the engine's unit tests.

/// Marsaglia's xorshift64 from `seed` (not 0): the deterministic generator the randomized tests
/// draw from, each test with its own seed.
pub fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    }
}

/// [`xorshift`] as `usize`s (indices and counts).
pub fn xorshift_usize(seed: u64) -> impl FnMut() -> usize {
    let mut next = xorshift(seed);
    move || next() as usize
}
