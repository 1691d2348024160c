//! The run's image build as the job machine carries it out: the build found or created
//! by its key, read, cancelled past its timeout, and its image run by the Pod.

use chrono::{DateTime, Duration, TimeZone, Utc};
use nbv_core::api::{BuildPhase, Phase};
use nbv_core::job::Memory;
use nbv_core::pod::{PodDefaults, PodPolicy};
use nbv_testkit::fixtures::JobBuilder;
use serde_json::{Value, json};

use super::cluster::Cluster;
use super::reconcile;

/// A commit: builds of equal inputs at it are shared.
const COMMIT: &str = "0123456789abcdef0123456789abcdef01234567";

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0).unwrap()
}

/// `ml/<name>` at generation 1, building with `build` (merged into `buildConfig`).
fn job(name: &str, git_ref: &str, build: Value) -> Value {
    let mut config = json!({"enabled": true, "strategy": "tekton"});
    json_patch::merge(&mut config, &build);
    JobBuilder::new("ml", name)
        .uid(format!("uid-{name}"))
        .generation(1)
        .spec_fields(json!({
            "notebook": {"git": {"url": "https://example.com/org/repo.git", "ref": git_ref},
                         "path": "notebooks/tier2/train.ipynb"},
            "podConfig": {"containerImage": "quay.io/example/papermill:1", "buildConfig": config},
        }))
        .build()
}

fn cluster_with(jobs: &[Value]) -> Cluster {
    let mut cluster = Cluster::new();
    for job in jobs {
        cluster.put(job.clone());
    }
    cluster
}

fn status_of(cluster: &Cluster, name: &str) -> nbv_core::api::NotebookValidationJobStatus {
    let stored = cluster
        .get("NotebookValidationJob", "ml", name)
        .expect("the job")
        .clone();
    serde_json::from_value::<nbv_core::api::NotebookValidationJob>(stored)
        .expect("a job")
        .status
        .expect("a status")
}

fn reconcile_job(cluster: &mut Cluster, name: &str, now: DateTime<Utc>) -> nbv_core::job::Done {
    let stored = cluster
        .get("NotebookValidationJob", "ml", name)
        .expect("the job")
        .clone();
    let job = serde_json::from_value(stored).expect("a job");
    super::reconcile_view(cluster, &job, Memory::default(), now)
}

/// The PipelineRun of the only build, as the cluster holds it.
fn pipeline_run(cluster: &Cluster) -> Value {
    let runs = cluster.all("PipelineRun");
    assert_eq!(runs.len(), 1, "one build: {:#?}", cluster.log);
    runs[0].clone()
}

/// Tekton's controller ends the PipelineRun `name` with `status`.
fn tekton_ends(cluster: &mut Cluster, status: Value) {
    let mut run = pipeline_run(cluster);
    run["status"] = status;
    cluster.put(run);
}

fn succeeded_with(digest: &str) -> Value {
    json!({
        "conditions": [{"type": "Succeeded", "status": "True", "reason": "Succeeded"}],
        "results": [{"name": "IMAGE_DIGEST", "value": digest},
                    {"name": "SUMMARY", "value": "requirements from notebooks/tier2/requirements.txt"}],
    })
}

const DIGEST: &str = "sha256:1111111111111111111111111111111111111111111111111111111111111111";

