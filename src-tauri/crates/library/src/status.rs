//! Where an indexed entry stands against its session file's leaf, and how that is stored.
use rusqlite::types::{FromSql, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use std::fmt;

/// Where an entry stands against its file's leaf, by the engine's rules (see
/// [`crate::analyze::outcome`]). The index stores it as an integer in `entries.status` (see
/// [`EntryStatus::code`]); its name ("in_context", "compacted", "abandoned") is what the API and
/// the CLI's JSON show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryStatus {
    /// On the path to the leaf and sent to the model.
    InContext,
    /// On the path to the leaf, before the last compaction's first kept entry: summarized away.
    Compacted,
    /// Off the path to the leaf: on a branch the session left.
    Abandoned,
}

impl EntryStatus {
    /// The value stored in `entries.status`. These numbers are the index's on-disk format: they
    /// never change (a new status would take a new number).
    pub const fn code(self) -> i64 {
        match self {
            EntryStatus::InContext => 0,
            EntryStatus::Compacted => 1,
            EntryStatus::Abandoned => 2,
        }
    }

    /// The status a stored value stands for; a value this build does not know reads as
    /// `Abandoned`.
    pub const fn from_code(code: i64) -> EntryStatus {
        match code {
            0 => EntryStatus::InContext,
            1 => EntryStatus::Compacted,
            _ => EntryStatus::Abandoned,
        }
    }

    /// "in_context", "compacted" or "abandoned".
    pub const fn name(self) -> &'static str {
        match self {
            EntryStatus::InContext => "in_context",
            EntryStatus::Compacted => "compacted",
            EntryStatus::Abandoned => "abandoned",
        }
    }

    /// The status named by [`EntryStatus::name`], if `name` is one.
    pub fn from_name(name: &str) -> Option<EntryStatus> {
        [EntryStatus::InContext, EntryStatus::Compacted, EntryStatus::Abandoned].into_iter().find(|s| s.name() == name)
    }
}

/// Compares with the status's name ("in_context", ...), as the CLI's JSON and the tests spell it.
impl PartialEq<&str> for EntryStatus {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl fmt::Display for EntryStatus {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl ToSql for EntryStatus {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.code()))
    }
}

impl FromSql for EntryStatus {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        i64::column_result(value).map(EntryStatus::from_code)
    }
}

#[cfg(test)]
mod tests {
    use super::EntryStatus;

    /// The stored numbers and the names are the index's and the API's format.
    #[test]
    fn codes_and_names_are_fixed() {
        let all = [
            (EntryStatus::InContext, 0, "in_context"),
            (EntryStatus::Compacted, 1, "compacted"),
            (EntryStatus::Abandoned, 2, "abandoned"),
        ];
        for (s, code, name) in all {
            assert_eq!((s.code(), s.name()), (code, name));
            assert_eq!(EntryStatus::from_code(code), s);
            assert_eq!(EntryStatus::from_name(name), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), name);
        }
        assert_eq!(EntryStatus::from_code(7), EntryStatus::Abandoned);
        assert_eq!(EntryStatus::from_name("in context"), None);
    }
}
