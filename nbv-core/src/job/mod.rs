//! The job machine: one reconcile of a `NotebookValidationJob` as a sans-IO state
//! machine, the front door for the `nbv` operator and for embedders alike.
//!
//! A shell starts a [`Reconcile`] with the job it observed, the [`Settings`] it runs
//! with and the [`Facts`] of the moment, then loops: [`Reconcile::next`] asks for one
//! [`Request`](crate::io::Request) of the closed set in [`crate::io`], the shell
//! carries it out (one API call, or one read of a watch cache) and gives the
//! [`Response`](crate::io::Response) to [`Reconcile::answer`]; at the end it gets a
//! [`Done`]: whether it finished, when to look again, and what to remember.
//!
//! Every decision and every protocol is here: the phase machine's steps, the model
//! gate's questions, the Pod's creation and what a refusal means, the plan, each
//! effect's calls ([`crate::carry`]), the status writes with their preconditions and
//! the fallback after a conflict, and one classification of the API server's
//! answers. The shell decides nothing.
//!
//! # Examples
//!
//! A shell's whole reconcile:
//!
//! ```
//! use std::sync::Arc;
//! use chrono::{TimeZone, Utc};
//! use nbv_core::io::{Request, Response, Step};
//! use nbv_core::job::{Facts, Reconcile, Settings};
//! # let job: nbv_core::api::NotebookValidationJob = serde_json::from_value(serde_json::json!({
//! #     "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
//! #     "metadata": {"name": "train", "namespace": "ml", "uid": "u1", "generation": 1, "resourceVersion": "7"},
//! #     "spec": {"notebook": {"git": {"url": "https://example.com/r.git", "ref": "main"},
//! #              "path": "train.ipynb"}, "podConfig": {"containerImage": "img"}}
//! # })).unwrap();
//! # let now = Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap();
//! /// This example's "cluster": it holds no Pod, creates what is asked and stores
//! /// every status write (answering with the job as it was: enough here).
//! let carry_out = |request: &Request| match request {
//!     Request::Patch { .. } => Response::Object(Some(serde_json::to_value(&job).unwrap())),
//!     Request::Create { body, .. } => Response::Object(Some(body.clone())),
//!     Request::DeleteAll { .. } => Response::Objects(Vec::new()),
//!     _ => Response::Object(None),
//! };
//!
//! let mut reconcile = Reconcile::start(&job, Arc::new(Settings::default()), Facts::default(), now);
//! let mut requests = Vec::new();
//! let done = loop {
//!     match reconcile.next() {
//!         Step::Io(request) => {
//!             reconcile.answer(carry_out(&request));
//!             requests.push(request.to_string());
//!         }
//!         Step::Done(done) => break done,
//!     }
//! };
//! assert!(done.result.is_ok(), "{:?}", done.result);
//! assert_eq!(requests[..3], [
//!     "DELETE Pod in ml with app.kubernetes.io/managed-by=nbv,mlops.dev/job=train,mlops.dev/attempt,mlops.dev/attempt!=g1-r0",
//!     "read Pod ml/train-g1-r0 from the cache",
//!     "POST Pod ml/train-g1-r0",
//! ]);
//! assert!(requests.contains(&"PATCH NotebookValidationJob ml/train status".to_owned()));
//! ```

mod advance;
mod build;
mod failure;
mod pod;
mod reconcile;

use std::sync::Arc;
use std::time::Duration;

use crate::aggregate::TrackingSettings;
use crate::api::EffectLedger;
use crate::build::BuildDefaults;
use crate::carry::CarryFacts;
use crate::models::ModelRef;
use crate::phase::RetryPolicy;
use crate::plan::{EffectRetryPolicy, ParsedAnnotations};
use crate::pod::PodDefaults;
use crate::reconcile::RequeuePolicy;
use crate::triggers::{DEFAULT_ARGOCD_NAMESPACE, TriggerAccess};

pub use advance::Advanced;
pub use failure::Failure;
pub use pod::other_attempts_selector;
pub use reconcile::Reconcile;

/// What a shell runs every reconcile with: its configuration.
///
/// # Examples
///
/// ```
/// use nbv_core::job::Settings;
///
/// let settings = Settings { gitops_only: true, ..Settings::default() };
/// assert_eq!(settings.argocd_namespace, "argocd");
/// ```
#[derive(Clone, Debug)]
pub struct Settings {
    /// Another controller runs the notebooks: nbv only coordinates (`--gitops-only`).
    pub gitops_only: bool,
    /// Retries of notebook runs.
    pub retry: RetryPolicy,
    /// The retry limit runs show (`--max-retries`).
    pub max_retries: u32,
    /// Retries of failed effects.
    pub effect_retry: EffectRetryPolicy,
    /// When to look again.
    pub requeue: RequeuePolicy,
    /// How validation Pods are built and observed.
    pub pod_defaults: PodDefaults,
    /// How long a refused Pod is tried again (unless a job's annotation says).
    pub pod_admission_timeout: Duration,
    /// Where triggers (and models) may be looked at beyond a job's namespace.
    pub trigger_access: TriggerAccess,
    /// Argo CD's control-plane namespace.
    pub argocd_namespace: String,
    /// Where an Application named without a namespace is looked for first (then in
    /// the job's namespace).
    pub application_namespaces: Vec<String>,
    /// How jobs are tracked to their parent Application.
    pub tracking: TrackingSettings,
    /// How images are built (`podConfig.buildConfig`).
    pub build: BuildDefaults,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            gitops_only: false,
            retry: RetryPolicy::default(),
            max_retries: 3,
            effect_retry: EffectRetryPolicy::default(),
            requeue: RequeuePolicy::default(),
            pod_defaults: PodDefaults::default(),
            pod_admission_timeout: Duration::from_secs(600),
            trigger_access: TriggerAccess::default(),
            argocd_namespace: DEFAULT_ARGOCD_NAMESPACE.to_owned(),
            application_namespaces: vec![DEFAULT_ARGOCD_NAMESPACE.to_owned()],
            tracking: TrackingSettings::default(),
            build: BuildDefaults::default(),
        }
    }
}

