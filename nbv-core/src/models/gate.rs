//! The decision before a job's validation Pod starts: open (every model it names is
//! ready, and nbv may look at it), wait for a model, or fail naming it.
//!
//! The wait is bounded from the start of the run (`status.startTime`), not from when
//! nbv first looked, so a restart of the operator neither extends nor shortens it.

use chrono::{DateTime, Utc};

use super::{InferenceService, ModelFacts, ModelRef, ModelSettings, Protocol, Readiness};
use crate::api::{
    CleanEnvironmentCheck, ExistingEnvironmentCheck, ModelCheck, ModelValidationPhase,
    ModelValidationResult,
};
use crate::reconcile::Wake;
use crate::triggers::{ACCEPT_TRIGGERS_FROM, TriggerAccess};

/// A model the validation Pod may call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServedModel {
    /// The InferenceService.
    pub model: ModelRef,
    /// Its URL: the cluster-local address when it reports one, else `status.url`.
    pub url: String,
    /// The protocol its predictor speaks.
    pub protocol: Protocol,
    /// Its version (the predictor's latest ready revision).
    pub version: Option<String>,
}

/// What [`gate`] decided.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelGate {
    /// The Pod may start, told about these models.
    Open {
        /// The target models, ready, in the order of `targetModels`.
        models: Vec<ServedModel>,
        /// `status.modelValidationResult` so far (the prediction check is the Pod's).
        result: ModelValidationResult,
    },
    /// A model is not ready (or not known yet): look again when it changes, or at
    /// `until`, when the wait ends.
    Wait {
        /// What the job waits for, naming the model.
        message: String,
        /// When the wait ends and the job fails.
        until: DateTime<Utc>,
    },
    /// The job fails: the message names the model or the platform and what to fix.
    Fail {
        /// Why.
        message: String,
        /// `status.modelValidationResult`.
        result: ModelValidationResult,
    },
}

impl ModelGate {
    /// When to look at the job again for the gate's sake, besides when a model
    /// changes: when a wait ends ([`ModelGate::Wait::until`], which the job's status
    /// also reports); an open or failed gate asks for nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use nbv_core::models::ModelGate;
    /// use nbv_core::reconcile::Wake;
    ///
    /// let until = Utc.with_ymd_and_hms(2026, 1, 24, 22, 10, 0).unwrap();
    /// let wait = ModelGate::Wait { message: "waiting for the models".into(), until };
    /// assert_eq!(wait.wake(), Wake::by(until));
    /// ```
    pub fn wake(&self) -> Wake {
        match self {
            ModelGate::Wait { until, .. } => Wake::by(*until),
            ModelGate::Open { .. } | ModelGate::Fail { .. } => Wake::default(),
        }
    }
}

