//! Addressing a trigger's target and the job, and the two steps most effects share:
//! reading the target, and writing a decision's merge patch.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::actions::{Decision, Patch, Run, TriggerOutcome, describe};
use crate::aggregate::JobKey;
use crate::api::NotebookValidationJob;
use crate::io::{ObjectRef, Request, Response, Step, Subresource};
use crate::triggers::TargetRef;

use super::machine::unexpected;
use super::{Failure, Machine};

/// The target as the requests address it.
pub(super) fn object_of(target: &TargetRef) -> ObjectRef {
    ObjectRef::namespaced(
        target.api_version().to_string(),
        target.kind().as_str(),
        target.namespace().as_str(),
        target.name().as_str(),
    )
}

/// The job an effect belongs to, with the fields every effect needs.
#[derive(Clone, Debug)]
pub(super) struct JobRef {
    pub(super) namespace: String,
    pub(super) name: String,
    pub(super) uid: Option<String>,
}

impl JobRef {
    pub(super) fn of(job: &NotebookValidationJob) -> Result<JobRef, Failure> {
        let Some(key) = JobKey::of(job) else {
            return Err(Failure::invalid(
                "act for a NotebookValidationJob",
                "the job has no metadata.namespace or metadata.name; pass the job as read \
                 from the API server",
            ));
        };
        Ok(JobRef {
            namespace: key.namespace().to_owned(),
            name: key.name().to_owned(),
            uid: job.metadata.uid.clone(),
        })
    }

    /// The job's run that ended at `completed_at`.
    pub(super) fn run(&self, completed_at: DateTime<Utc>) -> Run {
        Run::new(&self.namespace, &self.name, completed_at)
    }
}

/// Reading a trigger's target: an Argo CD Application from the shell's watch cache
/// when it holds it, anything else (and an Application it does not hold: one named a
/// moment ago may not be in it yet) with a `GET`.
#[derive(Clone, Debug)]
pub(super) struct Read {
    object: ObjectRef,
    /// `Kind namespace/name`, for errors.
    name: String,
    state: ReadState,
}

#[derive(Clone, Debug)]
enum ReadState {
    Cached,
    Get,
    Done(Result<Value, Failure>),
}

impl Read {
    /// Reads `target`, from the cache first when it is an Application.
    pub(super) fn target(target: &TargetRef) -> Read {
        let state = if target.is_argo_application() {
            ReadState::Cached
        } else {
            ReadState::Get
        };
        Read {
            object: object_of(target),
            name: describe(target).to_string(),
            state,
        }
    }

    /// Reads `target` with a `GET`.
    pub(super) fn get(target: &TargetRef) -> Read {
        Read {
            state: ReadState::Get,
            ..Read::target(target)
        }
    }
}

impl Read {
    /// `object`, if its kind is spelled as the trigger spells it. The API server finds a
    /// resource by its lowercased kind, so `DEPLOYMENT` reaches Deployments; acting on
    /// one under another spelling would skip the rules nbv keeps for the real kind.
    fn same_kind(&self, object: Value) -> Result<Value, Failure> {
        match object["kind"].as_str() {
            Some(kind) if kind != self.object.kind => Err(Failure::Invalid {
                request: format!("get {}", self.name),
                reason: format!(
                    "the kind is spelled {kind:?}, not {:?}; write the trigger's kind as the API \
                     server does",
                    self.object.kind
                ),
            }),
            _ => Ok(object),
        }
    }
}

impl Machine for Read {
    type Output = Result<Value, Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        match &self.state {
            ReadState::Cached => Step::Io(Request::Cached(self.object.clone())),
            ReadState::Get => Step::Io(Request::Get(self.object.clone())),
            ReadState::Done(result) => Step::Done(result.clone()),
        }
    }

    fn answer(&mut self, response: Response) {
        let request = format!("get {}", self.name);
        self.state = match (&self.state, response) {
            (ReadState::Done(_), _) => return,
            (_, Response::Object(Some(object))) => ReadState::Done(self.same_kind(object)),
            (ReadState::Cached, Response::Object(None) | Response::NotCached) => ReadState::Get,
            (ReadState::Get, Response::Object(None)) => ReadState::Done(Err(Failure::NotFound {
                object: self.name.clone(),
            })),
            (_, Response::Failed(answer)) => {
                ReadState::Done(Err(Failure::of(request, &self.name, &answer)))
            }
            (_, other) => ReadState::Done(Err(unexpected(&request, &other))),
        };
    }
}

/// Carrying out a decision of [`crate::actions`] that writes a merge patch of the
/// target: the patch and its outcome, or the outcome without a write.
#[derive(Clone, Debug)]
pub(super) enum PatchWrite {
    Patch {
        object: ObjectRef,
        name: String,
        patch: Patch,
    },
    Done(Result<TriggerOutcome, Failure>),
}

impl PatchWrite {
    pub(super) fn start(target: &TargetRef, decision: Decision<Patch>) -> PatchWrite {
        match decision.into_write() {
            Ok(patch) => PatchWrite::Patch {
                object: object_of(target),
                name: describe(target).to_string(),
                patch,
            },
            Err(settled) => PatchWrite::Done(settled.map_err(Failure::from)),
        }
    }
}

impl Machine for PatchWrite {
    type Output = Result<TriggerOutcome, Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        match self {
            PatchWrite::Patch { object, patch, .. } => Step::Io(Request::Patch {
                object: object.clone(),
                subresource: Subresource::Object,
                patch: patch.patch.clone(),
            }),
            PatchWrite::Done(result) => Step::Done(result.clone()),
        }
    }

    fn answer(&mut self, response: Response) {
        let PatchWrite::Patch { name, patch, .. } = self else {
            return;
        };
        let request = format!("patch {name}");
        *self = PatchWrite::Done(match response {
            Response::Object(_) => Ok(patch.clone().done()),
            Response::Failed(answer) => Err(Failure::of(request, name.as_str(), &answer)),
            other => Err(unexpected(&request, &other)),
        });
    }
}
