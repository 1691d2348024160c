//! The object as Lua sees it: Argo CD's `decodeValue`, reproduced.
//!
//! Objects become tables keyed by strings (a `null` field is absent), arrays become
//! tables filled like gopher-lua's `Append`, which skips `nil` (so `[1, null, 2]` is
//! `{1, 2}`), numbers become float64, `null` becomes `nil`.
//!
//! The conversion walks the value with an explicit stack, so that a deeply nested
//! object overflows neither the Rust stack nor mlua's stack of live references: the
//! tables waiting for children are held in the Lua registry.

use mlua::{Lua, RegistryKey, Table};
use serde_json::Value;

/// The deepest nesting of objects and arrays accepted, the limit of Go's JSON scanner
/// (`maxNestingDepth`), which every JSON object Argo CD handles has passed.
pub const MAX_OBJECT_DEPTH: usize = 10_000;

/// Why the object could not be converted.
pub(super) enum ConversionError {
    TooDeep,
    Lua(mlua::Error),
}

impl From<mlua::Error> for ConversionError {
    fn from(error: mlua::Error) -> Self {
        ConversionError::Lua(error)
    }
}

/// A container whose children are being converted.
enum Frame<'v> {
    Object(RegistryKey, serde_json::map::Iter<'v>),
    Array(RegistryKey, std::slice::Iter<'v, Value>, usize),
}

/// `value` as a Lua value of `lua`.
pub(super) fn to_lua(lua: &Lua, value: &Value) -> Result<mlua::Value, ConversionError> {
    let Some((root, root_frame)) = frame(lua, value)? else {
        return Ok(scalar(lua, value)?);
    };
    let mut stack = vec![root_frame];
    while let Some(top) = stack.last_mut() {
        let next = match top {
            Frame::Object(_, fields) => fields.next().map(|(key, child)| (Key::Field(key), child)),
            Frame::Array(_, items, len) => items.find(|item| !item.is_null()).map(|child| {
                *len += 1;
                (Key::Index(*len), child)
            }),
        };
        let Some((key, child)) = next else {
            stack.pop();
            continue;
        };
        let table: Table = lua.registry_value(top.table())?;
        let converted = match frame(lua, child)? {
            None => scalar(lua, child)?,
            Some((child_table, child_frame)) => {
                if stack.len() >= MAX_OBJECT_DEPTH {
                    return Err(ConversionError::TooDeep);
                }
                stack.push(child_frame);
                mlua::Value::Table(child_table)
            }
        };
        match key {
            // A `null` field is an absent key (gopher-lua's `RawSetH` with nil deletes).
            Key::Field(_) if converted.is_nil() => {}
            Key::Field(name) => table.raw_set(lua.create_string(name)?, converted)?,
            Key::Index(index) => table.raw_set(index, converted)?,
        }
    }
    Ok(mlua::Value::Table(root))
}

enum Key<'v> {
    Field(&'v str),
    Index(usize),
}

impl Frame<'_> {
    fn table(&self) -> &RegistryKey {
        match self {
            Frame::Object(table, _) | Frame::Array(table, _, _) => table,
        }
    }
}

/// For an object or an array, a new table and the frame that fills it; `None` for a
/// scalar.
fn frame<'v>(lua: &Lua, value: &'v Value) -> mlua::Result<Option<(Table, Frame<'v>)>> {
    let (table, frame) = match value {
        Value::Array(items) => {
            let table = lua.create_table_with_capacity(items.len(), 0)?;
            let key = lua.create_registry_value(&table)?;
            (table, Frame::Array(key, items.iter(), 0))
        }
        Value::Object(fields) => {
            let table = lua.create_table_with_capacity(0, fields.len())?;
            let key = lua.create_registry_value(&table)?;
            (table, Frame::Object(key, fields.iter()))
        }
        _ => return Ok(None),
    };
    Ok(Some((table, frame)))
}

/// A scalar's Lua value (`nil` for `null`; containers are handled by [`frame`]).
fn scalar(lua: &Lua, value: &Value) -> mlua::Result<mlua::Value> {
    Ok(match value {
        Value::Bool(b) => mlua::Value::Boolean(*b),
        Value::Number(n) => mlua::Value::Number(json_number(n)),
        Value::String(s) => mlua::Value::String(lua.create_string(s)?),
        Value::Null | Value::Array(_) | Value::Object(_) => mlua::Value::Nil,
    })
}

/// The float64 Argo CD's VM holds for a JSON number (`int64` and big integers convert
/// with round-to-nearest, like `as f64`), as nbv-core's native mapping reads it.
fn json_number(number: &serde_json::Number) -> f64 {
    // `as_f64` only fails with serde_json's `arbitrary_precision`, which nbv does not use.
    number.as_f64().unwrap_or(f64::NAN)
}
