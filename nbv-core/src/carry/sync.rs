//! The `sync` action as requests: the AppProject's sync windows (from the shell's
//! watch cache), and the operation [`crate::actions::sync::decide`] builds; and
//! following the sync to its end ([`crate::actions::sync::report`]).
//!
//! The patch carries the `resourceVersion` read, so an operation started by someone
//! else in between makes the patch fail with a conflict instead of replacing it.

use chrono::{DateTime, Utc};
use serde_json::Value;

use crate::actions::sync::{self, project_of, windows_of};
use crate::actions::{Run, SyncReport, TriggerOutcome, describe};
use crate::api::NotebookValidationJob;
use crate::io::{ObjectRef, Request, Response, Step};
use crate::reconcile::{ArgocdAccess, without_windows};
use crate::sync::SyncWindow;
use crate::triggers::TargetRef;

use super::machine::forward;
use super::target::{JobRef, PatchWrite, Read};
use super::{CarryFacts, Failure, Machine};

/// Starting a sync of an Application (as read) for a run.
#[derive(Clone, Debug)]
pub(super) struct Sync {
    state: SyncState,
    /// What the shell should log (unreadable sync windows).
    pub(super) warnings: Vec<String>,
}

#[derive(Clone, Debug)]
enum SyncState {
    /// Read the AppProject's sync windows from the watch cache.
    Windows(Box<Deciding>),
    /// Write the decision.
    Write(PatchWrite),
}

/// What deciding the sync needs once the windows are known.
#[derive(Clone, Debug)]
struct Deciding {
    application: Value,
    project: ObjectRef,
    target: TargetRef,
    run: Run,
    initiator: String,
    now: DateTime<Utc>,
}

impl Deciding {
    fn decide(&self, windows: Option<&[SyncWindow]>) -> PatchWrite {
        let decision = sync::decide(
            &self.application,
            windows,
            &self.target,
            &self.run,
            &self.initiator,
            self.now,
        );
        PatchWrite::start(&self.target, decision)
    }
}

impl Sync {
    pub(super) fn start(
        target: &TargetRef,
        application: Value,
        run: &Run,
        facts: &CarryFacts,
        now: DateTime<Utc>,
    ) -> Sync {
        let deciding = Deciding {
            project: ObjectRef::namespaced(
                "argoproj.io/v1alpha1",
                "AppProject",
                &facts.argocd_namespace,
                project_of(&application),
            ),
            application,
            target: target.clone(),
            run: run.clone(),
            initiator: facts.field_manager.clone(),
            now,
        };
        let state = match &facts.argocd_access {
            // Without the AppProjects there are no sync windows to read: the sync waits
            // for the Role rather than risk starting inside a window that denies it.
            ArgocdAccess::Missing(missing) => {
                let decision = sync::decide(
                    &deciding.application,
                    None,
                    target,
                    run,
                    &deciding.initiator,
                    now,
                );
                SyncState::Write(PatchWrite::start(
                    target,
                    without_windows(decision, missing),
                ))
            }
            // Without a cache of the AppProjects, no sync window applies.
            _ if !facts.projects_cached => SyncState::Write(deciding.decide(None)),
            _ => SyncState::Windows(Box::new(deciding)),
        };
        Sync {
            state,
            warnings: Vec::new(),
        }
    }
}

impl Machine for Sync {
    type Output = Result<TriggerOutcome, Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        match &mut self.state {
            SyncState::Windows(deciding) => Step::Io(Request::Cached(deciding.project.clone())),
            SyncState::Write(write) => write.next(),
        }
    }

    fn answer(&mut self, response: Response) {
        match &mut self.state {
            SyncState::Windows(deciding) => {
                let windows = match response {
                    // The cache has not listed the AppProjects: an empty cache would let
                    // a sync through a window that is closed.
                    Response::NotCached => {
                        let request = format!("sync {}", describe(&deciding.target));
                        self.state =
                            SyncState::Write(PatchWrite::Done(Err(Failure::CacheNotReady {
                                cache: "AppProject",
                                request,
                            })));
                        return;
                    }
                    // Argo CD refuses the operation itself when the project is missing,
                    // and nbv reports that result.
                    Response::Object(None) => None,
                    Response::Object(Some(project)) => match windows_of(&project) {
                        Ok(windows) => Some(windows),
                        Err(error) => {
                            self.warnings.push(format!(
                                "AppProject {} syncWindows unreadable: {error}",
                                deciding.project
                            ));
                            None
                        }
                    },
                    other => {
                        let request = format!("read {} from the cache", deciding.project);
                        let failure = match other {
                            Response::Failed(answer) => {
                                Failure::of(request, deciding.project.to_string(), &answer)
                            }
                            other => super::machine::unexpected(&request, &other),
                        };
                        self.state = SyncState::Write(PatchWrite::Done(Err(failure)));
                        return;
                    }
                };
                self.state = SyncState::Write(deciding.decide(windows.as_deref()));
            }
            SyncState::Write(write) => write.answer(response),
        }
    }
}