#[test]
fn a_build_is_created_once_then_its_digest_is_what_the_pod_runs() {
    let mut cluster = cluster_with(&[job("train", "main", json!({}))]);
    let first = reconcile(&mut cluster, Memory::default(), now());
    assert!(first.result.is_ok(), "{:?}", first.result);
    let run = pipeline_run(&cluster);
    let name = run["metadata"]["name"].as_str().expect("a name").to_owned();
    assert!(name.starts_with("nbv-build-"), "{name}");
    let status = status_of(&cluster, "train");
    assert_eq!(status.phase, Some(Phase::Building));
    let build = status.build_status.clone().expect("buildStatus");
    assert_eq!(build.build_name.as_deref(), Some(name.as_str()));
    assert_eq!(build.strategy.as_deref(), Some("tekton"));
    assert_eq!(build.phase, Some(BuildPhase::Running));
    assert!(
        first
            .requeue
            .is_some_and(|r| r <= std::time::Duration::from_secs(30))
    );

    // Looked at again while it runs: nothing is created twice.
    let posts = |c: &Cluster| {
        c.log
            .iter()
            .filter(|l| l.starts_with("POST PipelineRun"))
            .count()
    };
    reconcile(
        &mut cluster,
        Memory::default(),
        now() + Duration::seconds(30),
    );
    assert_eq!(posts(&cluster), 1);

    tekton_ends(&mut cluster, succeeded_with(DIGEST));
    let done = reconcile(
        &mut cluster,
        Memory::default(),
        now() + Duration::minutes(3),
    );
    assert!(done.result.is_ok(), "{:?}", done.result);
    let status = status_of(&cluster, "train");
    let build = status.build_status.clone().expect("buildStatus");
    assert_eq!(build.phase, Some(BuildPhase::Complete));
    let repository = run["metadata"]["annotations"]["mlops.dev/image"]
        .as_str()
        .and_then(|image| image.rsplit_once(':'))
        .map(|(repository, _)| repository.to_owned())
        .expect("the image annotation");
    let image = format!("{repository}@{DIGEST}");
    assert_eq!(build.image_reference.as_deref(), Some(image.as_str()));
    assert_eq!(
        build.message.as_deref(),
        Some("requirements from notebooks/tier2/requirements.txt")
    );
    assert!(build.completion_time.is_some() && build.duration.is_some());
    let pod = cluster
        .get("Pod", "ml", "train-g1-r0")
        .expect("the validation Pod");
    assert_eq!(pod["spec"]["containers"][0]["image"], json!(image));
    assert_eq!(posts(&cluster), 1);
}

#[test]
fn jobs_with_equal_inputs_at_a_commit_share_one_build() {
    let jobs: Vec<Value> = (0..10)
        .map(|i| job(&format!("train-{i}"), COMMIT, json!({})))
        .collect();
    let mut cluster = cluster_with(&jobs);
    for i in 0..10 {
        let done = reconcile_job(&mut cluster, &format!("train-{i}"), now());
        assert!(done.result.is_ok(), "{:?}", done.result);
    }
    tekton_ends(&mut cluster, succeeded_with(DIGEST));
    for i in 0..10 {
        reconcile_job(
            &mut cluster,
            &format!("train-{i}"),
            now() + Duration::minutes(3),
        );
        let status = status_of(&cluster, &format!("train-{i}"));
        // Built: the Pod is created, and the run waits for it to run.
        assert_eq!(status.phase, Some(Phase::BuildComplete), "train-{i}");
        assert!(
            cluster
                .get("Pod", "ml", &format!("train-{i}-g1-r0"))
                .is_some()
        );
        assert_eq!(
            status.build_status.and_then(|b| b.phase),
            Some(BuildPhase::Complete)
        );
    }
    assert_eq!(cluster.all("PipelineRun").len(), 1);
}

#[test]
fn a_branch_is_never_shared_between_jobs() {
    let mut cluster = cluster_with(&[job("a", "main", json!({})), job("b", "main", json!({}))]);
    reconcile_job(&mut cluster, "a", now());
    reconcile_job(&mut cluster, "b", now());
    assert_eq!(
        cluster.all("PipelineRun").len(),
        2,
        "a branch may move between the runs"
    );
}

#[test]
fn a_failed_build_fails_the_run_with_its_own_reason() {
    let mut cluster = cluster_with(&[job("train", "main", json!({}))]);
    reconcile(&mut cluster, Memory::default(), now());
    tekton_ends(
        &mut cluster,
        json!({"conditions": [{"type": "Succeeded", "status": "False", "reason": "Failed",
                               "message": "Tasks Completed: 1 (Failed: 1, Cancelled 0), Skipped: 0"}]}),
    );
    reconcile(
        &mut cluster,
        Memory::default(),
        now() + Duration::minutes(3),
    );
    let status = status_of(&cluster, "train");
    assert_eq!(status.phase, Some(Phase::Failed));
    let message = status.message.unwrap_or_default();
    assert!(message.contains("BuildFailed"), "{message}");
    assert!(message.contains("Failed: 1"), "{message}");
    assert!(
        cluster.get("Pod", "ml", "train-g1-r0").is_none(),
        "no Pod runs"
    );
    assert_eq!(
        status.retry_count.unwrap_or(0),
        0,
        "a failed build is not retried"
    );
}

