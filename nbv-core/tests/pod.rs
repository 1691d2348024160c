//! The validation Pod: snapshots of the Pod of every upstream sample, the properties
//! every Pod has (restricted profile, names, owner, no job value in a script), the
//! result format and its 4 KiB budget (also against the Python writer), the scripts
//! run for real where `sh`, `git` and `python3` exist, and the classification of Pod
//! statuses.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use k8s_openapi::api::core::v1::{Container, Pod};
use nbv_core::api::{CellStatus, NotebookValidationJob};
use nbv_core::phase::{Attempt, FailureKind, PhaseEvent, Reason};
use nbv_core::pod::{
    ATTEMPT_LABEL, CLONE_CONTAINER, CellOutcome, DEFAULT_START_GRACE, FailureCause, JOB_LABEL,
    MANAGED_BY, MANAGED_BY_LABEL, MAX_REPORT_BYTES, NOTEBOOK_CONTAINER, PodDefaults, PodSpecError,
    ReportedCell, RunError, RunErrorKind, RunReport, build_unsupported, is_controlled_by,
    is_dns_label, job_label_value, observe_pod, pod_name, pod_ref, validation_pod,
};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::TestRunner;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------

fn samples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/upstream/samples")
}

/// Every NotebookValidationJob of the upstream samples, as read from the API server:
/// with a namespace (`default` when the sample has none), a uid and a generation.
fn sample_jobs() -> Vec<NotebookValidationJob> {
    let mut files: Vec<_> = std::fs::read_dir(samples_dir())
        .expect("samples dir")
        .map(|e| e.expect("dir entry").path())
        .collect();
    files.sort();
    let mut jobs = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable sample");
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let value: Value = serde::Deserialize::deserialize(doc).expect("YAML");
            if value["kind"] != "NotebookValidationJob" {
                continue;
            }
            let mut job: NotebookValidationJob = serde_json::from_value(value).expect("a job");
            let name = job.metadata.name.clone().expect("named");
            job.metadata
                .namespace
                .get_or_insert_with(|| "default".to_owned());
            job.metadata.uid = Some(format!("uid-{name}"));
            job.metadata.generation = Some(1);
            jobs.push(job);
        }
    }
    jobs
}

/// A job `ml/train` with `spec` merged over a minimal spec.
fn job_with(spec: Value) -> NotebookValidationJob {
    let mut base = json!({
        "notebook": {"git": {"url": "https://example.com/org/repo.git", "ref": "main"},
                     "path": "notebooks/train.ipynb"},
        "podConfig": {"containerImage": "quay.io/example/papermill:1"}
    });
    merge(&mut base, spec);
    serde_json::from_value(json!({
        "apiVersion": "mlops.mlops.dev/v1alpha1", "kind": "NotebookValidationJob",
        "metadata": {"name": "train", "namespace": "ml", "uid": "uid-train", "generation": 3},
        "spec": base
    }))
    .expect("a job")
}

fn merge(base: &mut Value, patch: Value) {
    match (base, patch) {
        (Value::Object(base), Value::Object(patch)) => {
            for (key, value) in patch {
                merge(base.entry(key).or_insert(Value::Null), value);
            }
        }
        (base, patch) => *base = patch,
    }
}

const ATTEMPT: Attempt = Attempt {
    generation: 3,
    retry: 1,
};

fn pod_of(job: &NotebookValidationJob) -> Pod {
    validation_pod(job, ATTEMPT, None, &PodDefaults::default()).expect("a pod")
}

/// The scripts are constant and long; snapshots show where they go, not their text.
macro_rules! assert_pod_snapshot {
    ($name:expr, $pod:expr) => {
        insta::assert_yaml_snapshot!($name, $pod, {
            ".spec.initContainers[].command[2]" => "[clone.sh]",
            ".spec.containers[].command[2]" => "[run_notebook.py]",
        })
    };
}

fn containers(pod: &Pod) -> Vec<&Container> {
    let spec = pod.spec.as_ref().expect("spec");
    spec.init_containers
        .iter()
        .flatten()
        .chain(spec.containers.iter())
        .collect()
}

fn env_value<'a>(container: &'a Container, name: &str) -> Option<&'a str> {
    container
        .env
        .iter()
        .flatten()
        .rev() // the last definition wins
        .find(|e| e.name == name)
        .and_then(|e| e.value.as_deref())
}

fn container<'a>(pod: &'a Pod, name: &str) -> &'a Container {
    containers(pod)
        .into_iter()
        .find(|c| c.name == name)
        .expect("container")
}

// ---------------------------------------------------------------------------------------
// The Pod of every upstream sample
// ---------------------------------------------------------------------------------------

