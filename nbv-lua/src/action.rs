//! Argo CD's resource actions, run as argocd-server runs them: a discovery script
//! that lists the actions of an object, and an action script that returns the object
//! changed (or, in the newer form, a list of resources to patch or create).
//!
//! What argocd-server does with the results is reproduced too: the discovery table is
//! read as Go decodes it into `ResourceAction`s, a patched object is cleaned of the
//! empty arrays Lua made of empty maps (`cleanReturnedObj`), and the write is the JSON
//! merge patch from the live object to the returned one ([`merge_patch`]).

use std::collections::BTreeMap;

use mlua::{Lua, Value};
use nbv_core::health::{LuaType, go_json_key_matches};
use serde_json::Map;

use crate::encode::to_json;
use crate::outcome::{Unreadable, lua_type};
use crate::{EncodeError, EvalOptions, Failed, HealthScriptError, execute};

/// An action a discovery script offers (Argo CD's `ResourceAction`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ResourceAction {
    /// The action's name, the key of the discovery table.
    pub name: String,
    /// Whether the UI shows it greyed out.
    pub disabled: bool,
    /// The name the UI shows, when it differs from `name`.
    pub display_name: Option<String>,
    /// The icon's CSS class.
    pub icon_class: Option<String>,
    /// The parameters the UI asks for.
    pub params: Vec<ActionParam>,
}

/// A parameter of a [`ResourceAction`] (Argo CD's `ResourceActionParam`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct ActionParam {
    /// Its name, the key in `actionParams`.
    pub name: String,
    /// Its value.
    pub value: Option<String>,
    /// Its type, as the UI reads it.
    pub type_: Option<String>,
    /// The value the UI proposes.
    pub default: Option<String>,
}

/// What argocd-server does with a resource an action returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    /// Patch the resource with the merge patch from the live object.
    Patch,
    /// Create the resource.
    Create,
}

/// A resource an action returned, with what argocd-server does with it.
#[derive(Clone, Debug, PartialEq)]
pub struct ImpactedResource {
    /// Patch or create.
    pub operation: Operation,
    /// The resource as the action returned it (cleaned for a patch, as Argo CD does).
    pub object: serde_json::Value,
}

/// Why a discovery or action script gave no result.
///
/// # Examples
///
/// ```
/// use nbv_lua::{ActionScriptError, LuaActionRunner};
///
/// let error = LuaActionRunner::default()
///     .run("bad", "return 7", &serde_json::json!({}), &Default::default())
///     .unwrap_err();
/// assert!(matches!(error, ActionScriptError::NotATable { .. }));
/// assert!(error.to_string().contains("expect table output from Lua script, not number"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ActionScriptError {
    /// The script does not compile, raised an error, or was stopped.
    #[error(transparent)]
    Script(#[from] HealthScriptError),
    /// The script returned something other than a table.
    #[error(
        "Lua script {script:?} returned a {found}; Argo CD reports \"expect table output from \
         Lua script, not {found}\". A discovery script returns a table of actions, an action \
         script the object (or a list of {{operation = ..., resource = ...}})"
    )]
    NotATable {
        /// The script's name.
        script: String,
        /// The type it returned.
        found: LuaType,
    },
    /// The returned table cannot be encoded to JSON.
    #[error("Lua script {script:?} returned a table Argo CD cannot encode to JSON: {reason}")]
    Encode {
        /// The script's name.
        script: String,
        /// What gopher-json objects to.
        reason: EncodeError,
    },
    /// The returned table encodes, but not to what Argo CD decodes it into.
    #[error("Lua script {script:?} returned a table Argo CD cannot use: {problem}")]
    Invalid {
        /// The script's name.
        script: String,
        /// What Argo CD's decoding objects to.
        problem: String,
    },
}