#[test]
fn the_build_systems_timeout_is_reported_as_one() {
    let mut cluster = cluster_with(&[job("train", "main", json!({}))]);
    reconcile(&mut cluster, Memory::default(), now());
    tekton_ends(
        &mut cluster,
        json!({"conditions": [{"type": "Succeeded", "status": "False", "reason": "PipelineRunTimeout",
                               "message": "PipelineRun \"nbv-build\" failed to finish within \"15m0s\""}]}),
    );
    reconcile(
        &mut cluster,
        Memory::default(),
        now() + Duration::minutes(16),
    );
    let message = status_of(&cluster, "train").message.unwrap_or_default();
    assert!(message.contains("BuildTimedOut"), "{message}");
}

#[test]
fn a_build_past_its_timeout_is_cancelled_and_fails_the_run() {
    let mut cluster = cluster_with(&[job("train", "main", json!({"timeout": "5m"}))]);
    reconcile(&mut cluster, Memory::default(), now());
    let mut run = pipeline_run(&cluster);
    run["metadata"]["creationTimestamp"] = json!("2026-01-24T22:00:00Z");
    run["status"] =
        json!({"conditions": [{"type": "Succeeded", "status": "Unknown", "reason": "Running"}]});
    cluster.put(run);
    // Within the timeout and its grace: still running.
    reconcile(
        &mut cluster,
        Memory::default(),
        now() + Duration::minutes(5),
    );
    assert_eq!(status_of(&cluster, "train").phase, Some(Phase::Building));
    reconcile(
        &mut cluster,
        Memory::default(),
        now() + Duration::minutes(7),
    );
    let status = status_of(&cluster, "train");
    assert_eq!(status.phase, Some(Phase::Failed));
    assert!(status.message.unwrap_or_default().contains("BuildTimedOut"));
    assert_eq!(pipeline_run(&cluster)["spec"]["status"], "Cancelled");
}

#[test]
fn a_strategy_whose_api_is_not_served_fails_at_once_naming_both() {
    let mut cluster = cluster_with(&[job("train", "main", json!({}))]);
    cluster.unserved.push("tekton.dev/v1".into());
    reconcile(&mut cluster, Memory::default(), now());
    let status = status_of(&cluster, "train");
    assert_eq!(status.phase, Some(Phase::Failed));
    let message = status.message.unwrap_or_default();
    assert!(message.contains("BuildApiNotServed"), "{message}");
    assert!(
        message.contains("tekton") && message.contains("tekton.dev/v1"),
        "{message}"
    );
}

#[test]
fn s2i_without_openshift_builds_goes_through_shipwright() {
    let mut cluster = cluster_with(&[job(
        "train",
        "main",
        json!({"strategy": "s2i", "requirementsFile": "notebooks/requirements.txt"}),
    )]);
    cluster.unserved.push("build.openshift.io/v1".into());
    let done = reconcile(&mut cluster, Memory::default(), now());
    assert!(done.result.is_ok(), "{:?}", done.result);
    assert_eq!(status_of(&cluster, "train").phase, Some(Phase::Building));
    assert_eq!(cluster.all("BuildRun").len(), 1, "{:#?}", cluster.log);
    assert_eq!(cluster.all("Build").len(), 1);
    // Looked at again: where it was built, without trying OpenShift's builds again.
    cluster.log.clear();
    reconcile(
        &mut cluster,
        Memory::default(),
        now() + Duration::seconds(30),
    );
    assert!(
        !cluster.log.iter().any(|l| l.starts_with("POST")),
        "{:#?}",
        cluster.log
    );
}

#[test]
fn the_custom_strategy_is_refused_by_name_before_any_request() {
    let mut cluster = cluster_with(&[job("train", "main", json!({"strategy": "custom"}))]);
    reconcile(&mut cluster, Memory::default(), now());
    let status = status_of(&cluster, "train");
    assert_eq!(status.phase, Some(Phase::Failed));
    let message = status.message.unwrap_or_default();
    assert!(message.contains("BuildNotSupported"), "{message}");
    assert!(
        message.contains("podConfig.buildConfig.strategy"),
        "{message}"
    );
    assert!(
        !cluster.log.iter().any(|l| l.contains("PipelineRun")),
        "{:#?}",
        cluster.log
    );
}

