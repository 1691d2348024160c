//! Merge patches of metadata nbv owns: the job's wave annotations, and the two status
//! annotations of a parent Argo CD Application. Either is checked before it is sent,
//! so that a patch beyond its fields never reaches the API server.

use serde_json::Value;

use crate::annotations::{NOTEBOOK_STATUS, NOTEBOOK_SUMMARY};
use crate::api::{API_VERSION, KIND};
use crate::io::{ObjectRef, Request, Response, Step, Subresource};

use super::machine::unexpected;
use super::{Failure, Machine};

/// Applying a JSON merge patch of the job's `metadata.annotations` and
/// `metadata.labels` (nbv-core's wave patch) to the job; the result is the job as the
/// API server stored it (its new `resourceVersion` is the precondition of the status
/// write that follows, without a read).
///
/// # Examples
///
/// ```
/// use nbv_core::carry::{JobPatch, Machine};
/// use nbv_core::io::{Response, Step};
/// use serde_json::json;
///
/// let patch = json!({"metadata": {"annotations": {"mlops.dev/wave-complete": "3"}}});
/// let mut write = JobPatch::start("ml", "train", &patch);
/// assert_eq!(write.next().request().map(ToString::to_string).as_deref(), Some("PATCH NotebookValidationJob ml/train"));
/// write.answer(Response::Object(Some(json!({"metadata": {"resourceVersion": "8"}}))));
/// assert!(matches!(write.next(), Step::Done(Ok(_))));
///
/// // Anything but annotations and labels is refused without a request.
/// let mut spec = JobPatch::start("ml", "train", &json!({"spec": {"timeout": "1h"}}));
/// assert!(matches!(spec.next(), Step::Done(Err(_))));
/// ```
#[derive(Clone, Debug)]
pub struct JobPatch {
    state: MetadataPatch,
}

impl JobPatch {
    /// Patches the job `namespace/name` with `patch`.
    pub fn start(namespace: &str, name: &str, patch: &Value) -> Self {
        JobPatch {
            state: MetadataPatch::start(
                ObjectRef::namespaced(API_VERSION, KIND, namespace, name),
                patch,
                &["annotations", "labels"],
                None,
            ),
        }
    }
}

impl JobPatch {
    /// The job as the API server stored it, once the patch is written.
    pub fn stored(&self) -> Option<&Value> {
        match &self.state {
            MetadataPatch::Done(Ok(stored)) => Some(stored),
            _ => None,
        }
    }
}

impl Machine for JobPatch {
    type Output = Result<Value, Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        self.state.next()
    }

    fn answer(&mut self, response: Response) {
        self.state.answer(response);
    }
}

/// Applying a patch (from [`crate::aggregate::NotebookStatus::application_patch`]) to
/// an Argo CD Application (`argoproj.io/v1alpha1`). Only `mlops.dev/notebook-status`
/// and `mlops.dev/notebook-summary` may be in it: the Application belongs to Argo CD
/// and its author, and nbv never rewrites anything else of it (its sync wave least of
/// all).
///
/// # Examples
///
/// ```
/// use nbv_core::carry::{ApplicationStatus, Machine};
/// use nbv_core::io::Step;
/// use serde_json::json;
///
/// let wave = json!({"metadata": {"annotations": {"argocd.argoproj.io/sync-wave": "5"}}});
/// let mut refused = ApplicationStatus::start("argocd", "fraud", &wave);
/// let Step::Done(Err(failure)) = refused.next() else { panic!() };
/// assert!(failure.to_string().contains("argocd.argoproj.io/sync-wave"));
/// ```
#[derive(Clone, Debug)]
pub struct ApplicationStatus {
    state: MetadataPatch,
}

impl ApplicationStatus {
    /// Patches the Application `namespace/name` with `patch`.
    pub fn start(namespace: &str, name: &str, patch: &Value) -> Self {
        ApplicationStatus {
            state: MetadataPatch::start(
                ObjectRef::namespaced("argoproj.io/v1alpha1", "Application", namespace, name),
                patch,
                &["annotations"],
                Some(&[NOTEBOOK_STATUS, NOTEBOOK_SUMMARY]),
            ),
        }
    }
}

impl Machine for ApplicationStatus {
    type Output = Result<(), Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        match self.state.next() {
            Step::Io(request) => Step::Io(request),
            Step::Done(result) => Step::Done(result.map(drop)),
        }
    }

    fn answer(&mut self, response: Response) {
        self.state.answer(response);
    }
}

/// One checked merge patch of an object's metadata.
#[derive(Clone, Debug)]
enum MetadataPatch {
    Patch { object: ObjectRef, patch: Value },
    Done(Result<Value, Failure>),
}

impl MetadataPatch {
    fn start(
        object: ObjectRef,
        patch: &Value,
        fields: &[&str],
        annotations: Option<&[&str]>,
    ) -> Self {
        match check_metadata_patch(patch, fields, annotations) {
            Ok(()) => MetadataPatch::Patch {
                object,
                patch: patch.clone(),
            },
            Err(reason) => {
                MetadataPatch::Done(Err(Failure::invalid(format!("patch {object}"), reason)))
            }
        }
    }

    fn next(&self) -> Step<Result<Value, Failure>> {
        match self {
            MetadataPatch::Patch { object, patch } => Step::Io(Request::Patch {
                object: object.clone(),
                subresource: Subresource::Object,
                patch: patch.clone(),
            }),
            MetadataPatch::Done(result) => Step::Done(result.clone()),
        }
    }

    fn answer(&mut self, response: Response) {
        let MetadataPatch::Patch { object, .. } = self else {
            return;
        };
        let request = format!("patch {object}");
        *self = MetadataPatch::Done(match response {
            Response::Object(stored) => Ok(stored.unwrap_or_default()),
            Response::Failed(answer) => Err(Failure::of(request, object.to_string(), &answer)),
            other => Err(unexpected(&request, &other)),
        });
    }
}

/// Checks that `patch` is `{"metadata": {...}}` with only the `fields` of metadata,
/// and, when `annotations` is given, only those annotation keys with string or null
/// values. Returns what is wrong otherwise.
fn check_metadata_patch(
    patch: &Value,
    fields: &[&str],
    annotations: Option<&[&str]>,
) -> Result<(), String> {
    let Some(top) = patch.as_object() else {
        return Err("the patch is not a JSON object".to_owned());
    };
    if let Some(key) = top.keys().find(|k| *k != "metadata") {
        return Err(format!("the patch may only change metadata, not {key:?}"));
    }
    let Some(metadata) = top.get("metadata").and_then(Value::as_object) else {
        return Err("the patch has no metadata object".to_owned());
    };
    if let Some(key) = metadata.keys().find(|k| !fields.contains(&k.as_str())) {
        return Err(format!(
            "the patch may only change metadata.{}, not metadata.{key}",
            fields.join(" and metadata.")
        ));
    }
    for field in fields {
        let Some(entries) = metadata.get(*field) else {
            continue;
        };
        let Some(entries) = entries.as_object() else {
            return Err(format!("metadata.{field} of the patch is not an object"));
        };
        for (key, value) in entries {
            if !(value.is_string() || value.is_null()) {
                return Err(format!("metadata.{field}.{key:?} must be a string or null"));
            }
            if *field == "annotations"
                && annotations.is_some_and(|allowed| !allowed.contains(&key.as_str()))
            {
                return Err(format!("the patch may not change the annotation {key:?}"));
            }
        }
    }
    Ok(())
}