#[test]
fn every_upstream_sample_becomes_a_pod() {
    let jobs = sample_jobs();
    assert!(
        jobs.len() >= 12,
        "expected the upstream samples, found {}",
        jobs.len()
    );
    let names: BTreeSet<_> = jobs.iter().map(|j| j.metadata.name.clone()).collect();
    assert_eq!(names.len(), jobs.len(), "sample job names are unique");
    let mut refused = BTreeSet::new();
    for job in &jobs {
        let name = job.metadata.name.as_deref().expect("named");
        let pod = validation_pod(
            job,
            Attempt {
                generation: 1,
                retry: 0,
            },
            None,
            &PodDefaults::default(),
        );
        match pod {
            Ok(pod) => assert_pod_snapshot!(format!("sample_{name}"), pod),
            // A check nbv does not carry out yet fails the job by name.
            Err(PodSpecError::NotImplemented { field, .. }) => {
                refused.insert((name.to_owned(), field));
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
    let refused: Vec<(&str, &str)> = refused
        .iter()
        .map(|(n, f)| (n.as_str(), f.as_str()))
        .collect();
    insta::assert_debug_snapshot!(refused);
}

#[test]
fn only_samples_that_enable_a_build_are_refused_as_unsupported() {
    let refused: Vec<_> = sample_jobs()
        .iter()
        .filter(|job| build_unsupported(job).is_some())
        .map(|job| job.metadata.name.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        refused,
        [
            "credentials-sugar-example",
            "notebookvalidationjob-tekton-sample"
        ]
    );
    let failure = build_unsupported(&job_with(
        json!({"podConfig": {"buildConfig": {"enabled": true}}}),
    ))
    .expect("refused");
    assert_eq!(failure.kind, FailureKind::Permanent);
    // The phase machine words it as the job's failure, not a failed build.
    assert_eq!(failure.reason, Reason::BUILD_NOT_SUPPORTED);
    insta::assert_snapshot!("build_not_supported", failure.message);
    assert!(
        build_unsupported(&job_with(
            json!({"podConfig": {"buildConfig": {"enabled": false}}})
        ))
        .is_none()
    );
}

#[test]
fn a_built_image_replaces_the_container_image() {
    let job = job_with(json!({}));
    let pod = validation_pod(
        &job,
        ATTEMPT,
        Some("registry/built:abc"),
        &PodDefaults::default(),
    )
    .expect("a pod");
    assert_eq!(
        container(&pod, NOTEBOOK_CONTAINER).image.as_deref(),
        Some("registry/built:abc")
    );
    // An empty built image is no image: fall back to the spec's.
    let pod = validation_pod(&job, ATTEMPT, Some(" "), &PodDefaults::default()).expect("a pod");
    assert_eq!(
        container(&pod, NOTEBOOK_CONTAINER).image.as_deref(),
        Some("quay.io/example/papermill:1")
    );
}

#[test]
fn https_credentials_come_from_the_secret_as_optional_keys() {
    let pod = pod_of(&job_with(
        json!({"notebook": {"git": {"credentialsSecret": "git-creds"}}}),
    ));
    let clone = container(&pod, CLONE_CONTAINER);
    let refs: Vec<_> = clone
        .env
        .iter()
        .flatten()
        .filter_map(|e| {
            let key = e.value_from.as_ref()?.secret_key_ref.as_ref()?;
            Some((
                e.name.as_str(),
                key.name.as_str(),
                key.key.as_str(),
                key.optional,
            ))
        })
        .collect();
    assert_eq!(
        refs,
        [
            ("NBV_GIT_USERNAME", "git-creds", "username", Some(true)),
            ("NBV_GIT_PASSWORD", "git-creds", "password", Some(true)),
            ("NBV_GIT_TOKEN", "git-creds", "token", Some(true)),
        ]
    );
    // The notebook never sees the Git credentials.
    let notebook = container(&pod, NOTEBOOK_CONTAINER);
    assert!(
        notebook
            .env
            .iter()
            .flatten()
            .all(|e| e.value_from.is_none())
    );
}

#[test]
fn ssh_credentials_are_a_volume_of_the_clone_container_alone() {
    let pod = pod_of(&job_with(json!({"notebook": {"git": {
        "url": "git@github.com:org/repo.git", "credentialsSecret": "git-ssh"}}})));
    let volumes = pod
        .spec
        .as_ref()
        .and_then(|s| s.volumes.clone())
        .unwrap_or_default();
    let ssh = volumes
        .iter()
        .find(|v| v.secret.as_ref().and_then(|s| s.secret_name.as_deref()) == Some("git-ssh"))
        .expect("the Secret volume");
    let mounted_in: Vec<_> = containers(&pod)
        .into_iter()
        .filter(|c| c.volume_mounts.iter().flatten().any(|m| m.name == ssh.name))
        .map(|c| {
            (
                c.name.as_str(),
                c.volume_mounts
                    .iter()
                    .flatten()
                    .find(|m| m.name == ssh.name)
                    .and_then(|m| m.read_only),
            )
        })
        .collect();
    assert_eq!(mounted_in, [(CLONE_CONTAINER, Some(true))]);
}

#[test]
fn the_notebook_container_reports_through_its_termination_message() {
    let pod = pod_of(&job_with(json!({"podConfig": {
        "credentials": ["aws"], "envFrom": [{"configMapRef": {"name": "settings"}}],
        "env": [{"name": "HOME", "value": "/data"}, {"name": "NBV_NOTEBOOK", "value": "other.ipynb"}]
    }})));
    let notebook = container(&pod, NOTEBOOK_CONTAINER);
    assert_eq!(
        notebook.termination_message_path.as_deref(),
        Some("/dev/termination-log")
    );
    assert_eq!(
        notebook.termination_message_policy.as_deref(),
        Some("FallbackToLogsOnError")
    );
    assert_eq!(
        env_value(notebook, "NBV_RESULT"),
        Some("/dev/termination-log")
    );
    // The job may override nbv's defaults, not the script's settings.
    assert_eq!(env_value(notebook, "HOME"), Some("/data"));
    assert_eq!(
        env_value(notebook, "NBV_NOTEBOOK"),
        Some("notebooks/train.ipynb")
    );
    let env_from = serde_json::to_value(&notebook.env_from).expect("JSON");
    assert_eq!(
        env_from,
        json!([{"secretRef": {"name": "aws"}}, {"configMapRef": {"name": "settings"}}])
    );
    let spec = pod.spec.as_ref().expect("spec");
    assert_eq!(spec.restart_policy.as_deref(), Some("Never"));
    assert_eq!(spec.automount_service_account_token, Some(false));
}

#[test]
fn a_hostile_ref_and_path_stay_data() {
    let job = job_with(json!({"notebook": {
        "git": {"url": "https://example.com/r.git; rm -rf /", "ref": "main; rm -rf /"},
        "path": "$(rm -rf /)/`reboot`/x'\"; rm -rf /.ipynb"
    }}));
    let pod = pod_of(&job);
    assert_pod_snapshot!("hostile_values", pod);
    let clone = container(&pod, CLONE_CONTAINER);
    assert_eq!(env_value(clone, "NBV_GIT_REF"), Some("main; rm -rf /"));
    assert_eq!(
        env_value(clone, "NBV_GIT_URL"),
        Some("https://example.com/r.git; rm -rf /")
    );
    let reference = pod_of(&job_with(json!({})));
    for (hostile, plain) in containers(&pod).into_iter().zip(containers(&reference)) {
        assert_eq!(hostile.command, plain.command, "{}", hostile.name);
        assert_eq!(hostile.args, None);
    }
}

// ---------------------------------------------------------------------------------------
// Specs nbv refuses
// ---------------------------------------------------------------------------------------

#[test]
fn refused_specs_name_the_field_and_the_fix() {
    let cases = [
        json!({"podConfig": {"volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
            {"name": "host", "hostPath": {"path": "/var/run/docker.sock"}}]}}),
        json!({"podConfig": {"volumes": [{"name": "share", "nfs": {"server": "s", "path": "/"}}]}}),
        json!({"podConfig": {"volumes": [{"name": "nbv-workspace", "emptyDir": {}}]}}),
        json!({"podConfig": {"volumes": [{"name": "d", "emptyDir": {}}],
                             "volumeMounts": [{"name": "d", "mountPath": "/workspace/"}]}}),
        json!({"podConfig": {"volumeMounts": [{"name": "missing", "mountPath": "/data"}]}}),
        json!({"podConfig": {"containerImage": ""}}),
        json!({"timeout": "30 minutes"}),
        json!({"timeout": "0s"}),
        json!({"notebook": {"git": {"url": "ext::sh -c touch% /tmp/pwned"}}}),
        json!({"notebook": {"git": {"url": "https://bot:ghp_secret@example.com\n/r.git"}}}),
        json!({"notebook": {"git": {"ref": "--upload-pack=touch /tmp/pwned"}}}),
        json!({"notebook": {"git": {"url": "http://example.com/r.git", "credentialsSecret": "c"}}}),
        json!({"notebook": {"path": "/etc/passwd.ipynb"}}),
        json!({"notebook": {"path": "notebooks/../../x.ipynb"}}),
    ];
    let mut report = String::new();
    for spec in cases {
        let err = validation_pod(
            &job_with(spec.clone()),
            ATTEMPT,
            None,
            &PodDefaults::default(),
        )
        .expect_err("refused");
        assert!(!err.to_string().contains("ghp_secret"), "{err}");
        report.push_str(&format!("{spec}\n  {}\n  {}\n", err.field(), err));
    }
    let mut anonymous = job_with(json!({}));
    anonymous.metadata.uid = None;
    let err =
        validation_pod(&anonymous, ATTEMPT, None, &PodDefaults::default()).expect_err("refused");
    report.push_str(&format!("no uid\n  {}\n  {err}\n", err.field()));
    insta::assert_snapshot!("refused_specs", report);
}

#[test]
fn a_host_path_volume_is_refused_by_its_index() {
    let job = job_with(json!({"podConfig": {"volumes": [
        {"name": "a", "emptyDir": {}}, {"name": "b", "configMap": {"name": "c"}},
        {"name": "host", "hostPath": {"path": "/"}}]}}));
    let err = validation_pod(&job, ATTEMPT, None, &PodDefaults::default()).expect_err("refused");
    assert_eq!(err.field(), "spec.podConfig.volumes[2].hostPath");
    assert!(matches!(
        err,
        PodSpecError::ForbiddenVolume { index: 2, .. }
    ));
    assert_eq!(err.failure().reason.as_str(), "PodSpecInvalid");
}

// ---------------------------------------------------------------------------------------
// Properties of every Pod
// ---------------------------------------------------------------------------------------

/// Strings a hostile or careless author might write.
fn hostile_text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ -~]{0,30}",
        "\\PC{0,20}",
        Just("main; rm -rf /".to_owned()),
        Just("$(touch /tmp/pwned)".to_owned()),
        Just("`reboot`".to_owned()),
        Just("'\"\\\n${HOME}".to_owned()),
    ]
}

