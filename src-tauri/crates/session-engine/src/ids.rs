//! Ids as Pi makes them: entry ids are the first 8 hex characters of a random UUID v4; session
//! ids are UUID v7.

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    // The OS random source failing is not recoverable in any useful way; fall back to time
    // mixed bits so that ids stay distinct within a process.
    if getrandom::fill(&mut b).is_err() {
        let t = crate::time::now_ms() as u64 ^ (std::process::id() as u64) << 32;
        for (i, x) in b.iter_mut().enumerate() {
            *x = (t.rotate_left(i as u32 * 7) & 0xff) as u8;
        }
    }
    b
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn format_uuid(b: [u8; 16]) -> String {
    let h = hex(&b);
    format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
}

pub fn random_uuid_v4() -> String {
    let mut b = random_bytes::<16>();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    format_uuid(b)
}

/// `randomUUID().slice(0, 8)`.
pub fn random_short_id() -> String {
    random_uuid_v4()[..8].to_string()
}

/// A UUID v7 for a new session, from a millisecond timestamp.
pub fn uuid_v7(ms: i64) -> String {
    let mut b = random_bytes::<16>();
    let ms = ms as u64;
    for (i, byte) in b.iter_mut().take(6).enumerate() {
        *byte = (ms >> (40 - 8 * i)) as u8;
    }
    b[6] = (b[6] & 0x0f) | 0x70;
    b[8] = (b[8] & 0x3f) | 0x80;
    format_uuid(b)
}

/// A fresh entry id not used in the session (Pi's `generateId`).
pub fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..100 {
        let id = random_short_id();
        if !taken(&id) {
            return id;
        }
    }
    random_uuid_v4()
}

#[cfg(test)]
mod tests {
    #[test]
    fn shapes() {
        let id = super::random_short_id();
        assert_eq!(id.len(), 8);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        let v7 = super::uuid_v7(1893456000000);
        assert_eq!(&v7[14..15], "7");
        assert!(v7.starts_with("01b8"));
    }
}
