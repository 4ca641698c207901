//! v1 → v2 → v3 in memory, and the migrated file as Pi would write it.

use super::whitespace::js_trim_start;
use super::*;

impl Session {
    /// v1 → v2 → v3 in memory, exactly as Pi's `migrateToCurrentVersion` (§6.3).
    pub(super) fn migrate(&mut self, mut vals: Vec<(usize, u64, u64, Value)>, ids: &mut dyn IdSource) {
        self.migrated = true;
        let version = self.version_in_file.unwrap_or(1.0);
        if version < 2.0 {
            let mut taken: rustc_hash::FxHashSet<String> = Default::default();
            let mut prev: Option<String> = None;
            let n = vals.len();
            for i in 0..n {
                let is_session = vals[i].3.str_field("type") == Some("session");
                if is_session {
                    if let Value::Obj(m) = &mut vals[i].3 {
                        m.insert("version", Value::Num(2.0));
                    }
                    continue;
                }
                let id = ids.next_id(&|c| taken.contains(c));
                taken.insert(id.clone());
                let first_kept_target = if vals[i].3.str_field("type") == Some("compaction") {
                    match vals[i].3.get("firstKeptEntryIndex") {
                        Some(Value::Num(k)) => {
                            let k = *k;
                            let mut target = None;
                            if k >= 0.0 && k.fract() == 0.0 && (k as usize) < n {
                                let t = &vals[k as usize].3;
                                if t.str_field("type") != Some("session") {
                                    // Earlier objects already carry their new id; a forward index
                                    // sees the old one (usually absent, i.e. `undefined`).
                                    target = if (k as usize) == i {
                                        Some(Value::from(id.as_str()))
                                    } else {
                                        t.get("id").cloned()
                                    };
                                }
                            }
                            Some(target)
                        }
                        _ => None,
                    }
                } else {
                    None
                };
                if let Value::Obj(m) = &mut vals[i].3 {
                    m.insert("id", Value::from(id.as_str()));
                    m.insert("parentId", prev.clone().map(Value::from).unwrap_or(Value::Null));
                    if let Some(target) = first_kept_target {
                        if let Some(t) = target {
                            m.insert("firstKeptEntryId", t);
                        }
                        m.remove("firstKeptEntryIndex");
                    }
                }
                prev = Some(id);
            }
        }
        for (_, _, _, v) in vals.iter_mut() {
            let is_session = v.str_field("type") == Some("session");
            if let Value::Obj(m) = v {
                if is_session {
                    m.insert("version", Value::Num(3.0));
                    continue;
                }
                if m.get("type").and_then(Value::as_str) == Some("message") {
                    if let Some(Value::Obj(msg)) = m.0.iter_mut().find(|(k, _)| k == "message").map(|(_, v)| v) {
                        if msg.get("role").and_then(Value::as_str) == Some("hookMessage") {
                            msg.insert("role", Value::Str("custom".into()));
                        }
                    }
                }
            }
        }
        let mut header_done = false;
        for (line, start, end, v) in vals {
            if v.str_field("type") == Some("session") {
                if header_done {
                    self.diag(
                        line,
                        start as usize,
                        DiagnosticKind::ExtraHeader,
                        "a repeated session header; ignored, as Pi does".into(),
                    );
                }
                header_done = true;
                continue;
            }
            let Some(id) = v.str_field("id").map(str::to_string) else {
                self.diag(
                    line,
                    start as usize,
                    DiagnosticKind::InvalidEntry,
                    "an object without a string id; skipped".into(),
                );
                continue;
            };
            if !matches!(v, Value::Obj(_)) {
                continue;
            }
            let t = v.str_field("type").unwrap_or("").into();
            let parent = v.str_field("parentId").map(Into::into);
            let ts = v.str_field("timestamp").unwrap_or("").into();
            self.push_entry(start, end, line, t, id.into(), parent, ts, Some(v));
        }
    }

    /// The migrated file (header + entries) as Pi would write it back: one JSON line each.
    /// Only for legacy files; used by "save as v3 copy".
    pub fn migrated_lines(&self) -> Option<Vec<String>> {
        if !self.migrated {
            return None;
        }
        let h = self.header.as_ref()?;
        // Re-read the header object to keep its key order, then set version 3 as Pi does.
        let first = self.first_header_value()?;
        let mut header = first;
        if let Value::Obj(m) = &mut header {
            m.insert("version", Value::Num(3.0));
        }
        let _ = h;
        let mut out = vec![pi_json::to_string(&header)];
        for i in 0..self.entries.len() {
            out.push(pi_json::to_string(self.value(i)));
        }
        Some(out)
    }

    fn first_header_value(&self) -> Option<Value> {
        // A legacy session is read-only, so nothing was appended: the bytes read are all.
        let buf = self.buf.as_read();
        let t0 = js_trim_start(buf);
        for line in buf[t0..].split(|&b| b == b'\n') {
            if js_is_blank(line) {
                continue;
            }
            if let Ok(v) = pi_json::parse_bytes(line) {
                return Some(v);
            }
        }
        None
    }
}
