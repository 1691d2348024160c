//! What argocd-server does when a user runs a resource action: it lists the object's
//! actions with the discovery script, refuses one that is not offered or is disabled,
//! runs the action's script, and writes each resource it returned: a JSON merge patch
//! from the live object for `patch`, the object for `create`.

use std::collections::BTreeMap;

use nbv_lua::{ActionScriptError, LuaActionRunner, Operation, ResourceAction, merge_patch};
use serde_json::Value;

/// The scripts of one kind's actions: `discovery.lua` and each action's `action.lua`.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::action::Scripts;
///
/// let scripts = Scripts::nbv();
/// assert!(scripts.actions.contains_key("rerun"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scripts {
    /// The discovery script.
    pub discovery: String,
    /// The action scripts, by action name.
    pub actions: BTreeMap<String, String>,
}

impl Scripts {
    /// nbv's own actions for `NotebookValidationJob` (`nbv_core::health::actions`).
    pub fn nbv() -> Self {
        use nbv_core::health::actions::{ACTIONS, DISCOVERY_SCRIPT};
        Scripts {
            discovery: DISCOVERY_SCRIPT.to_owned(),
            actions: ACTIONS
                .iter()
                .map(|(name, script)| ((*name).to_owned(), (*script).to_owned()))
                .collect(),
        }
    }
}

/// A write argocd-server makes for an action.
#[derive(Clone, Debug, PartialEq)]
pub enum Write {
    /// A JSON merge patch of the object the action ran on; `{}` writes nothing.
    Patch(Value),
    /// A new object.
    Create(Value),
}

/// Why an action was not run.
#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    /// A script failed or returned something Argo CD cannot use.
    #[error(transparent)]
    Script(#[from] ActionScriptError),
    /// The discovery script does not offer the action.
    #[error("the action {action:?} is not offered for this object (offered: {offered})")]
    NotOffered {
        /// The action asked for.
        action: String,
        /// The actions discovery offered.
        offered: String,
    },
    /// The discovery script offers the action disabled.
    #[error("the action {action:?} is disabled for this object now (Argo CD greys it out)")]
    Disabled {
        /// The action asked for.
        action: String,
    },
    /// Discovery offers an action that has no script.
    #[error("the action {action:?} is offered but has no action.lua")]
    NoScript {
        /// The action asked for.
        action: String,
    },
}

/// The writes argocd-server makes when `action` is run on `live` with `params`.
///
/// # Examples
///
/// ```
/// use nbv_operator::cli::commands::action::{Scripts, Write, writes};
/// use serde_json::json;
///
/// let job = json!({"metadata": {"name": "train"}, "status": {"phase": "Succeeded"}});
/// let made = writes("rerun", &job, &Scripts::nbv(), &Default::default())?;
/// assert_eq!(made, [Write::Patch(json!({"metadata": {"annotations": {"mlops.dev/rerun": "1"}}}))]);
///
/// let running = json!({"metadata": {"name": "train"}, "status": {"phase": "ValidationRunning"}});
/// assert!(writes("rerun", &running, &Scripts::nbv(), &Default::default()).is_err());
/// # Ok::<(), nbv_operator::cli::commands::action::ActionError>(())
/// ```
pub fn writes(
    action: &str,
    live: &Value,
    scripts: &Scripts,
    params: &BTreeMap<String, String>,
) -> Result<Vec<Write>, ActionError> {
    // argocd-server runs discovery and actions in its production VM.
    let runner = LuaActionRunner::default();
    let offered = runner.discover("discovery.lua", &scripts.discovery, live)?;
    let Some(found) = offered.iter().find(|a| a.name == action) else {
        return Err(ActionError::NotOffered {
            action: action.to_owned(),
            offered: names(&offered),
        });
    };
    if found.disabled {
        return Err(ActionError::Disabled {
            action: action.to_owned(),
        });
    }
    let script = scripts
        .actions
        .get(action)
        .ok_or_else(|| ActionError::NoScript {
            action: action.to_owned(),
        })?;
    let name = format!("{action}/action.lua");
    let impacted = runner.run(&name, script, live, params)?;
    Ok(impacted
        .into_iter()
        .map(|resource| match resource.operation {
            Operation::Patch => Write::Patch(merge_patch(live, &resource.object)),
            Operation::Create => Write::Create(resource.object),
        })
        .collect())
}

fn names(actions: &[ResourceAction]) -> String {
    if actions.is_empty() {
        return "none".to_owned();
    }
    actions
        .iter()
        .map(|a| a.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