/// Runs discovery and action scripts with fixed [`EvalOptions`] (Argo CD's production
/// VM by default, as argocd-server runs actions).
///
/// # Examples
///
/// ```
/// use nbv_lua::{LuaActionRunner, merge_patch};
/// use serde_json::json;
///
/// let runner = LuaActionRunner::default();
/// let live = json!({"metadata": {"name": "a", "labels": {}}, "spec": {"n": 1}});
/// let actions = runner.discover("discovery.lua", r#"return {bump = {displayName = "Bump"}}"#, &live)?;
/// assert_eq!((actions[0].name.as_str(), actions[0].display_name.as_deref()), ("bump", Some("Bump")));
///
/// let bumped = runner.run("bump", "obj.spec.n = obj.spec.n + 1 return obj", &live, &Default::default())?;
/// // The empty map Lua returned as an empty array is a map again.
/// assert_eq!(bumped[0].object["metadata"]["labels"], json!({}));
/// assert_eq!(merge_patch(&live, &bumped[0].object), json!({"spec": {"n": 2}}));
/// # Ok::<(), nbv_lua::ActionScriptError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LuaActionRunner {
    options: EvalOptions,
}

impl LuaActionRunner {
    /// A runner with `options`.
    pub fn new(options: EvalOptions) -> Self {
        LuaActionRunner { options }
    }

    /// The actions the discovery script `source` (named `name`) offers for `obj`,
    /// sorted by name.
    ///
    /// # Errors
    ///
    /// [`ActionScriptError`] when the script fails, returns no table, or a table Argo
    /// CD cannot decode into actions (an array, or a field of the wrong type).
    pub fn discover(
        &self,
        name: &str,
        source: &str,
        obj: &serde_json::Value,
    ) -> Result<Vec<ResourceAction>, ActionScriptError> {
        let json = self.returned(name, source, obj, None)?;
        let invalid = |problem: String| ActionScriptError::Invalid {
            script: name.to_owned(),
            problem,
        };
        let serde_json::Value::Object(actions) = json else {
            return Err(invalid(
                "json: cannot unmarshal array into Go value of type map[string]interface {} \
                 (return a table keyed by action name; an empty table is an array)"
                    .to_owned(),
            ));
        };
        let mut found = Vec::with_capacity(actions.len());
        for (action, value) in actions {
            found.push(resource_action(action, &value).map_err(invalid)?);
        }
        found.sort();
        Ok(found)
    }

    /// Runs the action script `source` (named `name`) on `obj` with `params` as
    /// `actionParams`: the resources it patches or creates.
    ///
    /// # Errors
    ///
    /// [`ActionScriptError`] when the script fails or returns something Argo CD
    /// cannot use.
    pub fn run(
        &self,
        name: &str,
        source: &str,
        obj: &serde_json::Value,
        params: &BTreeMap<String, String>,
    ) -> Result<Vec<ImpactedResource>, ActionScriptError> {
        let invalid = |problem: String| ActionScriptError::Invalid {
            script: name.to_owned(),
            problem,
        };
        match self.returned(name, source, obj, Some(params))? {
            // The older form: the object itself, to patch.
            serde_json::Value::Object(returned) => Ok(vec![ImpactedResource {
                operation: Operation::Patch,
                object: clean(returned, obj),
            }]),
            serde_json::Value::Array(items) if items.is_empty() => Err(invalid(
                "Lua output was not a valid json object or array (an empty table)".to_owned(),
            )),
            serde_json::Value::Array(items) => items
                .into_iter()
                .map(|item| impacted(item, obj).map_err(invalid))
                .collect(),
            other => Err(invalid(format!("unexpected result {other}"))),
        }
    }

    fn returned(
        &self,
        name: &str,
        source: &str,
        obj: &serde_json::Value,
        params: Option<&BTreeMap<String, String>>,
    ) -> Result<serde_json::Value, ActionScriptError> {
        let run = execute(&self.options, name, source, obj, params, read_table)?;
        run.value.map_err(|rejected| match rejected {
            Rejected::NotATable(found) => ActionScriptError::NotATable {
                script: name.to_owned(),
                found,
            },
            Rejected::Encode(reason) => ActionScriptError::Encode {
                script: name.to_owned(),
                reason,
            },
        })
    }
}