fn arbitrary_job() -> impl Strategy<Value = (NotebookValidationJob, Attempt)> {
    let name = "[a-z0-9]([-a-z0-9.]{0,100}[a-z0-9])?";
    // Control characters in a URL or path are refused (tested above); anything else
    // must be accepted and kept out of the scripts.
    let printable = || hostile_text().prop_map(|t| t.replace(char::is_control, "_"));
    let url = prop_oneof![
        printable().prop_map(|t| format!("https://example.com/{t}")),
        printable().prop_map(|t| format!("git@github.com:{t}")),
        printable().prop_map(|t| format!("ssh://git@example.com/{t}")),
    ];
    let git_ref = hostile_text().prop_map(|t| format!("r{t}"));
    let path = printable().prop_map(|t| format!("nb/{}.ipynb", t.replace("..", "_")));
    let secret = proptest::option::of("[a-z]{1,10}");
    let env = proptest::collection::vec(("[A-Z_]{1,10}", hostile_text()), 0..4);
    let volume = prop_oneof![
        Just(json!({"emptyDir": {}})),
        Just(json!({"persistentVolumeClaim": {"claimName": "models"}})),
        Just(json!({"configMap": {"name": "cfg"}})),
        Just(json!({"secret": {"secretName": "s"}})),
    ];
    let volumes = proptest::collection::vec(volume, 0..3);
    let timeout = proptest::option::of(prop_oneof![
        Just("90s".to_owned()),
        Just("1h30m".to_owned()),
        Just("1.5h".to_owned()),
        Just("500ms".to_owned()),
    ]);
    let service_account = proptest::option::of("[a-z]{1,10}");
    let attempt =
        (any::<i64>(), any::<u32>()).prop_map(|(generation, retry)| Attempt { generation, retry });
    (
        (name, url, git_ref, path, secret),
        (env, volumes, timeout, service_account, attempt),
    )
        .prop_map(
            |((name, url, git_ref, path, secret), (env, volumes, timeout, sa, attempt))| {
                let volumes: Vec<Value> = volumes
                    .into_iter()
                    .enumerate()
                    .map(|(i, mut v)| {
                        v["name"] = json!(format!("v{i}"));
                        v
                    })
                    .collect();
                let mounts: Vec<Value> = (0..volumes.len())
                    .map(|i| json!({"name": format!("v{i}"), "mountPath": format!("/mnt/v{i}")}))
                    .collect();
                let env: Vec<Value> = env
                    .into_iter()
                    .map(|(n, v)| json!({"name": n, "value": v}))
                    .collect();
                let mut job = job_with(json!({
                    "notebook": {"git": {"url": url, "ref": git_ref, "credentialsSecret": secret},
                                 "path": path},
                    "podConfig": {"env": env, "volumes": volumes, "volumeMounts": mounts,
                                  "serviceAccountName": sa},
                    "timeout": timeout,
                }));
                job.metadata.name = Some(name);
                (job, attempt)
            },
        )
}

/// The checks of the restricted Pod Security profile that a Pod spec can fail.
fn assert_restricted(pod: &Pod) {
    let spec = pod.spec.as_ref().expect("spec");
    let security = spec
        .security_context
        .as_ref()
        .expect("pod security context");
    assert_eq!(security.run_as_non_root, Some(true));
    assert_eq!(
        security.seccomp_profile.as_ref().map(|s| s.type_.as_str()),
        Some("RuntimeDefault")
    );
    assert_ne!(security.run_as_user, Some(0));
    assert_ne!(spec.host_network, Some(true));
    assert_ne!(spec.host_pid, Some(true));
    assert_ne!(spec.host_ipc, Some(true));
    for c in containers(pod) {
        let security = c
            .security_context
            .as_ref()
            .expect("container security context");
        assert_eq!(
            security.allow_privilege_escalation,
            Some(false),
            "{}",
            c.name
        );
        assert_ne!(security.privileged, Some(true), "{}", c.name);
        assert_ne!(security.run_as_user, Some(0), "{}", c.name);
        let caps = security.capabilities.as_ref().expect("capabilities");
        assert_eq!(
            caps.drop.as_deref(),
            Some(&["ALL".to_owned()][..]),
            "{}",
            c.name
        );
        assert!(
            caps.add.as_deref().unwrap_or_default().is_empty(),
            "{}",
            c.name
        );
        for port in c.ports.iter().flatten() {
            assert_eq!(port.host_port, None, "{}", c.name);
        }
    }
    let allowed = [
        "name",
        "configMap",
        "csi",
        "downwardAPI",
        "emptyDir",
        "ephemeral",
        "persistentVolumeClaim",
        "projected",
        "secret",
    ];
    for volume in spec.volumes.iter().flatten() {
        let fields = serde_json::to_value(volume).expect("JSON");
        for key in fields.as_object().expect("object").keys() {
            assert!(
                allowed.contains(&key.as_str()),
                "volume {}: {key}",
                volume.name
            );
        }
    }
}

proptest! {
    #[test]
    fn every_pod_is_restricted_named_owned_and_keeps_values_out_of_scripts(
        (job, attempt) in arbitrary_job()
    ) {
        let pod = validation_pod(&job, attempt, None, &PodDefaults::default());
        prop_assert!(pod.is_ok(), "{:?}", pod);
        let pod = pod.expect("checked");
        assert_restricted(&pod);

        let name = pod.metadata.name.as_deref().expect("named");
        prop_assert!(is_dns_label(name), "{name}");
        prop_assert_eq!(name, pod_name(job.metadata.name.as_deref().unwrap_or_default(), attempt));
        prop_assert!(name.ends_with(&format!("-{attempt}")), "{}", name);
        prop_assert_eq!(pod_ref(&pod).map(|r| r.attempt), Ok(attempt));

        let labels = pod.metadata.labels.clone().unwrap_or_default();
        prop_assert_eq!(labels.get(MANAGED_BY_LABEL).map(String::as_str), Some(MANAGED_BY));
        prop_assert_eq!(labels.get(ATTEMPT_LABEL).cloned(), Some(attempt.to_string()));
        prop_assert_eq!(
            labels.get(JOB_LABEL).cloned(),
            Some(job_label_value(job.metadata.name.as_deref().unwrap_or_default()))
        );
        prop_assert!(is_controlled_by(&pod, &job));
        let owner = &pod.metadata.owner_references.as_deref().unwrap_or_default()[0];
        prop_assert_eq!((owner.kind.as_str(), owner.block_owner_deletion), ("NotebookValidationJob", Some(true)));

        // Commands do not depend on the job: every value reaches the scripts through
        // the environment.
        let reference = pod_of(&job_with(json!({})));
        for (c, r) in containers(&pod).into_iter().zip(containers(&reference)) {
            prop_assert_eq!(&c.command, &r.command);
            prop_assert_eq!(&c.args, &None);
        }
        let git = &job.spec.notebook.git;
        let clone = container(&pod, CLONE_CONTAINER);
        prop_assert_eq!(env_value(clone, "NBV_GIT_URL"), Some(git.url.as_str()));
        prop_assert_eq!(env_value(clone, "NBV_GIT_REF"), Some(git.git_ref.as_str()));
        let notebook = container(&pod, NOTEBOOK_CONTAINER);
        prop_assert_eq!(env_value(notebook, "NBV_NOTEBOOK"), Some(job.spec.notebook.path.as_str()));
    }

    #[test]
    fn distinct_jobs_and_attempts_get_distinct_pods(
        pairs in proptest::collection::vec(
            ("[a-z0-9]([-a-z0-9.]{0,80}[a-z0-9])?", -3i64..3, 0u32..3), 1..40)
    ) {
        let mut seen = BTreeMap::new();
        for (job, generation, retry) in pairs {
            let attempt = Attempt { generation, retry };
            let name = pod_name(&job, attempt);
            prop_assert!(is_dns_label(&name), "{name}");
            if let Some(previous) = seen.insert(name.clone(), (job.clone(), attempt)) {
                prop_assert_eq!(previous, (job, attempt), "{} is shared", name);
            }
        }
    }

    #[test]
    fn job_labels_are_valid_and_tell_jobs_apart(a in "[a-z0-9]([-a-z0-9.]{0,250}[a-z0-9])?",
                                                b in "[a-z0-9]([-a-z0-9.]{0,250}[a-z0-9])?") {
        for name in [&a, &b] {
            let label = job_label_value(name);
            prop_assert!(label.len() <= 63 && !label.is_empty(), "{label}");
            prop_assert!(label.bytes().all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(&c)));
            prop_assert!(label.as_bytes()[0].is_ascii_alphanumeric());
            prop_assert!(label.as_bytes()[label.len() - 1].is_ascii_alphanumeric());
        }
        if a != b {
            prop_assert_ne!(job_label_value(&a), job_label_value(&b));
        }
    }
}