/// Decides whether the validation Pod of a job in `job_namespace`, whose run started
/// at `run_started`, may start.
///
/// Rules, in order:
/// 1. a model outside the job's namespace must be allowed by the rule triggers follow
///    (`--trigger-namespaces`, or the namespace's `mlops.dev/accept-triggers-from`),
///    else the job fails: nbv would otherwise read models for anyone who may create a
///    job;
/// 2. until the platform is known (the first listing has answered), the job waits;
/// 3. `phase: clean` or `both`: the platform's API must be served and readable by nbv,
///    else the job fails;
/// 4. `phase: existing` or `both`: while the platform is not served or not readable,
///    until the watch cache has synced, and while a model is absent, not `Ready` (or
///    its `PredictorReady` is `False`), reported for an older generation, or without a
///    URL, the job waits, until `run_started + timeout`;
///    then it fails naming what it waited for;
/// 5. otherwise the Pod may start.
///
/// # Examples
///
/// ```
/// use chrono::{TimeZone, Utc};
/// use nbv_core::api::ModelValidation;
/// use nbv_core::models::{gate, InferenceService, ModelFacts, ModelGate, ModelRef, ModelSettings, Platform};
/// use nbv_core::triggers::TriggerAccess;
///
/// struct Nothing;
/// impl ModelFacts for Nothing {
///     fn platform(&self) -> Option<Platform> { Some(Platform { served: true, unreadable: None }) }
///     fn inference_service(&self, _: &ModelRef) -> Option<InferenceService> { None }
///     fn synced(&self) -> bool { true }
///     fn namespace_accepts(&self, _: &str) -> Option<String> { None }
/// }
///
/// let spec = ModelValidation { target_models: Some(vec!["fraud".into()]), ..Default::default() };
/// let settings = ModelSettings::resolve(&spec, "ml").unwrap().unwrap();
/// let start = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
/// let now = start + chrono::Duration::minutes(1);
/// match gate(&settings, "ml", &TriggerAccess::default(), &Nothing, start, now) {
///     ModelGate::Wait { message, until } => {
///         assert!(message.contains("ml/fraud"));
///         assert_eq!(until, start + chrono::Duration::minutes(5));
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
pub fn gate(
    settings: &ModelSettings,
    job_namespace: &str,
    access: &TriggerAccess,
    facts: &impl ModelFacts,
    run_started: DateTime<Utc>,
    now: DateTime<Utc>,
) -> ModelGate {
    let mut result = ModelValidationResult {
        success: false,
        platform: settings.platform.as_str().to_owned(),
        platform_detected: false,
        phase: settings.phase.as_str().to_owned(),
        ..Default::default()
    };
    if let Some(model) = settings
        .targets
        .iter()
        .find(|m| !allowed(m, job_namespace, access, facts))
    {
        let message = format!(
            "spec.modelValidation.targetModels: {model} is in another namespace, where jobs of \
             {job_namespace} may not look; annotate namespace {ns} with {ACCEPT_TRIGGERS_FROM}: \
             {job_namespace}, or allow it with the operator flag --trigger-namespaces",
            ns = model.namespace
        );
        return fail(message, result);
    }
    let until = run_started + settings.timeout;
    // Until the first listing answers, nothing is known about the platform: neither
    // check may pass, and neither may fail.
    let Some(platform) = facts.platform() else {
        return wait_or_fail(
            "nbv has not listed the InferenceServices yet".to_owned(),
            until,
            now,
            result,
        );
    };
    result.platform_detected = platform.served;
    let checks_clean = settings.phase != ModelValidationPhase::Existing;
    let checks_existing = settings.phase != ModelValidationPhase::Clean;
    let problem = if !platform.served {
        Some("the API server does not serve serving.kserve.io/v1beta1 inferenceservices: install KServe (or OpenShift AI's model serving)".to_owned())
    } else {
        platform
            .unreadable
            .as_ref()
            .map(|why| format!("nbv cannot list and watch InferenceServices ({why}): grant its role get, list and watch on inferenceservices"))
    };
    if checks_clean {
        result.clean_environment_check = Some(CleanEnvironmentCheck {
            success: problem.is_none(),
            platform_available: platform.served,
            rbac_permissions: platform.unreadable.is_none(),
            network_connectivity: true,
            crds_installed: platform
                .served
                .then(|| vec!["inferenceservices.serving.kserve.io".to_owned()]),
            message: problem.clone(),
            ..Default::default()
        });
        if let Some(problem) = problem {
            return fail(format!("spec.modelValidation.platform: {problem}"), result);
        }
    }
    if !checks_existing {
        result.success = true;
        result.message = Some("the platform can serve models".to_owned());
        return ModelGate::Open {
            models: Vec::new(),
            result,
        };
    }
    // The models cannot be read yet; the platform may be installed, or nbv's role
    // fixed, while the job waits.
    if let Some(problem) = problem {
        return wait_or_fail(problem, until, now, result);
    }
    if !facts.synced() {
        return wait_or_fail(
            "nbv has not listed the InferenceServices yet".to_owned(),
            until,
            now,
            result,
        );
    }
    let mut models = Vec::with_capacity(settings.targets.len());
    let mut checked = Vec::with_capacity(settings.targets.len());
    let mut waiting = None;
    for model in &settings.targets {
        let service = facts.inference_service(model);
        let (check, served) = assess(model, service.as_ref());
        if served.is_none() && waiting.is_none() {
            waiting = check.message.clone();
        }
        checked.push(check);
        models.extend(served);
    }
    result.existing_environment_check = Some(ExistingEnvironmentCheck {
        success: waiting.is_none(),
        models_checked: Some(checked),
        ..Default::default()
    });
    match waiting {
        Some(why) => wait_or_fail(why, until, now, result),
        None => {
            result.success = true;
            result.message = Some(format!("{} model(s) ready", models.len()));
            ModelGate::Open { models, result }
        }
    }
}

