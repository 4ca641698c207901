//! Retry policy: full-jitter exponential backoff, server hints (`retry-after-ms`,
//! `retry-after` in seconds or as an HTTP-date) capped at `max_server_wait`.
use reqwest::header::HeaderMap;
use std::time::{Duration, SystemTime};

#[derive(Debug, Clone)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Backoff base: attempt n sleeps a uniform random time in [0, min(max_delay, base * 2^n)].
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// The longest server-requested wait Arbor honours; a longer hint fails at once.
    pub max_server_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: 4,
            base_delay: Duration::from_millis(1000),
            max_delay: Duration::from_secs(30),
            max_server_wait: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// Full jitter (AWS architecture blog): uniform in [0, min(cap, base * 2^attempt)].
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exp = self.base_delay.saturating_mul(1u32.checked_shl(attempt.min(20)).unwrap_or(u32::MAX));
        let ceiling = exp.min(self.max_delay);
        let ms = ceiling.as_millis() as u64;
        Duration::from_millis(if ms == 0 { 0 } else { fastrand::u64(0..=ms) })
    }

    /// The wait for a server hint: at least the hint, plus a little jitter so that many
    /// clients do not come back in the same millisecond.
    pub fn hinted(&self, hint: Duration) -> Duration {
        let jitter_ms = (self.base_delay.as_millis() as u64 / 4).max(1);
        hint + Duration::from_millis(fastrand::u64(0..=jitter_ms))
    }
}

/// Parses `retry-after-ms`, then `retry-after` (seconds, fractional allowed, or HTTP-date).
pub fn server_hint(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    if let Some(v) = headers.get("retry-after-ms").and_then(|v| v.to_str().ok()) {
        if let Ok(ms) = v.trim().parse::<f64>() {
            if ms.is_finite() && ms >= 0.0 {
                return Some(Duration::from_micros((ms * 1000.0) as u64));
            }
        }
    }
    let v = headers.get("retry-after").and_then(|v| v.to_str().ok())?.trim();
    if let Ok(secs) = v.parse::<f64>() {
        if secs.is_finite() && secs >= 0.0 {
            return Some(Duration::from_micros((secs * 1_000_000.0) as u64));
        }
        return None;
    }
    let when = httpdate::parse_http_date(v).ok()?;
    Some(when.duration_since(now).unwrap_or(Duration::ZERO))
}

/// `x-should-retry: true|false` (OpenAI and Anthropic send it).
pub fn should_retry_header(headers: &HeaderMap) -> Option<bool> {
    match headers.get("x-should-retry")?.to_str().ok()?.trim() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;
    #[test]
    fn hints() {
        let now = SystemTime::now();
        let mut h = HeaderMap::new();
        h.insert("retry-after", HeaderValue::from_static("3"));
        assert_eq!(server_hint(&h, now), Some(Duration::from_secs(3)));
        h.insert("retry-after-ms", HeaderValue::from_static("1500"));
        assert_eq!(server_hint(&h, now), Some(Duration::from_millis(1500)));
        let mut h = HeaderMap::new();
        let date = httpdate::fmt_http_date(now + Duration::from_secs(10));
        h.insert("retry-after", HeaderValue::from_str(&date).unwrap());
        let d = server_hint(&h, now).unwrap();
        assert!(d >= Duration::from_secs(9) && d <= Duration::from_secs(10), "{d:?}");
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(server_hint(&h, now), None);
    }
    #[test]
    fn backoff_is_bounded() {
        let p = RetryPolicy {
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(250),
            ..Default::default()
        };
        for a in 0..40 {
            assert!(p.backoff(a) <= Duration::from_millis(250));
        }
    }
}