#[test]
fn a_build_the_pod_policy_refuses_fails_the_run_before_any_request() {
    let mut cluster = cluster_with(&[job(
        "train",
        "main",
        json!({"baseImage": "docker.io/someone/base:1"}),
    )]);
    let settings = nbv_core::job::Settings {
        pod_defaults: PodDefaults {
            policy: PodPolicy {
                images: Some(vec!["quay.io/example".parse().expect("a pattern")]),
                ..PodPolicy::default()
            },
            ..PodDefaults::default()
        },
        ..nbv_core::job::Settings::default()
    };
    let job = super::job_of(&cluster);
    super::reconcile_with(&mut cluster, &job, Memory::default(), now(), settings);
    let status = status_of(&cluster, "train");
    assert_eq!(status.phase, Some(Phase::Failed));
    let message = status.message.unwrap_or_default();
    for part in [
        "PodPolicyDenied",
        "spec.podConfig.buildConfig.baseImage",
        "--allowed-images",
    ] {
        assert!(message.contains(part), "{part}: {message}");
    }
    // The failure's notification is the one object created.
    assert!(
        !cluster
            .log
            .iter()
            .any(|l| l.starts_with("POST") && !l.starts_with("POST Event ")),
        "nothing is built or created: {:#?}",
        cluster.log
    );
}

#[test]
fn an_object_of_the_builds_name_with_another_key_is_not_taken_for_it() {
    let mut cluster = cluster_with(&[job("train", "main", json!({}))]);
    reconcile(&mut cluster, Memory::default(), now());
    let mut run = pipeline_run(&cluster);
    run["metadata"]["annotations"]["mlops.dev/build-key"] = json!("0".repeat(64));
    run["status"] = succeeded_with(DIGEST);
    cluster.put(run);
    reconcile(
        &mut cluster,
        Memory::default(),
        now() + Duration::minutes(3),
    );
    let status = status_of(&cluster, "train");
    assert_eq!(status.phase, Some(Phase::Failed));
    assert!(cluster.get("Pod", "ml", "train-g1-r0").is_none());
}

#[test]
fn finished_builds_beyond_the_history_are_deleted() {
    let mut cluster = Cluster::new();
    for i in 0..5 {
        cluster.put(job(&format!("train-{i}"), "main", json!({})));
        reconcile_job(
            &mut cluster,
            &format!("train-{i}"),
            now() + Duration::minutes(i),
        );
    }
    let mut runs: Vec<Value> = cluster.all("PipelineRun").into_iter().cloned().collect();
    for (i, run) in runs.iter_mut().enumerate() {
        run["metadata"]["creationTimestamp"] = json!(format!("2026-01-24T22:0{i}:00Z"));
        run["status"] = succeeded_with(DIGEST);
        cluster.put(run.clone());
    }
    reconcile_job(&mut cluster, "train-4", now() + Duration::minutes(10));
    let left = cluster.all("PipelineRun").len();
    assert_eq!(left, 3, "the default history keeps 3: {:#?}", cluster.log);
}

#[test]
fn a_build_nbv_may_not_create_fails_the_run_saying_so() {
    let mut cluster = cluster_with(&[job("train", "main", json!({}))]);
    // The first request is the GET of the build, the second the GET of the
    // ImageStream that would hold its image, the third the build's POST.
    cluster.faults.insert(
        2,
        nbv_core::io::ApiAnswer::status(403, "Forbidden", "pipelineruns.tekton.dev is forbidden"),
    );
    reconcile(&mut cluster, Memory::default(), now());
    let status = status_of(&cluster, "train");
    assert_eq!(status.phase, Some(Phase::Failed));
    let message = status.message.unwrap_or_default();
    assert!(
        message.contains("forbidden") && message.contains("rbac"),
        "{message}"
    );
}

/// The job `name` after its run succeeded and it was asked to run again with `request`.
fn asked_to_run_again(cluster: &mut Cluster, name: &str, request: &str) {
    let mut stored = cluster
        .get("NotebookValidationJob", "ml", name)
        .expect("the job")
        .clone();
    stored["metadata"]["annotations"]["mlops.dev/rerun"] = json!(request);
    cluster.put(stored);
}

/// The validation Pod of the first run ends with success, as the kubelet reports it.
fn first_pod_succeeds(cluster: &mut Cluster) {
    let mut pod = cluster
        .get("Pod", "ml", "train-g1-r0")
        .expect("the Pod")
        .clone();
    pod["status"] = json!({"phase": "Succeeded", "containerStatuses": [{"name": "notebook",
        "state": {"terminated": {"exitCode": 0, "reason": "Completed", "message": "{}"}}}]});
    cluster.put(pod);
}

