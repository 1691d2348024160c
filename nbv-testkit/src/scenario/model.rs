//! The validated scenario: what a simulation sets up, what happens when, and what
//! should hold at the end.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, Utc};
use nbv_core::api::Phase;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::cluster::Fault;

/// Who runs the notebooks.
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::Mode;
///
/// assert_eq!("gitops-only".parse::<Mode>(), Ok(Mode::GitopsOnly));
/// assert_eq!(Mode::Default.to_string(), "default");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// `nbv run --gitops-only`: another controller writes the phases (the timeline's
    /// `phase` steps); nbv carries out the Argo CD integration.
    GitopsOnly,
    /// `nbv run`: nbv runs the phase machine and the validation Pods, whose outcome the
    /// simulated kubelet takes from the scenario's `podOutcomes`.
    Default,
}

impl Mode {
    /// The name used in scenario files and reports.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::scenario::Mode;
    ///
    /// assert_eq!(Mode::GitopsOnly.as_str(), "gitops-only");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Mode::GitopsOnly => "gitops-only",
            Mode::Default => "default",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "gitops-only" => Ok(Mode::GitopsOnly),
            "default" => Ok(Mode::Default),
            other => Err(format!(
                "unknown mode {other:?}; expected gitops-only or default"
            )),
        }
    }
}

/// `namespace/name` of a namespaced object whose kind the context gives.
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::ObjectKey;
///
/// let key: ObjectKey = "ml/train".parse()?;
/// assert_eq!((key.namespace.as_str(), key.name.as_str()), ("ml", "train"));
/// assert_eq!(key.to_string(), "ml/train");
/// assert!("train".parse::<ObjectKey>().is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ObjectKey {
    /// The namespace.
    pub namespace: String,
    /// The name.
    pub name: String,
}

impl ObjectKey {
    /// The key of `namespace/name`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::scenario::ObjectKey;
    ///
    /// assert_eq!(ObjectKey::new("argocd", "models").to_string(), "argocd/models");
    /// ```
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        ObjectKey {
            namespace: namespace.into(),
            name: name.into(),
        }
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

impl FromStr for ObjectKey {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once('/') {
            Some((ns, name)) if !ns.is_empty() && !name.is_empty() && !name.contains('/') => {
                Ok(ObjectKey::new(ns, name))
            }
            _ => Err(format!("{s:?} is not namespace/name (e.g. ml/train)")),
        }
    }
}