// ---------------------------------------------------------------------------------------
// The result format
// ---------------------------------------------------------------------------------------

fn arbitrary_report() -> impl Strategy<Value = RunReport> {
    let outcome = prop_oneof![
        Just(CellOutcome::Succeeded),
        Just(CellOutcome::Failed),
        Just(CellOutcome::Skipped),
    ];
    let seconds = proptest::option::of((0u32..100_000).prop_map(|c| f64::from(c) / 100.0));
    let text = prop_oneof!["\\PC{0,300}", "[\\x00-\\x1f\"\\\\]{0,400}", "é{0,200}"];
    let cell = (outcome, seconds, proptest::option::of(text.clone()));
    let cells = proptest::collection::vec(cell, 0..400);
    let kind = prop_oneof![
        Just(RunErrorKind::Cell),
        Just(RunErrorKind::Missing),
        Just(RunErrorKind::Setup),
        Just(RunErrorKind::Internal),
    ];
    let error = proptest::option::of((kind, text.clone(), text, any::<prop::sample::Index>()));
    (cells, error).prop_map(|(cells, error)| {
        let cells: Vec<ReportedCell> = cells
            .into_iter()
            .enumerate()
            .map(|(i, (outcome, seconds, error))| ReportedCell {
                index: i as u64 * 2,
                outcome,
                seconds,
                error,
            })
            .collect();
        let error = error.map(|(kind, ename, evalue, at)| RunError {
            kind,
            cell: (kind == RunErrorKind::Cell && !cells.is_empty())
                .then(|| cells[at.index(cells.len())].index),
            ename,
            evalue,
        });
        RunReport {
            cells,
            error,
            dropped: 0,
        }
    })
}

proptest! {
    #[test]
    fn encoded_reports_fit_the_kubelet_and_keep_the_failing_cell(report in arbitrary_report()) {
        let encoded = report.encode();
        prop_assert!(encoded.len() <= MAX_REPORT_BYTES, "{} bytes", encoded.len());
        let read = RunReport::parse(&encoded).expect("nbv reads what it writes");
        prop_assert_eq!(read.cells.len() as u64 + read.dropped, report.cells.len() as u64);
        prop_assert_eq!(read.error.as_ref().map(|e| (e.kind, e.cell)),
                        report.error.as_ref().map(|e| (e.kind, e.cell)));
        // Kept: a prefix of the cells, plus the failing cell.
        let failing = report.error.as_ref().and_then(|e| e.cell);
        let kept: Vec<u64> = read.cells.iter().map(|c| c.index).collect();
        let prefix: Vec<u64> = report.cells.iter().map(|c| c.index)
            .filter(|i| Some(*i) != failing).take(kept.iter().filter(|i| Some(**i) != failing).count()).collect();
        prop_assert_eq!(kept.iter().copied().filter(|i| Some(*i) != failing).collect::<Vec<_>>(), prefix);
        if let Some(cell) = failing {
            prop_assert!(kept.contains(&cell), "the failing cell {} was dropped", cell);
        }
        if read.dropped == 0 {
            prop_assert_eq!(read.cells.iter().map(|c| (c.index, c.outcome)).collect::<Vec<_>>(),
                            report.cells.iter().map(|c| (c.index, c.outcome)).collect::<Vec<_>>());
        }
        // Encoding is idempotent on what was read.
        prop_assert_eq!(RunReport::parse(&read.encode()).ok(), Some(read));
    }

    #[test]
    fn parsing_never_panics(text in "\\PC{0,500}") {
        let _ = RunReport::parse(&text);
    }

    #[test]
    fn parsing_json_shaped_garbage_never_panics(
        text in r#"\{"cells":\[(\{"i":-?[0-9]{1,22},"s":"(ok|err|skip|x)","t":-?[0-9.e+]{1,8}\},?){0,3}\](,"error":\{"kind":"[a-z]{0,8}","cell":[0-9-]{1,3}\})?,"dropped":-?[0-9]{1,25}\}"#
    ) {
        if let Ok(report) = RunReport::parse(&text) {
            for result in report.cell_results() {
                prop_assert!(result.cell_index >= 0);
            }
            let _ = report.summary();
        }
    }
}

#[test]
fn a_large_report_keeps_the_failing_cell_and_says_how_many_were_left_out() {
    let cells: Vec<ReportedCell> = (0..300)
        .map(|i| ReportedCell {
            index: i,
            outcome: if i == 250 {
                CellOutcome::Failed
            } else if i > 250 {
                CellOutcome::Skipped
            } else {
                CellOutcome::Succeeded
            },
            seconds: (i <= 250).then_some(0.25),
            error: (i == 250).then(|| format!("KeyError: '{}'", "k".repeat(500))),
        })
        .collect();
    let report = RunReport {
        cells,
        error: Some(RunError {
            kind: RunErrorKind::Cell,
            cell: Some(250),
            ename: "KeyError".to_owned(),
            evalue: "x".repeat(5000),
        }),
        dropped: 0,
    };
    let read = RunReport::parse(&report.encode()).expect("valid");
    let failing = read.cells.iter().find(|c| c.index == 250).expect("kept");
    assert_eq!(failing.error.as_deref().map(str::len), Some(160));
    assert_eq!(read.error.as_ref().map(|e| e.evalue.len()), Some(1024));
    insta::assert_snapshot!("large_report_summary", read.summary());
    let results = read.cell_results();
    assert_eq!(
        results.last().map(|r| (r.cell_index, r.status)),
        Some((250, CellStatus::Failure))
    );
}

// ---------------------------------------------------------------------------------------
// The scripts, run for real (when the tools exist here)
// ---------------------------------------------------------------------------------------

