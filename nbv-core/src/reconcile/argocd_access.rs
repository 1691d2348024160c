//! What nbv may read in Argo CD's namespace, and what a job learns when it may not.
//!
//! nbv reads two things there through a namespaced Role (`config/rbac/argocd_role.yaml`):
//! `argocd-cm` (tracking settings) and the AppProjects (sync windows). Installed by OLM,
//! nbv has no such Role until an admin adds it: OLM installs a CSV's namespaced
//! permissions only in the operator's own namespace. Without the AppProjects, nbv
//! cannot see the sync windows of an Application's project, and a sync written then
//! could start inside a window that denies it, which Argo CD's own `argocd app sync`
//! refuses. So a `sync` trigger waits ([`without_windows`]) until the Role is there,
//! and each job whose sync waits says why ([`access_condition`]).

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

use crate::actions::{Decision, Patch};
use crate::events::ReportReason;
use crate::phase::{ConditionStatus, ConditionType, ConditionUpdate, Reason};
use crate::plan::{Effect, Plan};
use crate::triggers::Action;

use super::Reported;

/// Name of the Role and the RoleBinding of `config/rbac/argocd_role.yaml`.
pub const ARGOCD_ROLE: &str = "nbv-operator-argocd";
/// The file that holds them.
pub const ARGOCD_ROLE_FILE: &str = "config/rbac/argocd_role.yaml";
/// Type of the condition a job with a waiting `sync` gets.
pub const ARGOCD_ACCESS: &str = "ArgoCDAccess";
/// Its reason while the Role is missing (`False`).
pub const ARGOCD_ROLE_MISSING: &str = "ArgoCDRoleMissing";
/// Its reason once nbv may read what it needs (`True`).
pub const ARGOCD_ROLE_FOUND: &str = "ArgoCDRoleFound";

/// What nbv may read in Argo CD's namespace, as last observed.
///
/// # Examples
///
/// ```
/// use nbv_core::reconcile::{ArgocdAccess, MissingRole};
///
/// let missing = MissingRole::new("openshift-gitops", ["list appprojects"]);
/// assert!(missing.message().contains("Role nbv-operator-argocd"));
/// assert!(missing.message().contains("namespace openshift-gitops"));
/// assert!(ArgocdAccess::Missing(missing).is_missing());
/// assert!(!ArgocdAccess::Unknown.is_missing());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum ArgocdAccess {
    /// Not observed yet.
    #[default]
    Unknown,
    /// nbv may read the AppProjects.
    Granted {
        /// Argo CD's namespace.
        namespace: String,
    },
    /// A request was refused (403): the Role or its binding is missing.
    Missing(MissingRole),
}

impl ArgocdAccess {
    /// Whether the Role is known to be missing.
    pub fn is_missing(&self) -> bool {
        matches!(self, ArgocdAccess::Missing(_))
    }
}

/// The Role nbv lacks in Argo CD's namespace: where, and the requests refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingRole {
    namespace: String,
    refused: Vec<String>,
}

impl MissingRole {
    /// The Role is missing in `namespace`: the API server refused the `refused`
    /// requests (`get configmaps argocd-cm`, `list appprojects`).
    pub fn new(
        namespace: impl Into<String>,
        refused: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        MissingRole {
            namespace: namespace.into(),
            refused: refused.into_iter().map(Into::into).collect(),
        }
    }

    /// Argo CD's namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// What is missing, where, what it costs, and how to fix it.
    pub fn message(&self) -> String {
        format!(
            "nbv may not {refused} in namespace {ns}: the Role {ARGOCD_ROLE} and RoleBinding \
             {ARGOCD_ROLE} of {ARGOCD_ROLE_FILE} are missing there (OLM does not install \
             them: apply them with their namespace set to {ns}, bound to nbv's \
             ServiceAccount). Without them nbv cannot see the AppProjects' sync windows, so \
             `sync` triggers wait, and it cannot read argocd-cm's tracking settings",
            refused = self.refused.join(", "),
            ns = self.namespace,
        )
    }
}

/// Whether `plan` carries out a `sync` of an Argo CD Application now.
fn syncs_now(plan: &Plan) -> bool {
    plan.effects.iter().any(|planned| {
        matches!(&planned.effect, Effect::Trigger { trigger, .. }
            if trigger.action() == Action::Sync && trigger.is_argo_application())
    })
}

