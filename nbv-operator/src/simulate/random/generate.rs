//! The generator of random scenarios: a SplitMix64 sequence drawn into a small world
//! of jobs, trigger targets and disturbances.

use std::time::Duration;

use nbv_core::annotations::RERUN;
use nbv_core::api::Phase;
use nbv_testkit::cluster::{Fault, FaultEffect, FaultMatch, Times, VerbKind};
use nbv_testkit::fixtures::{self, JobBuilder};
use nbv_testkit::scenario::{
    Action, Expectations, Mode, ObjectKey, ObjectRef, OperatorRestart, OperatorSettings,
    PhaseWrite, PodOutcome, PodResult, Scenario, Step,
};
use serde_json::{Value, json};

/// Mixed into a case's seed for the stream its requests to run again are drawn from.
const RERUN_STREAM: u64 = 0x7265_7275_6e00_0001;

/// A small, fast, seedable generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// `true` with `percent` % probability.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        // Callers pass non-empty constant slices.
        &items[(self.next() % items.len() as u64) as usize]
    }

    fn seconds(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_secs(self.range(lo, hi))
    }
}

/// The seed of case `case` of a run seeded with `seed`.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::case_seed;
///
/// assert_eq!(case_seed(1, 0), case_seed(1, 0));
/// assert_ne!(case_seed(1, 0), case_seed(1, 1));
/// ```
pub fn case_seed(seed: u64, case: u32) -> u64 {
    Rng(seed ^ u64::from(case).wrapping_mul(0xD1B5_4A32_D192_ED03)).next()
}

const ML: &str = "ml";
const SERVING: &str = "serving";
const ARGOCD: &str = "argocd";

/// A trigger annotation entry, and whether it can work in this world.
const TRIGGERS: [&str; 8] = [
    "{apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: scorer, action: restart}",
    "{apiVersion: apps/v1, kind: Deployment, name: gateway, action: restart}",
    "{apiVersion: v1, kind: ConfigMap, name: model-config, action: refresh}",
    "{apiVersion: argoproj.io/v1alpha1, kind: Application, name: models, namespace: argocd, action: sync}",
    "{apiVersion: argoproj.io/v1alpha1, kind: Application, name: platform, namespace: argocd, action: refresh}",
    "{apiVersion: serving.kserve.io/v1beta1, kind: InferenceService, name: scorer, namespace: serving, action: restart}",
    "{apiVersion: apps/v1, kind: Deployment, name: retired-gateway, action: restart}",
    "{apiVersion: apps/v1, kind: Deployment, name: gateway, namespace: serving, action: restart}",
];

/// Annotation values nbv must reject without losing anything else.
const BAD_TRIGGERS: [&str; 4] = [
    "- {kind: Deployment, action: restart}",
    "restart: gateway",
    "- {apiVersion: apps/v1, kind: Deployment, name: gateway, action: Restart}",
    "- [",
];
const BAD_WAVES: [&str; 3] = ["three", " 2", "1.5"];

fn world(rng: &mut Rng, objects: &mut Vec<Value>) -> bool {
    let serving = rng.chance(50);
    objects.push(fixtures::namespace(ARGOCD));
    objects.push(fixtures::namespace(ML));
    objects.push(fixtures::application(ARGOCD, "platform", ML));
    let models_home = if serving { SERVING } else { ML };
    objects.push(fixtures::application(ARGOCD, "models", models_home));
    let mut homes = vec![ML];
    if serving {
        objects.push(fixtures::namespace(SERVING));
        homes.push(SERVING);
    }
    for ns in homes {
        objects.push(fixtures::inference_service(ns, "scorer"));
        let epoch = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        for i in 1..=rng.range(1, 3) {
            objects.push(fixtures::predictor_pod(
                ns,
                "scorer",
                &format!("scorer-predictor-{i:05}"),
                epoch,
            ));
        }
        objects.push(fixtures::deployment(ns, "gateway"));
        objects.push(fixtures::config_map(ns, "model-config"));
    }
    serving
}