/// Whether `tool` runs here (`tool -c exit` for shells, `tool --version` otherwise);
/// the tests that need it are skipped, loudly, where it does not.
fn have(tool: &str) -> bool {
    let args: &[&str] = if tool == "sh" {
        &["-c", "exit 0"]
    } else {
        &["--version"]
    };
    let found = Command::new(tool)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        eprintln!("{tool} is not installed: skipping");
    }
    found
}

fn script(pod: &Pod, name: &str) -> String {
    container(pod, name).command.as_ref().expect("command")[2].clone()
}

fn temp_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("nbv-pod-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .stdout(Stdio::null())
        .status()
        .expect("git runs");
    assert!(status.success(), "git {args:?}");
}

/// Runs the clone script of the pod with the clone container's environment, redirected
/// to `dir`; returns whether it succeeded and its stderr.
fn run_clone(pod: &Pod, dir: &Path, extra: &[(&str, &str)]) -> (bool, String) {
    let clone = container(pod, CLONE_CONTAINER);
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg(script(pod, CLONE_CONTAINER))
        .env_clear();
    command.env("PATH", std::env::var("PATH").unwrap_or_default());
    for var in clone.env.iter().flatten() {
        if let Some(value) = &var.value {
            command.env(&var.name, value);
        }
    }
    command.env("NBV_WORKSPACE", dir.join("workspace"));
    command.env("HOME", dir);
    // The local test repository is a path, a transport the Pod does not allow.
    command.env_remove("GIT_ALLOW_PROTOCOL");
    for (name, value) in extra {
        command.env(name, value);
    }
    let output = command.output().expect("sh runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_clone_script_checks_out_the_ref_and_never_runs_a_value() {
    if !have("git") || !have("sh") {
        return;
    }
    let dir = temp_dir("clone");
    let origin = dir.join("origin");
    std::fs::create_dir_all(origin.join("notebooks")).expect("dir");
    std::fs::write(origin.join("notebooks/train.ipynb"), "{}").expect("write");
    git(&origin, &["init", "--quiet", "--initial-branch=main"]);
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "--quiet", "-m", "notebook"]);
    git(&origin, &["tag", "v1"]);
    let url = origin.to_string_lossy().into_owned();

    for git_ref in ["main", "v1"] {
        let _ = std::fs::remove_dir_all(dir.join("workspace"));
        let pod = pod_of(&job_with(
            json!({"notebook": {"git": {"url": "https://x/r.git", "ref": git_ref}}}),
        ));
        let (ok, stderr) = run_clone(&pod, &dir, &[("NBV_GIT_URL", &url)]);
        assert!(ok, "{git_ref}: {stderr}");
        assert!(
            dir.join("workspace/repo/notebooks/train.ipynb").is_file(),
            "{git_ref}"
        );
        // The notebook runs as another user: it writes its home and next to itself.
        for writable in [
            "workspace/home",
            "workspace/repo/notebooks",
            "workspace/repo/notebooks/train.ipynb",
        ] {
            let mode = std::fs::metadata(dir.join(writable))
                .expect("exists")
                .permissions()
                .mode();
            assert_eq!(
                mode & 0o002,
                0o002,
                "{writable} is not writable by others: {mode:o}"
            );
        }
    }

    let pwned = dir.join("pwned");
    let pwned_text = pwned.to_string_lossy().into_owned();
    for hostile in [
        format!("main; touch {pwned_text}"),
        format!("$(touch {pwned_text})"),
        format!("`touch {pwned_text}`"),
        format!("main\" && touch \"{pwned_text}"),
        format!("--upload-pack=touch {pwned_text}"),
    ] {
        let _ = std::fs::remove_dir_all(dir.join("workspace"));
        let mut job = job_with(json!({}));
        job.spec.notebook.git.git_ref = "main".to_owned();
        let pod = pod_of(&job);
        let (ok, _) = run_clone(
            &pod,
            &dir,
            &[("NBV_GIT_URL", &url), ("NBV_GIT_REF", &hostile)],
        );
        assert!(!ok, "{hostile} was fetched");
        assert!(!pwned.exists(), "{hostile} ran a command");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_credential_helper_answers_from_the_environment_only() {
    if !have("git") || !have("sh") {
        return;
    }
    let dir = temp_dir("helper");
    let origin = dir.join("origin");
    std::fs::create_dir_all(&origin).expect("dir");
    std::fs::write(origin.join("README"), "x").expect("write");
    git(&origin, &["init", "--quiet", "--initial-branch=main"]);
    git(&origin, &["add", "."]);
    git(&origin, &["commit", "--quiet", "-m", "x"]);
    let pod = pod_of(&job_with(
        json!({"notebook": {"git": {"credentialsSecret": "git-creds"}}}),
    ));
    let token = "ghp_n0t\\a'real\"t0ken";
    let (ok, stderr) = run_clone(
        &pod,
        &dir,
        &[
            ("NBV_GIT_URL", &origin.to_string_lossy()),
            ("NBV_GIT_TOKEN", token),
        ],
    );
    assert!(ok, "{stderr}");
    let repo = dir.join("workspace/repo");
    let config = std::fs::read_to_string(repo.join(".git/config")).expect("config");
    assert!(!config.contains("ghp_"), "the token is not written down");

    let ask = |vars: &[(&str, &str)]| {
        let mut command = Command::new("git");
        command
            .args(["credential", "fill"])
            .current_dir(&repo)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        for (name, value) in vars {
            command.env(name, value);
        }
        let mut child = command.spawn().expect("git runs");
        use std::io::Write;
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(b"protocol=https\nhost=example.com\n\n")
            .expect("write");
        String::from_utf8(child.wait_with_output().expect("output").stdout).expect("UTF-8")
    };
    let answer = ask(&[("NBV_GIT_TOKEN", token)]);
    assert!(answer.contains("username=x-access-token\n"), "{answer}");
    assert!(answer.contains(&format!("password={token}\n")), "{answer}");
    let answer = ask(&[
        ("NBV_GIT_USERNAME", "bot"),
        ("NBV_GIT_PASSWORD", "pw"),
        ("NBV_GIT_TOKEN", token),
    ]);
    assert!(answer.contains("username=bot\npassword=pw\n"), "{answer}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the notebook script with `env`; returns its exit code and the result it wrote.
fn run_notebook_script(pod: &Pod, dir: &Path, env: &[(&str, &str)]) -> (i32, String) {
    let result = dir.join("termination-log");
    let mut command = Command::new("python3");
    command.arg("-c").arg(script(pod, NOTEBOOK_CONTAINER));
    command
        .env("NBV_RESULT", &result)
        .env("NBV_OUTPUT", dir.join("out.ipynb"));
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("python3 runs");
    (
        output.status.code().unwrap_or(-1),
        std::fs::read_to_string(&result).unwrap_or_default(),
    )
}

#[test]
fn the_notebook_script_reports_a_missing_notebook_and_a_missing_papermill() {
    if !have("python3") {
        return;
    }
    let dir = temp_dir("script");
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).expect("dir");
    std::fs::write(
        repo.join("t.ipynb"),
        r#"{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}"#,
    )
    .expect("write");
    let pod = pod_of(&job_with(json!({})));
    let repo_text = repo.to_string_lossy().into_owned();

    let (code, result) = run_notebook_script(
        &pod,
        &dir,
        &[
            ("NBV_REPOSITORY", &repo_text),
            ("NBV_NOTEBOOK", "nope.ipynb"),
        ],
    );
    assert_eq!(code, 1);
    let report = RunReport::parse(&result).expect("a report");
    assert_eq!(
        report.error.as_ref().map(|e| e.kind),
        Some(RunErrorKind::Missing)
    );

    let (code, result) = run_notebook_script(
        &pod,
        &dir,
        &[
            ("NBV_REPOSITORY", &repo_text),
            ("NBV_NOTEBOOK", "../../etc/passwd"),
        ],
    );
    assert_eq!(code, 1);
    assert!(result.contains("is not inside the repository"), "{result}");

    let has_papermill = Command::new("python3")
        .args(["-c", "import papermill"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !has_papermill {
        let (code, result) = run_notebook_script(
            &pod,
            &dir,
            &[("NBV_REPOSITORY", &repo_text), ("NBV_NOTEBOOK", "t.ipynb")],
        );
        assert_eq!(code, 1);
        let report = RunReport::parse(&result).expect("a report");
        let error = report.error.expect("an error");
        assert_eq!(error.kind, RunErrorKind::Setup);
        assert!(error.evalue.contains("'papermill'"), "{}", error.evalue);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Calls a function of the notebook script with JSON arguments, once per line of
/// `inputs`; returns one JSON-encoded result per line.
fn call_script(function: &str, inputs: &[Value]) -> Vec<String> {
    let pod = pod_of(&job_with(json!({})));
    let driver = format!(
        "import json, sys\nsource = sys.stdin.readline()\nscope = {{'__name__': 'nbv_script'}}\n\
         exec(json.loads(source), scope)\nfor line in sys.stdin:\n    args = json.loads(line)\n    \
         out = scope['{function}'](*args)\n    print(out if isinstance(out, str) else json.dumps(out))\n"
    );
    let mut child = Command::new("python3")
        .args(["-c", &driver])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut input = serde_json::to_string(&script(&pod, NOTEBOOK_CONTAINER)).expect("JSON") + "\n";
    for args in inputs {
        input.push_str(&serde_json::to_string(args).expect("JSON"));
        input.push('\n');
    }
    std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(input.as_bytes()).expect("write");
    });
    let output = child.wait_with_output().expect("output");
    assert!(output.status.success(), "the script's {function} failed");
    String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_python_writer_and_rust_encode_agree_byte_for_byte() {
    if !have("python3") {
        return;
    }
    let mut runner = TestRunner::deterministic();
    let strategy = arbitrary_report();
    let reports: Vec<RunReport> = (0..300)
        .map(|_| strategy.new_tree(&mut runner).expect("a report").current())
        .collect();
    let inputs: Vec<Value> = reports.iter().map(|r| json!([r.cells, r.error])).collect();
    let python = call_script("encode", &inputs);
    assert_eq!(python.len(), reports.len());
    for (report, python) in reports.iter().zip(python) {
        assert_eq!(report.encode(), python, "for {report:?}");
    }
}

#[test]
fn the_python_reader_indexes_cells_as_in_the_source_notebook() {
    if !have("python3") {
        return;
    }
    // A notebook as papermill leaves it after cell 3 (the second code cell) raised:
    // an error banner on top, an anchor before the failing cell, timings in metadata.
    let executed = json!({"cells": [
        {"cell_type": "markdown", "metadata": {"tags": ["papermill-error-cell-tag"]}, "source": "banner"},
        {"cell_type": "markdown", "metadata": {}, "source": "# Title"},
        {"cell_type": "code", "execution_count": 1, "metadata": {"papermill": {"duration": 1.234, "status": "completed"}}, "outputs": []},
        {"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": ""},
        {"cell_type": "markdown", "metadata": {"tags": ["papermill-error-cell-tag"]}, "source": "anchor"},
        {"cell_type": "code", "execution_count": 2, "metadata": {"papermill": {"duration": 0.5, "status": "failed"}},
         "outputs": [{"output_type": "error", "ename": "KeyError", "evalue": "'x'", "traceback": []}]},
        {"cell_type": "code", "execution_count": null, "metadata": {"papermill": {"status": "pending"}}, "outputs": []},
        {"cell_type": "code", "execution_count": 3, "metadata": {"execution": {
            "iopub.execute_input": "2026-01-24T22:00:00.000000Z", "shell.execute_reply": "2026-01-24T22:00:02.500000Z"}},
         "outputs": [{"output_type": "error", "ename": "SystemExit", "evalue": "0"}]},
        {"cell_type": "code", "execution_count": null, "metadata": {"papermill": {"status": "completed", "start_time": null}}, "outputs": []},
        {"cell_type": "code", "execution_count": null, "metadata": {"papermill": {"status": "completed", "start_time": "2026-01-24T22:00:03Z", "duration": 0.0}}, "outputs": [], "source": ""}
    ]});
    let cells = call_script("read_cells", &[json!([executed])]);
    let cells: Value = serde_json::from_str(&cells[0]).expect("JSON");
    assert_eq!(
        cells,
        json!([
            {"i": 1, "s": "ok", "t": 1.23},
            {"i": 2, "s": "skip"},
            {"i": 3, "s": "err", "t": 0.5, "e": "KeyError: 'x'"},
            {"i": 4, "s": "skip"},
            {"i": 5, "s": "ok", "t": 2.5},
            {"i": 6, "s": "skip"},
            {"i": 7, "s": "ok", "t": 0.0}
        ])
    );
}

// ---------------------------------------------------------------------------------------
// What a Pod's status means
// ---------------------------------------------------------------------------------------

fn at(minutes: i64) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 24, 22, 0, 0)
        .single()
        .expect("date")
        + TimeDelta::minutes(minutes)
}

/// The Pod of a job with HTTPS credentials, created at `at(0)`, with `status`.
fn observed(status: Value) -> Pod {
    let mut pod = pod_of(&job_with(json!({
        "notebook": {"git": {"credentialsSecret": "git-creds"}},
        "podConfig": {"resources": {"limits": {"memory": "2Gi"}}},
    })));
    let mut value = serde_json::to_value(&pod).expect("JSON");
    value["metadata"]["creationTimestamp"] = json!("2026-01-24T22:00:00Z");
    value["status"] = status;
    pod = serde_json::from_value(value).expect("a pod");
    pod
}

fn container_status(name: &str, state: Value) -> Value {
    json!({"name": name, "image": format!("image-of-{name}"), "imageID": "", "ready": false,
           "restartCount": 0, "state": state})
}

fn terminated(name: &str, exit_code: i32, reason: Option<&str>, message: &str) -> Value {
    container_status(
        name,
        json!({"terminated": {"exitCode": exit_code, "reason": reason, "message": message}}),
    )
}

fn waiting(name: &str, reason: &str, message: &str) -> Value {
    container_status(
        name,
        json!({"waiting": {"reason": reason, "message": message}}),
    )
}

fn failed_pod(pod_reason: Option<&str>, init: Vec<Value>, main: Vec<Value>) -> Value {
    json!({"phase": "Failed", "reason": pod_reason, "startTime": "2026-01-24T22:00:05Z",
           "initContainerStatuses": init, "containerStatuses": main})
}

fn clone_ok() -> Value {
    terminated(CLONE_CONTAINER, 0, Some("Completed"), "")
}

fn cell_error_report() -> String {
    RunReport {
        cells: vec![
            ReportedCell {
                index: 0,
                outcome: CellOutcome::Succeeded,
                seconds: Some(1.2),
                error: None,
            },
            ReportedCell {
                index: 4,
                outcome: CellOutcome::Failed,
                seconds: Some(0.1),
                error: Some("KeyError: 'x'".to_owned()),
            },
            ReportedCell {
                index: 5,
                outcome: CellOutcome::Skipped,
                seconds: None,
                error: None,
            },
        ],
        error: Some(RunError {
            kind: RunErrorKind::Cell,
            cell: Some(4),
            ename: "KeyError".to_owned(),
            evalue: "'x'".to_owned(),
        }),
        dropped: 0,
    }
    .encode()
}

fn report_with(kind: RunErrorKind, ename: &str, evalue: &str) -> String {
    RunReport {
        cells: Vec::new(),
        error: Some(RunError {
            kind,
            cell: None,
            ename: ename.to_owned(),
            evalue: evalue.to_owned(),
        }),
        dropped: 0,
    }
    .encode()
}

/// `(case, pod status, minutes after creation)`.
fn classification_cases() -> Vec<(&'static str, Value, i64)> {
    let nb = NOTEBOOK_CONTAINER;
    let cl = CLONE_CONTAINER;
    vec![
        ("pending, scheduled, pulling", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:05Z",
            "containerStatuses": [waiting(nb, "ContainerCreating", "")]}), 10),
        ("image pull back-off within the grace period", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "initContainerStatuses": [clone_ok()],
            "containerStatuses": [waiting(nb, "ImagePullBackOff", "Back-off pulling image \"image-of-notebook\"")]}), 4),
        ("image pull back-off after the grace period", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "containerStatuses": [waiting(nb, "ImagePullBackOff", "Back-off pulling image \"image-of-notebook\"")]}), 6),
        ("image does not exist", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "containerStatuses": [waiting(nb, "ErrImagePull", "rpc error: code = NotFound desc = failed to pull and unpack image: manifest unknown")]}), 6),
        ("invalid image name", json!({"phase": "Pending",
            "containerStatuses": [waiting(nb, "InvalidImageName", "couldn't parse image name \"Bad Image\"")]}), 0),
        ("missing secret within the grace period", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "initContainerStatuses": [waiting(cl, "CreateContainerConfigError", "secret \"git-creds\" not found")]}), 1),
        ("missing secret after the grace period", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "initContainerStatuses": [waiting(cl, "CreateContainerConfigError", "secret \"git-creds\" not found")]}), 5),
        ("runtime cannot create the container", json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
            "containerStatuses": [waiting(nb, "CreateContainerError", "context deadline exceeded")]}), 7),
        ("unschedulable past the deadline", json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."}]}), 31),
        ("unschedulable within the deadline", json!({"phase": "Pending", "conditions": [{"type": "PodScheduled",
            "status": "False", "reason": "Unschedulable", "message": "0/3 nodes are available"}]}), 29),
        ("running", json!({"phase": "Running"}), 1),
        ("node unreachable", json!({"phase": "Unknown"}), 1),
        ("succeeded", json!({"phase": "Succeeded", "initContainerStatuses": [clone_ok()],
            "containerStatuses": [terminated(nb, 0, Some("Completed"),
                &RunReport { cells: vec![
                    ReportedCell { index: 1, outcome: CellOutcome::Succeeded, seconds: Some(1.25), error: None },
                    ReportedCell { index: 3, outcome: CellOutcome::Succeeded, seconds: Some(10.0), error: None }],
                    error: None, dropped: 0 }.encode())]}), 3),
        ("succeeded, result unreadable", json!({"phase": "Succeeded",
            "containerStatuses": [terminated(nb, 0, Some("Completed"), "Executing: 100%|██████████| 8/8")]}), 3),
        ("succeeded, no result", json!({"phase": "Succeeded", "containerStatuses": [terminated(nb, 0, Some("Completed"), "")]}), 3),
        ("cell raised", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"), &cell_error_report())]), 3),
        ("notebook missing", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Missing, "FileNotFoundError", "No such file: notebooks/train.ipynb"))]), 3),
        ("papermill missing", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Setup, "ModuleNotFoundError", "No module named 'papermill'"))]), 3),
        ("kernel died", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Kernel, "DeadKernelError", "Kernel died"))]), 3),
        ("not a notebook", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Invalid, "NotJSONError", "Notebook does not appear to be JSON: ''"))]), 3),
        ("script crashed", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            &report_with(RunErrorKind::Internal, "PermissionError", "[Errno 13] Permission denied: '/workspace/out.ipynb'"))]), 3),
        ("timeout", failed_pod(Some("DeadlineExceeded"), vec![clone_ok()], vec![terminated(nb, 137, Some("Error"), "")]), 31),
        ("timeout before the notebook started", failed_pod(Some("DeadlineExceeded"), vec![clone_ok()],
            vec![waiting(nb, "ImagePullBackOff", "Back-off pulling image \"quay.io/example/papermill:1\"")]), 31),
        ("evicted", failed_pod(Some("Evicted"), vec![clone_ok()], vec![terminated(nb, 137, Some("Error"), "")])
            .tap(|v| v["message"] = json!("The node was low on resource: memory.")), 10),
        ("node lost", failed_pod(Some("NodeLost"), vec![clone_ok()], vec![]), 10),
        ("preempted", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 143, Some("Error"), "")])
            .tap(|v| v["conditions"] = json!([{"type": "DisruptionTarget", "status": "True",
                "reason": "PreemptionByScheduler", "message": "preempted by ml/high-priority"}])), 10),
        ("garbage-collected with its node", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 137, None, "")])
            .tap(|v| v["conditions"] = json!([{"type": "DisruptionTarget", "status": "True",
                "reason": "DeletionByPodGC", "message": "PodGC: node no longer exists"}])), 10),
        ("out of memory", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 137, Some("OOMKilled"), "")]), 10),
        ("container state lost", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 137, Some("ContainerStatusUnknown"),
            "The container could not be located when the pod was terminated")]), 10),
        ("image cannot run python3", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 128, Some("StartError"),
            "exec: \"python3\": executable file not found in $PATH")]), 1),
        ("log tail: no such file", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 1, Some("Error"),
            "Traceback (most recent call last):\nFileNotFoundError: [Errno 2] No such file or directory: 'x.ipynb'")]), 1),
        ("log tail: unknown", failed_pod(None, vec![clone_ok()], vec![terminated(nb, 2, Some("Error"), "Segmentation fault")]), 1),
        ("clone: credentials refused", failed_pod(None, vec![terminated(cl, 128, Some("Error"),
            "fatal: Authentication failed for 'https://bot:ghp_s3cr3t@github.com/org/repo.git/'")], vec![]), 1),
        ("clone: ssh host key", failed_pod(None, vec![terminated(cl, 128, Some("Error"),
            "Host key verification failed.\nfatal: Could not read from remote repository.")], vec![]), 1),
        ("clone: unreachable", failed_pod(None, vec![terminated(cl, 128, Some("Error"),
            "fatal: unable to access 'https://github.com/org/repo.git/': Could not resolve host: github.com")], vec![]), 1),
        ("clone: ref missing", failed_pod(None, vec![terminated(cl, 128, Some("Error"),
            "nbv: fetching nope alone failed; fetching the whole repository\nerror: pathspec 'nope^{commit}' did not match any file(s) known to git")], vec![]), 1),
        ("rejected by the kubelet", failed_pod(Some("OutOfcpu"), vec![], vec![])
            .tap(|v| v["message"] = json!("Pod Node didn't have enough resource: cpu, requested: 4000, used: 1000, capacity: 2000")), 0),
    ]
}

