//! The JSON value: [`Value`] and the insertion-ordered [`Map`].

use crate::key::Key;

/// A JSON string's text: held inline, without an allocation, up to 24 bytes (ids, timestamps,
/// roles, types, model names, short tool arguments), on the heap beyond. A session of 1000
/// entries has about 9,700 string values, most of them that short: each was an allocation of
/// its own, and the open of a small file, which parses every line, paid for them and for the
/// pages they filled. Reads as a `str` (`Deref`), like the `String` it replaced.
pub type Str = compact_str::CompactString;

#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Num(f64),
    Str(Str),
    Arr(Vec<Value>),
    Obj(Map),
}

/// An insertion-ordered JSON object.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Map(pub Vec<(Key, Value)>);

impl Map {
    pub fn new() -> Self {
        Map(Vec::new())
    }
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
    }
    /// Sets a key: an existing key keeps its position (like assigning a JS property).
    pub fn insert(&mut self, key: impl Into<Key>, value: Value) {
        let key = key.into();
        if let Some(slot) = self.0.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
        } else {
            self.0.push((key, value));
        }
    }
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let pos = self.0.iter().position(|(k, _)| k.as_str() == key)?;
        Some(self.0.remove(pos).1)
    }
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Value {
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Obj(m) => m.get(key),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Num(n) => Some(*n),
            _ => None,
        }
    }
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Arr(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Obj(m) => Some(m),
            _ => None,
        }
    }
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    /// JavaScript truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Null => false,
            Value::Bool(b) => *b,
            Value::Num(n) => *n != 0.0 && !n.is_nan(),
            Value::Str(s) => !s.is_empty(),
            Value::Arr(_) | Value::Obj(_) => true,
        }
    }
    /// `get(key)` and then a string, the common case for entry fields.
    pub fn str_field(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
    pub fn num_field(&self, key: &str) -> Option<f64> {
        self.get(key).and_then(Value::as_f64)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(Str::new(s))
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(Str::from(s))
    }
}
impl From<Str> for Value {
    fn from(s: Str) -> Self {
        Value::Str(s)
    }
}
impl From<f64> for Value {
    fn from(n: f64) -> Self {
        Value::Num(n)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

/// Builds an object from `(key, value)` pairs in the given order.
pub fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Obj(Map(pairs.into_iter().map(|(k, v)| (Key::new(k), v)).collect()))
}