#[test]
fn a_rerun_builds_again_from_a_branch_and_reuses_the_image_at_a_commit() {
    for (git_ref, builds) in [("main", 2), (COMMIT, 1)] {
        let mut cluster = cluster_with(&[job("train", git_ref, json!({}))]);
        reconcile(&mut cluster, Memory::default(), now());
        tekton_ends(&mut cluster, succeeded_with(DIGEST));
        reconcile(
            &mut cluster,
            Memory::default(),
            now() + Duration::minutes(3),
        );
        first_pod_succeeds(&mut cluster);
        reconcile(
            &mut cluster,
            Memory::default(),
            now() + Duration::minutes(5),
        );
        let status = status_of(&cluster, "train");
        assert_eq!(
            status.phase,
            Some(Phase::Succeeded),
            "{git_ref}: {status:#?}"
        );

        asked_to_run_again(&mut cluster, "train", "1");
        reconcile(
            &mut cluster,
            Memory::default(),
            now() + Duration::minutes(10),
        );
        let status = status_of(&cluster, "train");
        assert_eq!(status.rerun.as_ref().map(|r| r.count), Some(1), "{git_ref}");
        let runs = cluster.all("PipelineRun").len();
        assert_eq!(runs, builds, "{git_ref}: {:#?}", cluster.log);
        if builds == 1 {
            // The image of the first run, already built: the rerun's Pod runs it.
            assert!(
                cluster.get("Pod", "ml", "train-g1-rerun1-r0").is_some(),
                "{:#?}",
                cluster.log
            );
        }
    }
}

/// The internal registry's ImageStream of `namespace`, recording `tag` with `digest`.
fn image_stream(namespace: &str, tag: &str, digest: &str) -> Value {
    json!({"apiVersion": "image.openshift.io/v1", "kind": "ImageStream",
           "metadata": {"name": "nbv-notebooks", "namespace": namespace},
           "status": {"tags": [{"tag": tag, "items": [{"image": digest}]}]}})
}

#[test]
fn an_image_already_in_the_registry_is_used_without_a_build() {
    let mut cluster = cluster_with(&[job("train", COMMIT, json!({}))]);
    // Learn the key and the image from a first plan, then forget the build, as
    // --build-history does once it is old.
    reconcile(&mut cluster, Memory::default(), now());
    let run = pipeline_run(&cluster);
    let image = run["metadata"]["annotations"]["mlops.dev/image"]
        .as_str()
        .expect("image")
        .to_owned();
    let (repository, tag) = image.rsplit_once(':').expect("repository:tag");
    assert_eq!(
        repository,
        "image-registry.openshift-image-registry.svc:5000/ml/nbv-notebooks"
    );

    let mut cluster = cluster_with(&[job("again", COMMIT, json!({}))]);
    cluster.put(image_stream("other", tag, DIGEST));
    reconcile_job(&mut cluster, "again", now());
    assert_eq!(
        cluster.all("PipelineRun").len(),
        1,
        "another namespace's stream is not read"
    );
    assert!(
        !cluster.log.iter().any(|l| l.contains("ImageStream other/")),
        "{:#?}",
        cluster.log
    );

    let mut cluster = cluster_with(&[job("again", COMMIT, json!({}))]);
    cluster.put(image_stream("ml", tag, DIGEST));
    reconcile_job(&mut cluster, "again", now());
    assert!(cluster.all("PipelineRun").is_empty(), "{:#?}", cluster.log);
    let status = status_of(&cluster, "again");
    let build = status.build_status.clone().expect("buildStatus");
    assert_eq!(build.phase, Some(BuildPhase::Complete));
    let expected = format!("{repository}@{DIGEST}");
    assert_eq!(build.image_reference.as_deref(), Some(expected.as_str()));
    assert!(
        build
            .message
            .as_deref()
            .is_some_and(|m| m.contains("already in the registry")),
        "{build:?}"
    );
    let pod = cluster
        .get("Pod", "ml", "again-g1-r0")
        .expect("the validation Pod");
    assert_eq!(pod["spec"]["containers"][0]["image"], json!(expected));
}

#[test]
fn a_stream_nbv_may_not_read_is_a_warning_and_the_image_is_built() {
    let mut cluster = cluster_with(&[job("train", COMMIT, json!({}))]);
    cluster.faults.insert(
        1,
        nbv_core::io::ApiAnswer::status(
            403,
            "Forbidden",
            "imagestreams.image.openshift.io is forbidden",
        ),
    );
    reconcile(&mut cluster, Memory::default(), now());
    assert_eq!(cluster.all("PipelineRun").len(), 1, "{:#?}", cluster.log);
    assert_eq!(status_of(&cluster, "train").phase, Some(Phase::Building));
}