trait Tap {
    fn tap(self, f: impl FnOnce(&mut Self)) -> Self;
}

impl Tap for Value {
    fn tap(mut self, f: impl FnOnce(&mut Self)) -> Self {
        f(&mut self);
        self
    }
}

fn describe(event: Option<&PhaseEvent>) -> String {
    match event {
        None => "nothing to report".to_owned(),
        Some(PhaseEvent::PodRunning { pod }) => format!("PodRunning {}", pod.name),
        Some(PhaseEvent::PodSucceeded {
            results, message, ..
        }) => format!(
            "PodSucceeded, {} results: {}",
            results.len(),
            message.as_deref().unwrap_or_default()
        ),
        Some(PhaseEvent::PodFailed {
            failure, results, ..
        }) => format!(
            "PodFailed {:?} {}, {} results: {}",
            failure.kind,
            failure.reason,
            results.len(),
            failure.message
        ),
        Some(other) => format!("unexpected {}", other.name()),
    }
}

#[test]
fn pod_statuses_are_classified() {
    let mut table = String::new();
    for (case, status, minutes) in classification_cases() {
        let pod = observed(status);
        let event = observe_pod(&pod, at(minutes), DEFAULT_START_GRACE).expect("a validation pod");
        if let Some(PhaseEvent::PodFailed { failure, .. }) = &event {
            assert!(
                !failure.message.contains("ghp_s3cr3t"),
                "{case}: a credential leaked"
            );
        }
        table.push_str(&format!("{case}\n  {}\n", describe(event.as_ref())));
    }
    insta::assert_snapshot!("classification", table);
}

