//! Sources of fresh ids for the v1 migration.

/// Source of fresh ids for the v1 migration (random in the app; a counter in tests, like the
/// oracle's `a0000001`, `a0000002`, ...).
pub trait IdSource {
    fn next_id(&mut self, taken: &dyn Fn(&str) -> bool) -> String;
}

/// Pi's generator: the first 8 hex characters of a random UUID v4, retried on collision.
pub struct RandomIds;
impl IdSource for RandomIds {
    fn next_id(&mut self, taken: &dyn Fn(&str) -> bool) -> String {
        for _ in 0..100 {
            let id = crate::ids::random_short_id();
            if !taken(&id) {
                return id;
            }
        }
        crate::ids::random_uuid_v4()
    }
}

/// Counter ids with a one-letter prefix: `a0000001`, `a0000002`, ...
pub struct CounterIds {
    pub prefix: char,
    pub next: u32,
}
impl IdSource for CounterIds {
    fn next_id(&mut self, _taken: &dyn Fn(&str) -> bool) -> String {
        self.next += 1;
        format!("{}{:07x}", self.prefix, self.next)
    }
}
