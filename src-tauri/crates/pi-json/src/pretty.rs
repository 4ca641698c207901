//! `JSON.stringify(v, null, 2)`: the pretty form Pi writes settings files in.

use crate::value::Value;
use crate::write::{write_str, write_value};

/// `JSON.stringify(value, null, 2)`.
pub fn to_pretty(v: &Value) -> String {
    let mut out = String::new();
    pretty(&mut out, v, 0);
    out
}

fn pretty(out: &mut String, v: &Value, ind: usize) {
    match v {
        Value::Arr(a) if !a.is_empty() => {
            out.push_str("[\n");
            for (i, x) in a.iter().enumerate() {
                out.push_str(&" ".repeat(ind + 2));
                pretty(out, x, ind + 2);
                if i + 1 < a.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            out.push_str(&" ".repeat(ind));
            out.push(']');
        }
        Value::Obj(m) if !m.is_empty() => {
            out.push_str("{\n");
            for (i, (k, x)) in m.0.iter().enumerate() {
                out.push_str(&" ".repeat(ind + 2));
                write_str(out, k);
                out.push_str(": ");
                pretty(out, x, ind + 2);
                if i + 1 < m.len() {
                    out.push(',');
                }
                out.push('\n');
            }
            out.push_str(&" ".repeat(ind));
            out.push('}');
        }
        other => write_value(out, other),
    }
}