/// The `ArgoCDAccess` condition of a job whose plan is `plan`, given what nbv may read
/// in Argo CD's namespace and the job's conditions `before`:
///
/// - the plan syncs an Application now and the Role is missing: `False`
///   (`ArgoCDRoleMissing`), announced by an `ArgoCDRoleMissing` Event;
/// - the job says so already and nbv may now read the AppProjects: `True`
///   (`ArgoCDRoleFound`);
/// - otherwise none: a job without a sync, or one nbv can serve, is not told about
///   a Role it does not need.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::api::NotebookValidationJob;
/// use nbv_core::plan::{plan, PlanContext};
/// use nbv_core::reconcile::{access_condition, ArgocdAccess, MissingRole};
///
/// let job: NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml", "generation": 1, "annotations": {
///         "mlops.dev/on-success-trigger":
///             "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, action: sync}"}},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
///     "status": {"phase": "Succeeded", "observedGeneration": 1,
///                "startTime": "2026-01-24T22:29:00Z", "completionTime": "2026-01-24T22:30:00Z"}
/// }))?;
/// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
/// let plan = plan(&job, &PlanContext::default(), now);
/// let missing = ArgocdAccess::Missing(MissingRole::new("argocd", ["list appprojects"]));
/// let reported = access_condition(&plan, &missing, &[]).expect("the sync waits for the Role");
/// assert_eq!(reported.update.reason.as_str(), "ArgoCDRoleMissing");
/// assert_eq!(reported.announce.map(|r| r.as_str()), Some("ArgoCDRoleMissing"));
/// assert!(access_condition(&plan, &ArgocdAccess::Unknown, &[]).is_none());
/// # Ok::<(), serde_json::Error>(())
/// ```
pub fn access_condition(
    plan: &Plan,
    access: &ArgocdAccess,
    before: &[Condition],
) -> Option<Reported> {
    match access {
        ArgocdAccess::Missing(missing) if syncs_now(plan) => Some(Reported::announced(
            update(
                ConditionStatus::False,
                ARGOCD_ROLE_MISSING,
                missing.message(),
            ),
            ReportReason::ArgoCDRoleMissing,
        )),
        ArgocdAccess::Granted { namespace }
            if before
                .iter()
                .any(|c| c.type_ == ARGOCD_ACCESS && c.status != "True") =>
        {
            Some(Reported::quiet(update(
                ConditionStatus::True,
                ARGOCD_ROLE_FOUND,
                format!(
                    "nbv may read the AppProjects in namespace {namespace}: `sync` triggers \
                     respect their sync windows"
                ),
            )))
        }
        _ => None,
    }
}

/// The decision of a `sync` made without sync windows (`decision`, from
/// [`crate::actions::sync::decide`] with none) when the AppProjects may not be read: a
/// sync that would be written waits for the Role instead; a sync already in place, one
/// that waits anyway, and a refusal stand.
///
/// # Examples
///
/// ```
/// use nbv_core::actions::{Decision, Patch};
/// use nbv_core::reconcile::{MissingRole, without_windows};
///
/// let missing = MissingRole::new("openshift-gitops", ["list appprojects"]);
/// let write = Decision::Write(Patch { patch: serde_json::json!({}), summary: "started a sync".into() });
/// let Decision::Deferred { reason, until } = without_windows(write, &missing) else { panic!() };
/// assert!(reason.contains("nbv-operator-argocd") && until.is_none());
/// ```
pub fn without_windows(decision: Decision<Patch>, missing: &MissingRole) -> Decision<Patch> {
    match decision {
        Decision::Write(_) => Decision::Deferred {
            reason: format!(
                "the sync windows of its AppProject cannot be read, and nbv does not sync \
                 inside a window it cannot see; {}",
                missing.message()
            ),
            until: None,
        },
        other => other,
    }
}

fn update(status: ConditionStatus, reason: &'static str, message: String) -> ConditionUpdate {
    ConditionUpdate {
        type_: known_type(ARGOCD_ACCESS),
        status,
        reason: known_reason(reason),
        message,
    }
}

// Both names are constants of this module that match the CRD's patterns (tested below).
fn known_type(name: &'static str) -> ConditionType {
    ConditionType::new(name).unwrap_or_else(|e| unreachable!("{e}"))
}

