//! A JSON value as a health script sees it through Argo CD's `obj`.
//!
//! Argo CD hands the live object to Lua with its own `decodeValue`: objects become
//! tables keyed by strings, arrays become tables filled with `Append` (which skips
//! `nil`, so `[1, null, 2]` is the two-element `{1, 2}`), numbers become float64,
//! `null` becomes `nil` (a `null` field is absent). This module answers, for such a
//! value, the few questions the shipped scripts ask: index, length, `ipairs`,
//! truthiness, equality with a string literal, and concatenation.

use std::borrow::Cow;

use serde_json::Value;

use super::{LuaType, NumberFormat, RuntimeErrorKind, ScriptError};

/// The float64 Argo CD's VM holds for a JSON number (`int64` and big integers convert
/// with round-to-nearest, like `as f64`).
pub(crate) fn json_number(number: &serde_json::Number) -> f64 {
    // `as_f64` only fails with serde_json's `arbitrary_precision`, which nbv does not use.
    number.as_f64().unwrap_or(f64::NAN)
}

/// The functions of Lua 5.1's `string` table: with the standard libraries open, indexing
/// a string looks these up through the string metatable.
const STRING_LIBRARY: [&str; 15] = [
    "byte", "char", "dump", "find", "format", "gfind", "gmatch", "gsub", "len", "lower", "match",
    "rep", "reverse", "sub", "upper",
];

/// A Lua value derived from JSON (or produced by the script from such values).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum LuaView<'a> {
    Nil,
    Boolean(bool),
    Number(f64),
    String(Cow<'a, str>),
    /// A JSON object or array.
    Table(&'a Value),
    /// A string-library function, reached by indexing a string with the libraries open.
    Function,
}

impl<'a> LuaView<'a> {
    pub(crate) fn of(value: &'a Value) -> Self {
        match value {
            Value::Null => LuaView::Nil,
            Value::Bool(b) => LuaView::Boolean(*b),
            Value::Number(n) => LuaView::Number(json_number(n)),
            Value::String(s) => LuaView::String(Cow::Borrowed(s)),
            Value::Array(_) | Value::Object(_) => LuaView::Table(value),
        }
    }

    pub(crate) fn text(text: impl Into<Cow<'a, str>>) -> Self {
        LuaView::String(text.into())
    }

    pub(crate) fn lua_type(&self) -> LuaType {
        match self {
            LuaView::Nil => LuaType::Nil,
            LuaView::Boolean(_) => LuaType::Boolean,
            LuaView::Number(_) => LuaType::Number,
            LuaView::String(_) => LuaType::String,
            LuaView::Table(_) => LuaType::Table,
            LuaView::Function => LuaType::Function,
        }
    }

    pub(crate) fn is_nil(&self) -> bool {
        matches!(self, LuaView::Nil)
    }

    /// Lua truthiness: only `nil` and `false` are false; `""` and `0` are true.
    pub(crate) fn is_truthy(&self) -> bool {
        !matches!(self, LuaView::Nil | LuaView::Boolean(false))
    }

    /// `value == "literal"`: Lua never converts between strings and numbers for `==`.
    pub(crate) fn equals(&self, literal: &str) -> bool {
        matches!(self, LuaView::String(s) if s == literal)
    }

    /// `value.key`, where `subject` is how the script spells `value`.
    pub(crate) fn index(
        &self,
        key: &str,
        subject: &'static str,
        open_libs: bool,
    ) -> Result<LuaView<'a>, ScriptError> {
        match self {
            LuaView::Table(Value::Object(fields)) => {
                Ok(fields.get(key).map_or(LuaView::Nil, LuaView::of))
            }
            // An array's table has integer keys only.
            LuaView::Table(_) => Ok(LuaView::Nil),
            // Only the string library gives strings a metatable, and Argo CD's
            // production VM does not open it.
            LuaView::String(_) if open_libs => Ok(if STRING_LIBRARY.contains(&key) {
                LuaView::Function
            } else {
                LuaView::Nil
            }),
            other => Err(ScriptError::new(
                RuntimeErrorKind::Index,
                subject,
                other.lua_type(),
            )),
        }
    }

    /// `#value`: bytes of a string, elements of an array's table, 0 for an object's.
    pub(crate) fn length(&self, subject: &'static str) -> Result<usize, ScriptError> {
        match self {
            LuaView::String(s) => Ok(s.len()),
            LuaView::Table(Value::Array(items)) => {
                Ok(items.iter().filter(|v| !v.is_null()).count())
            }
            LuaView::Table(_) => Ok(0),
            other => Err(ScriptError::new(
                RuntimeErrorKind::Length,
                subject,
                other.lua_type(),
            )),
        }
    }

    /// `ipairs(value)`: the elements of an array's table in order, none for an
    /// object's (its keys are strings, so `value[1]` is `nil`).
    pub(crate) fn ipairs(
        &self,
        subject: &'static str,
    ) -> Result<impl Iterator<Item = LuaView<'a>>, ScriptError> {
        let items: &'a [Value] = match self {
            LuaView::Table(Value::Array(items)) => items,
            LuaView::Table(_) => &[],
            other => {
                return Err(ScriptError::new(
                    RuntimeErrorKind::BadArgument,
                    subject,
                    other.lua_type(),
                ));
            }
        };
        Ok(items.iter().filter(|v| !v.is_null()).map(LuaView::of))
    }
}

impl<'a> From<&'static str> for LuaView<'a> {
    fn from(text: &'static str) -> Self {
        LuaView::text(text)
    }
}

impl<'a> From<String> for LuaView<'a> {
    fn from(text: String) -> Self {
        LuaView::text(text)
    }
}

/// One operand of a `..` chain: its value and how the script spells it.
pub(crate) type Operand<'v, 'a> = (&'v LuaView<'a>, &'static str);

/// `a .. b .. c`: strings as they are, numbers formatted by `numbers`; anything else is
/// an error. Lua checks the operands from the right, so the error names the rightmost
/// offender.
pub(crate) fn concat(
    operands: &[Operand<'_, '_>],
    numbers: NumberFormat,
) -> Result<String, ScriptError> {
    if let Some((bad, subject)) = operands
        .iter()
        .rev()
        .find(|(value, _)| !matches!(value, LuaView::String(_) | LuaView::Number(_)))
    {
        return Err(ScriptError::new(
            RuntimeErrorKind::Concatenate,
            subject,
            bad.lua_type(),
        ));
    }
    Ok(operands
        .iter()
        .map(|(value, _)| match value {
            LuaView::String(s) => s.clone(),
            LuaView::Number(n) => Cow::Owned(numbers.format(*n)),
            _ => Cow::Borrowed(""),
        })
        .collect())
}
