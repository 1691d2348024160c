//! The value a script returns, read the way Argo CD reads it (see
//! [`crate::argocd`]): gopher-json's encoding rules, then Go's decoding into
//! `HealthStatus{Status, Message string}`.
//!
//! Only the outcome of that round trip matters (an error, an array, or the two string
//! fields), so the table is checked and read in place rather than encoded.

use std::collections::HashSet;

use mlua::{Lua, Table, Value};

use super::EncodeError;
use super::object::MAX_OBJECT_DEPTH;
use nbv_core::health::{HealthStatus, LuaType, go_json_key_matches};

use crate::argocd::{decoded_health, go_json_string};

/// Why Argo CD gets no health from a returned value.
pub(super) enum Unreadable {
    NotATable(LuaType),
    Encode(EncodeError),
    /// The VM failed while the table was read (out of memory).
    Lua(mlua::Error),
}

impl From<EncodeError> for Unreadable {
    fn from(error: EncodeError) -> Self {
        Unreadable::Encode(error)
    }
}

impl From<mlua::Error> for Unreadable {
    fn from(error: mlua::Error) -> Self {
        Unreadable::Lua(error)
    }
}

/// The health Argo CD derives from `returned`, the script's last return value.
///
/// `Ok(None)` is Argo CD's empty health status: `nil`, a table that encodes as a JSON
/// array (the empty table among them), or a `status`/`message` that is not a string.
pub(super) fn read(lua: &Lua, returned: Value) -> Result<Option<HealthStatus>, Unreadable> {
    match returned {
        Value::Nil => Ok(None),
        Value::Table(table) => match check_encodable(lua, &table)? {
            // `json.Unmarshal` of an array into a struct is a type error.
            Shape::Array => Ok(None),
            Shape::Object => Ok(decode_fields(&table)),
        },
        other => Err(Unreadable::NotATable(lua_type(&other))),
    }
}

/// How gopher-json encodes a table.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// Empty, or keys exactly `1..n`.
    Array,
    /// String keys only.
    Object,
}

/// Checks that every table reachable from `root` encodes, and returns `root`'s shape.
///
/// The walk keeps the tables still to visit in the Lua registry, so that a wide or deep
/// result exhausts neither the Rust stack nor mlua's stack of live references.
pub(super) fn check_encodable(lua: &Lua, root: &Table) -> Result<Shape, Unreadable> {
    let mut visited = HashSet::from([root.to_pointer()]);
    let mut pending = vec![(lua.create_registry_value(root)?, 1_usize)];
    let mut root_shape = None;
    while let Some((entry, depth)) = pending.pop() {
        let table: Table = lua.registry_value(&entry)?;
        let mut keys = KeyCensus::default();
        let mut problem = None;
        let walked = table.for_each(|key: Value, value: Value| {
            keys.count(&key);
            match value {
                Value::Table(child) => {
                    // gopher-json refuses a table it meets a second time, cycle or not.
                    if !visited.insert(child.to_pointer()) {
                        problem.get_or_insert(EncodeError::Nested);
                    } else if depth + 1 > MAX_OBJECT_DEPTH {
                        problem.get_or_insert(EncodeError::TooDeep);
                    } else {
                        pending.push((lua.create_registry_value(child)?, depth + 1));
                    }
                }
                Value::Number(n) if !n.is_finite() => {
                    problem.get_or_insert(EncodeError::NonFiniteNumber);
                }
                Value::Nil
                | Value::Boolean(_)
                | Value::Integer(_)
                | Value::Number(_)
                | Value::String(_) => {}
                other => {
                    let found = lua_type(&other);
                    problem.get_or_insert(EncodeError::Unsupported { found });
                }
            }
            Ok(())
        });
        walked?;
        if let Some(problem) = problem {
            return Err(problem.into());
        }
        let shape = keys.shape()?;
        root_shape.get_or_insert(shape);
    }
    Ok(root_shape.unwrap_or(Shape::Array))
}