#[test]
fn classification_kinds_follow_the_causes() {
    // Every failure's kind is its cause's kind, and the cases cover every kind of
    // Pod failure nbv reports (all causes but those the shell reports itself).
    let mut seen = BTreeSet::new();
    for (case, status, minutes) in classification_cases() {
        let event =
            observe_pod(&observed(status), at(minutes), DEFAULT_START_GRACE).expect("a pod");
        if let Some(PhaseEvent::PodFailed { failure, .. }) = event {
            let cause = FailureCause::ALL
                .into_iter()
                .find(|c| c.as_str() == failure.reason.as_str())
                .unwrap_or_else(|| panic!("{case}: unknown reason {}", failure.reason));
            assert_eq!(failure.kind, cause.kind(), "{case}");
            seen.insert(cause);
        }
    }
    let reported_by_the_shell = [
        FailureCause::PodDeleted,
        FailureCause::PodSpecInvalid,
        FailureCause::BuildNotSupported,
        FailureCause::FieldNotSupported,
    ];
    let missing: Vec<_> = FailureCause::ALL
        .into_iter()
        .filter(|c| !seen.contains(c) && !reported_by_the_shell.contains(c))
        .collect();
    assert!(missing.is_empty(), "no case for {missing:?}");
}

#[test]
fn pods_nbv_did_not_label_are_refused() {
    let mut pod = observed(json!({"phase": "Running"}));
    pod.metadata.labels = Some(BTreeMap::from([(
        ATTEMPT_LABEL.to_owned(),
        "first".to_owned(),
    )]));
    let err = observe_pod(&pod, at(0), DEFAULT_START_GRACE).expect_err("refused");
    assert_eq!(err.pod, "train-g3-r1");
    assert!(err.problem.contains("invalid attempt"), "{}", err.problem);
    pod.metadata.labels = None;
    assert!(observe_pod(&pod, at(0), DEFAULT_START_GRACE).is_err());
}