/// Following the sync a job's run started: how it stands, read from the Application
/// (the shell's watch cache when it holds it; a cached view on which the sync looks
/// replaced is read again with a `GET`, since the cache may not show the operation nbv
/// wrote a moment ago yet).
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::actions::SyncReport;
/// use nbv_core::carry::{Machine, SyncResult};
/// use nbv_core::io::{Request, Response, Step};
///
/// let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
///     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
///     "metadata": {"name": "train", "namespace": "ml"},
///     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
///              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
/// }))?;
/// let set = nbv_core::triggers::parse_triggers(
///     "- {apiVersion: argoproj.io/v1alpha1, kind: Application, name: serving, namespace: argocd, action: sync}", "ml").unwrap();
/// let ended = Utc.with_ymd_and_hms(2026, 1, 24, 22, 30, 0).unwrap();
/// let mut follow = SyncResult::start(&job, set.triggers()[0].target(), ended);
///
/// assert!(matches!(follow.next(), Step::Io(Request::Cached(_))));
/// follow.answer(Response::Object(Some(serde_json::json!({"status": {"operationState": {
///     "phase": "Running",
///     "operation": {"info": [{"name": "nbv-run", "value": "ml/train@2026-01-24T22:30:00Z"}]}}}}))));
/// assert!(matches!(follow.next(), Step::Done(Ok(SyncReport::InProgress { .. }))));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct SyncResult {
    target: TargetRef,
    run: Run,
    state: ResultState,
}

#[derive(Clone, Debug)]
enum ResultState {
    /// The first read, from the cache when it holds the Application.
    Read(Read),
    /// The sync looked replaced: read again with a `GET`.
    ReadAgain(Read),
    Done(Result<SyncReport, Failure>),
}

impl SyncResult {
    /// Follows the sync that `job`'s run (ended at `completed_at`) started on `target`.
    pub fn start(
        job: &NotebookValidationJob,
        target: &TargetRef,
        completed_at: DateTime<Utc>,
    ) -> SyncResult {
        // A job without a name has no run to follow; it is done at once.
        let (run, state) = match JobRef::of(job) {
            Ok(job) => (
                job.run(completed_at),
                ResultState::Read(Read::target(target)),
            ),
            Err(failure) => (
                Run::new("", "", completed_at),
                ResultState::Done(Err(failure)),
            ),
        };
        SyncResult {
            target: target.clone(),
            run,
            state,
        }
    }
}

impl Machine for SyncResult {
    type Output = Result<SyncReport, Failure>;

    fn next(&mut self) -> Step<Self::Output> {
        match &mut self.state {
            ResultState::Read(read) | ResultState::ReadAgain(read) => forward(read.next()),
            ResultState::Done(result) => Step::Done(result.clone()),
        }
    }

    fn answer(&mut self, response: Response) {
        let (read, again) = match &mut self.state {
            ResultState::Read(read) => (read, false),
            ResultState::ReadAgain(read) => (read, true),
            ResultState::Done(_) => return,
        };
        read.answer(response);
        let Step::Done(read) = read.next() else {
            return;
        };
        self.state = match read {
            Ok(application) => match sync::report(&application, &self.target, &self.run) {
                SyncReport::Replaced { .. } if !again => {
                    ResultState::ReadAgain(Read::get(&self.target))
                }
                report => ResultState::Done(Ok(report)),
            },
            Err(failure) => ResultState::Done(Err(failure)),
        };
    }
}
