//! The Argo CD resource actions nbv ships for `NotebookValidationJob`, in the layout
//! Argo CD's `resource_customizations/<group>/<Kind>/actions/` uses: a discovery
//! script and one script per action.
//!
//! `rerun` writes a new value into [`RERUN`](crate::annotations::RERUN); the phase
//! machine answers each value once with a new run of the same generation
//! ([`RerunRequest`](crate::phase::RerunRequest)). Re-firing the triggers alone is not
//! offered: a trigger's effect is owed to a run and carried out once for it, so a
//! new run is what fires them again, once.

use super::literal::push_literal_block;

/// The `argocd-cm` key under which Argo CD looks up the actions of
/// `NotebookValidationJob` (`resource.customizations.actions.<group>_<kind>`).
///
/// # Examples
///
/// ```
/// use nbv_core::{api, health::actions::ACTIONS_KEY};
///
/// assert_eq!(ACTIONS_KEY, format!("resource.customizations.actions.{}_{}", api::GROUP, api::KIND));
/// ```
pub const ACTIONS_KEY: &str =
    "resource.customizations.actions.mlops.mlops.dev_NotebookValidationJob";

/// The discovery script: offers `rerun`, enabled once the run has ended.
///
/// # Examples
///
/// ```
/// use nbv_core::health::actions::DISCOVERY_SCRIPT;
///
/// assert!(DISCOVERY_SCRIPT.contains(r#"actions["rerun"]"#));
/// ```
pub const DISCOVERY_SCRIPT: &str = include_str!("discovery.lua");

/// The action `rerun`: the job with a new value in `mlops.dev/rerun`.
///
/// # Examples
///
/// ```
/// use nbv_core::health::actions::RERUN_SCRIPT;
///
/// assert!(RERUN_SCRIPT.contains(r#"local key = "mlops.dev/rerun""#));
/// ```
pub const RERUN_SCRIPT: &str = include_str!("rerun.lua");

/// The actions, by name, with their scripts.
///
/// # Examples
///
/// ```
/// use nbv_core::health::actions::{ACTIONS, RERUN_SCRIPT};
///
/// assert_eq!(ACTIONS, [("rerun", RERUN_SCRIPT)]);
/// ```
pub const ACTIONS: [(&str, &str); 1] = [("rerun", RERUN_SCRIPT)];

/// The value of [`ACTIONS_KEY`] in `argocd-cm`: Argo CD's `ResourceActions` as YAML,
/// `discovery.lua` and one definition per action, each script as a literal block.
///
/// # Examples
///
/// ```
/// use nbv_core::health::actions::{DISCOVERY_SCRIPT, RERUN_SCRIPT, render_actions};
///
/// let value: serde_json::Value = serde_yaml_ng::from_str(&render_actions())?;
/// assert_eq!(value["discovery.lua"], DISCOVERY_SCRIPT);
/// assert_eq!(value["definitions"][0]["name"], "rerun");
/// assert_eq!(value["definitions"][0]["action.lua"], RERUN_SCRIPT);
/// # Ok::<(), serde_yaml_ng::Error>(())
/// ```
pub fn render_actions() -> String {
    let mut out = String::from("discovery.lua: |\n");
    push_literal_block(&mut out, DISCOVERY_SCRIPT, "  ");
    out.push_str("definitions:\n");
    for (name, script) in ACTIONS {
        out.push_str(&format!("  - name: {name}\n    action.lua: |\n"));
        push_literal_block(&mut out, script, "      ");
    }
    out
}