fn job(rng: &mut Rng, name: &str) -> Value {
    let mut builder = JobBuilder::new(ML, name);
    let wave = rng.range(0, 5);
    builder = match rng.range(0, 9) {
        0 => builder.sync_wave(*rng.pick(&BAD_WAVES)),
        1 => builder,
        2 => builder.sync_wave(format!("+{wave}")),
        _ => builder.sync_wave(wave),
    };
    if rng.chance(40) {
        builder = builder.block_wave(wave + 1);
    } else if rng.chance(5) {
        builder = builder.block_wave("next");
    }
    builder = match rng.range(0, 19) {
        0..=7 => builder.tracking_id("platform"),
        8..=12 => builder.instance("models"),
        13..=16 => builder.part_of("platform"),
        _ => builder,
    };
    if rng.chance(10) {
        builder = builder.on_success_trigger(*rng.pick(&BAD_TRIGGERS));
    } else {
        let count = rng.range(0, 3);
        let mut entries: Vec<&str> = Vec::new();
        for _ in 0..count {
            let entry = *rng.pick(&TRIGGERS);
            if !entries.contains(&entry) {
                entries.push(entry);
            }
        }
        if !entries.is_empty() {
            let value: Vec<String> = entries.iter().map(|e| format!("- {e}")).collect();
            builder = builder.on_success_trigger(value.join("\n"));
        }
    }
    builder.build()
}

fn phase(job: &str, phase: Phase, replace_status: bool) -> Action {
    Action::Phase(PhaseWrite {
        job: ObjectKey::new(ML, job),
        phase,
        message: None,
        replace_status,
    })
}

/// The runs of one job: phases, spec edits, status rewrites.
fn runs(rng: &mut Rng, name: &str, steps: &mut Vec<Step>) {
    let mut at = rng.seconds(20, 200);
    let runs = rng.range(1, 2);
    for run in 0..runs {
        if run > 0 {
            steps.push(Step {
                at,
                action: Action::Patch {
                    object: ObjectRef::namespaced("NotebookValidationJob", ML, name),
                    patch: json!({"spec": {"timeout": format!("{}m", 30 + run)}}),
                },
            });
            at += rng.seconds(5, 30);
        }
        steps.push(Step {
            at,
            action: phase(name, Phase::Initializing, false),
        });
        at += rng.seconds(10, 60);
        steps.push(Step {
            at,
            action: phase(name, Phase::ValidationRunning, false),
        });
        at += rng.seconds(60, 480);
        let outcome = if rng.chance(70) {
            Phase::Succeeded
        } else {
            Phase::Failed
        };
        steps.push(Step {
            at,
            action: phase(name, outcome, false),
        });
        if rng.chance(15) {
            // The other controller rewrites the same status from its own copy.
            steps.push(Step {
                at: at + rng.seconds(30, 300),
                action: phase(name, outcome, true),
            });
        }
        at += rng.seconds(420, 600);
    }
}

fn fault(rng: &mut Rng) -> Fault {
    const VERBS: [Option<VerbKind>; 7] = [
        None,
        Some(VerbKind::Get),
        Some(VerbKind::List),
        Some(VerbKind::Create),
        Some(VerbKind::Patch),
        Some(VerbKind::Patch),
        Some(VerbKind::Delete),
    ];
    const RESOURCES: [Option<&str>; 9] = [
        None,
        Some("notebookvalidationjobs"),
        Some("notebookvalidationjobs/status"),
        Some("applications"),
        Some("deployments"),
        Some("configmaps"),
        Some("pods"),
        Some("events"),
        Some("inferenceservices"),
    ];
    let verb = *rng.pick(&VERBS);
    let resource = rng.pick(&RESOURCES).map(str::to_owned);
    let (verb, effect) = match rng.range(0, 19) {
        // The API server answers a create with 409 only when the object exists
        // (AlreadyExists); Conflict is for writes of an object that changed.
        0..=3 if matches!(verb, Some(VerbKind::Patch | VerbKind::Delete)) => {
            (verb, Fault::status(409))
        }
        0..=11 => (verb, Fault::status(*rng.pick(&[500, 503, 429]))),
        12..=14 => (verb, FaultEffect::Timeout(rng.seconds(5, 30))),
        15..=18 => (
            verb,
            FaultEffect::AfterCommit(http::StatusCode::INTERNAL_SERVER_ERROR),
        ),
        _ => (Some(VerbKind::Watch), FaultEffect::DropWatch),
    };
    let times = match rng.range(1, 3) {
        1 => Times::Once,
        n => Times::N(n as u32),
    };
    Fault::new(
        FaultMatch {
            verb,
            resource,
            name: None,
        },
        effect,
        times,
    )
}

