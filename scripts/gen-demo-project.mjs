// The demo project's files and test runs (scripts/gen-demo.mjs writes the session that uses
// them): data only.

// ---------------------------------------------------------------------------------------------
// The project's files, as the tools see them.

export const file = (text) => ({ text });

export const LIB_RS = file(`//! throttle: pass lines through at a fixed rate (token bucket).

mod bucket;

pub use bucket::TokenBucket;

use std::time::{Duration, Instant};

/// Rate-limits a stream of events: \`rate\` per second, bursts of up to \`burst\`.
pub struct Limiter {
    bucket: TokenBucket,
}

impl Limiter {
    pub fn new(rate: f64, burst: u32) -> Self {
        Limiter { bucket: TokenBucket::new(rate, burst) }
    }

    /// True if one event may pass now.
    pub fn allow(&mut self) -> bool {
        self.allow_at(Instant::now())
    }

    /// Same as \`allow\`, at an explicit instant (tests use this).
    pub fn allow_at(&mut self, now: Instant) -> bool {
        self.bucket.take(now, 1.0)
    }

    /// How long until one event may pass.
    pub fn wait_time(&self, now: Instant) -> Duration {
        self.bucket.time_until(now, 1.0)
    }
}
`);

export const BUCKET_RS = file(`use std::time::{Duration, Instant};

/// A token bucket: refills at \`rate\` tokens per second up to \`capacity\`.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate: f64,
    capacity: f64,
    tokens: f64,
    last: Option<Instant>,
}

impl TokenBucket {
    pub fn new(rate: f64, burst: u32) -> Self {
        TokenBucket { rate, capacity: burst as f64, tokens: burst as f64, last: None }
    }

    fn refill(&mut self, now: Instant) {
        if let Some(last) = self.last {
            let elapsed = now.saturating_duration_since(last).as_secs_f64();
            self.tokens = (self.tokens + elapsed * self.rate).min(self.capacity);
        }
        self.last = Some(now);
    }

    /// Takes \`n\` tokens if there are enough.
    pub fn take(&mut self, now: Instant, n: f64) -> bool {
        self.refill(now);
        if self.tokens >= n {
            self.tokens -= n;
            true
        } else {
            false
        }
    }

    /// How long until \`n\` tokens are available.
    pub fn time_until(&self, now: Instant, n: f64) -> Duration {
        let elapsed = self.last.map_or(0.0, |l| now.saturating_duration_since(l).as_secs_f64());
        let have = (self.tokens + elapsed * self.rate).min(self.capacity);
        if have >= n {
            Duration::ZERO
        } else {
            Duration::from_secs_f64((n - have) / self.rate)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_full() {
        let mut b = TokenBucket::new(1.0, 3);
        let t = Instant::now();
        assert!(b.take(t, 3.0));
        assert!(!b.take(t, 1.0));
    }

    #[test]
    fn refills_at_rate() {
        let mut b = TokenBucket::new(2.0, 2);
        let t = Instant::now();
        assert!(b.take(t, 2.0));
        assert!(b.take(t + Duration::from_millis(500), 1.0));
    }
}
`);

export const MAIN_RS = file(`use std::io::{self, BufRead, Write};
use std::process::ExitCode;
use throttle::Limiter;

mod args;

fn main() -> ExitCode {
    let opts = match args::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("throttle: {e}\\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    let mut limiter = Limiter::new(opts.rate, opts.burst);
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if limiter.allow() {
            if writeln!(out, "{line}").is_err() {
                break;
            }
        } else if opts.drop_log {
            eprintln!("dropped: {line}");
        }
    }
    ExitCode::SUCCESS
}
`);

export const ARGS_RS = file(`//! Hand-written argument parsing: three flags do not need a dependency.

pub const USAGE: &str = "usage: throttle --rate N [--burst N] [--drop-log]";

#[derive(Debug, Clone, PartialEq)]
pub struct Opts {
    pub rate: f64,
    pub burst: u32,
    pub drop_log: bool,
}

pub fn parse(mut it: impl Iterator<Item = String>) -> Result<Opts, String> {
    let mut opts = Opts { rate: 0.0, burst: 1, drop_log: false };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--rate" => opts.rate = value(&mut it, "--rate")?,
            "--burst" => opts.burst = value(&mut it, "--burst")?,
            "--drop-log" => opts.drop_log = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if opts.rate <= 0.0 {
        return Err("--rate must be greater than 0".into());
    }
    Ok(opts)
}

fn value<T: std::str::FromStr>(it: &mut impl Iterator<Item = String>, flag: &str) -> Result<T, String> {
    let v = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse().map_err(|_| format!("{flag}: not a number: {v}"))
}
`);