/// Why a returned value is not a table Argo CD can encode.
enum Rejected {
    NotATable(LuaType),
    Encode(EncodeError),
}

fn read_table(lua: &Lua, last: Value) -> Result<Result<serde_json::Value, Rejected>, Failed> {
    if !matches!(last, Value::Table(_)) {
        return Ok(Err(Rejected::NotATable(lua_type(&last))));
    }
    match to_json(lua, last) {
        Ok(json) => Ok(Ok(json)),
        Err(Unreadable::Encode(reason)) => Ok(Err(Rejected::Encode(reason))),
        Err(Unreadable::NotATable(found)) => Ok(Err(Rejected::NotATable(found))),
        Err(Unreadable::Lua(error)) => Err(Failed::Vm(error)),
    }
}

/// One entry of the discovery table, decoded as Go decodes it into `ResourceAction`:
/// keys match case-insensitively, and a field of the wrong type is an error.
fn resource_action(name: String, value: &serde_json::Value) -> Result<ResourceAction, String> {
    let mut action = ResourceAction {
        name,
        ..ResourceAction::default()
    };
    // `{}` and `{true}`-like sequences are arrays: an action with no settings.
    let serde_json::Value::Object(fields) = value else {
        return Ok(action);
    };
    if let Some(name) = string_field(fields, "name")? {
        action.name = name;
    }
    action.disabled = match field(fields, "disabled") {
        None | Some(serde_json::Value::Null) => false,
        Some(serde_json::Value::Bool(disabled)) => *disabled,
        Some(other) => return Err(type_error("disabled", "bool", other)),
    };
    action.display_name = string_field(fields, "displayName")?;
    action.icon_class = string_field(fields, "iconClass")?;
    action.params = match field(fields, "params") {
        None | Some(serde_json::Value::Null) => Vec::new(),
        Some(serde_json::Value::Array(params)) => params
            .iter()
            .map(|param| match param {
                serde_json::Value::Object(param) => Ok(ActionParam {
                    name: string_field(param, "name")?.unwrap_or_default(),
                    value: string_field(param, "value")?,
                    type_: string_field(param, "type")?,
                    default: string_field(param, "default")?,
                }),
                other => Err(type_error("params", "ResourceActionParam", other)),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(type_error("params", "[]ResourceActionParam", other)),
    };
    Ok(action)
}

/// The value of the key Go's decoder assigns to the field `go_name`: of the keys that
/// match it case-insensitively, the last in the encoder's (sorted) order.
fn field<'a>(
    fields: &'a Map<String, serde_json::Value>,
    go_name: &str,
) -> Option<&'a serde_json::Value> {
    fields
        .iter()
        .filter(|(key, _)| go_json_key_matches(key, go_name))
        .max_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()))
        .map(|(_, value)| value)
}

fn string_field(
    fields: &Map<String, serde_json::Value>,
    go_name: &str,
) -> Result<Option<String>, String> {
    match field(fields, go_name) {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(serde_json::Value::String(text)) => Ok(Some(text.clone())),
        Some(other) => Err(type_error(go_name, "string", other)),
    }
}

fn type_error(field: &str, go_type: &str, value: &serde_json::Value) -> String {
    let found = match value {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    };
    format!("json: cannot unmarshal {found} into Go struct field of type {go_type} ({field})")
}

/// One entry of the newer form, `{operation = "patch"|"create", resource = {...}}`.
fn impacted(item: serde_json::Value, live: &serde_json::Value) -> Result<ImpactedResource, String> {
    let serde_json::Value::Object(mut item) = item else {
        return Err("an entry of the returned list is not a table".to_owned());
    };
    let operation = match item.remove("operation") {
        Some(serde_json::Value::String(op)) if op == "patch" => Operation::Patch,
        Some(serde_json::Value::String(op)) if op == "create" => Operation::Create,
        other => {
            return Err(format!(
                "unsupported operation {}: use \"patch\" or \"create\"",
                other.map_or_else(|| "(none)".to_owned(), |v| v.to_string())
            ));
        }
    };
    let object = match item.remove("resource") {
        Some(serde_json::Value::Object(resource)) => match operation {
            Operation::Patch => clean(resource, live),
            Operation::Create => serde_json::Value::Object(resource),
        },
        _ => return Err("an entry of the returned list has no resource table".to_owned()),
    };
    Ok(ImpactedResource { operation, object })
}