/// What a shell knows at the start of one reconcile, besides the job.
///
/// # Examples
///
/// ```
/// use nbv_core::job::Facts;
///
/// let facts = Facts::default();
/// assert!(facts.memory.ledger.is_none());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Facts {
    /// How effects are carried out, and what nbv may read in Argo CD's namespace now.
    pub carry: CarryFacts,
    /// The job's trigger annotations, parsed (a shell keeps parses in a
    /// [`PlanCache`](crate::plan::PlanCache) while the annotation does not change).
    pub parsed: Arc<ParsedAnnotations>,
    /// What this process remembers of its last writes to the job.
    pub memory: Memory,
}

/// What a process remembers of its own recent writes to one job, for the reconciles
/// that run before its watch cache shows them. A shell keeps one per job uid, gives it
/// to [`Facts::memory`] and keeps [`Done::memory`] in its place (dropping it when it is
/// empty).
///
/// # Examples
///
/// ```
/// use nbv_core::job::Memory;
///
/// assert!(Memory::default().is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Memory {
    /// The ledger it recorded last (until the job shows it).
    pub ledger: Option<EffectLedger>,
    /// The versions of the job that its last successful status write replaced: views
    /// of them are stale.
    pub superseded: Vec<String>,
}

impl Memory {
    /// Whether there is nothing to remember.
    pub fn is_empty(&self) -> bool {
        self.ledger.is_none() && self.superseded.is_empty()
    }
}

/// The end of a reconcile.
///
/// # Examples
///
/// ```
/// use nbv_core::job::Done;
///
/// let done = Done::default();
/// assert!(done.result.is_ok() && done.requeue.is_none());
/// ```
#[derive(Clone, Debug)]
pub struct Done {
    /// Whether it finished; a failure is tried again after [`Done::requeue`].
    pub result: Result<(), Failure>,
    /// When to look again; `None`: when the job changes (a shell's resync still
    /// looks now and then).
    pub requeue: Option<Duration>,
    /// What to remember of this job until the next reconcile.
    pub memory: Memory,
    /// The models the job waits for: reconcile it again when one changes.
    pub waits_for: Vec<ModelRef>,
    /// What happened on the way, for logs and metrics.
    pub notes: Vec<Note>,
    /// The job is being deleted: forget what is kept about it.
    pub deleted: bool,
}

impl Default for Done {
    fn default() -> Self {
        Done {
            result: Ok(()),
            requeue: None,
            memory: Memory::default(),
            waits_for: Vec::new(),
            notes: Vec::new(),
            deleted: false,
        }
    }
}

/// Something a reconcile met on the way that a shell logs or counts; none of it
/// changes what the reconcile does.
///
/// # Examples
///
/// ```
/// use nbv_core::job::Note;
///
/// let note = Note::PodCreated { namespace: "ml".into(), ok: true };
/// assert!(matches!(note, Note::PodCreated { ok: true, .. }));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Note {
    /// A validation Pod's creation was asked for: created (or found created), or not.
    PodCreated {
        /// Its namespace.
        namespace: String,
        /// Whether it exists now.
        ok: bool,
    },
    /// The API server refused a validation Pod; it is tried again.
    PodRefusedRetrying {
        /// The Pod's name.
        pod: String,
        /// Why, as the `PodAdmitted` condition's reason says.
        reason: String,
        /// When it is tried again.
        retry_in: Duration,
    },
    /// The Pods of earlier attempts could not be deleted (they are tried again with
    /// the next run or retry).
    EarlierPodsKept(Failure),
    /// An Event could not be created (the condition it announces is written).
    EventNotCreated(String),
    /// An effect failed; it is retried as its ledger says.
    EffectFailed {
        /// The effect's key.
        effect: String,
        /// What went wrong.
        error: String,
    },
    /// A trigger was carried out (or deferred, refused, failed).
    Triggered {
        /// The trigger, as written.
        trigger: String,
        /// Its action (`restart`, `sync`, `refresh`).
        action: &'static str,
        /// How it went.
        status: crate::carry::TriggerStatus,
        /// Why it was allowed to act, when it was.
        grant: Option<String>,
    },
    /// A run ended: its notification was created now.
    RunEnded {
        /// Its terminal phase.
        phase: crate::api::Phase,
        /// From its start to its completion.
        duration: Option<Duration>,
    },
    /// Something worth a warning in the log.
    Warning(String),
}