/// The outcomes of a job's validation Pods, by attempt (mode default): the kubelet ends
/// each Pod as they say, and nbv runs the phases, retries and effects.
fn pod_outcomes(rng: &mut Rng, name: &str, outcomes: &mut Vec<PodOutcome>) {
    for attempt in 0..=3 {
        let outcome = match rng.range(0, 19) {
            0..=11 => PodResult::Succeeded,
            12..=15 => PodResult::Failed,
            16..=18 => PodResult::Evicted,
            _ if attempt == 0 => PodResult::ImagePullBackOff,
            _ => PodResult::Evicted,
        };
        outcomes.push(PodOutcome {
            job: ObjectKey::new(ML, name),
            attempt: Some(attempt),
            outcome,
            start_after: rng.seconds(2, 20),
            run_for: rng.seconds(30, 360),
            cells: rng.range(1, 12) as u32,
        });
    }
}

/// `job` builds its image with Tekton, from a commit: every job so built shares the build.
fn with_build(job: &mut Value) {
    job["spec"]["notebook"]["git"] = json!({
        "url": "https://github.com/example/ml-pipeline.git",
        "ref": "3f0c2a9d5c6e4b7a8f9e0d1c2b3a4f5e6d7c8b9a",
    });
    job["spec"]["podConfig"]["buildConfig"] = json!({
        "enabled": true, "strategy": "tekton", "requirementsFile": "requirements.txt",
    });
}

/// A spec edit of the job, which starts a new run (mode default).
fn edits(rng: &mut Rng, name: &str, steps: &mut Vec<Step>) {
    if rng.chance(40) {
        steps.push(Step {
            at: rng.seconds(300, 1200),
            action: Action::Patch {
                object: ObjectRef::namespaced("NotebookValidationJob", ML, name),
                patch: json!({"spec": {"timeout": "45m"}}),
            },
        });
    }
}

/// Up to two requests to run the job again (Argo CD's action `rerun`), each answered
/// once when the run in progress has ended (mode default). Drawn from their own
/// stream, so that the rest of each seed's scenario is what it was before reruns.
fn reruns(rng: &mut Rng, name: &str, steps: &mut Vec<Step>) {
    let mut at = rng.seconds(200, 900);
    for request in 1..=rng.range(0, 2) {
        steps.push(Step {
            at,
            action: Action::Patch {
                object: ObjectRef::namespaced("NotebookValidationJob", ML, name),
                patch: json!({"metadata": {"annotations": {RERUN: request.to_string()}}}),
            },
        });
        at += rng.seconds(30, 600);
    }
}

