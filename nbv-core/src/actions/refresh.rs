//! The `refresh` action: annotating the target with the run's completion time.
//!
//! `mlops.dev/restart-timestamp: <completion time>` on any target; on an Argo CD
//! Application also `argocd.argoproj.io/refresh: normal`, which asks Argo CD to compare
//! the Application with its source again (Argo CD removes it when done), with
//! `argocd.argoproj.io/refresh-timestamp` set to the time of the request (RFC 3339,
//! nanoseconds), as Argo CD's own `RefreshApp` writes it since Argo CD merged its fix
//! for refresh requests lost during an in-flight reconcile: the controller removes the
//! request only if the timestamp is still the one it saw, so a request made while it
//! was refreshing is not dropped. (An Argo CD without that fix ignores it.)
//!
//! When the target's timestamp is already the run's time or later, nothing is written
//! ([`Already::Refreshed`]): a retry of a write whose answer was lost cannot move it
//! backwards over a newer run's refresh. The patch carries the `resourceVersion` read,
//! so a write in between makes it a conflict, and the retry reads again.

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};

use super::{Already, Decision, Patch, Run, conditional, describe, done_since};
use crate::annotations::{ARGOCD_REFRESH, ARGOCD_REFRESH_TIMESTAMP, RESTART_TIMESTAMP};
use crate::triggers::TargetRef;

/// What refreshing `target` (read as `object`) for `run` at `now` takes.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::{Decision, Run, refresh};
///
/// let set = nbv_core::triggers::parse_triggers(
///     "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: models, namespace: argocd, action: refresh}",
///     "ml",
/// ).unwrap();
/// let run = Run::new("ml", "train", Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap());
/// let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 31, 0).unwrap();
/// let app = serde_json::json!({"metadata": {"name": "models", "resourceVersion": "3"}});
/// let Decision::Write(write) = refresh::decide(&app, set.triggers()[0].target(), &run, now) else { panic!() };
/// let annotations = &write.patch["metadata"]["annotations"];
/// assert_eq!(annotations["argocd.argoproj.io/refresh"], "normal");
/// assert_eq!(annotations["argocd.argoproj.io/refresh-timestamp"], "2026-01-24T22:31:00.000000000Z");
/// assert_eq!(write.patch["metadata"]["resourceVersion"], "3");
/// ```
pub fn decide(
    object: &Value,
    target: &TargetRef,
    run: &Run,
    now: DateTime<Utc>,
) -> Decision<Patch> {
    let current = object["metadata"]["annotations"][RESTART_TIMESTAMP].as_str();
    if let Some(done) = done_since(current, target, run, "refreshed", |at| Already::Refreshed {
        at,
    }) {
        return done;
    }
    let at = run.completed();
    let application = target.is_argo_application();
    let annotations = if application {
        let requested = now.to_rfc3339_opts(SecondsFormat::Nanos, true);
        json!({RESTART_TIMESTAMP: at, ARGOCD_REFRESH: "normal", ARGOCD_REFRESH_TIMESTAMP: requested})
    } else {
        json!({RESTART_TIMESTAMP: at})
    };
    let summary = format!(
        "{} refreshed ({RESTART_TIMESTAMP}: {at}{})",
        describe(target),
        if application {
            format!(", {ARGOCD_REFRESH}: normal")
        } else {
            String::new()
        }
    );
    conditional(
        object,
        target,
        |version| json!({"metadata": {"resourceVersion": version, "annotations": annotations}}),
        summary,
    )
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;
    use crate::triggers::parse_triggers;

    fn target(kind: &str) -> TargetRef {
        let yaml = format!("- {{apiVersion: v1, kind: {kind}, name: model, action: refresh}}");
        parse_triggers(&yaml, "ml").unwrap().triggers()[0]
            .target()
            .clone()
    }

    fn run() -> Run {
        Run::new(
            "ml",
            "train",
            Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap(),
        )
    }

    fn with_timestamp(at: Option<&str>) -> Value {
        let mut object = json!({"metadata": {"name": "model", "resourceVersion": "7"}});
        if let Some(at) = at {
            object["metadata"]["annotations"] = json!({RESTART_TIMESTAMP: at});
        }
        object
    }

    #[test]
    fn a_timestamp_older_than_the_run_or_not_nbvs_is_overwritten() {
        for existing in [None, Some("2026-01-24T22:29:59Z"), Some("last tuesday")] {
            let decision = decide(
                &with_timestamp(existing),
                &target("ConfigMap"),
                &run(),
                run().completed_at,
            );
            let Decision::Write(write) = decision else {
                panic!("{existing:?}: {decision:?}");
            };
            assert_eq!(
                write.patch,
                json!({"metadata": {"resourceVersion": "7", "annotations": {RESTART_TIMESTAMP: "2026-01-24T22:30:00Z"}}})
            );
            assert_eq!(
                write.summary,
                "ConfigMap ml/model refreshed (mlops.dev/restart-timestamp: 2026-01-24T22:30:00Z)"
            );
        }
    }

    #[test]
    fn a_timestamp_of_this_run_or_later_is_left_alone() {
        for existing in [
            "2026-01-24T22:30:00Z",
            "2026-01-24T22:30:00.5Z",
            "2026-01-25T00:00:00+01:00",
        ] {
            let decision = decide(
                &with_timestamp(Some(existing)),
                &target("ConfigMap"),
                &run(),
                run().completed_at,
            );
            assert_eq!(
                decision,
                Decision::AlreadyDone {
                    reason: Already::Refreshed {
                        at: existing.to_owned()
                    },
                    summary: format!(
                        "ConfigMap ml/model already refreshed at {existing} (not older than this run)"
                    ),
                }
            );
        }
    }

    #[test]
    fn an_object_without_a_resource_version_is_refused() {
        let decision = decide(
            &json!({"metadata": {"name": "model"}}),
            &target("ConfigMap"),
            &run(),
            run().completed_at,
        );
        assert_eq!(
            decision,
            Decision::Refused(super::super::Refused::new(
                "patch ConfigMap ml/model",
                "it has no metadata.resourceVersion"
            ))
        );
    }
}