/// Waits before `until`; from then on, fails.
fn wait_or_fail(
    why: String,
    until: DateTime<Utc>,
    now: DateTime<Utc>,
    result: ModelValidationResult,
) -> ModelGate {
    if now < until {
        return ModelGate::Wait {
            message: format!("waiting for the models: {why}"),
            until,
        };
    }
    fail(
        format!("spec.modelValidation.timeout: waited until {until}, and {why}"),
        result,
    )
}

/// The job fails with `message`, which the result records too.
fn fail(message: String, mut result: ModelValidationResult) -> ModelGate {
    result.message = Some(message.clone());
    ModelGate::Fail { message, result }
}

/// One model's check, and the model when the Pod may call it.
fn assess(
    model: &ModelRef,
    service: Option<&InferenceService>,
) -> (ModelCheck, Option<ServedModel>) {
    let mut check = ModelCheck {
        model_name: model.to_string(),
        ..Default::default()
    };
    let Some(service) = service else {
        check.message = Some(format!("InferenceService {model} does not exist"));
        return (check, None);
    };
    check.available = true;
    check.version = service.version.clone();
    let current = service.generation.is_none() || service.generation == service.observed_generation;
    let url = service.address_url.clone().or_else(|| service.url.clone());
    // Ready aggregates the predictor's readiness with the routes'; a predictor that
    // says it is not ready (a revision rolling out) is not served, whatever Ready says.
    let problem = if !service.ready.is_ready() {
        Some(not_ready(model, "Ready", &service.ready))
    } else if service.predictor_ready.status == Some(false) {
        Some(not_ready(model, "PredictorReady", &service.predictor_ready))
    } else if !current {
        Some(format!(
            "InferenceService {model} is not reconciled at its generation yet"
        ))
    } else if url.is_none() {
        Some(format!("InferenceService {model} reports no URL"))
    } else {
        None
    };
    check.healthy = problem.is_none();
    check.message = Some(problem.clone().unwrap_or_else(|| "ready".to_owned()));
    let served = match (problem, url) {
        (None, Some(url)) => Some(ServedModel {
            model: model.clone(),
            url,
            protocol: service.protocol,
            version: service.version.clone(),
        }),
        _ => None,
    };
    (check, served)
}

/// `InferenceService <model> is not <condition> (<reason>: <message>)`.
fn not_ready(model: &ModelRef, condition: &str, readiness: &Readiness) -> String {
    let said = [readiness.reason.as_deref(), readiness.message.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(": ");
    if said.is_empty() {
        format!("InferenceService {model} is not {condition}")
    } else {
        format!("InferenceService {model} is not {condition} ({said})")
    }
}

fn allowed(
    model: &ModelRef,
    job_namespace: &str,
    access: &TriggerAccess,
    facts: &impl ModelFacts,
) -> bool {
    let accepts = facts.namespace_accepts(&model.namespace);
    access
        .grant_in(&model.namespace, job_namespace, accepts.as_deref())
        .is_some()
}