/// Generates the scenario of one case from its seed.
///
/// # Examples
///
/// ```
/// use nbv_operator::simulate::random_scenario;
///
/// let scenario = random_scenario(42);
/// assert_eq!(scenario, random_scenario(42));
/// assert!(!scenario.timeline.is_empty());
/// ```
pub fn random_scenario(seed: u64) -> Scenario {
    let mut rng = Rng(seed);
    let mut objects = Vec::new();
    let serving = world(&mut rng, &mut objects);
    let mut steps = Vec::new();
    let mut outcomes = Vec::new();
    // Two cases in five let nbv run the notebooks itself.
    let mode = if rng.chance(40) {
        Mode::Default
    } else {
        Mode::GitopsOnly
    };
    let names = ["train-a", "train-b", "train-c", "train-d"];
    let job_count = rng.range(1, 4) as usize;
    for name in names.iter().take(job_count) {
        let mut job = job(&mut rng, name);
        // One job in four of mode default builds its image first; jobs that do share
        // one build (equal inputs at a commit).
        if mode == Mode::Default && rng.chance(25) {
            with_build(&mut job);
        }
        objects.push(job);
        match mode {
            Mode::GitopsOnly => runs(&mut rng, name, &mut steps),
            Mode::Default => {
                pod_outcomes(&mut rng, name, &mut outcomes);
                edits(&mut rng, name, &mut steps);
            }
        }
    }
    // In mode default the runs take their own time (retries back off 1, 2, 4 minutes):
    // disturbances fall within the first half hour.
    let last_step = steps.iter().map(|s| s.at).max().unwrap_or_default();
    if mode == Mode::Default && last_step < Duration::from_secs(20 * 60) {
        steps.push(Step {
            at: Duration::from_secs(20 * 60),
            action: Action::DropWatches,
        });
    }
    let last = steps
        .iter()
        .map(|s| s.at)
        .max()
        .unwrap_or_default()
        .as_secs();
    let anytime = |rng: &mut Rng| rng.seconds(0, last);
    for _ in 0..rng.range(0, 5) {
        steps.push(Step {
            at: anytime(&mut rng),
            action: Action::Fault(fault(&mut rng)),
        });
    }
    for _ in 0..rng.range(0, 2) {
        steps.push(Step {
            at: anytime(&mut rng),
            action: Action::DropWatches,
        });
    }
    if rng.chance(15) {
        steps.push(Step {
            at: anytime(&mut rng),
            action: Action::Compact,
        });
    }
    for _ in 0..rng.range(0, 2) {
        let restart = OperatorRestart {
            down_for: if rng.chance(50) {
                Duration::ZERO
            } else {
                rng.seconds(5, 45)
            },
            graceful: rng.chance(40),
        };
        steps.push(Step {
            at: anytime(&mut rng),
            action: Action::RestartOperator(restart),
        });
    }
    if rng.chance(40) {
        steps.push(Step {
            at: anytime(&mut rng),
            action: Action::RolloutRestart(ObjectRef::namespaced("Deployment", ML, "gateway")),
        });
    }
    for _ in 0..rng.range(0, 2) {
        steps.push(Step {
            at: anytime(&mut rng),
            action: Action::ArgoSync(ObjectKey::new(ARGOCD, "models")),
        });
    }
    if mode == Mode::Default {
        let mut stream = Rng(seed ^ RERUN_STREAM);
        for name in names.iter().take(job_count) {
            reruns(&mut stream, name, &mut steps);
        }
    }
    // A user deletes a job: whatever it was doing, its Application stops counting it.
    if rng.chance(25) {
        let name = *rng.pick(&names[..job_count]);
        let at = anytime(&mut rng);
        // Nobody writes to a job after it is gone.
        steps.retain(|step| {
            step.at < at
                || match &step.action {
                    Action::Phase(write) => write.job.name != name,
                    Action::Patch { object, .. } => object.name != name,
                    _ => true,
                }
        });
        steps.push(Step {
            at,
            action: Action::Delete(ObjectRef::namespaced("NotebookValidationJob", ML, name)),
        });
    }
    steps.sort_by_key(|s| s.at);
    let trigger_namespaces = if serving && rng.chance(50) {
        vec![SERVING.to_owned()]
    } else {
        Vec::new()
    };
    Scenario {
        name: format!("random-{seed:016x}"),
        description: String::new(),
        mode,
        epoch: chrono::DateTime::parse_from_rfc3339("2026-01-24T22:00:00Z")
            .map(|t| t.with_timezone(&chrono::Utc))
            .unwrap_or_default(),
        settle: Duration::from_secs(9 * 60),
        operator: OperatorSettings {
            trigger_namespaces,
            ..OperatorSettings::default()
        },
        objects,
        timeline: steps,
        pod_outcomes: outcomes,
        expect: Expectations::default(),
    }
}