export const KEYED_RS_V1 = `//! One token bucket per key (a client address, a user id, ...).

use crate::TokenBucket;
use std::collections::HashMap;
use std::time::Instant;

/// Rate-limits events per key: every key gets its own \`rate\` and \`burst\`.
pub struct KeyedLimiter {
    rate: f64,
    burst: u32,
    buckets: HashMap<String, TokenBucket>,
}

impl KeyedLimiter {
    pub fn new(rate: f64, burst: u32) -> Self {
        KeyedLimiter { rate, burst, buckets: HashMap::new() }
    }

    /// True if one event for \`key\` may pass now.
    pub fn allow(&mut self, key: &str) -> bool {
        self.allow_at(key, Instant::now())
    }

    pub fn allow_at(&mut self, key: &str, now: Instant) -> bool {
        let mut bucket = self.buckets.get(key).cloned().unwrap_or_else(|| TokenBucket::new(self.rate, self.burst));
        bucket.take(now, 1.0)
    }

    /// Keys seen so far.
    pub fn len(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn burst_is_per_key() {
        let mut lim = KeyedLimiter::new(1.0, 2);
        let t = Instant::now();
        assert!(lim.allow_at("10.0.0.1", t));
        assert!(lim.allow_at("10.0.0.1", t));
        assert!(!lim.allow_at("10.0.0.1", t), "the third request from 10.0.0.1 must be refused");
        assert!(lim.allow_at("10.0.0.2", t), "another key has its own burst");
    }

    #[test]
    fn keys_refill_independently() {
        let mut lim = KeyedLimiter::new(2.0, 1);
        let t = Instant::now();
        assert!(lim.allow_at("a", t));
        assert!(lim.allow_at("b", t + Duration::from_millis(100)));
        assert!(lim.allow_at("a", t + Duration::from_millis(500)));
        assert!(!lim.allow_at("b", t + Duration::from_millis(500)));
    }

    #[test]
    fn limiter_api_is_unchanged() {
        let mut l = crate::Limiter::new(5.0, 1);
        assert!(l.allow_at(Instant::now()));
    }
}
`;
export const KEYED_RS = file(KEYED_RS_V1);

export const README = file(`# throttle

Pass lines from stdin to stdout at a fixed rate; lines over the rate are dropped.

    tail -F access.log | throttle --rate 50 --burst 200 > sampled.log

## Flags

- \`--rate N\`: lines per second (required).
- \`--burst N\`: lines allowed at once before the rate applies (default 1).
- \`--drop-log\`: print dropped lines to stderr.

## Library

\`throttle::Limiter\` is the same limiter for Rust programs: \`Limiter::new(rate, burst)\`, then
\`allow()\` per event.
`);

export const CARGO_TOML = file(`[package]
name = "throttle"
version = "0.3.1"
edition = "2021"
description = "Pass lines from stdin through at a fixed rate"
license = "MIT"

[dependencies]
`);

export function testRun(names, { failed = [], seconds = "0.00" } = {}) {
  const lines = names.map((n) => `test ${n} ... ${failed.includes(n) ? "FAILED" : "ok"}`);
  const pass = names.length - failed.length;
  return { lines, summary: `test result: ${failed.length ? "FAILED" : "ok"}. ${pass} passed; ${failed.length} failed; 0 ignored; 0 measured; 0 filtered out; finished in ${seconds}s` };
}

export const BASE_TESTS = [
  "args::tests::rate_is_required",
  "args::tests::unknown_flag_is_an_error",
  "bucket::tests::refills_at_rate",
  "bucket::tests::starts_full",
  "tests::allow_at_respects_burst",
  "tests::drop_log_flag",
  "tests::wait_time_is_zero_when_full",
  "tests::wait_time_counts_down",
  "tests::zero_burst_never_allows",
];
export const KEYED_TESTS = ["keyed::tests::burst_is_per_key", "keyed::tests::keys_refill_independently", "keyed::tests::limiter_api_is_unchanged"];