impl TryFrom<String> for ObjectKey {
    type Error = String;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<ObjectKey> for String {
    fn from(key: ObjectKey) -> String {
        key.to_string()
    }
}

/// An object of any kind: `kind` is resolved as `kubectl get` resolves a resource (a
/// kind, a plural, either with `.group`), `namespace` is left out for cluster-scoped
/// kinds.
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::ObjectRef;
///
/// let object = ObjectRef::namespaced("Deployment", "ml", "model-server");
/// assert_eq!(object.to_string(), "Deployment ml/model-server");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ObjectRef {
    /// Kind or resource name.
    pub kind: String,
    /// Namespace, for namespaced kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl ObjectRef {
    /// A namespaced object.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::scenario::ObjectRef;
    ///
    /// assert_eq!(ObjectRef::namespaced("Pod", "ml", "p").namespace.as_deref(), Some("ml"));
    /// ```
    pub fn namespaced(
        kind: impl Into<String>,
        namespace: impl Into<String>,
        name: impl Into<String>,
    ) -> Self {
        ObjectRef {
            kind: kind.into(),
            namespace: Some(namespace.into()),
            name: name.into(),
        }
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {ns}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// How the simulated operator is configured (the flags of `nbv run`).
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::OperatorSettings;
///
/// let settings = OperatorSettings::default();
/// assert_eq!(settings.application_namespaces, ["argocd"]);
/// assert_eq!(settings.max_retries, 3);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct OperatorSettings {
    /// `--application-namespaces`.
    pub application_namespaces: Vec<String>,
    /// `--trigger-namespaces`.
    pub trigger_namespaces: Vec<String>,
    /// `--max-retries`.
    pub max_retries: u32,
}

impl Default for OperatorSettings {
    fn default() -> Self {
        OperatorSettings {
            application_namespaces: vec!["argocd".to_owned()],
            trigger_namespaces: Vec::new(),
            max_retries: 3,
        }
    }
}

/// A complete scenario: the cluster at the start, a timeline, and expectations.
///
/// Read one with [`Scenario::from_yaml`]; `docs/simulate.md` describes the file format.
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::{Action, Mode, Scenario};
///
/// let scenario = Scenario::from_yaml("
/// name: restart
/// mode: gitops-only
/// timeline:
///   - at: 5m
///     restartOperator: {downFor: 30s}
/// ")?;
/// assert_eq!(scenario.mode, Mode::GitopsOnly);
/// assert!(matches!(scenario.timeline[0].action, Action::RestartOperator(_)));
/// assert_eq!(scenario.duration().as_secs(), 5 * 60 + 6 * 60);
/// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// A short name, for reports.
    pub name: String,
    /// What the scenario shows.
    pub description: String,
    /// Who runs the notebooks.
    pub mode: Mode,
    /// The virtual time at which the simulation starts.
    pub epoch: DateTime<Utc>,
    /// How long the simulation runs after the last timeline step.
    pub settle: Duration,
    /// The operator's configuration.
    pub operator: OperatorSettings,
    /// Objects present at the start (any registered kind; `.status` is kept).
    pub objects: Vec<Value>,
    /// What happens, ordered by time (steps at the same time in file order).
    pub timeline: Vec<Step>,
    /// How the validation Pods of each job end ([`Mode::Default`] only).
    pub pod_outcomes: Vec<PodOutcome>,
    /// What must hold at the end, besides the invariants.
    pub expect: Expectations,
}

impl Scenario {
    /// How long the simulation runs: the last step's time plus [`Scenario::settle`].
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::scenario::Scenario;
    ///
    /// let scenario = Scenario::from_yaml("{name: idle, mode: gitops-only, settle: 2m}")?;
    /// assert_eq!(scenario.duration().as_secs(), 120);
    /// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
    /// ```
    pub fn duration(&self) -> Duration {
        let last = self.timeline.last().map_or(Duration::ZERO, |s| s.at);
        last.saturating_add(self.settle)
    }
}

/// One timeline step: at `at` after the start, `action` happens.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_testkit::scenario::{Action, Scenario};
///
/// let scenario = Scenario::from_yaml("{name: s, mode: gitops-only, timeline: [{at: 90s, dropWatches: {}}]}")?;
/// let step = &scenario.timeline[0];
/// assert_eq!((step.at, &step.action), (Duration::from_secs(90), &Action::DropWatches));
/// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Time since the start of the simulation.
    pub at: Duration,
    /// What happens.
    pub action: Action,
}

/// What a timeline step does.
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::{Action, ObjectRef, Scenario};
///
/// let scenario = Scenario::from_yaml("
/// name: s
/// mode: gitops-only
/// timeline:
///   - at: 1m
///     rolloutRestart: {kind: Deployment, namespace: ml, name: web}
/// ")?;
/// assert_eq!(scenario.timeline[0].action,
///            Action::RolloutRestart(ObjectRef::namespaced("Deployment", "ml", "web")));
/// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Another controller writes a job's phase ([`Mode::GitopsOnly`] only).
    Phase(PhaseWrite),
    /// A user applies a JSON merge patch to an object (for example a spec edit, which
    /// starts a new run).
    Patch {
        /// The object.
        object: ObjectRef,
        /// The merge patch (RFC 7386).
        patch: Value,
    },
    /// A user creates or replaces an object.
    Apply(Value),
    /// A user deletes an object.
    Delete(ObjectRef),
    /// A user runs `kubectl rollout restart` on a Deployment, StatefulSet or DaemonSet.
    RolloutRestart(ObjectRef),
    /// Argo CD runs a sync of its own on this Application (auto-sync or a user's), which
    /// replaces the Application's last operation.
    ArgoSync(ObjectKey),
    /// The operator stops and a new one starts with fresh in-memory state.
    RestartOperator(OperatorRestart),
    /// A fault is injected into the API server.
    Fault(Fault),
    /// Every injected fault is removed.
    ClearFaults,
    /// Every open watch stream ends, as after a lost connection.
    DropWatches,
    /// The API server forgets its change feed: resumed watches get 410 Gone.
    Compact,
}

