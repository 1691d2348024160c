//! The scenario file as written: what serde reads before it is checked.
//!
//! Each timeline step is one mapping with `at` and exactly one action key. The raw form
//! keeps every action optional so that a step with none, or with two, is reported with
//! its index instead of an opaque serde message.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::model::{Expectations, Mode, ObjectRef, OperatorSettings};

/// An empty mapping, for actions without arguments (`clearFaults: {}`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Empty {}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawScenario {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settle: Option<String>,
    #[serde(default, skip_serializing_if = "is_default_operator")]
    pub operator: OperatorSettings,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<RawStep>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pod_outcomes: Vec<RawPodOutcome>,
    #[serde(default, skip_serializing_if = "Expectations::is_empty")]
    pub expect: Expectations,
}

fn is_default_operator(settings: &OperatorSettings) -> bool {
    settings == &OperatorSettings::default()
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawStep {
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<RawPhase>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<RawPatch>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub apply: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete: Option<ObjectRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_restart: Option<ObjectRef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argo_sync: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_operator: Option<RawRestart>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<RawFault>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clear_faults: Option<Empty>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_watches: Option<Empty>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compact: Option<Empty>,
}

impl RawStep {
    /// The names of the action keys present, in declaration order.
    pub fn actions(&self) -> Vec<&'static str> {
        let present = [
            ("phase", self.phase.is_some()),
            ("patch", self.patch.is_some()),
            ("apply", self.apply.is_some()),
            ("delete", self.delete.is_some()),
            ("rolloutRestart", self.rollout_restart.is_some()),
            ("argoSync", self.argo_sync.is_some()),
            ("restartOperator", self.restart_operator.is_some()),
            ("fault", self.fault.is_some()),
            ("clearFaults", self.clear_faults.is_some()),
            ("dropWatches", self.drop_watches.is_some()),
            ("compact", self.compact.is_some()),
        ];
        present
            .into_iter()
            .filter(|(_, p)| *p)
            .map(|(name, _)| name)
            .collect()
    }
}

/// Every action key a step may have, for error messages.
pub(super) const ACTION_KEYS: &str = "phase, patch, apply, delete, rolloutRestart, argoSync, \
                                      restartOperator, fault, clearFaults, dropWatches, compact";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawPhase {
    pub job: String,
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub replace_status: bool,
}

fn is_false(value: &bool) -> bool {
    !*value
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPatch {
    pub object: ObjectRef,
    pub patch: Value,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawRestart {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_for: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub graceful: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawFault {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verb: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub effect: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<RawTimes>,
}

/// `times: 3` or `times: always`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub(super) enum RawTimes {
    Count(u32),
    Word(String),
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawPodOutcome {
    pub job: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_after: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_for: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cells: Option<u32>,
}
