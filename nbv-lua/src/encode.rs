//! A returned table as JSON, encoded as gopher-json encodes it and Go decodes it back.
//!
//! The table is first checked whole ([`check_encodable`]), so that the conversion
//! only meets what gopher-json accepts: an empty table or a sequence `1..n` is an
//! array, a table with string keys an object, numbers are float64 (integral ones come
//! back as integers), and strings with bytes that are not UTF-8 get U+FFFD.

use mlua::{Lua, Table, Value};

use crate::EncodeError;
use crate::argocd::go_json_string;
use crate::outcome::{Shape, Unreadable, check_encodable, lua_type, shape_of};

/// Deepest nesting converted. Lower than [`MAX_OBJECT_DEPTH`](crate::MAX_OBJECT_DEPTH),
/// Argo CD's limit, because this conversion recurses; it is serde_json's own limit, so
/// every object read from JSON or YAML fits.
const MAX_RESULT_DEPTH: usize = 128;

/// The JSON Argo CD gets from `value`, a script's last return value.
pub(super) fn to_json(lua: &Lua, value: Value) -> Result<serde_json::Value, Unreadable> {
    if let Value::Table(table) = &value {
        check_encodable(lua, table)?;
    }
    convert(lua, value, 0)
}

fn convert(lua: &Lua, value: Value, depth: usize) -> Result<serde_json::Value, Unreadable> {
    Ok(match value {
        Value::Nil => serde_json::Value::Null,
        Value::Boolean(b) => serde_json::Value::Bool(b),
        Value::Integer(i) => serde_json::Value::from(i),
        Value::Number(n) => number(n),
        Value::String(s) => serde_json::Value::String(go_json_string(&s.as_bytes())),
        Value::Table(table) => {
            if depth >= MAX_RESULT_DEPTH {
                return Err(EncodeError::TooDeep.into());
            }
            table_to_json(lua, &table, depth + 1)?
        }
        other => {
            return Err(EncodeError::Unsupported {
                found: lua_type(&other),
            }
            .into());
        }
    })
}

fn table_to_json(lua: &Lua, table: &Table, depth: usize) -> Result<serde_json::Value, Unreadable> {
    match shape_of(table)? {
        Shape::Array => {
            let mut items = Vec::new();
            for index in 1..=table.raw_len() {
                items.push(convert(lua, table.raw_get(index)?, depth)?);
            }
            Ok(serde_json::Value::Array(items))
        }
        Shape::Object => {
            let mut map = serde_json::Map::new();
            for pair in table.pairs::<Value, Value>() {
                let (key, value) = pair?;
                if let Value::String(key) = key {
                    map.insert(go_json_string(&key.as_bytes()), convert(lua, value, depth)?);
                }
            }
            Ok(serde_json::Value::Object(map))
        }
    }
}

/// A float64 as Go decodes its JSON into an unstructured object: integral values in
/// range as integers.
fn number(n: f64) -> serde_json::Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if n.fract() == 0.0 && n.abs() <= EXACT {
        serde_json::Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}