/// A phase written by another controller, as the upstream operator writes it.
///
/// `Initializing` (or legacy `Pending`) starts a new run: `startTime` is now,
/// `completionTime` is removed and `observedGeneration` is the job's generation.
/// A terminal phase sets `completionTime` to now, unless the job already holds that
/// phase with a completion time (a rewrite of the same status keeps it).
///
/// # Examples
///
/// ```
/// use nbv_core::api::Phase;
/// use nbv_testkit::scenario::{Action, Scenario};
///
/// let scenario = Scenario::from_yaml(
///     "{name: s, mode: gitops-only, timeline: [{at: 5m, phase: {job: ml/train, phase: Failed, replaceStatus: true}}]}",
/// )?;
/// let Action::Phase(write) = &scenario.timeline[0].action else { panic!("a phase step") };
/// assert_eq!((write.phase, write.replace_status, write.message.as_deref()), (Phase::Failed, true, None));
/// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseWrite {
    /// The job.
    pub job: ObjectKey,
    /// The phase written.
    pub phase: Phase,
    /// `status.message`, if any.
    pub message: Option<String>,
    /// Write the whole status, dropping the fields the other controller does not know
    /// (nbv's `status.effects` and conditions), as a controller that replaces the
    /// status from its own copy of the object does.
    pub replace_status: bool,
}

/// An operator restart.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nbv_testkit::scenario::{Action, OperatorRestart, Scenario};
///
/// let scenario = Scenario::from_yaml("{name: s, mode: gitops-only, timeline: [{at: 1m, restartOperator: {downFor: 30s}}]}")?;
/// assert_eq!(scenario.timeline[0].action,
///            Action::RestartOperator(OperatorRestart { down_for: Duration::from_secs(30), graceful: false }));
/// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperatorRestart {
    /// How long no operator runs.
    pub down_for: Duration,
    /// `true`: shutdown as on SIGTERM (running reconciles finish); `false`: a crash at
    /// whatever point the operator has reached.
    pub graceful: bool,
}

/// How the validation Pod of a job's attempt ends ([`Mode::Default`]).
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::{PodResult, Scenario};
///
/// let scenario = Scenario::from_yaml(
///     "{name: s, mode: default, podOutcomes: [{job: ml/train, attempt: 0, outcome: evicted}]}",
/// )?;
/// let outcome = &scenario.pod_outcomes[0];
/// assert_eq!((outcome.attempt, outcome.outcome, outcome.cells), (Some(0), PodResult::Evicted, 3));
/// assert_eq!(outcome.run_for.as_secs(), 120);
/// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PodOutcome {
    /// The job.
    pub job: ObjectKey,
    /// The retry this outcome is for (0: the first attempt); `None`: every attempt
    /// without an outcome of its own.
    pub attempt: Option<u32>,
    /// How it ends.
    pub outcome: PodResult,
    /// How long after its creation the Pod runs.
    pub start_after: Duration,
    /// How long it runs before it ends.
    pub run_for: Duration,
    /// How many code cells the notebook reports.
    pub cells: u32,
}

/// How a validation Pod ends.
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::PodResult;
///
/// assert_eq!("imagePullBackOff".parse::<PodResult>(), Ok(PodResult::ImagePullBackOff));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PodResult {
    /// Every cell ran.
    Succeeded,
    /// A cell raised.
    Failed,
    /// The kubelet evicted the Pod (a transient failure).
    Evicted,
    /// The image cannot be pulled; the Pod stays pending.
    ImagePullBackOff,
}