/// The shape of `table` alone, from its keys.
pub(super) fn shape_of(table: &Table) -> Result<Shape, Unreadable> {
    let mut keys = KeyCensus::default();
    table.for_each(|key: Value, _: Value| {
        keys.count(&key);
        Ok(())
    })?;
    Ok(keys.shape()?)
}

/// The keys of one table, as gopher-json classifies them.
#[derive(Default)]
struct KeyCensus {
    strings: usize,
    /// Number keys that are integers of at least 1, and the highest of them.
    positions: usize,
    highest_position: f64,
    /// Number keys that cannot be positions of a sequence (0, negative, fractional).
    off_sequence: bool,
    /// The type of a key that is neither a string nor a number.
    other: Option<LuaType>,
}

impl KeyCensus {
    fn count(&mut self, key: &Value) {
        let number = match key {
            Value::String(_) => {
                self.strings += 1;
                return;
            }
            Value::Integer(i) => *i as f64,
            Value::Number(n) => *n,
            other => {
                self.other = self.other.or(Some(lua_type(other)));
                return;
            }
        };
        if number >= 1.0 && number.fract() == 0.0 {
            self.positions += 1;
            self.highest_position = self.highest_position.max(number);
        } else {
            self.off_sequence = true;
        }
    }

    fn shape(&self) -> Result<Shape, EncodeError> {
        if let Some(found) = self.other {
            return Err(EncodeError::InvalidKeys { found });
        }
        let numbers = self.positions + usize::from(self.off_sequence);
        match (self.strings, numbers) {
            (0, 0) => Ok(Shape::Array),
            (_, 0) => Ok(Shape::Object),
            // Keys are distinct, so n positions whose highest is n are exactly 1..n.
            (0, _) if !self.off_sequence && self.highest_position == self.positions as f64 => {
                Ok(Shape::Array)
            }
            (0, _) => Err(EncodeError::SparseArray),
            _ => Err(EncodeError::InvalidKeys {
                found: LuaType::Number,
            }),
        }
    }
}

/// Go's `json.Unmarshal` of the encoded object into `HealthStatus`: keys match the
/// fields case-insensitively, in the order `json.Marshal` writes them (sorted bytes), so
/// the last matching key wins; a value that is not a string is a type error, which
/// Argo CD answers with an empty health status (`None`).
fn decode_fields(table: &Table) -> Option<HealthStatus> {
    let mut matches: Vec<(Vec<u8>, Field, Value)> = Vec::new();
    // Iterating a plain table cannot fail; were it to, no field would be read.
    let _ = table.for_each(|key: Value, value: Value| {
        if let Value::String(key) = key {
            let bytes = key.as_bytes().to_vec();
            if let Ok(name) = std::str::from_utf8(&bytes) {
                let field = if go_json_key_matches(name, "status") {
                    Some(Field::Status)
                } else if go_json_key_matches(name, "message") {
                    Some(Field::Message)
                } else {
                    None
                };
                if let Some(field) = field {
                    matches.push((bytes, field, value));
                }
            }
        }
        Ok(())
    });
    matches.sort_by(|a, b| a.0.cmp(&b.0));
    let (mut status, mut message) = (None, None);
    for (_, field, value) in matches {
        let Value::String(text) = value else {
            return None;
        };
        let text = go_json_string(&text.as_bytes());
        match field {
            Field::Status => status = Some(text),
            Field::Message => message = Some(text),
        }
    }
    Some(decoded_health(
        status.as_deref(),
        message.unwrap_or_default(),
    ))
}

#[derive(Clone, Copy)]
enum Field {
    Status,
    Message,
}

/// The type Lua's `type()` reports for a value.
pub(super) fn lua_type(value: &Value) -> LuaType {
    match value {
        Value::Nil => LuaType::Nil,
        Value::Boolean(_) => LuaType::Boolean,
        Value::Integer(_) | Value::Number(_) => LuaType::Number,
        Value::String(_) => LuaType::String,
        Value::Table(_) => LuaType::Table,
        Value::Function(_) => LuaType::Function,
        Value::Thread(_) => LuaType::Thread,
        _ => LuaType::Userdata,
    }
}