/// Argo CD's `cleanReturnedObj`: Lua cannot tell an empty map from an empty array and
/// gopher-json writes `[]`; where the original held a map, the original map is kept.
fn clean(
    returned: Map<String, serde_json::Value>,
    original: &serde_json::Value,
) -> serde_json::Value {
    let serde_json::Value::Object(original) = original else {
        return serde_json::Value::Object(returned);
    };
    let cleaned = returned
        .into_iter()
        .map(|(key, value)| {
            let value = match (value, original.get(&key)) {
                (serde_json::Value::Object(new), Some(old @ serde_json::Value::Object(_))) => {
                    clean(new, old)
                }
                (serde_json::Value::Array(new), Some(serde_json::Value::Object(old)))
                    if new.is_empty() =>
                {
                    serde_json::Value::Object(old.clone())
                }
                (serde_json::Value::Array(new), Some(serde_json::Value::Array(old))) => {
                    clean_array(new, old)
                }
                (value, _) => value,
            };
            (key, value)
        })
        .collect();
    serde_json::Value::Object(cleaned)
}

/// Argo CD's `cleanReturnedArray`: items matched by position.
fn clean_array(
    returned: Vec<serde_json::Value>,
    original: &[serde_json::Value],
) -> serde_json::Value {
    let cleaned = returned
        .into_iter()
        .enumerate()
        .map(|(i, value)| match (value, original.get(i)) {
            (serde_json::Value::Object(new), Some(old @ serde_json::Value::Object(_))) => {
                clean(new, old)
            }
            (serde_json::Value::Array(new), Some(serde_json::Value::Array(old))) => {
                clean_array(new, old)
            }
            (value, _) => value,
        })
        .collect();
    serde_json::Value::Array(cleaned)
}

/// The JSON merge patch (RFC 7386) that turns `live` into `new`, as argocd-server
/// computes it (`jsonpatch.CreateMergePatch`) before it patches the resource: changed
/// and added fields, `null` for removed ones, arrays replaced whole; `{}` when nothing
/// changed.
///
/// # Examples
///
/// ```
/// use nbv_lua::merge_patch;
/// use serde_json::json;
///
/// let live = json!({"metadata": {"annotations": {"a": "1", "b": "2"}}, "spec": {"x": [1, 2]}});
/// let new = json!({"metadata": {"annotations": {"a": "1", "c": "3"}}, "spec": {"x": [1]}});
/// assert_eq!(
///     merge_patch(&live, &new),
///     json!({"metadata": {"annotations": {"b": null, "c": "3"}}, "spec": {"x": [1]}})
/// );
/// assert_eq!(merge_patch(&live, &live), json!({}));
/// ```
pub fn merge_patch(live: &serde_json::Value, new: &serde_json::Value) -> serde_json::Value {
    let (serde_json::Value::Object(live), serde_json::Value::Object(new)) = (live, new) else {
        return new.clone();
    };
    let mut patch = Map::new();
    for (key, value) in new {
        match live.get(key) {
            Some(old) if old == value => {}
            Some(old @ serde_json::Value::Object(_)) if value.is_object() => {
                patch.insert(key.clone(), merge_patch(old, value));
            }
            _ => {
                patch.insert(key.clone(), value.clone());
            }
        }
    }
    for key in live.keys() {
        if !new.contains_key(key) {
            patch.insert(key.clone(), serde_json::Value::Null);
        }
    }
    serde_json::Value::Object(patch)
}