impl FromStr for PodResult {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "succeeded" => Ok(PodResult::Succeeded),
            "failed" => Ok(PodResult::Failed),
            "evicted" => Ok(PodResult::Evicted),
            "imagePullBackOff" => Ok(PodResult::ImagePullBackOff),
            other => Err(format!(
                "unknown outcome {other:?}; expected succeeded, failed, evicted or imagePullBackOff"
            )),
        }
    }
}

/// What must hold at the end of a scenario, besides the invariants.
///
/// Annotation values of `None` (`null` in YAML) mean "absent".
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::Scenario;
///
/// let scenario = Scenario::from_yaml("
/// name: e
/// mode: gitops-only
/// expect:
///   triggersFired: 1
///   jobs:
///     ml/train: {phase: Succeeded, annotations: {mlops.dev/wave-failed: null}}
/// ")?;
/// let job = &scenario.expect.jobs[&"ml/train".parse().unwrap()];
/// assert_eq!(job.annotations["mlops.dev/wave-failed"], None);
/// assert_eq!(scenario.expect.triggers_fired, Some(1));
/// # Ok::<(), nbv_testkit::scenario::ScenarioError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Expectations {
    /// Jobs by `namespace/name`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub jobs: BTreeMap<ObjectKey, ExpectedJob>,
    /// Annotations of Applications by `namespace/name`.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub applications: BTreeMap<ObjectKey, BTreeMap<String, Option<String>>>,
    /// Outcomes of `nbv wait` at the end.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<ExpectedGate>,
    /// How many triggers took effect in all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub triggers_fired: Option<usize>,
}

impl Expectations {
    /// Whether nothing is expected.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::scenario::Expectations;
    ///
    /// assert!(Expectations::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self == &Expectations::default()
    }
}

/// The expected end state of a job.
///
/// # Examples
///
/// ```
/// use nbv_core::api::Phase;
/// use nbv_testkit::scenario::ExpectedJob;
///
/// let expected: ExpectedJob = serde_yaml_ng::from_str("{phase: Succeeded, annotations: {mlops.dev/wave-failed: null}}").unwrap();
/// assert_eq!(expected.phase, Some(Phase::Succeeded));
/// assert_eq!(expected.annotations["mlops.dev/wave-failed"], None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct ExpectedJob {
    /// `status.phase`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<Phase>,
    /// Annotations (`None`: absent).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, Option<String>>,
}

/// The expected outcome of `nbv wait --namespace <namespace> --wave <wave>`.
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::{ExpectedGate, GateStatus};
///
/// let gate: ExpectedGate = serde_yaml_ng::from_str("{namespace: ml, wave: 4, status: open}").unwrap();
/// assert_eq!((gate.wave, gate.status), (4, GateStatus::Open));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpectedGate {
    /// Namespace of the jobs.
    pub namespace: String,
    /// The gated wave.
    pub wave: i64,
    /// How `nbv wait` ends.
    pub status: GateStatus,
}

/// How `nbv wait` ends.
///
/// # Examples
///
/// ```
/// use nbv_testkit::scenario::GateStatus;
///
/// assert_eq!(GateStatus::Open.as_str(), "open");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateStatus {
    /// The wave may proceed.
    Open,
    /// A blocking job failed or is misconfigured.
    Failed,
    /// Still closed: a blocking job has not completed its wave.
    Waiting,
}

impl GateStatus {
    /// The name used in scenario files and reports.
    ///
    /// # Examples
    ///
    /// ```
    /// use nbv_testkit::scenario::GateStatus;
    ///
    /// assert_eq!(GateStatus::Waiting.as_str(), "waiting");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            GateStatus::Open => "open",
            GateStatus::Failed => "failed",
            GateStatus::Waiting => "waiting",
        }
    }
}
