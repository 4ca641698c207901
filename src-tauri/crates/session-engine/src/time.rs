//! ISO-8601 timestamps as Pi writes and reads them (`Date.prototype.toISOString`, `Date.parse`).

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `Date.parse` for the ISO forms Pi writes (`YYYY-MM-DDTHH:MM:SS.sssZ`, with optional
/// fraction and offset). `None` where JavaScript would give `NaN`.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = b.get(r)?;
        if !t.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(t).ok()?.parse().ok()
    };
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, mo, d) * 86_400_000;
    if b.len() == 10 {
        return Some(ms);
    }
    if b[10] != b'T' || b.len() < 16 || b[13] != b':' {
        return None;
    }
    let (h, mi) = (num(11..13)?, num(14..16)?);
    let mut i = 16;
    let mut sec = 0;
    let mut frac = 0;
    if b.get(i) == Some(&b':') {
        sec = num(i + 1..i + 3)?;
        i += 3;
        if b.get(i) == Some(&b'.') {
            let st = i + 1;
            let mut e = st;
            while e < b.len() && b[e].is_ascii_digit() {
                e += 1;
            }
            if e == st {
                return None;
            }
            let digits = &s[st..e.min(st + 3)];
            frac = digits.parse::<i64>().ok()? * 10i64.pow(3 - digits.len() as u32);
            i = e;
        }
    }
    if h > 24 || mi > 59 || sec > 59 {
        return None;
    }
    ms += h * 3_600_000 + mi * 60_000 + sec * 1000 + frac;
    match b.get(i) {
        Some(b'Z') if i + 1 == b.len() => Some(ms),
        Some(&sign @ (b'+' | b'-')) => {
            let oh = num(i + 1..i + 3)?;
            let om = num(i + 4..i + 6)?;
            if b.len() != i + 6 {
                return None;
            }
            let off = (oh * 60 + om) * 60_000;
            Some(if sign == b'+' { ms - off } else { ms + off })
        }
        // No offset: JavaScript reads a date-time without one as local time; sessions always
        // carry `Z`, so treat it as UTC.
        None => Some(ms),
        _ => None,
    }
}

/// `new Date(ms).toISOString()`.
pub fn format_iso_ms(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        y,
        m,
        d,
        rem / 3_600_000,
        rem / 60_000 % 60,
        rem / 1000 % 60,
        rem % 1000
    )
}

/// The current time in ms since the epoch. Only the store and front ends call this: the
/// engine's planning functions take time as an argument.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

pub fn now_iso() -> String {
    format_iso_ms(now_ms())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn round_trips() {
        for s in ["2025-03-01T09:00:02.500Z", "2030-01-01T00:00:00.000Z", "1969-12-31T23:59:59.999Z"] {
            assert_eq!(format_iso_ms(parse_iso_ms(s).unwrap()), s);
        }
        assert_eq!(parse_iso_ms("2030-01-01T00:00:00.000Z"), Some(1893456000000));
        assert_eq!(parse_iso_ms("garbage"), None);
        assert_eq!(parse_iso_ms("2025-03-01T10:00:00+01:00"), parse_iso_ms("2025-03-01T09:00:00Z"));
    }
}