#[test]
fn the_start_grace_is_a_setting() {
    let pod = observed(
        json!({"phase": "Pending", "startTime": "2026-01-24T22:00:00Z",
        "containerStatuses": [waiting(NOTEBOOK_CONTAINER, "ImagePullBackOff", "Back-off")]}),
    );
    assert_eq!(
        observe_pod(&pod, at(2), Duration::from_secs(60 * 3)).expect("pod"),
        None
    );
    assert!(
        observe_pod(&pod, at(2), Duration::from_secs(60))
            .expect("pod")
            .is_some()
    );
}

fn arbitrary_status() -> impl Strategy<Value = Value> {
    let text = prop_oneof![
        "\\PC{0,80}",
        Just(
            "fatal: Authentication failed for 'https://bot:ghp_s3cr3t@example.com/r.git/'"
                .to_owned()
        ),
        Just("token=ghp_s3cr3t".to_owned()),
        Just(cell_error_report()),
    ];
    let phase = proptest::option::of(prop_oneof![
        Just("Pending"),
        Just("Running"),
        Just("Succeeded"),
        Just("Failed"),
        Just("Unknown"),
        Just("Weird"),
    ]);
    let reason = proptest::option::of(prop_oneof![
        Just("DeadlineExceeded".to_owned()),
        Just("Evicted".to_owned()),
        Just("NodeLost".to_owned()),
        "[A-Za-z]{0,12}",
    ]);
    let state = prop_oneof![
        (any::<i32>(), proptest::option::of("[A-Za-z]{0,12}"), text.clone())
            .prop_map(|(code, reason, message)| json!({"terminated": {"exitCode": code, "reason": reason, "message": message}})),
        (prop_oneof![Just("ErrImagePull".to_owned()), Just("CreateContainerConfigError".to_owned()), "[A-Za-z]{0,12}"], text.clone())
            .prop_map(|(reason, message)| json!({"waiting": {"reason": reason, "message": message}})),
        Just(json!({"running": {}})),
        Just(json!({})),
    ];
    let status = (
        prop_oneof![
            Just(CLONE_CONTAINER),
            Just(NOTEBOOK_CONTAINER),
            Just("sidecar")
        ],
        state,
    )
        .prop_map(|(name, state)| container_status(name, state));
    (phase, reason, text, proptest::collection::vec(status.clone(), 0..3), proptest::collection::vec(status, 0..3))
        .prop_map(|(phase, reason, message, init, main)| json!({
            "phase": phase, "reason": reason, "message": message, "startTime": "2026-01-24T22:00:00Z",
            "initContainerStatuses": init, "containerStatuses": main,
            "conditions": [{"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}]
        }))
}

proptest! {
    #[test]
    fn any_status_is_classified_without_panic_or_leak(status in arbitrary_status(), minutes in 0i64..120) {
        let pod = observed(status);
        let event = observe_pod(&pod, at(minutes), DEFAULT_START_GRACE).expect("a validation pod");
        match &event {
            Some(PhaseEvent::PodFailed { failure, .. }) => {
                prop_assert!(!failure.message.contains("ghp_s3cr3t"), "{}", failure.message);
                let cause = FailureCause::ALL.into_iter().find(|c| c.as_str() == failure.reason.as_str());
                prop_assert_eq!(cause.map(FailureCause::kind), Some(failure.kind));
            }
            Some(PhaseEvent::PodSucceeded { message, .. }) => {
                prop_assert!(!message.as_deref().unwrap_or_default().contains("ghp_s3cr3t"));
            }
            _ => {}
        }
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        match phase {
            Some("Running") => prop_assert!(matches!(event, Some(PhaseEvent::PodRunning { .. })), "{:?}", event),
            Some("Succeeded") => prop_assert!(matches!(event, Some(PhaseEvent::PodSucceeded { .. })), "{:?}", event),
            Some("Failed") => prop_assert!(matches!(event, Some(PhaseEvent::PodFailed { .. })), "{:?}", event),
            Some("Unknown" | "Weird") => prop_assert!(event.is_none()),
            _ => prop_assert!(!matches!(event, Some(PhaseEvent::PodRunning { .. } | PhaseEvent::PodSucceeded { .. })), "{:?}", event),
        }
        if let Some(PhaseEvent::PodFailed { pod: pod_ref, .. } | PhaseEvent::PodRunning { pod: pod_ref } | PhaseEvent::PodSucceeded { pod: pod_ref, .. }) = &event {
            prop_assert_eq!(pod_ref.attempt, ATTEMPT);
        }
    }
}