fn known_reason(name: &'static str) -> Reason {
    Reason::new(name).unwrap_or_else(|e| unreachable!("{e}"))
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use proptest::prelude::*;

    use super::*;
    use crate::api::NotebookValidationJob;
    use crate::plan::{PlanContext, plan};

    #[test]
    fn the_names_match_the_crd_patterns() {
        assert!(ConditionType::new(ARGOCD_ACCESS).is_ok());
        for reason in [ARGOCD_ROLE_MISSING, ARGOCD_ROLE_FOUND] {
            assert!(Reason::new(reason).is_ok(), "{reason}");
        }
    }

    fn job(triggers: &str, phase: &str) -> NotebookValidationJob {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
            "metadata": {"name": "train", "namespace": "ml", "generation": 1,
                         "annotations": {"mlops.dev/on-success-trigger": triggers}},
            "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
                     "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}},
            "status": {"phase": phase, "observedGeneration": 1,
                       "startTime": "2026-01-24T22:29:00Z",
                       "completionTime": "2026-01-24T22:30:00Z"}
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    const SYNC: &str =
        "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, action: sync}";
    const REFRESH: &str =
        "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, action: refresh}";
    const RESTART: &str = "- {apiVersion: apps/v1, kind: Deployment, name: web, action: restart}";

    fn plan_of(triggers: &str, phase: &str) -> Plan {
        let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 5).unwrap();
        plan(&job(triggers, phase), &PlanContext::default(), now)
    }

    fn condition(status: &str) -> Condition {
        let status = if status == "True" {
            ConditionStatus::True
        } else {
            ConditionStatus::False
        };
        let mut conditions = Vec::new();
        crate::phase::set_condition(
            &mut conditions,
            &known_type(ARGOCD_ACCESS),
            status,
            &known_reason(ARGOCD_ROLE_MISSING),
            "",
            Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap(),
            None,
        );
        conditions.remove(0)
    }

    fn missing() -> ArgocdAccess {
        ArgocdAccess::Missing(MissingRole::new(
            "openshift-gitops",
            ["get configmaps argocd-cm", "list appprojects"],
        ))
    }

    fn granted() -> ArgocdAccess {
        ArgocdAccess::Granted {
            namespace: "openshift-gitops".into(),
        }
    }

    #[test]
    fn only_jobs_that_sync_now_are_told_the_role_is_missing() {
        let reported = access_condition(&plan_of(SYNC, "Succeeded"), &missing(), &[]);
        let reported = reported.expect("a due sync gets the condition");
        assert_eq!(reported.update.status, ConditionStatus::False);
        assert!(
            reported.update.message.contains(
                "Role nbv-operator-argocd and RoleBinding nbv-operator-argocd of \
                 config/rbac/argocd_role.yaml are missing there"
            ),
            "{}",
            reported.update.message
        );
        assert!(
            reported
                .update
                .message
                .contains("namespace openshift-gitops")
        );
        for (triggers, phase) in [
            (SYNC, "ValidationRunning"),
            (SYNC, "Failed"),
            (REFRESH, "Succeeded"),
            (RESTART, "Succeeded"),
        ] {
            assert_eq!(
                access_condition(&plan_of(triggers, phase), &missing(), &[]),
                None,
                "{triggers} {phase}"
            );
        }
    }

    #[test]
    fn a_job_told_so_learns_when_the_role_is_there() {
        let done = plan_of(RESTART, "Succeeded");
        let reported = access_condition(&done, &granted(), &[condition("False")]);
        let reported = reported.expect("the condition is brought up to date");
        assert_eq!(reported.update.status, ConditionStatus::True);
        assert_eq!(reported.update.reason.as_str(), ARGOCD_ROLE_FOUND);
        assert!(reported.announce.is_none());
        assert_eq!(
            access_condition(&done, &granted(), &[condition("True")]),
            None
        );
        assert_eq!(access_condition(&done, &granted(), &[]), None);
    }

    #[test]
    fn a_sync_that_would_write_waits_and_the_others_stand() {
        let missing = MissingRole::new("argocd", ["list appprojects"]);
        let write = Decision::Write(Patch {
            patch: serde_json::json!({"operation": {}}),
            summary: "sync".into(),
        });
        assert!(matches!(
            without_windows(write, &missing),
            Decision::Deferred { until: None, .. }
        ));
        let busy: Decision<Patch> = Decision::Deferred {
            reason: "an operation runs".into(),
            until: None,
        };
        assert_eq!(without_windows(busy.clone(), &missing), busy);
        let done: Decision<Patch> = Decision::AlreadyDone {
            reason: crate::actions::Already::SyncRequested,
            summary: "already".into(),
        };
        assert_eq!(without_windows(done.clone(), &missing), done);
    }

    proptest! {
        /// No job is told about the Role unless nbv knows it is missing and the job
        /// syncs now, or the job was told before; a missing Role is never reported as
        /// found.
        #[test]
        fn the_condition_follows_the_access_and_the_plan(
            triggers in prop::sample::select(vec![SYNC, REFRESH, RESTART]),
            phase in prop::sample::select(vec!["Succeeded", "Failed", "ValidationRunning"]),
            access in prop::sample::select(vec![missing(), granted(), ArgocdAccess::Unknown]),
            before in prop::option::of(prop::sample::select(vec!["True", "False"])),
        ) {
            let plan = plan_of(triggers, phase);
            let before: Vec<Condition> = before.into_iter().map(condition).collect();
            let reported = access_condition(&plan, &access, &before);
            let syncs = triggers == SYNC && phase == "Succeeded";
            match &reported {
                Some(r) if r.update.status == ConditionStatus::False => {
                    prop_assert!(access.is_missing() && syncs);
                    prop_assert!(r.announce.is_some());
                }
                Some(_) => {
                    let granted = matches!(access, ArgocdAccess::Granted { .. });
                    prop_assert!(granted);
                    prop_assert!(before.iter().any(|c| c.status == "False"));
                }
                None => prop_assert!(!(access.is_missing() && syncs)),
            }
        }
    }
}
